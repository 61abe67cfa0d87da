import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../shared/log.js';
import { fetchPoster, POSTER_FETCH_FAILED, POSTER_FETCH_TIMEOUT_MS, type PosterType } from '../../shared/poster-fetch.js';
import type { ResolveAll, TargetPolicy } from '../../shared/target-rules.js';
import { posterUrl } from './library-info.js';

const CONTENT_TYPES: Record<PosterType, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif' };
const FAILURE_LOG_EVERY_MS = 15 * 60_000;

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
 * connects to, at that moment. Every failure answers the same 502 and logs the same line. The
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
    let fetched: Awaited<ReturnType<typeof fetchPoster>>;
    try {
      fetched = await fetchPoster(source, { policy: onImageServer ? null : this.policy(), timeoutMs: this.options.timeoutMs ?? POSTER_FETCH_TIMEOUT_MS, lookup: this.options.lookup });
    } catch {
      // Once per poster and quarter hour (a page asking for it again and again does not fill the
      // log), and in the one wording of every failure: GET /logs is no port scanner either.
      const now = Date.now();
      if ((this.failureLogged.get(key) ?? 0) < now - FAILURE_LOG_EVERY_MS) {
        if (this.failureLogged.size >= 1000) this.failureLogged.clear();
        this.failureLogged.set(key, now);
        this.log.warn(`poster ${source} not fetched (${POSTER_FETCH_FAILED})`);
      }
      throw new PosterError(`the poster from ${url.hostname} could not be fetched (${POSTER_FETCH_FAILED})`, 502);
    }
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.dir, `${key}.${fetched.type}`);
    const tmp = `${file}.tmp-${process.pid}`;
    await fs.writeFile(tmp, fetched.data, { mode: 0o600 });
    await fs.rename(tmp, file);
    await this.trim(file);
    return { file, contentType: CONTENT_TYPES[fetched.type] };
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
