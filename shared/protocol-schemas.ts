import * as z from 'zod/mini';
import { en } from 'zod/locales';
import { MAX_SIMILAR_TITLES_MAX, MAX_SIMILAR_TITLES_MIN } from './main-feature.js';
import type { AgentEvent, AgentStatus, AppKeyMessage, Command, DriveState, EventAck, KeydbMessage, KeystoreMessage } from './protocol.js';

/**
 * One schema per MQTT message type of shared/protocol.ts. Every payload the coordinator or an agent
 * receives passes one of these before it is used; what fails is dropped (see DropLog). Objects are
 * loose: a field a newer peer adds passes through untouched instead of failing the whole message.
 * Strings and lists are bounded so a forged message cannot make a row or a file of any size.
 *
 * Written with zod/mini (the functional API of the same package): `npm run build` bundles this
 * module with only the parts of zod it uses (scripts/bundle-schemas.mjs), which costs a process
 * about 1.5 MB instead of the 12 MB the whole of zod with its 50 locales takes when loaded from
 * node_modules. The messages are the English ones of the full build.
 */
z.config(en());

/** A log event's message: longer ones are cut to this (and marked), on the agent before sending and on the coordinator on receipt. */
export const LOG_MESSAGE_LIMIT = 64 * 1024;
/**
 * The largest AACS dump that travels over MQTT (raw bytes): base64 makes 4/3 of it, which with the
 * event around it stays below the default packet limit of 1 MiB. A larger dump stays on the worker
 * (its path is logged there) to be copied by hand.
 */
export const DUMP_MQTT_LIMIT_BYTES = 512 * 1024;

/** A string of at most `max` characters. */
const text = (max: number) => z.string().check(z.maxLength(max));
/** An integer; a bounded one with min/max. */
const int = (min?: number, max?: number) => z.int().check(...(min === undefined ? [] : [z.gte(min)]), ...(max === undefined ? [] : [z.lte(max)]));
/** A list of at most `max` items. */
const list = <T extends z.ZodMiniType>(item: T, max: number) => z.array(item).check(z.maxLength(max));

const id = z.string().check(z.minLength(1), z.maxLength(200));
/** The longest text (a title, a series name) and the longest path a command or event may carry: the coordinator refuses longer ones up front. */
export const SHORT_TEXT_MAX = 1000;
export const PATH_TEXT_MAX = 4096;
const shortText = text(SHORT_TEXT_MAX);
const pathText = text(PATH_TEXT_MAX);
const reasonText = text(LOG_MESSAGE_LIMIT);
const timestamp = text(64);
const count = int(0, Number.MAX_SAFE_INTEGER);
const fileList = list(pathText, 10_000);
const language = text(16);
const bool = z.boolean();
const year = z.nullable(int());

export const capabilitiesSchema = z.looseObject({
  encoders: list(shortText, 100),
  tools: z.record(shortText, z.nullable(shortText)),
  key_source: shortText,
  schluessel: count,
  rip_backend: z.enum(['makemkv', 'open-dvd', 'none']),
  transcode_only: bool,
  native: bool,
  presets: z.optional(list(z.looseObject({ category: shortText, presets: list(shortText, 1000) }), 200)),
});

export const agentStatusSchema = z.looseObject({
  node: id,
  state: z.enum(['online', 'offline']),
  name: z.optional(id),
  host: z.optional(shortText),
  ip: z.optional(shortText),
  slots: z.optional(int(0, 256)),
  tasks: z.optional(list(id, 10_000)),
  recovered: z.optional(list(z.looseObject({ command_id: id, job_id: id }), 10_000)),
  capabilities: z.optional(capabilitiesSchema),
  started_at: z.optional(timestamp),
  last_seen: z.optional(timestamp),
});

const discInfoSchema = z.looseObject({
  label: shortText,
  title: shortText,
  year,
  type: z.enum(['dvd', 'bluray', 'uhd', 'cd', 'unknown']),
  size_bytes: count,
  fingerprint: shortText,
  label_fingerprint: z.optional(shortText),
  ids: z.optional(
    z.nullable(
      z.looseObject({
        dvd_disc_id: z.nullable(shortText),
        aacs_disc_id: z.nullable(shortText),
        content_hash: z.nullable(shortText),
        file_fingerprint: z.nullable(shortText),
      }),
    ),
  ),
  source: pathText,
  audio_tracks: z.nullable(count),
});

export const driveStateSchema = z.looseObject({
  node: id,
  drive: id,
  kind: z.enum(['device', 'image']),
  path: pathText,
  vendor: z.nullable(shortText),
  model: z.nullable(shortText),
  status: z.enum(['no_disc', 'tray_open', 'disc_present', 'unknown']),
  disc: z.nullable(discInfoSchema),
});

const audioStreamSchema = z.looseObject({ index: count, language, codec: shortText, channels: z.nullable(count), commentary: z.optional(bool), visual_impaired: z.optional(bool) });
const subtitleStreamSchema = z.looseObject({ index: count, language, codec: shortText, forced: bool, hearing_impaired: z.optional(bool), commentary: z.optional(bool) });

const trackSchema = z.looseObject({
  number: count,
  seconds: z.number().check(z.gte(0), z.lte(1e7)),
  size_bytes: count,
  chapters: count,
  source_file: z.optional(z.nullable(shortText)),
  original_title_id: z.optional(z.nullable(shortText)),
  segment_count: z.optional(z.nullable(count)),
  segment_map: z.optional(z.nullable(text(4096))),
  audio: z.optional(list(audioStreamSchema, 200)),
  subtitles: z.optional(list(subtitleStreamSchema, 200)),
});

const episodeRange = z.nullable(z.looseObject({ first: int(0, 9999), last: int(0, 9999) }));
const season = z.nullable(int(0, 9999));
/** A title's role on a recognised disc; an extra's folder is one of the eight names, never a path. */
const titleRoleSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('main_movie'), name: z.nullable(shortText) }),
  z.looseObject({ role: z.literal('episode'), name: z.nullable(shortText), season, episodes: episodeRange }),
  z.looseObject({ role: z.literal('play_all'), name: z.nullable(shortText), season, episodes: episodeRange }),
  z.looseObject({
    role: z.literal('extra'),
    name: z.nullable(shortText),
    kind: shortText,
    folder: z.enum(['Deleted Scenes', 'Trailers', 'Featurettes', 'Behind The Scenes', 'Interviews', 'Scenes', 'Shorts', 'Other']),
    season,
    episodes: episodeRange,
  }),
  z.looseObject({ role: z.literal('unidentified') }),
]);
const titleEvidence = {
  source_file: z.optional(z.nullable(shortText)),
  segment_map: z.optional(z.nullable(text(4096))),
  seconds: z.number().check(z.gte(0), z.lte(1e7)),
  size_bytes: count,
};
const plannedTitleSchema = z.looseObject({ ...titleEvidence, index: int(0, 100_000), role: titleRoleSchema, take: bool });
const rippedTitleSchema = z.looseObject({ ...titleEvidence, number: count, file: pathText, role: z.nullable(titleRoleSchema), main_feature: z.optional(bool) });

const checksum = z.string().check(z.regex(/^[0-9a-f]{8}$/));
const accurateRipSchema = z.looseObject({
  disc_id: z.string().check(z.regex(/^\d{3}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}$/)),
  status: z.enum(['accurate', 'partly_accurate', 'inaccurate', 'not_in_database', 'unavailable']),
  reason: z.nullable(reasonText),
  read_offset: int(-100_000, 100_000),
  read_offset_source: z.enum(['setting', 'assumed', 'image']),
  tracks: list(z.looseObject({ number: int(1, 99), v1: checksum, v2: checksum, status: z.enum(['accurate', 'inaccurate', 'unknown']), confidence: z.nullable(int(0, 255)) }), 99),
});

const phase = z.enum(['rip', 'transcode']);
const eventBase = { event_id: id, node: id, ts: timestamp, command_id: z.optional(id), job_id: z.optional(id) };

/** The log message, cut to LOG_MESSAGE_LIMIT characters and marked when it was longer. */
export function truncateLogMessage(message: string): string {
  return message.length > LOG_MESSAGE_LIMIT ? `${message.slice(0, LOG_MESSAGE_LIMIT - 20)} … (truncated)` : message;
}

/** A chunk's cut (ChunkCut); a plan's chunks are numbered 0, 1, … (checked where the plan is taken). */
const chunkCutSchema = z.looseObject({
  index: int(0, 9_999),
  first_frame: count,
  frames: int(1, Number.MAX_SAFE_INTEGER),
  start_ticks: z.nullable(count),
  duration_ticks: z.nullable(int(1, Number.MAX_SAFE_INTEGER)),
});
/** A chunked title has at most this many chunks. */
export const CHUNKS_MAX = 1000;

export const agentEventSchema = z.discriminatedUnion('type', [
  z.looseObject({ ...eventBase, type: z.literal('accepted') }),
  z.looseObject({ ...eventBase, type: z.literal('rejected'), reason: reasonText }),
  z.looseObject({ ...eventBase, type: z.literal('progress'), phase, progress: z.number().check(z.gte(0), z.lte(100)), fps: z.optional(z.number().check(z.gte(0), z.lte(100_000))) }),
  // Longer messages are cut (not dropped): the part that fits is still worth keeping in the job log.
  z.looseObject({ ...eventBase, type: z.literal('log'), level: z.enum(['info', 'warn', 'error']), message: z.pipe(z.string(), z.transform(truncateLogMessage)), read_errors: z.optional(count) }),
  z.looseObject({ ...eventBase, type: z.literal('rip_started'), raw_dir: pathText }),
  z.looseObject({ ...eventBase, type: z.literal('rip_done'), raw_dir: pathText, files: fileList, titles: z.optional(list(rippedTitleSchema, 10_000)) }),
  z.looseObject({ ...eventBase, type: z.literal('transcode_started') }),
  z.looseObject({ ...eventBase, type: z.literal('transcode_ending') }),
  z.looseObject({ ...eventBase, type: z.literal('transcode_encoded') }),
  z.looseObject({
    ...eventBase,
    type: z.literal('job_done'),
    output_path: pathText,
    files: fileList,
    raw_removed: bool,
    originals_dir: z.optional(pathText),
    streams: z.optional(list(z.looseObject({ file: pathText, audio: list(audioStreamSchema, 200), subtitles: list(subtitleStreamSchema, 200) }), 10_000)),
    episodes_guessed: z.optional(bool),
    titles: z.optional(list(rippedTitleSchema, 10_000)),
    accuraterip: z.optional(accurateRipSchema),
  }),
  z.looseObject({ ...eventBase, type: z.literal('job_failed'), phase, reason: reasonText }),
  z.looseObject({ ...eventBase, type: z.literal('job_canceled'), phase }),
  z.looseObject({ ...eventBase, type: z.literal('tracks'), drive: id, tracks: list(trackSchema, 1000) }),
  z.looseObject({ ...eventBase, type: z.literal('command_failed'), reason: reasonText }),
  z.looseObject({ ...eventBase, type: z.literal('ejected'), drive: id }),
  z.looseObject({ ...eventBase, type: z.literal('pong'), capabilities: capabilitiesSchema }),
  z.looseObject({ ...eventBase, command_id: id, job_id: id, type: z.literal('chunk_plan'), title: int(0, 10_000), input: pathText, folder: pathText, preset: shortText, cuts: list(chunkCutSchema, CHUNKS_MAX).check(z.minLength(1)) }),
  z.looseObject({ ...eventBase, command_id: id, job_id: id, type: z.literal('chunk_progress'), frames_done: count }),
  z.looseObject({ ...eventBase, command_id: id, job_id: id, type: z.literal('chunk_done') }),
  z.looseObject({ ...eventBase, command_id: id, job_id: id, type: z.literal('chunk_failed'), reason: reasonText, unreadable: z.optional(z.boolean()) }),
  // A dump: a bare file name as MakeMKV writes it, base64 of at most DUMP_MQTT_LIMIT_BYTES.
  z.looseObject({
    ...eventBase,
    type: z.literal('aacs_dump'),
    name: z.string().check(z.regex(/^MKB[^/\\]*\.tgz$/i), z.maxLength(255)),
    data_base64: z.string().check(z.maxLength(Math.ceil(DUMP_MQTT_LIMIT_BYTES / 3) * 4), z.regex(/^[A-Za-z0-9+/]*={0,2}$/)),
  }),
]);

const libraryInfoSchema = z.looseObject({
  profile: z.enum(['jellyfin', 'emby', 'kodi']),
  kind: z.enum(['movie', 'series']),
  title: shortText,
  year,
  overview: z.nullable(text(LOG_MESSAGE_LIMIT)),
  poster_url: z.nullable(text(4096)),
  poster_policy: z.optional(z.nullable(z.object({ allow_private: z.boolean() }))),
  tmdb_id: z.nullable(int()),
  imdb_id: z.nullable(shortText),
});

const languages = list(language, 100);

// One folder name below the movie's folder: never a path that could lead out of it.
const extrasFolderSchema = z.string().check(
  z.minLength(1),
  z.maxLength(255),
  z.regex(/^[^/\\\0]+$/),
  z.refine((name) => name !== '.' && name !== '..', 'must be a folder name'),
);

const ripArgsSchema = z.looseObject({
  drive: id,
  titles: list(count, 1000),
  main_feature_only: bool,
  raw_dir: pathText,
  target_dir: pathText,
  title: shortText,
  year,
  series: z.nullable(shortText),
  season: z.nullable(int()),
  transcode: bool,
  keep_original: bool,
  auto_eject: bool,
  library: z.optional(z.nullable(libraryInfoSchema)),
  min_title_seconds: z.optional(z.number().check(z.gte(0), z.lte(1e7))),
  max_similar_titles: z.optional(int(MAX_SIMILAR_TITLES_MIN, MAX_SIMILAR_TITLES_MAX)),
  runtime_minutes: z.optional(z.nullable(z.number().check(z.gt(0), z.lte(10_000)))),
  audio_languages: z.optional(languages),
  subtitle_languages: z.optional(languages),
  disc_titles: z.optional(z.nullable(list(plannedTitleSchema, 1000))),
  library_folder: z.optional(z.nullable(pathText)),
  extras_folder: z.optional(extrasFolderSchema),
  extras_by_kind: z.optional(bool),
  careful: z.optional(bool),
});

const transcodeArgsSchema = z.looseObject({
  raw_dir: pathText,
  files: fileList,
  target_dir: pathText,
  title: shortText,
  year,
  series: z.nullable(shortText),
  season: z.nullable(int()),
  preset: shortText,
  keep_original: bool,
  episodes: z.optional(z.nullable(list(z.looseObject({ episode: count, minutes: z.nullable(z.number().check(z.gte(0))) }), 1000))),
  disc_number: z.optional(z.nullable(int())),
  library: z.optional(z.nullable(libraryInfoSchema)),
  audio_languages: z.optional(languages),
  subtitle_languages: z.optional(languages),
  audio: z.optional(
    z.looseObject({
      keep_surround: bool,
      stereo_companion: bool,
      burn_forced_subtitles: bool,
      original_language: z._default(z.nullable(language), null),
      keep_commentary: z.optional(bool),
      keep_audio_description: z.optional(bool),
    }),
  ),
  extras_folder: z.optional(extrasFolderSchema),
  titles: z.optional(z.nullable(list(z.nullable(titleRoleSchema), 10_000))),
  main_file: z.optional(z.nullable(int(0, 10_000))),
  library_folder: z.optional(z.nullable(pathText)),
  extras_by_kind: z.optional(bool),
  redone: z.optional(bool),
  first_episode: z.optional(z.nullable(int(1, 10_000))),
  chunking: z.optional(z.nullable(z.looseObject({ min_seconds: z.number().check(z.gt(0), z.lte(1e7)), agents: int(2, 10_000) }))),
});

export const commandSchema = z.discriminatedUnion('task', [
  z.looseObject({ id, task: z.literal('worker.tasks.rip_disc'), job_id: id, args: ripArgsSchema }),
  z.looseObject({ id, task: z.literal('worker.tasks.transcode_files'), job_id: id, args: transcodeArgsSchema }),
  z.looseObject({ id, task: z.literal('worker.tasks.scan_tracks'), args: z.looseObject({ drive: id }) }),
  z.looseObject({ id, task: z.literal('worker.tasks.ping_worker'), args: z.record(z.string(), z.never()) }),
  z.looseObject({ id, task: z.literal('worker.tasks.cancel'), job_id: id, args: z.looseObject({ command_id: id }) }),
  z.looseObject({ id, task: z.literal('worker.tasks.resume'), job_id: id, args: z.looseObject({ command_id: id, started_at: timestamp }) }),
  z.looseObject({ id, task: z.literal('worker.tasks.eject'), args: z.looseObject({ drive: id }) }),
  z.looseObject({ id, task: z.literal('worker.tasks.encode_chunk'), job_id: id, args: z.looseObject({ input: pathText, output: pathText, preset: shortText, cut: chunkCutSchema }) }),
  z.looseObject({ id, task: z.literal('worker.tasks.join_chunks'), job_id: id, args: z.looseObject({ command_id: id, title: int(0, 10_000), files: list(pathText, CHUNKS_MAX).check(z.minLength(1)) }) }),
]);

export const eventAckSchema = z.looseObject({ event_ids: list(id, 100_000) });

export const keystoreMessageSchema = z.looseObject({
  sha256: z.nullable(text(128)),
  installed_at: z.nullable(timestamp),
  files: list(z.looseObject({ name: z.string().check(z.minLength(1), z.maxLength(255)), data_base64: z.string() }), 10_000),
});
export const keydbMessageSchema = z.looseObject({ content: z.nullable(z.string()) });
export const appKeyMessageSchema = z.looseObject({ key: z.nullable(text(1000)) });

// Compile-time checks: what a schema lets through is a value of the interface the code works with.
type Accepts<S extends z.ZodMiniType, T> = z.output<S> extends T ? true : never;
const schemasMatchInterfaces: [
  Accepts<typeof agentStatusSchema, AgentStatus>,
  Accepts<typeof driveStateSchema, DriveState>,
  Accepts<typeof agentEventSchema, AgentEvent>,
  Accepts<typeof commandSchema, Command>,
  Accepts<typeof eventAckSchema, EventAck>,
  Accepts<typeof keystoreMessageSchema, KeystoreMessage>,
  Accepts<typeof keydbMessageSchema, KeydbMessage>,
  Accepts<typeof appKeyMessageSchema, AppKeyMessage>,
] = [true, true, true, true, true, true, true, true];
void schemasMatchInterfaces;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Parses an MQTT payload as JSON and checks it against the schema; the reason names the first problem. */
export function parseMessage<S extends z.ZodMiniType>(schema: S, payload: Buffer): ParseResult<z.output<S>> {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    return { ok: false, reason: payload.length === 0 ? 'empty payload' : 'not JSON' };
  }
  const result = schema.safeParse(body);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join('.') : 'message';
  return { ok: false, reason: `${where}: ${issue?.message ?? 'invalid'}`.slice(0, 300) };
}
