import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../../shared/log.js';
import { checkedLookup, portOf, refusalFor, TargetRefused, type ResolveAll, type TargetPolicy } from '../integrations/webhook-target.js';
import { posterUrl } from './library-info.js';

/** A poster larger than this is refused (the agents' poster.jpg has the same cap), counted as the bytes arrive. */
export const POSTER_MAX_BYTES = 10 * 1024 * 1024;
/** The whole fetch of a poster (connecting, the answer and all its bytes) must be done within this. */
export const POSTER_FETCH_TIMEOUT_MS = 15_000;

const FAILURE_LOG_EVERY_MS = 15 * 60_000;

/**
 * Why a poster fetch failed, for the log of the one who can fix it (never for an API answer): which
 * of the reasons it was tells a port scanner which LAN address answers.
 */
class FetchFailure extends Error {}

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
    const req = client.get(u, { signal, headers: { accept: 'image/*' }, ...(lookup ? { lookup } : {}) }, (res) => {
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
const CONTENT_TYPES: Record<PosterType, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif' };

/** The image type from the first bytes, or null when the data is no image the UI can show. */
export function imageType(data: Uint8Array): PosterType | null {
  const b = Buffer.from(data.buffer, data.byteOffset, Math.min(data.byteLength, 12));
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1'))) return 'gif';
  return null;
}

export class PosterError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface CachedPoster {
  file: string;
  contentType: string;
}

export interface PosterCacheOptions {
  /** The whole fetch of one poster (POSTER_FETCH_TIMEOUT_MS). */
  timeoutMs?: number;
  /** How names are resolved (tests). */
  lookup?: ResolveAll;
}

/**
 * Posters fetched once by the coordinator and served from DATA_DIR/posters, so a phone that cannot
 * reach the movie database still shows them. A poster is named by the SHA-256 of its source URL;
 * only posters the coordinator itself has shown (a disc card, a job) are fetched, never a URL a
 * request names, and no redirect is followed. A poster on the configured image server
 * (TMDB_IMAGE_BASE_URL, the admin's choice) is fetched wherever that is; any other URL (an override's
 * poster_path, a metadata source's absolute URL) gets the webhook target rules on the address it
 * connects to, at that moment. Every failure answers the same 502; the log says which it was. The
 * folder is kept under a size cap: the least recently served go first.
 */
export class PosterCache {
  private readonly sources = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<CachedPoster>>();
  private readonly imageOrigin: string | null;
  private readonly failureLogged = new Map<string, number>();

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly imageBase: string,
    private readonly log: Logger,
    /** The webhook target rules now (the setting allowPrivateWebhooks, the API's own port). */
    private readonly policy: () => TargetPolicy = () => ({ allowPrivate: false, ownPort: null }),
    private readonly options: PosterCacheOptions = {},
  ) {
    this.imageOrigin = URL.canParse(imageBase) ? new URL(imageBase).origin : null;
  }

  /** The key of a poster as the metadata keeps it (TMDB-relative or absolute), registered for serving; null when there is none. */
  register(poster: string | null | undefined): string | null {
    const source = posterUrl(poster, this.imageBase);
    if (!source) return null;
    const key = createHash('sha256').update(source).digest('hex').slice(0, 32);
    this.sources.set(key, source);
    return key;
  }

  /** The URL under /api that serves a poster, or null. */
  urlFor(poster: string | null | undefined): string | null {
    const key = this.register(poster);
    return key ? `/api/posters/${key}` : null;
  }

  /** Fetches a poster in the background (a failure is logged, the card then has none). */
  prefetch(poster: string | null | undefined): void {
    const key = this.register(poster);
    if (key) this.get(key).catch(() => undefined);
  }

  private async cached(key: string): Promise<CachedPoster | null> {
    for (const type of Object.keys(CONTENT_TYPES) as PosterType[]) {
      const file = path.join(this.dir, `${key}.${type}`);
      const st = await fs.stat(file).catch(() => null);
      if (st?.isFile()) {
        const now = new Date();
        await fs.utimes(file, now, now).catch(() => undefined);
        return { file, contentType: CONTENT_TYPES[type] };
      }
    }
    return null;
  }

  /** The poster's file: from the folder, else fetched now (one fetch per poster at a time). */
  async get(key: string): Promise<CachedPoster> {
    const hit = await this.cached(key);
    if (hit) return hit;
    const source = this.sources.get(key);
    if (!source) throw new PosterError('no poster with this key: posters are known from the disc cards and jobs that show them', 404);
    let running = this.inflight.get(key);
    if (!running) {
      running = this.fetchInto(key, source).finally(() => this.inflight.delete(key));
      this.inflight.set(key, running);
    }
    return running;
  }

  private async fetchInto(key: string, source: string): Promise<CachedPoster> {
    const url = new URL(source);
    const onImageServer = url.origin === this.imageOrigin;
    const failed = (why: string): PosterError => {
      // Once per poster and quarter hour: a page asking for it again and again does not fill the log.
      const now = Date.now();
      if ((this.failureLogged.get(key) ?? 0) < now - FAILURE_LOG_EVERY_MS) {
        if (this.failureLogged.size >= 1000) this.failureLogged.clear();
        this.failureLogged.set(key, now);
        this.log.warn(`poster ${source} not fetched: ${why}`);
      }
      return new PosterError(`the poster from ${url.hostname} could not be fetched (the server is not reachable or refused, it has no such image, or the answer is no image of at most ${POSTER_MAX_BYTES / 1024 / 1024} MB)`, 502);
    };
    let data: Buffer;
    try {
      data = await fetchCapped(source, { policy: onImageServer ? null : this.policy(), timeoutMs: this.options.timeoutMs ?? POSTER_FETCH_TIMEOUT_MS, maxBytes: POSTER_MAX_BYTES, lookup: this.options.lookup });
    } catch (err) {
      throw failed((err as Error).message);
    }
    const type = imageType(data);
    if (!type) throw failed('the answer is no image');
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, `${key}.${type}`);
    const tmp = `${file}.tmp-${process.pid}`;
    await fs.writeFile(tmp, data, { mode: 0o600 });
    await fs.rename(tmp, file);
    await this.trim(file);
    return { file, contentType: CONTENT_TYPES[type] };
  }

  /** Removes the least recently served posters until the folder is under its cap (the new one stays). */
  private async trim(keep: string): Promise<void> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const files = (await Promise.all(names.map(async (name) => {
      const file = path.join(this.dir, name);
      const st = await fs.stat(file).catch(() => null);
      return st?.isFile() ? { file, size: st.size, used: st.mtimeMs } : null;
    }))).filter((f): f is { file: string; size: number; used: number } => f !== null);
    let total = files.reduce((sum, f) => sum + f.size, 0);
    for (const f of files.sort((a, b) => a.used - b.used)) {
      if (total <= this.maxBytes) break;
      if (f.file === keep) continue;
      await fs.rm(f.file, { force: true });
      total -= f.size;
    }
  }
}
