import fs from 'node:fs/promises';
import path from 'node:path';
import type { AlbumInfo } from '../../shared/protocol.js';
import { folderName, safeName, withCollisionSuffix } from '../../shared/output-name.js';
import { runTool, ToolError } from '../../shared/process.js';
import { mkdirInside } from '../output/output-folder.js';

/** A cover larger than this is not saved (the Cover Art Archive's originals can be scans of tens of MB). */
export const MAX_COVER_BYTES = 10 * 1024 * 1024;
const COVER_TIMEOUT_MS = 30_000;

const pad = (n: number): string => String(n).padStart(2, '0');

/** A release of several discs: its discs share one album folder and the file names carry the disc number. */
export function isMultiDisc(album: AlbumInfo): boolean {
  return (album.disc_total ?? 1) > 1;
}

/** What the FLAC files of a folder say of themselves: the release id and disc number in their tags. */
export type FlacTagReader = (file: string) => Promise<{ release_id: string | null; disc_number: number | null }>;

/**
 * Whether an album folder holding files is the place of this disc: a disc of the same multi-disc
 * release ripped before (every FLAC in it carries the release id and another disc number, besides
 * them only the cover and the other discs' AccurateRip logs). Anything else in it is another album,
 * or this disc ripped before.
 */
async function joinsRelease(dir: string, album: AlbumInfo, readTags: FlacTagReader): Promise<boolean> {
  if (!isMultiDisc(album) || !album.release_id) return false;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => null);
  if (!entries) return false;
  const flacs = entries.filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.flac'));
  const otherDiscLog = (name: string): boolean => {
    const m = /^accuraterip-disc(\d+)\.log$/.exec(name);
    return m !== null && Number(m[1]) !== album.disc_number;
  };
  if (flacs.length === 0 || entries.some((e) => !flacs.includes(e) && !/^cover\.(jpg|png)$/i.test(e.name) && !otherDiscLog(e.name))) return false;
  for (const f of flacs) {
    const tags = await readTags(path.join(dir, f.name)).catch(() => null);
    if (!tags || tags.release_id !== album.release_id || tags.disc_number === null || tags.disc_number === album.disc_number) return false;
  }
  return true;
}

/**
 * The album's folder `<target>/<Artist>/<Album> (<Year>)` (without a year just the album). Every disc
 * of a multi-disc release goes into the same folder, as Jellyfin, Navidrome and beets read one album
 * (its files named `D-NN - <Title>.flac`). When the folder already holds files of anything else, the
 * job id is appended so nothing is overwritten. The folder is created inside the real path of the
 * target folder (a planted link leading out of it fails with OutsideWrite).
 */
export async function planAlbumFolder(targetDir: string, album: AlbumInfo, jobId: string, readTags?: FlacTagReader): Promise<string> {
  const artist = safeName(album.artist);
  const name = folderName(album.album, album.year);
  // The artist folder first, inside the target's real path (a planted link out of it fails the job).
  const artistDir = await mkdirInside(targetDir, artist);
  let dir = path.join(artistDir, name);
  const taken = await fs.readdir(dir).then(
    (entries) => entries.length > 0,
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
  );
  if (taken && !(readTags && (await joinsRelease(dir, album, readTags)))) dir = path.join(artistDir, withCollisionSuffix(name, jobId));
  return mkdirInside(targetDir, path.join(artist, path.basename(dir)));
}

/** The title of track n: the album's, else the given fallback (cue sheet), else "Titel n". */
export function trackTitle(album: AlbumInfo, n: number, fallback?: string | null): string {
  return album.tracks.find((t) => t.number === n)?.title || fallback || `Titel ${n}`;
}

/**
 * `NN - <Title>.flac` with the title made file-name safe; on a release of several discs
 * `D-NN - <Title>.flac` (Picard's default naming), so the discs sort one after the other in one folder.
 */
export function trackFileName(album: AlbumInfo, n: number, fallback?: string | null): string {
  return `${isMultiDisc(album) ? `${album.disc_number}-` : ''}${pad(n)} - ${safeName(trackTitle(album, n, fallback))}.flac`;
}

/**
 * The Vorbis comments of track n, by Picard's tag mapping for Vorbis (its appendix "Tag Mapping"
 * and picard/formats/vorbis.py, which writes both TRACKTOTAL and TOTALTRACKS, DISCTOTAL and
 * TOTALDISCS): names, numbers and totals, the release's date, country, status, types, medium,
 * labels, barcode, ASIN and script, COMPILATION=1 for a Various Artists release, the sort names and
 * the MusicBrainz ids (MUSICBRAINZ_TRACKID is the recording id). A field with several values
 * (release types, labels, artist ids) is one comment per value. Empty values are left out.
 */
export function vorbisTags(album: AlbumInfo, n: number, total: number, fallbackTitle?: string | null): [string, string][] {
  const track = album.tracks.find((t) => t.number === n);
  const d = album.details ?? null;
  const trackTotal = String(Math.max(total, album.tracks.length));
  const discTotal = String(Math.max(album.disc_total ?? 1, album.disc_number));
  // DATE is the release's full date, unless the job gave another year.
  const date = d?.date && album.year !== null && d.date.startsWith(String(album.year)) ? d.date : album.year ? String(album.year) : null;
  const many = (key: string, values: string[] | undefined): [string, string][] => (values ?? []).map((v) => [key, v]);
  const tags: [string, string | null | undefined][] = [
    ['ARTIST', track?.artist || album.artist],
    ['ARTISTSORT', track?.artist_sort],
    ['ALBUMARTIST', album.artist],
    ['ALBUMARTISTSORT', d?.artist_sort],
    ['ALBUM', album.album],
    ['TITLE', trackTitle(album, n, fallbackTitle)],
    ['TRACKNUMBER', String(n)],
    ['TRACKTOTAL', trackTotal],
    ['TOTALTRACKS', trackTotal],
    ['DISCNUMBER', String(album.disc_number)],
    ['DISCTOTAL', discTotal],
    ['TOTALDISCS', discTotal],
    ['DATE', date],
    ['ORIGINALDATE', d?.original_date],
    ['ORIGINALYEAR', d?.original_date?.slice(0, 4)],
    ['RELEASECOUNTRY', d?.country],
    ['RELEASESTATUS', d?.status],
    ...many('RELEASETYPE', d?.types),
    ['MEDIA', d?.media],
    ...many('LABEL', d?.labels),
    ...many('CATALOGNUMBER', d?.catalog_numbers),
    ['BARCODE', d?.barcode],
    ['ASIN', d?.asin],
    ['SCRIPT', d?.script],
    ['COMPILATION', d?.compilation ? '1' : null],
    ['MUSICBRAINZ_ALBUMID', album.release_id],
    ['MUSICBRAINZ_RELEASEGROUPID', d?.release_group_id],
    ...many('MUSICBRAINZ_ALBUMARTISTID', d?.artist_ids),
    ...many('MUSICBRAINZ_ARTISTID', track?.artist_ids),
    ['MUSICBRAINZ_TRACKID', track?.recording_id],
    ['MUSICBRAINZ_RELEASETRACKID', track?.track_id],
    ['MUSICBRAINZ_DISCID', d?.disc_id],
  ];
  // A tag value is one line: control characters (a newline would start a new comment) become spaces.
  return tags.filter((t): t is [string, string] => Boolean(t[1])).map(([k, v]) => [k, v.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()]);
}

/**
 * Replaces every Vorbis comment of a FLAC file with these (metaflac keeps the vendor string). The
 * values go in as UTF-8 untouched (--no-utf8-convert): metaflac would otherwise convert them from the
 * process locale, and an agent started without LANG turns "Töne" into "T##ne".
 */
export async function writeTags(metaflac: string, file: string, tags: [string, string][], signal: AbortSignal): Promise<void> {
  const result = await runTool(metaflac, ['--no-utf8-convert', '--remove-all-tags', ...tags.map(([k, v]) => `--set-tag=${k}=${v}`), file], { signal, timeoutMs: 60_000 });
  if (result.exitCode !== 0) throw new ToolError('metaflac', `metaflac could not tag ${path.basename(file)}: ${result.stderr.trim().split('\n').pop() || 'no reason given'}`, { exitCode: result.exitCode ?? undefined });
}

/** The release id and disc number metaflac reads from a FLAC file's Vorbis comments. */
export function metaflacTagReader(metaflac: string, signal?: AbortSignal): FlacTagReader {
  return async (file) => {
    const r = await runTool(metaflac, ['--no-utf8-convert', '--show-tag=MUSICBRAINZ_ALBUMID', '--show-tag=DISCNUMBER', file], { signal, timeoutMs: 60_000, captureStdout: true });
    const tag = (name: string): string | null => new RegExp(`^${name}=(.*)$`, 'im').exec(r.stdout)?.[1]?.trim() || null;
    const disc = Number.parseInt(tag('DISCNUMBER') ?? '', 10);
    return { release_id: r.exitCode === 0 ? tag('MUSICBRAINZ_ALBUMID') : null, disc_number: Number.isInteger(disc) ? disc : null };
  };
}

/** The kind of image a buffer holds by its first bytes: JPEG or PNG, else null. */
export function imageKind(data: Buffer): 'jpg' | 'png' | null {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpg';
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  return null;
}

/**
 * Downloads the front cover into the album folder as cover.jpg (cover.png for a PNG). Returns the
 * file, or the reason it was not saved: a missing cover never fails the rip.
 */
export async function saveCover(url: string, dir: string, userAgent: string, signal: AbortSignal): Promise<{ file: string } | { why: string }> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { 'user-agent': userAgent }, redirect: 'follow', signal: AbortSignal.any([signal, AbortSignal.timeout(COVER_TIMEOUT_MS)]) });
  } catch (err) {
    return { why: `the cover could not be fetched (${networkReason(err)})` };
  }
  if (!res.ok) return { why: `the cover archive answered ${res.status}` };
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_COVER_BYTES) return { why: `the cover is larger than ${MAX_COVER_BYTES / 1024 / 1024} MB` };
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body ?? []) {
      size += (chunk as Uint8Array).length;
      if (size > MAX_COVER_BYTES) return { why: `the cover is larger than ${MAX_COVER_BYTES / 1024 / 1024} MB` };
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
  } catch (err) {
    return { why: `the cover download broke off (${(err as Error).message})` };
  }
  const data = Buffer.concat(chunks);
  const kind = imageKind(data);
  if (!kind) return { why: 'the cover archive sent something that is not a JPEG or PNG image' };
  const file = path.join(dir, `cover.${kind}`);
  await fs.writeFile(file, data);
  return { file };
}

/** Why a fetch failed, in a word: the socket error code (also inside an AggregateError), a timeout, else the message. */
function networkReason(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; errors?: { code?: string }[] } };
  if (e.name === 'TimeoutError') return 'no answer in time';
  return e.cause?.code ?? e.cause?.errors?.[0]?.code ?? (e.cause as Error | undefined)?.message ?? e.message;
}
