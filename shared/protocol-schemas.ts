import { z } from 'zod';
import type { AgentEvent, AgentStatus, AppKeyMessage, Command, DriveState, EventAck, KeydbMessage, KeystoreMessage } from './protocol.js';

/**
 * One schema per MQTT message type of shared/protocol.ts. Every payload the coordinator or an agent
 * receives passes one of these before it is used; what fails is dropped (see DropLog). Objects are
 * loose: a field a newer peer adds passes through untouched instead of failing the whole message.
 * Strings and lists are bounded so a forged message cannot make a row or a file of any size.
 */

/** A log event's message: longer ones are cut to this (and marked), on the agent before sending and on the coordinator on receipt. */
export const LOG_MESSAGE_LIMIT = 64 * 1024;
/**
 * The largest AACS dump that travels over MQTT (raw bytes): base64 makes 4/3 of it, which with the
 * event around it stays below the default packet limit of 1 MiB. A larger dump stays on the worker
 * (its path is logged there) to be copied by hand.
 */
export const DUMP_MQTT_LIMIT_BYTES = 512 * 1024;

const id = z.string().min(1).max(200);
const shortText = z.string().max(1000);
const pathText = z.string().max(4096);
const reasonText = z.string().max(LOG_MESSAGE_LIMIT);
const timestamp = z.string().max(64);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const fileList = z.array(pathText).max(10_000);
const language = z.string().max(16);

export const capabilitiesSchema = z.looseObject({
  encoders: z.array(shortText).max(100),
  tools: z.record(shortText, shortText.nullable()),
  key_source: shortText,
  schluessel: count,
  rip_backend: z.enum(['makemkv', 'open-dvd', 'none']),
  transcode_only: z.boolean(),
  native: z.boolean(),
  presets: z.array(z.looseObject({ category: shortText, presets: z.array(shortText).max(1000) })).max(200).optional(),
});

export const agentStatusSchema = z.looseObject({
  node: id,
  state: z.enum(['online', 'offline']),
  name: id.optional(),
  host: shortText.optional(),
  ip: shortText.optional(),
  slots: z.number().int().min(0).max(256).optional(),
  tasks: z.array(id).max(10_000).optional(),
  capabilities: capabilitiesSchema.optional(),
  started_at: timestamp.optional(),
  last_seen: timestamp.optional(),
});

const discInfoSchema = z.looseObject({
  label: shortText,
  title: shortText,
  year: z.number().int().nullable(),
  type: z.enum(['dvd', 'bluray', 'uhd', 'cd', 'unknown']),
  size_bytes: count,
  fingerprint: shortText,
  source: pathText,
  audio_tracks: count.nullable(),
});

export const driveStateSchema = z.looseObject({
  node: id,
  drive: id,
  kind: z.enum(['device', 'image']),
  path: pathText,
  vendor: shortText.nullable(),
  model: shortText.nullable(),
  status: z.enum(['no_disc', 'tray_open', 'disc_present', 'unknown']),
  disc: discInfoSchema.nullable(),
});

const audioStreamSchema = z.looseObject({ index: count, language, codec: shortText, channels: count.nullable() });
const subtitleStreamSchema = z.looseObject({ index: count, language, codec: shortText, forced: z.boolean() });

const trackSchema = z.looseObject({
  number: count,
  seconds: z.number().min(0).max(1e7),
  size_bytes: count,
  chapters: count,
  audio: z.array(audioStreamSchema).max(200).optional(),
  subtitles: z.array(subtitleStreamSchema).max(200).optional(),
});

const phase = z.enum(['rip', 'transcode']);
const eventBase = { event_id: id, node: id, ts: timestamp, command_id: id.optional(), job_id: id.optional() };

/** The log message, cut to LOG_MESSAGE_LIMIT characters and marked when it was longer. */
export function truncateLogMessage(message: string): string {
  return message.length > LOG_MESSAGE_LIMIT ? `${message.slice(0, LOG_MESSAGE_LIMIT - 20)} … (truncated)` : message;
}

export const agentEventSchema = z.discriminatedUnion('type', [
  z.looseObject({ ...eventBase, type: z.literal('accepted') }),
  z.looseObject({ ...eventBase, type: z.literal('rejected'), reason: reasonText }),
  z.looseObject({ ...eventBase, type: z.literal('progress'), phase, progress: z.number().min(0).max(100) }),
  // Longer messages are cut (not dropped): the part that fits is still worth keeping in the job log.
  z.looseObject({ ...eventBase, type: z.literal('log'), level: z.enum(['info', 'warn', 'error']), message: z.string().transform(truncateLogMessage) }),
  z.looseObject({ ...eventBase, type: z.literal('rip_started'), raw_dir: pathText }),
  z.looseObject({ ...eventBase, type: z.literal('rip_done'), raw_dir: pathText, files: fileList }),
  z.looseObject({ ...eventBase, type: z.literal('transcode_started') }),
  z.looseObject({
    ...eventBase,
    type: z.literal('job_done'),
    output_path: pathText,
    files: fileList,
    raw_removed: z.boolean(),
    streams: z.array(z.looseObject({ file: pathText, audio: z.array(audioStreamSchema).max(200), subtitles: z.array(subtitleStreamSchema).max(200) })).max(10_000).optional(),
    episodes_guessed: z.boolean().optional(),
  }),
  z.looseObject({ ...eventBase, type: z.literal('job_failed'), phase, reason: reasonText }),
  z.looseObject({ ...eventBase, type: z.literal('job_canceled'), phase }),
  z.looseObject({ ...eventBase, type: z.literal('tracks'), drive: id, tracks: z.array(trackSchema).max(1000) }),
  z.looseObject({ ...eventBase, type: z.literal('command_failed'), reason: reasonText }),
  z.looseObject({ ...eventBase, type: z.literal('ejected'), drive: id }),
  z.looseObject({ ...eventBase, type: z.literal('pong'), capabilities: capabilitiesSchema }),
  // A dump: a bare file name as MakeMKV writes it, base64 of at most DUMP_MQTT_LIMIT_BYTES.
  z.looseObject({
    ...eventBase,
    type: z.literal('aacs_dump'),
    name: z.string().regex(/^MKB[^/\\]*\.tgz$/i).max(255),
    data_base64: z.string().max(Math.ceil(DUMP_MQTT_LIMIT_BYTES / 3) * 4).regex(/^[A-Za-z0-9+/]*={0,2}$/),
  }),
]);

const libraryInfoSchema = z.looseObject({
  profile: z.enum(['jellyfin', 'emby', 'kodi']),
  kind: z.enum(['movie', 'series']),
  title: shortText,
  year: z.number().int().nullable(),
  overview: z.string().max(LOG_MESSAGE_LIMIT).nullable(),
  poster_url: z.string().max(4096).nullable(),
  tmdb_id: z.number().int().nullable(),
  imdb_id: shortText.nullable(),
});

const languages = z.array(language).max(100);

const ripArgsSchema = z.looseObject({
  drive: id,
  titles: z.array(count).max(1000),
  main_feature_only: z.boolean(),
  raw_dir: pathText,
  target_dir: pathText,
  title: shortText,
  year: z.number().int().nullable(),
  series: shortText.nullable(),
  season: z.number().int().nullable(),
  transcode: z.boolean(),
  keep_original: z.boolean(),
  auto_eject: z.boolean(),
  library: libraryInfoSchema.nullable().optional(),
  min_title_seconds: z.number().min(0).max(1e7).optional(),
  audio_languages: languages.optional(),
  subtitle_languages: languages.optional(),
});

const transcodeArgsSchema = z.looseObject({
  raw_dir: pathText,
  files: fileList,
  target_dir: pathText,
  title: shortText,
  year: z.number().int().nullable(),
  series: shortText.nullable(),
  season: z.number().int().nullable(),
  preset: shortText,
  keep_original: z.boolean(),
  episodes: z.array(z.looseObject({ episode: count, minutes: z.number().min(0).nullable() })).max(1000).nullable().optional(),
  disc_number: z.number().int().nullable().optional(),
  library: libraryInfoSchema.nullable().optional(),
  audio_languages: languages.optional(),
  subtitle_languages: languages.optional(),
  audio: z
    .looseObject({ keep_surround: z.boolean(), stereo_companion: z.boolean(), burn_forced_subtitles: z.boolean(), original_language: language.nullable().default(null) })
    .optional(),
  // One folder name below the movie's folder: never a path that could lead out of it.
  extras_folder: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^/\\\0]+$/)
    .refine((name) => name !== '.' && name !== '..', 'must be a folder name')
    .optional(),
});

export const commandSchema = z.discriminatedUnion('task', [
  z.looseObject({ id, task: z.literal('worker.tasks.rip_disc'), job_id: id, args: ripArgsSchema }),
  z.looseObject({ id, task: z.literal('worker.tasks.transcode_files'), job_id: id, args: transcodeArgsSchema }),
  z.looseObject({ id, task: z.literal('worker.tasks.scan_tracks'), args: z.looseObject({ drive: id }) }),
  z.looseObject({ id, task: z.literal('worker.tasks.ping_worker'), args: z.record(z.string(), z.never()) }),
  z.looseObject({ id, task: z.literal('worker.tasks.cancel'), job_id: id, args: z.looseObject({ command_id: id }) }),
  z.looseObject({ id, task: z.literal('worker.tasks.eject'), args: z.looseObject({ drive: id }) }),
]);

export const eventAckSchema = z.looseObject({ event_ids: z.array(id).max(100_000) });

export const keystoreMessageSchema = z.looseObject({
  sha256: z.string().max(128).nullable(),
  installed_at: timestamp.nullable(),
  files: z.array(z.looseObject({ name: z.string().min(1).max(255), data_base64: z.string() })).max(10_000),
});
export const keydbMessageSchema = z.looseObject({ content: z.string().nullable() });
export const appKeyMessageSchema = z.looseObject({ key: z.string().max(1000).nullable() });

// Compile-time checks: what a schema lets through is a value of the interface the code works with.
type Accepts<S extends z.ZodType, T> = z.output<S> extends T ? true : never;
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
export function parseMessage<S extends z.ZodType>(schema: S, payload: Buffer): ParseResult<z.output<S>> {
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
