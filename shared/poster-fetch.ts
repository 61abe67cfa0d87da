/**
 * Fetching a poster from a URL someone else chose, for the coordinator's poster cache and for the
 * poster.jpg beside a library's nfo (agent and coordinator alike): at most POSTER_MAX_BYTES counted as
 * the bytes arrive, POSTER_FETCH_TIMEOUT_MS for all of it, no redirect, the address checked by the
 * webhook target rules (target-rules.ts) at the moment of connecting, and only an image taken.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { checkedLookup, portOf, refusalFor, TargetRefused, type ResolveAll, type TargetPolicy } from './target-rules.js';

/** A poster larger than this is refused (the agents' poster.jpg has the same cap), counted as the bytes arrive. */
export const POSTER_MAX_BYTES = 10 * 1024 * 1024;
/** The whole fetch of a poster (connecting, the answer and all its bytes) must be done within this. */
export const POSTER_FETCH_TIMEOUT_MS = 15_000;

/**
 * What every failed poster fetch says, in an API answer, the log GET /logs serves and a job's log
 * alike: which of the reasons it was (a closed port, a 404, no image, a refused address, a timeout)
 * would tell whoever can set a poster URL which LAN address answers, so it is written nowhere
 * (docs/security.md).
 */
export const POSTER_FETCH_FAILED = `the server is not reachable or refused, it has no such image, or the answer is no image of at most ${POSTER_MAX_BYTES / 1024 / 1024} MB`;

/** A poster fetch that did not give an image; its message is the reason, for a test or a debugger, never a log. */
export class FetchFailure extends Error {}

/**
 * GETs `url` and resolves with its body when the answer is 200 and at most `maxBytes` long, counted
 * as the bytes arrive (a chunked answer of 900 MB is cut off after 10 MB, not read into memory first).
 * No redirect is followed. With a policy, the address connected to must pass the webhook target rules
 * (checked at connect time: DNS rebinding cannot pass); `timeoutMs` bounds everything, the body too.
 */
export function fetchCapped(url: string, opts: { policy: TargetPolicy | null; timeoutMs: number; maxBytes: number; lookup?: ResolveAll }): Promise<Buffer> {
  const u = new URL(url);
  const port = portOf(u);
  return new Promise((resolve, reject) => {
    const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    if (opts.policy && net.isIP(host)) {
      const reason = refusalFor(host, port, opts.policy);
      if (reason) return reject(new TargetRefused(reason));
    }
    const signal = AbortSignal.timeout(opts.timeoutMs);
    const lookup = opts.policy ? checkedLookup(port, opts.policy, opts.lookup) : undefined;
    const client = u.protocol === 'https:' ? https : http;
    // agent: false, a connection of its own: a kept-alive socket of an earlier fetch (made under laxer
    // rules, or to the same host before its name moved) would skip the lookup and with it the check.
    const req = client.get(u, { agent: false, signal, headers: { accept: 'image/*' }, ...(lookup ? { lookup } : {}) }, (res) => {
      const fail = (why: string): void => {
        res.destroy();
        req.destroy();
        reject(new FetchFailure(why));
      };
      if (res.statusCode !== 200) return fail(`HTTP ${res.statusCode ?? '?'}`);
      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > opts.maxBytes) return fail(`it declares ${declared} bytes`);
      const chunks: Buffer[] = [];
      let total = 0;
      res.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > opts.maxBytes) fail(`it sent more than ${opts.maxBytes} bytes`);
        else chunks.push(chunk);
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', (err) => reject(signal.aborted ? new FetchFailure('timeout') : err));
      res.on('aborted', () => reject(new FetchFailure(signal.aborted ? 'timeout' : 'the answer was cut off')));
    });
    req.on('error', (err) => reject(signal.aborted ? new FetchFailure('timeout') : err));
  });
}

export type PosterType = 'jpg' | 'png' | 'webp' | 'gif';

/** The image type from the first bytes, or null when the data is no image the UI can show. */
export function imageType(data: Uint8Array): PosterType | null {
  const b = Buffer.from(data.buffer, data.byteOffset, Math.min(data.byteLength, 12));
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1'))) return 'gif';
  return null;
}

export interface PosterFetchOptions {
  /** The webhook target rules for the address connected to; null for the configured image server (fetched wherever the admin put it). */
  policy: TargetPolicy | null;
  /** The whole fetch (POSTER_FETCH_TIMEOUT_MS). */
  timeoutMs?: number;
  /** How names are resolved (tests). */
  lookup?: ResolveAll;
}

/** GETs a poster (fetchCapped with the poster cap) and takes it only when its first bytes are an image. */
export async function fetchPoster(url: string, opts: PosterFetchOptions): Promise<{ data: Buffer; type: PosterType }> {
  const data = await fetchCapped(url, { policy: opts.policy, timeoutMs: opts.timeoutMs ?? POSTER_FETCH_TIMEOUT_MS, maxBytes: POSTER_MAX_BYTES, lookup: opts.lookup });
  const type = imageType(data);
  if (!type) throw new FetchFailure('the answer is no image');
  return { data, type };
}
