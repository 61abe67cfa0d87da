import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { XMLBuilder } from 'fast-xml-parser';
import { exists } from './fs-exists.js';
import type { LibraryInfo } from './protocol.js';

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, indentBy: '  ', suppressEmptyNode: true, suppressBooleanAttributes: false });
const POSTER_TIMEOUT_MS = 15_000;
const POSTER_MAX_BYTES = 10 * 1024 * 1024;

/**
 * movie.nfo / tvshow.nfo in the Kodi format that Jellyfin, Emby and Kodi read. The ids follow each
 * reader: Kodi reads <uniqueid type=…>, Emby <tmdbid>/<imdbid>, Jellyfin both.
 */
export function nfoXml(info: LibraryInfo): string {
  const root = info.kind === 'series' ? 'tvshow' : 'movie';
  const ids: Record<string, unknown> = {};
  const uniqueIds = info.profile !== 'emby';
  const plainIds = info.profile !== 'kodi';
  if (uniqueIds) {
    const list: Record<string, unknown>[] = [];
    if (info.tmdb_id) list.push({ '@_type': 'tmdb', '@_default': 'true', '#text': String(info.tmdb_id) });
    if (info.imdb_id) list.push({ '@_type': 'imdb', ...(info.tmdb_id ? {} : { '@_default': 'true' }), '#text': info.imdb_id });
    if (list.length) ids.uniqueid = list;
  }
  if (plainIds) {
    if (info.tmdb_id) ids.tmdbid = String(info.tmdb_id);
    if (info.imdb_id) ids.imdbid = info.imdb_id;
  }
  const doc = {
    [root]: {
      title: info.title,
      ...(info.year ? { year: String(info.year), ...(info.kind === 'series' ? { premiered: `${info.year}-01-01` } : {}) } : {}),
      ...(info.overview ? { plot: info.overview } : {}),
      ...ids,
      ...(info.poster_url ? { thumb: { '@_aspect': 'poster', '#text': 'poster.jpg' } } : {}),
    },
  };
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${builder.build(doc) as string}`;
}

/**
 * Writes `data` as `file` without following a link planted at either name (issue 42): into a new
 * temporary name (created exclusively: a link there fails the write instead of being written
 * through), then renamed over `file` (a rename replaces a link at `file`, it does not follow it).
 */
export async function writeFileReplacing(file: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.part`;
  try {
    await fs.writeFile(tmp, data, { flag: 'wx' });
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Downloads a poster to dest; refuses what is not an image or is too big, counting the bytes as they
 * arrive (a huge answer is cut off at the cap, not read whole first).
 */
export async function downloadPoster(url: string, dest: string): Promise<void> {
  const res = await fetch(url, { signal: AbortSignal.timeout(POSTER_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`the poster server answered ${res.status}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('image/')) throw new Error(`the poster is not an image (${type || 'no content type'})`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > POSTER_MAX_BYTES) throw new Error(`the poster has more than ${POSTER_MAX_BYTES} bytes`);
    chunks.push(chunk as Uint8Array);
  }
  if (size === 0) throw new Error('the poster has 0 bytes');
  await writeFileReplacing(dest, Buffer.concat(chunks));
}

export interface LibraryFilesResult {
  written: string[];
  skipped: string | null;
}

/**
 * Writes the nfo and poster.jpg for a finished output: a movie's into its folder, a series' into the
 * series folder (above Season NN), where a tvshow.nfo already there is left alone, so a second season
 * never overwrites the series metadata. A poster that cannot be fetched is reported, not fatal. A link
 * planted at either name is replaced, never written through; the folder itself was checked by whoever
 * planned it (planOutput on a worker, the correction on the coordinator).
 */
export async function writeLibraryFiles(outputDir: string, info: LibraryInfo, log: (level: 'info' | 'warn', text: string) => void): Promise<LibraryFilesResult> {
  const dir = info.kind === 'series' ? path.dirname(outputDir) : outputDir;
  const nfo = path.join(dir, info.kind === 'series' ? 'tvshow.nfo' : 'movie.nfo');
  if (info.kind === 'series' && (await exists(nfo))) {
    log('info', `${nfo} exists already (an earlier season): the series metadata is kept`);
    return { written: [], skipped: nfo };
  }
  const written: string[] = [];
  await writeFileReplacing(nfo, nfoXml(info));
  written.push(nfo);
  if (info.poster_url) {
    const poster = path.join(dir, 'poster.jpg');
    try {
      await downloadPoster(info.poster_url, poster);
      written.push(poster);
    } catch (err) {
      log('warn', `poster not saved: ${(err as Error).message}`);
    }
  }
  log('info', `${info.profile} metadata written: ${written.map((f) => path.basename(f)).join(', ')}`);
  return { written, skipped: null };
}

/** The nfo and poster of a finished job; a failure is a warning in the job log, never a failed job. */
export async function describeOutput(outputDir: string, info: LibraryInfo, ctx: { log(level: 'info' | 'warn', text: string): void }): Promise<void> {
  try {
    await writeLibraryFiles(outputDir, info, (level, text) => ctx.log(level, text));
  } catch (err) {
    ctx.log('warn', `media-server files not written: ${(err as Error).message}`);
  }
}
