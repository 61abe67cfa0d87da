import fs from 'node:fs/promises';
import path from 'node:path';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { checkMediaPath } from '../../shared/media-paths.js';
import type { Logger } from '../../shared/log.js';
import { reasonText, type ReasonCode, type ReasonParams } from '../../shared/reasons.js';

export type { ReasonParams };

/**
 * A refusal with a plain-text reason and its status code. A refusal the web UI words in its own
 * language also carries a code and parameters (shared/reasons.ts): they travel in the headers
 * Ripwerk-Reason (the code) and Ripwerk-Reason-Params (the parameters as JSON, percent-encoded); the
 * body is the English text, or the catalogue's German one for a client whose Accept-Language prefers German.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: ReasonCode | null = null,
    readonly params: ReasonParams = {},
  ) {
    super(message);
  }
}

/**
 * A plain-text answer of one line. Control characters (CR, LF, ...) are dropped: a refusal often
 * repeats what the client sent, and that must not forge lines of its own.
 */
export function sendText(res: Parameters<RequestHandler>[1], status: number, text: string): void {
  res.status(status).type('text/plain; charset=utf-8').send(`${text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '')}\n`);
}

/** Every error leaves as plain text: the reason and a fitting status code, never a stack. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const e = err as { status?: number; statusCode?: number; type?: string; message?: string };
    let status = err instanceof HttpError ? err.status : (e.status ?? e.statusCode ?? 500);
    let message = e.message ?? 'internal error';
    if (e.type === 'entity.too.large') message = 'the request body is larger than allowed';
    else if (e.type === 'entity.parse.failed') message = 'the request body is not valid JSON';
    else if (status >= 500 && !(err instanceof HttpError)) {
      log.error(`${req.method} ${req.path} failed: ${message}`);
      message = 'internal error; see the coordinator log';
    }
    if (status < 400 || status > 599) status = 500;
    if (!res.headersSent && err instanceof HttpError && err.code) {
      res.setHeader('Ripwerk-Reason', err.code);
      res.setHeader('Ripwerk-Reason-Params', encodeURIComponent(JSON.stringify(err.params)));
      // A client without the UI gets the refusal in its language: German where it prefers German.
      res.setHeader('Vary', 'Accept-Language');
      const german = req.acceptsLanguages('en', 'de') === 'de' ? reasonText(err.code, err.params, 'de') : null;
      if (german) message = german;
      res.setHeader('Content-Language', german ? 'de' : 'en');
    }
    if (!res.headersSent) sendText(res, status, message);
  };
}

/** The JSON object body of a request, or a 400. */
export function objectBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/**
 * A directory the client names must lie under MEDIA_ROOT: lexically (no .., boundary-aware; else 400)
 * and after following symlinks of the part that exists already (else 403: a symbolic link that leads
 * outside or nowhere).
 */
export async function mediaDir(root: string, candidate: unknown, field: string): Promise<string> {
  if (typeof candidate !== 'string') throw new HttpError(400, `${field} must be a string`);
  const check = checkMediaPath(root, candidate);
  if (!check.ok) throw new HttpError(400, `${field} refused: ${check.reason}`);
  const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
  let existing = check.path;
  while (!(await fs.lstat(existing).then(() => true, () => false))) existing = path.dirname(existing);
  // An entry that exists but cannot be resolved (a dangling symlink, a loop) could lead anywhere later.
  const real = await fs.realpath(existing).catch(() => null);
  if (real === null) throw new HttpError(403, `${field} refused: it leads through a broken symbolic link`);
  const prefix = realRoot.endsWith('/') ? realRoot : `${realRoot}/`;
  if (real !== realRoot && !real.startsWith(prefix)) throw new HttpError(403, `${field} refused: it leads outside ${root} through a symbolic link`);
  return check.path;
}
