import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../shared/log.js';
import { posterUrl } from './library-info.js';

/** A poster larger than this is refused (the agents' poster.jpg has the same cap). */
export const POSTER_MAX_BYTES = 10 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 15_000;

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

/**
 * Posters fetched once by the coordinator and served from DATA_DIR/posters, so a phone that cannot
 * reach the movie database still shows them. A poster is named by the SHA-256 of its source URL;
 * only posters the coordinator itself has shown (a disc card, a job) are fetched, never a URL a
 * request names, and no redirect is followed. The folder is kept under a size cap: the least recently
 * served go first.
 */
export class PosterCache {
  private readonly sources = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<CachedPoster>>();

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly imageBase: string,
    private readonly log: Logger,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

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

  /** Fetches a poster in the background (a failure is logged once, the card then has none). */
  prefetch(poster: string | null | undefined): void {
    const key = this.register(poster);
    if (key) this.get(key).catch((err: Error) => this.log.warn(`poster ${this.sources.get(key)} not cached: ${err.message}`));
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
    const host = new URL(source).host;
    let res: Response;
    try {
      res = await this.fetchImpl(source, { redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (err) {
      throw new PosterError(`the poster could not be fetched from ${host}: ${(err as Error).message}`, 502);
    }
    if (!res.ok) throw new PosterError(`the poster could not be fetched from ${host}: HTTP ${res.status}`, 502);
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > POSTER_MAX_BYTES) throw new PosterError(`the poster from ${host} is larger than ${POSTER_MAX_BYTES / 1024 / 1024} MB`, 502);
    const data = new Uint8Array(await res.arrayBuffer());
    if (data.byteLength > POSTER_MAX_BYTES) throw new PosterError(`the poster from ${host} is larger than ${POSTER_MAX_BYTES / 1024 / 1024} MB`, 502);
    const type = imageType(data);
    if (!type) throw new PosterError(`what ${host} sent as the poster is no image`, 502);
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
