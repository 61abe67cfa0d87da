import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { XMLBuilder } from 'fast-xml-parser';
import { exists } from './fs-exists.js';
import { realPathWithin } from './media-paths.js';
import { fetchPoster, POSTER_FETCH_FAILED, type PosterFetchOptions } from './poster-fetch.js';
import type { LibraryInfo } from './protocol.js';
import type { ResolveAll, TargetPolicy } from './target-rules.js';

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, indentBy: '  ', suppressEmptyNode: true, suppressBooleanAttributes: false });

/**
 * Characters XML 1.0 does not allow in text (the C0 controls but tab, line feed and carriage return;
 * U+FFFE and U+FFFF; a surrogate without its pair), and DEL and the C1 controls, which it discourages.
 * One of them in a title made the whole nfo unreadable to a strict reader, so they are dropped.
 */
const NOT_XML_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]|[\ud800-\udfff]/gu;

/** Text as an XML 1.0 document may hold it: the characters above removed (escaping is the builder's). */
export function xmlText(text: string): string {
  return text.replace(NOT_XML_TEXT, '');
}

/** An IMDb id as IMDb writes it; anything else is left out of the nfo's ids and its scraper line. */
const IMDB_ID = /^tt\d{5,10}$/;

/** Jellyfin reads a <year> only above 1850; a year outside that range is left out. */
const MIN_NFO_YEAR = 1851;
const MAX_NFO_YEAR = 9999;

/**
 * The scraper line of a hybrid nfo: the page of the title at the metadata site, written after the XML.
 * Kodi's scrapers take the title's id from it (themoviedb.org/movie/<id>, /tv/<id>, imdb.com/title/<tt>)
 * and fetch everything the nfo does not say, the nfo's own fields winning; Jellyfin and Emby read the
 * ids from it as well. Null when the title has no id a scraper knows.
 */
export function scraperUrl(info: Pick<LibraryInfo, 'kind' | 'tmdb_id' | 'imdb_id'>): string | null {
  const { tmdb, imdb } = knownIds(info);
  if (tmdb) return `https://www.themoviedb.org/${info.kind === 'series' ? 'tv' : 'movie'}/${tmdb}`;
  if (imdb) return `https://www.imdb.com/title/${imdb}/`;
  return null;
}

/** The title's TMDB and IMDb ids when they have their sites' form, else null. */
function knownIds(info: Pick<LibraryInfo, 'tmdb_id' | 'imdb_id'>): { tmdb: string | null; imdb: string | null } {
  return {
    tmdb: info.tmdb_id && Number.isSafeInteger(info.tmdb_id) && info.tmdb_id > 0 ? String(info.tmdb_id) : null,
    imdb: info.imdb_id && IMDB_ID.test(info.imdb_id) ? info.imdb_id : null,
  };
}

/**
 * movie.nfo / tvshow.nfo in the Kodi format that Jellyfin, Emby and Kodi read, as a hybrid nfo: the
 * XML with what Ripwerk knows, then the scraper line (scraperUrl), so Kodi still scrapes the rest
 * instead of taking the nfo as complete. The ids follow each reader: Kodi reads
 * <uniqueid type=… default="true">, Emby <tmdbid>/<imdbid>, Jellyfin both. Only what is known is
 * written: a <year> but no <premiered> (the metadata has no full date; a made-up 1 January would be
 * shown as the premiere), no <thumb> (poster.jpg beside the nfo is found by every reader; a bare file
 * name in <thumb> is not a URL and Jellyfin logs an error for it on every refresh). A tvshow.nfo
 * carries <episodeguide> in the JSON form Kodi reads since v19, or Kodi adds no episodes to it.
 */
export function nfoXml(info: LibraryInfo): string {
  const root = info.kind === 'series' ? 'tvshow' : 'movie';
  const { tmdb, imdb } = knownIds(info);
  const ids: Record<string, unknown> = {};
  const uniqueIds = info.profile !== 'emby';
  const plainIds = info.profile !== 'kodi';
  if (uniqueIds) {
    const list: Record<string, unknown>[] = [];
    if (tmdb) list.push({ '@_type': 'tmdb', '@_default': 'true', '#text': tmdb });
    if (imdb) list.push({ '@_type': 'imdb', ...(tmdb ? {} : { '@_default': 'true' }), '#text': imdb });
    if (list.length) ids.uniqueid = list;
  }
  if (plainIds) {
    if (tmdb) ids.tmdbid = tmdb;
    if (imdb) ids.imdbid = imdb;
  }
  const guide = info.kind === 'series' && (tmdb || imdb) ? { episodeguide: JSON.stringify({ ...(tmdb ? { tmdb } : {}), ...(imdb ? { imdb } : {}) }) } : {};
  const year = info.year !== null && Number.isInteger(info.year) && info.year >= MIN_NFO_YEAR && info.year <= MAX_NFO_YEAR ? { year: String(info.year) } : {};
  const plot = info.overview ? xmlText(info.overview) : '';
  const doc = {
    [root]: {
      title: xmlText(info.title),
      ...year,
      ...(plot ? { plot } : {}),
      ...ids,
      ...guide,
    },
  };
  const url = scraperUrl(info);
  const xml = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${builder.build(doc) as string}`;
  return url ? `${xml.replace(/\n*$/, '\n')}${url}\n` : xml;
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
 * Downloads a poster to dest by the poster fetch every Ripwerk fetch of a foreign poster uses
 * (poster-fetch.ts): capped while the bytes arrive, an image by its first bytes, and, with a policy,
 * the address checked by the webhook target rules when the fetch connects to it (a name that resolves
 * to loopback then is refused, DNS rebinding included). Every failure throws the one wording of
 * POSTER_FETCH_FAILED: the job log is read through the API too.
 */
export async function downloadPoster(url: string, dest: string, opts: PosterFetchOptions): Promise<void> {
  let data: Buffer;
  try {
    ({ data } = await fetchPoster(url, opts));
  } catch {
    throw new Error(`the poster from ${URL.canParse(url) ? new URL(url).hostname : 'its URL'} could not be fetched (${POSTER_FETCH_FAILED})`);
  }
  await writeFileReplacing(dest, data);
}

/** The rule for the address of a poster fetch: none on the configured image server, else the webhook target rules. */
export function posterPolicy(info: Pick<LibraryInfo, 'poster_policy'>, ownPort: number | null): TargetPolicy | null {
  if (info.poster_policy === null) return null;
  return { allowPrivate: info.poster_policy?.allow_private === true, ownPort };
}

/** What a writer of library files may add: this coordinator's API port (never a poster source), and a resolver for tests. */
export interface LibraryFilesOptions {
  ownPort?: number | null;
  lookup?: ResolveAll;
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
export async function writeLibraryFiles(outputDir: string, info: LibraryInfo, log: (level: 'info' | 'warn', text: string) => void, opts: LibraryFilesOptions = {}): Promise<LibraryFilesResult> {
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
      await downloadPoster(info.poster_url, poster, { policy: posterPolicy(info, opts.ownPort ?? null), lookup: opts.lookup });
      written.push(poster);
    } catch (err) {
      log('warn', `poster not saved: ${(err as Error).message}`);
    }
  }
  log('info', `${info.profile} metadata written: ${written.map((f) => path.basename(f)).join(', ')}`);
  return { written, skipped: null };
}

/**
 * The nfo and poster of a finished job; a failure is a warning in the job log, never a failed job.
 * They are written last, maybe hours after the folder was checked: its real path is resolved now and
 * must still lie under the real path of `within` (the job's target folder), and the files go into
 * that real folder, so a folder swapped for a link meanwhile receives nothing (issue 42).
 */
export async function describeOutput(outputDir: string, info: LibraryInfo, ctx: { log(level: 'info' | 'warn', text: string): void }, within: string): Promise<void> {
  const dir = info.kind === 'series' ? path.dirname(outputDir) : outputDir;
  try {
    const found = await realPathWithin([within], dir);
    if (found.kind !== 'inside') {
      ctx.log('warn', `media-server files not written: the folder ${dir} ${found.kind === 'missing' ? 'is gone' : `leads outside ${within} through a symbolic link by now`}`);
      return;
    }
    await writeLibraryFiles(info.kind === 'series' ? path.join(found.path, path.basename(outputDir)) : found.path, info, (level, text) => ctx.log(level, text));
  } catch (err) {
    ctx.log('warn', `media-server files not written: ${(err as Error).message}`);
  }
}
