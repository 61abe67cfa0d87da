import { HttpError } from '../http/errors.js';

/**
 * Whether a retry-rip asks for a careful re-read (body `careful`: true; absent, null or false: no).
 * Anything else is a 400. An audio CD has no careful mode to switch on: cdparanoia verifies and
 * repeats its reads on every rip, so a careful retry of one is refused rather than silently ignored.
 */
export function carefulRetry(body: unknown, discType: string | undefined): boolean {
  if (body === undefined || body === null) return false;
  if (typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'the request body must be a JSON object');
  const careful = (body as Record<string, unknown>).careful;
  if (careful === undefined || careful === null || careful === false) return false;
  if (careful !== true) throw new HttpError(400, 'careful must be true or false');
  if (discType === 'cd') throw new HttpError(400, 'an audio CD job cannot be read again carefully: cdparanoia checks and repeats every read anyway; rip it again without careful', 'retryCarefulCd');
  return true;
}
