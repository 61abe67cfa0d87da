/**
 * Pure parsing of `makemkvcon -r` (robot mode) output: tokenizer, `info` result, a reducer for
 * `mkv` runs, the outcome rule (makemkv.md §3) and the per-rip message filter.
 */
import type { AudioStream, SubtitleStream } from '../../shared/protocol.js';
import { normaliseLanguage } from '../../shared/languages.js';
import { audioCodec, subtitleCodec, trueRoles } from './stream-codec.js';

export type MakemkvField = number | string;

export interface MakemkvRecord {
  prefix: string;
  fields: MakemkvField[];
}

export interface MakemkvMessage {
  code: number;
  /** AP_UIMSG_* flags with the undocumented 0x01000000 "burst" bit masked off. */
  flags: number;
  text: string;
  params: string[];
}

export interface Track {
  /** TINFO title index: the number `mkv` takes. */
  number: number;
  seconds: number;
  sizeBytes: number;
  chapters: number;
  /** TINFO 27: the file name `mkv` writes. */
  outputFileName: string | null;
  /** TINFO 16: the playlist or clip a Blu-ray title plays ("00800.mpls", "00006.m2ts"); null on DVDs. */
  sourceFileName?: string | null;
  /** TINFO 24: the DVD title number ("01"); null on Blu-rays. */
  originalTitleId?: string | null;
  /** TINFO 25 and 26: the number of segments and their map ("1-19,20-35", "14,15,16"). */
  segmentCount?: number | null;
  segmentMap?: string | null;
  /** From the title's SINFO lines, in stream order. */
  audio: AudioStream[];
  subtitles: SubtitleStream[];
}

export interface MakemkvInfo {
  discName: string | null;
  volumeName: string | null;
  titles: Track[];
  /** The info outcome rule held: 5011 seen, TCOUNT >= 1, no fatal code. */
  opened: boolean;
  /** A fatal code (5010, 5021, ...) was seen. */
  failed: boolean;
  messages: MakemkvMessage[];
  titleCount: number | null;
  fatalCodes: number[];
}

const ROBOT_PREFIXES = new Set(['MSG', 'PRGT', 'PRGC', 'PRGV', 'DRV', 'TCOUNT', 'CINFO', 'TINFO', 'SINFO']);

/** The undocumented MSG flag bit seen on lines printed in a burst (makemkv.md §2.2). */
const BURST_FLAG = 0x01000000;

/** Codes that end a run as failed (makemkv.md §3). */
export const MAKEMKV_FATAL_CODES: ReadonlySet<number> = new Set([5010, 5003, 5021, 2019]);

const MSG_DEBUG = 1003;
const MSG_OPENED = 5011;
const MSG_SAVED_PARTIAL = 5004;
const MSG_SAVED = 5005;
const MSG_COPY_DONE = 5036;
const MSG_COPY_DONE_FAILURES = 5037;
const PRGC_SAVING_MKV = 5017;
const PRGV_MAX = 65536;

const ATTR_CHAPTERS = 8;
const ATTR_DURATION = 9;
const ATTR_SIZE_BYTES = 11;
const ATTR_SOURCE_FILE = 16;
const ATTR_ORIGINAL_TITLE_ID = 24;
const ATTR_SEGMENT_COUNT = 25;
const ATTR_SEGMENT_MAP = 26;
const ATTR_OUTPUT_FILE = 27;
const CATTR_NAME = 2;
/** SINFO attributes (makemkv.md §2.5). */
const SATTR_TYPE = 1;
const SATTR_LANG = 3;
const SATTR_CODEC_ID = 5;
const SATTR_CODEC_SHORT = 6;
const SATTR_CHANNELS = 14;
const SATTR_FLAGS = 22;
const SATTR_TREE_INFO = 30;
/** SINFO type codes: 6202 audio, 6203 subtitles (the text beside them is localized). */
const STREAM_AUDIO = 6202;
const STREAM_SUBTITLES = 6203;
/**
 * SINFO 22 (ap_iaStreamFlags) bits, as MakeMKV's apdefs.h names them (AP_AVStreamFlag_*): director's
 * comments 1, alternate director's comments 2, for the visually impaired 4, forced subtitles 4096
 * (the others, 256 core audio, 512 secondary audio, 1024 has core audio, 2048 derived stream, 16384
 * profile secondary stream, 32768 offset sequence id present, say nothing of a role). apdefs.h has
 * no bit for the hard of hearing: a closed-caption stream (codec S_CC608) is theirs.
 */
export const STREAM_FLAG = {
  directorsComments: 1,
  alternateDirectorsComments: 2,
  visuallyImpaired: 4,
  forcedSubtitles: 4096,
} as const;
const COMMENTARY_FLAGS = STREAM_FLAG.directorsComments | STREAM_FLAG.alternateDirectorsComments;
const CATTR_VOLUME = 32;

function readQuoted(line: string, start: number): { value: string; end: number } | null {
  let value = '';
  for (let i = start + 1; i < line.length; i++) {
    const c = line[i];
    if (c === '"') return { value, end: i + 1 };
    if (c === '\\' && i + 1 < line.length) {
      const next = line[i + 1];
      value += next === '"' || next === '\\' ? next : `\\${next}`;
      i++;
    } else {
      value += c;
    }
  }
  return null;
}

function readBare(line: string, start: number): { value: MakemkvField; end: number } {
  const comma = line.indexOf(',', start);
  const end = comma === -1 ? line.length : comma;
  const raw = line.slice(start, end);
  return { value: /^-?\d+$/.test(raw) ? Number(raw) : raw, end };
}

function readFields(body: string): MakemkvField[] | null {
  const fields: MakemkvField[] = [];
  let pos = 0;
  for (;;) {
    const field = body[pos] === '"' ? readQuoted(body, pos) : readBare(body, pos);
    if (!field) return null;
    fields.push(field.value);
    pos = field.end;
    if (pos >= body.length) return fields;
    if (body[pos] !== ',') return null;
    pos++;
  }
}

/**
 * One robot-mode line → prefix and fields (numbers for bare integers, strings for quoted values with
 * `\"` and `\\` unescaped). null for anything else: usage text, `#` annotations, blank lines.
 */
export function tokenizeMakemkvLine(line: string): MakemkvRecord | null {
  const text = line.replace(/\r$/, '');
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  const prefix = text.slice(0, colon);
  if (!ROBOT_PREFIXES.has(prefix)) return null;
  const body = text.slice(colon + 1);
  if (body === '') return null;
  const fields = readFields(body);
  return fields ? { prefix, fields } : null;
}

function num(field: MakemkvField | undefined): number | null {
  if (typeof field === 'number') return field;
  if (typeof field === 'string' && /^-?\d+$/.test(field.trim())) return Number(field.trim());
  return null;
}

function str(field: MakemkvField | undefined): string {
  return field === undefined ? '' : String(field);
}

/** The MSG fields → a message; null when the record is no MSG or is malformed. */
export function toMessage(record: MakemkvRecord): MakemkvMessage | null {
  if (record.prefix !== 'MSG') return null;
  const code = num(record.fields[0]);
  const flags = num(record.fields[1]);
  if (code === null || flags === null) return null;
  return { code, flags: flags & ~BURST_FLAG, text: str(record.fields[3]), params: record.fields.slice(5).map(str) };
}

/** "H:MM:SS" (hour not padded) → seconds; 0 when unreadable. */
export function parseMakemkvDuration(value: string): number {
  const parts = value.trim().split(':');
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p))) return 0;
  return parts.reduce((total, p) => total * 60 + Number(p), 0);
}

function blankTrack(number: number): Track {
  return { number, seconds: 0, sizeBytes: 0, chapters: 0, outputFileName: null, sourceFileName: null, originalTitleId: null, segmentCount: null, segmentMap: null, audio: [], subtitles: [] };
}

/** The attributes of one SINFO stream, collected before it is known whether it is audio or subtitles. */
interface RawStream {
  type: number | null;
  attrs: Map<number, string>;
}

/** The audio and subtitle streams of one title from its SINFO attributes, numbered 1.. per kind in stream order. */
function titleStreams(raw: Map<number, RawStream>): { audio: AudioStream[]; subtitles: SubtitleStream[] } {
  const audio: AudioStream[] = [];
  const subtitles: SubtitleStream[] = [];
  for (const [, stream] of [...raw.entries()].sort((x, y) => x[0] - y[0])) {
    const a = stream.attrs;
    const language = normaliseLanguage(a.get(SATTR_LANG));
    const flags = Number(a.get(SATTR_FLAGS)) || 0;
    const commentary = (flags & COMMENTARY_FLAGS) !== 0;
    if (stream.type === STREAM_AUDIO) {
      const channels = Number(a.get(SATTR_CHANNELS));
      const roles = trueRoles({ commentary, visual_impaired: (flags & STREAM_FLAG.visuallyImpaired) !== 0 });
      audio.push({ index: audio.length + 1, language, codec: audioCodec(a.get(SATTR_CODEC_SHORT), a.get(SATTR_CODEC_ID)), channels: Number.isInteger(channels) && channels > 0 ? channels : null, ...roles });
    } else if (stream.type === STREAM_SUBTITLES) {
      const forced = (flags & STREAM_FLAG.forcedSubtitles) !== 0 || /\(forced only\)/i.test(a.get(SATTR_TREE_INFO) ?? '');
      const codec = subtitleCodec(a.get(SATTR_CODEC_ID), a.get(SATTR_CODEC_SHORT));
      subtitles.push({ index: subtitles.length + 1, language, codec, forced, ...trueRoles({ hearing_impaired: codec === 'cc', commentary }) });
    }
  }
  return { audio, subtitles };
}

function applyTitleAttribute(track: Track, attr: number, value: string): void {
  if (attr === ATTR_DURATION) track.seconds = parseMakemkvDuration(value);
  else if (attr === ATTR_SIZE_BYTES) track.sizeBytes = Number(value) || 0;
  else if (attr === ATTR_CHAPTERS) track.chapters = Number(value) || 0;
  else if (attr === ATTR_OUTPUT_FILE) track.outputFileName = value || null;
  else if (attr === ATTR_SOURCE_FILE) track.sourceFileName = value || null;
  else if (attr === ATTR_ORIGINAL_TITLE_ID) track.originalTitleId = value || null;
  else if (attr === ATTR_SEGMENT_COUNT) track.segmentCount = /^\d+$/.test(value) ? Number(value) : null;
  else if (attr === ATTR_SEGMENT_MAP) track.segmentMap = value || null;
}

/** The result of an `info` run (makemkv.md §2, §3: success ⇔ 5011 and TCOUNT ≥ 1, 5010 ⇒ failure). */
export function parseMakemkvInfo(lines: string[]): MakemkvInfo {
  const info: MakemkvInfo = { discName: null, volumeName: null, titles: [], opened: false, failed: false, messages: [], titleCount: null, fatalCodes: [] };
  const tracks = new Map<number, Track>();
  const streams = new Map<number, Map<number, RawStream>>();
  let sawOpened = false;
  for (const line of lines) {
    const record = tokenizeMakemkvLine(line);
    if (!record) continue;
    const [a, b, , d] = record.fields;
    if (record.prefix === 'MSG') {
      const msg = toMessage(record);
      if (!msg) continue;
      info.messages.push(msg);
      if (msg.code === MSG_OPENED) sawOpened = true;
      if (MAKEMKV_FATAL_CODES.has(msg.code)) info.fatalCodes.push(msg.code);
    } else if (record.prefix === 'TCOUNT') {
      info.titleCount = num(a);
    } else if (record.prefix === 'CINFO') {
      if (a === CATTR_NAME) info.discName = str(record.fields[2]) || null;
      if (a === CATTR_VOLUME) info.volumeName = str(record.fields[2]) || null;
    } else if (record.prefix === 'TINFO') {
      const title = num(a);
      const attr = num(b);
      if (title === null || attr === null) continue;
      const track = tracks.get(title) ?? blankTrack(title);
      tracks.set(title, track);
      applyTitleAttribute(track, attr, str(d));
    } else if (record.prefix === 'SINFO') {
      const [title, index, attr, code, value] = record.fields;
      if (typeof title !== 'number' || typeof index !== 'number' || typeof attr !== 'number') continue;
      const perTitle = streams.get(title) ?? new Map<number, RawStream>();
      streams.set(title, perTitle);
      const stream = perTitle.get(index) ?? { type: null, attrs: new Map<number, string>() };
      perTitle.set(index, stream);
      if (attr === SATTR_TYPE) stream.type = num(code);
      else stream.attrs.set(attr, str(value));
    }
  }
  for (const [title, raw] of streams) {
    const track = tracks.get(title);
    if (track) Object.assign(track, titleStreams(raw));
  }
  info.titles = [...tracks.values()].sort((x, y) => x.number - y.number);
  info.failed = info.fatalCodes.length > 0;
  info.opened = sawOpened && (info.titleCount ?? 0) >= 1 && !info.failed;
  return info;
}

/** State of one `mkv` run, fed line by line through applyMkvLine. */
export interface MkvRunState {
  /** Code of the current PRGC sub-operation (5017 = saving to MKV). */
  currentOperation: number | null;
  /** Rip percent 0..100, from PRGV only while PRGC 5017 is current. */
  ripPercent: number;
  saved: number;
  failed: number;
  /** 5036 or 5037 was seen: MakeMKV says the copy is complete. */
  completed: boolean;
  opened: boolean;
  fatal: MakemkvMessage[];
  messages: MakemkvMessage[];
  /** TINFO 27 per title, when the run prints it. */
  outputFiles: Record<number, string>;
}

export function createMkvRunState(): MkvRunState {
  return { currentOperation: null, ripPercent: 0, saved: 0, failed: 0, completed: false, opened: false, fatal: [], messages: [], outputFiles: {} };
}

function countParam(msg: MakemkvMessage, index: number): number | null {
  const value = msg.params[index];
  if (value !== undefined && /^\d+$/.test(value)) return Number(value);
  const numbers = msg.text.match(/\d+/g);
  return numbers && numbers[index] !== undefined ? Number(numbers[index]) : null;
}

function applyCounts(state: MkvRunState, msg: MakemkvMessage): MkvRunState {
  const saved = countParam(msg, 0) ?? state.saved;
  switch (msg.code) {
    case MSG_SAVED:
      return { ...state, saved };
    case MSG_COPY_DONE:
      return { ...state, saved, completed: true };
    case MSG_SAVED_PARTIAL:
      return { ...state, saved, failed: countParam(msg, 1) ?? state.failed };
    case MSG_COPY_DONE_FAILURES:
      return { ...state, saved, failed: countParam(msg, 1) ?? state.failed, completed: true };
    default:
      return state;
  }
}

function applyMessage(state: MkvRunState, msg: MakemkvMessage): MkvRunState {
  let next: MkvRunState = { ...state, messages: [...state.messages, msg] };
  if (msg.code === MSG_OPENED) next.opened = true;
  if (MAKEMKV_FATAL_CODES.has(msg.code)) next.fatal = [...next.fatal, msg];
  next = applyCounts(next, msg);
  return next;
}

function applyProgress(state: MkvRunState, record: MakemkvRecord): MkvRunState {
  if (state.currentOperation !== PRGC_SAVING_MKV) return state;
  const current = num(record.fields[0]);
  const max = num(record.fields[2]) || PRGV_MAX;
  if (current === null) return state;
  const pct = Math.min(100, Math.max(0, (current / max) * 100));
  return pct === state.ripPercent ? state : { ...state, ripPercent: pct };
}

/** Reducer: the state after one more stdout line of an `mkv` run. Never mutates `state`. */
export function applyMkvLine(state: MkvRunState, line: string): MkvRunState {
  const record = tokenizeMakemkvLine(line);
  if (!record) return state;
  switch (record.prefix) {
    case 'MSG': {
      const msg = toMessage(record);
      return msg ? applyMessage(state, msg) : state;
    }
    case 'PRGC':
      return { ...state, currentOperation: num(record.fields[0]) };
    case 'PRGT':
      return { ...state, currentOperation: null };
    case 'PRGV':
      return applyProgress(state, record);
    case 'TINFO': {
      const [title, attr, , value] = record.fields;
      if (typeof title !== 'number' || attr !== ATTR_OUTPUT_FILE || !value) return state;
      return { ...state, outputFiles: { ...state.outputFiles, [title]: str(value) } };
    }
    default:
      return state;
  }
}

/** A household-readable reason for a fatal MakeMKV message. */
export function makemkvFatalReason(msg: MakemkvMessage): string {
  switch (msg.code) {
    case 5021:
      return 'MakeMKV is too old or its beta key expired (code 5021): update MakeMKV or enter a new key';
    case 2019: {
      const [error, file] = msg.params;
      if (error && file) return `MakeMKV could not write the file ${file}: ${error} (code 2019)`;
      return `MakeMKV could not write the output file: ${msg.text} (code 2019)`;
    }
    case 5010:
      return 'MakeMKV could not open the disc (code 5010)';
    case 5003: {
      const [title, file] = msg.params;
      return file ? `MakeMKV failed to save title ${title} to ${file} (code 5003)` : `MakeMKV failed to save the title: ${msg.text} (code 5003)`;
    }
    default:
      return `MakeMKV stopped with an error: ${msg.text} (code ${msg.code})`;
  }
}

/** Fatal codes in the order their reason is preferred (the most specific first). */
const FATAL_PRIORITY = [5021, 2019, 5010, 5003];

function firstFatal(fatal: MakemkvMessage[]): MakemkvMessage | null {
  for (const code of FATAL_PRIORITY) {
    const msg = fatal.find((m) => m.code === code);
    if (msg) return msg;
  }
  return fatal[0] ?? null;
}

export interface MkvOutcome {
  ok: boolean;
  saved: number;
  failed: number;
  reason: string | null;
}

function failureReason(state: MkvRunState): string | null {
  const fatal = firstFatal(state.fatal);
  if (fatal) return makemkvFatalReason(fatal);
  if (state.failed > 0) return `MakeMKV saved ${state.saved} title(s) and failed ${state.failed}`;
  if (!state.completed) {
    return state.opened ? 'MakeMKV stopped before it reported the title as saved' : 'MakeMKV stopped before it opened the disc';
  }
  if (state.saved < 1) return 'MakeMKV finished but saved no title';
  return null;
}

/**
 * The outcome rule for an `mkv` run (makemkv.md §3), without the file check (the runner's job):
 * success ⇔ 5036 (or 5037 with 0 failed) with saved ≥ 1 and no 5003/5010/5021/2019.
 */
export function mkvOutcome(state: MkvRunState): MkvOutcome {
  const reason = failureReason(state);
  return { ok: reason === null, saved: state.saved, failed: state.failed, reason };
}

/** MakeMKV's "the volume key is unknown for this disc" (makemkv.md §3, code table). */
export const MSG_VOLUME_KEY_UNKNOWN = 3303;
/** makemkvcon's exit code when it cannot open the disc (makemkv.md §4). */
export const EXIT_CANNOT_OPEN = 11;

/**
 * The plain reason for a failed run on a 4K UHD disc when the cause is UHD-specific: an unknown
 * volume key (the key store is missing or lacks this disc) or code 11 (the drive gives no raw access).
 */
export function uhdFailureReason(codes: readonly number[], exitCode: number | undefined, keyCount: number): string | null {
  if (codes.includes(MSG_VOLUME_KEY_UNKNOWN)) {
    return `the volume key of this 4K UHD disc is unknown: install a key store (POST /api/system/keystore); this worker knows ${keyCount} disc key${keyCount === 1 ? '' : 's'}`;
  }
  if (exitCode === EXIT_CANNOT_OPEN) {
    return 'MakeMKV could not open this 4K UHD disc (code 11): reading 4K UHD discs needs a drive firmware mode with raw disc access (LibreDrive)';
  }
  return null;
}

/** MakeMKV's read error (makemkv.md §3): "Error '%1' occurred while reading '%2' at offset '%3'". */
export const MSG_READ_ERROR = 2003;
/** A ripper message that is a read error starts with this (the rip logs these apart: rip-task.ts). */
export const READ_ERROR_PREFIX = 'read error ';
const SECTOR_BYTES = 2048;

/** Where a read error happened: in a file of the disc (a path) or on the drive itself (its name), at a byte offset. */
export interface DiscReadError {
  error: string;
  where: string;
  offset: number | null;
}

/** The fields of a 2003 message; null for any other message or one without its parameters. */
export function makemkvReadError(msg: MakemkvMessage): DiscReadError | null {
  if (msg.code !== MSG_READ_ERROR || msg.params.length < 3) return null;
  const [error, where, offset] = msg.params;
  const n = /^\d+$/.test(offset.trim()) ? Number(offset.trim()) : null;
  return { error: error.trim(), where: where.trim(), offset: n };
}

/**
 * "read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM
 * ERROR:1090"; on the drive itself (a raw read) the position is on the disc.
 */
export function describeReadError(e: DiscReadError): string {
  const inFile = e.where.startsWith('/');
  const where = inFile ? `in ${e.where}` : `on the disc (${e.where})`;
  const at = e.offset === null ? '' : ` at ${(e.offset / 2 ** 20).toFixed(1)} MiB (sector ${Math.floor(e.offset / SECTOR_BYTES)}${inFile ? ' of the file' : ''})`;
  return `${READ_ERROR_PREFIX}${where}${at}: ${e.error}`;
}

/**
 * The text of a MakeMKV message as the job log gets it, or null for a debug trace (1003) or a blank
 * line; a read error with its position (describeReadError). How many reach the log, and that repeats
 * are dropped, is the rip's rule for every ripper (messageBudget in agent/tasks/rip-task.ts).
 */
export function ripperMessageText(msg: MakemkvMessage): string | null {
  if (msg.code === MSG_DEBUG) return null;
  const readError = makemkvReadError(msg);
  if (readError) return describeReadError(readError);
  const text = msg.text.trim();
  return text === '' ? null : text;
}
