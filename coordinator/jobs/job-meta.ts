/**
 * A job's meta (the column jobs.meta, shared/api-types.ts JobMeta): parsed and checked once, where
 * the store reads a row, so every other module reads typed fields. Plain checks, no schema library:
 * the first GET /jobs of 10,000 jobs reads every row through here.
 *
 * - A value of the wrong type is dropped (the key reads as absent); the row stays usable.
 * - A key this version does not know is kept as it is: rows of older and newer versions keep what
 *   they carry through every write.
 * - Corrupt JSON, or JSON that is no object, is no meta at all (null), as the spec says for the API.
 */
import type { AccurateRipReport, DiscIds, EpisodeRuntime, FileStreams, RippedTitle } from '../../shared/protocol.js';
import type { JobMeta } from '../../shared/api-types.js';
import { storedAlbum } from '../metadata/album-choice.js';

/** A key's check: its value when it has the declared type (possibly cleaned), else undefined. */
type Check<T> = (value: unknown) => T | undefined;

const text: Check<string> = (v) => (typeof v === 'string' ? v : undefined);
const number: Check<number> = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const flag: Check<boolean> = (v) => (typeof v === 'boolean' ? v : undefined);
const orNull =
  <T>(check: Check<T>): Check<T | null> =>
  (v) =>
    v === null ? null : check(v);
const oneOf =
  <T extends string>(...values: T[]): Check<T> =>
  (v) =>
    values.includes(v as T) ? (v as T) : undefined;
/** A list whose every item has the type; one item of another type drops the list. */
const listOf =
  <T>(isItem: (item: unknown) => item is T): Check<T[]> =>
  (v) =>
    Array.isArray(v) && v.every(isItem) ? v : undefined;
/** A number of seconds or bytes: never below 0. */
const notNegative: Check<number> = (v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
/** A moment as the coordinator writes it (Date.toISOString); anything else reads as absent. */
const isoTime: Check<string> = (v) => (typeof v === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v) ? v : undefined);
const isText = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The finished files: the names among them are kept, anything else is left out. */
const fileNames: Check<string[]> = (v) => (Array.isArray(v) ? (v.every(isText) ? v : v.filter(isText)) : undefined);

/** A season's episodes: entries without an episode number are left out, a runtime that is no number is unknown (null). */
const episodes: Check<EpisodeRuntime[]> = (v) => {
  if (!Array.isArray(v)) return undefined;
  const valid = (e: unknown): e is EpisodeRuntime => isObject(e) && isNumber(e.episode) && (e.minutes === null || isNumber(e.minutes));
  if (v.every(valid)) return v;
  return v.filter((e): e is Record<string, unknown> => isObject(e) && isNumber(e.episode)).map((e) => ({ episode: e.episode as number, minutes: isNumber(e.minutes) ? e.minutes : null }));
};

/** The disc's ids: each of the four a text or null (a missing one is null); anything else drops the object. */
const DISC_ID_KEYS = ['dvd_disc_id', 'aacs_disc_id', 'content_hash', 'file_fingerprint'] as const;
const discIds: Check<DiscIds> = (v) => {
  if (!isObject(v)) return undefined;
  if (!DISC_ID_KEYS.every((k) => v[k] === undefined || v[k] === null || typeof v[k] === 'string')) return undefined;
  if (DISC_ID_KEYS.every((k) => v[k] === null || typeof v[k] === 'string')) return v as unknown as DiscIds;
  return { dvd_disc_id: (v.dvd_disc_id as string | undefined) ?? null, aacs_disc_id: (v.aacs_disc_id as string | undefined) ?? null, content_hash: (v.content_hash as string | undefined) ?? null, file_fingerprint: (v.file_fingerprint as string | undefined) ?? null };
};

/** A ripped title as the agent reported it (checked against the protocol schema on receipt): its shape is checked again here. */
const isRippedTitle = (v: unknown): v is RippedTitle =>
  isObject(v) && isNumber(v.number) && isText(v.file) && isNumber(v.seconds) && isNumber(v.size_bytes) && (v.role === null || (isObject(v.role) && isText(v.role.role)));

const isStreams = (v: unknown): v is FileStreams => isObject(v) && typeof v.file === 'string' && Array.isArray(v.audio) && Array.isArray(v.subtitles);

/** Frames by node name: every value a number of frames, else the whole record is dropped. */
const framesByNode: Check<Record<string, number>> = (v) => (isObject(v) && Object.values(v).every((n) => isNumber(n) && n >= 0) ? (v as Record<string, number>) : undefined);

/** One check per declared key of JobMeta: a key added to the type without a check here fails to compile. */
const CHECKS: { readonly [K in keyof JobMeta]-?: Check<NonNullable<JobMeta[K]> | Extract<JobMeta[K], null>> } = {
  chunk_frames: framesByNode,
  poster_path: text,
  titles: listOf(isNumber),
  transcode_node: text,
  work_dir: text,
  rip_fertig: flag,
  fingerprint: text,
  label_fingerprint: text,
  disc_ids: orNull(discIds),
  year: orNull(number),
  series: orNull(text),
  season: orNull(number),
  main_feature_only: flag,
  disc_type: text,
  disc_label: text,
  audio_languages: listOf(isText),
  subtitle_languages: listOf(isText),
  original_language: text,
  streams: listOf(isStreams),
  title_source: oneOf('request', 'lookup', 'label'),
  metadata_source: text,
  confidence: number,
  overview: text,
  tmdb_id: number,
  imdb_id: text,
  disc_number: number,
  episodes,
  album: (v) => storedAlbum(v) ?? undefined,
  musicbrainz_disc_id: text,
  raw_files: listOf(isText),
  output_files: fileNames,
  episodes_guessed: flag,
  retry_of: text,
  read_errors: number,
  careful: flag,
  ripped_titles: listOf(isRippedTitle),
  library_folder: text,
  accuraterip: (v) => (isObject(v) && isText(v.status) && isText(v.disc_id) && Array.isArray(v.tracks) ? (v as unknown as AccurateRipReport) : undefined),
  session_id: text,
  first_episode: number,
  rip_started_at: isoTime,
  rip_seconds: notNegative,
  transcode_started_at: isoTime,
  transcode_seconds: notNegative,
  raw_bytes: notNegative,
  output_bytes: notNegative,
};

/** The declared keys, as the stored JSON may name them (a JSON object may also hold "__proto__" or "constructor"). */
const checkOf = new Map<string, Check<unknown>>(Object.entries(CHECKS));

/** A stored meta value (the column's text) as typed meta: null when absent, corrupt or no object. */
export function parseJobMeta(raw: string | null): JobMeta | null {
  if (!raw) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isObject(value)) return null;
  for (const key of Object.keys(value)) {
    const check = checkOf.get(key);
    if (!check) continue;
    const checked = check(value[key]);
    if (checked === undefined) delete value[key];
    else if (checked !== value[key]) value[key] = checked;
  }
  return value as JobMeta;
}

/** Meta with a patch over it, as the column stores it: keys of the patch replace the stored ones, an undefined one removes its key. */
export function mergedMeta(meta: JobMeta | null, patch: JobMeta): string {
  return JSON.stringify({ ...meta, ...patch });
}
