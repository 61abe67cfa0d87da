/**
 * The streams of a Matroska file read from its head in-process: the segment's Info (duration) and
 * Tracks elements, which MakeMKV, ffmpeg and HandBrake write before the first cluster. It answers
 * what ffprobe answers for such a file (ffprobe-parser.ts) without starting a process: ffprobe's
 * start alone (215 shared libraries on Debian) takes 110-130 ms, twice per transcode. Whatever this
 * reader cannot tell as surely as ffprobe gives null, and ffprobe is asked: a file that is no Matroska
 * file, Tracks only found behind the clusters, no duration in the head (a file written as a stream),
 * DTS (whose HD profile is in the bitstream) and a BCP 47 language element.
 */
import fs from 'node:fs/promises';
import type { AudioStream, SubtitleStream } from '../../shared/protocol.js';
import { normaliseLanguage } from '../../shared/languages.js';
import type { ProbedFile } from './ffprobe-parser.js';
import { audioCodec, subtitleCodec, trueRoles } from './stream-codec.js';

/** How much of a file's head is read: Tracks with the largest codec data (VobSub palettes, fonts come later) fit many times over. */
export const HEAD_BYTES = 1 << 20;

const ID = {
  ebml: 0x1a45dfa3,
  docType: 0x4282,
  segment: 0x18538067,
  info: 0x1549a966,
  timestampScale: 0x2ad7b1,
  duration: 0x4489,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackType: 0x83,
  codecId: 0x86,
  language: 0x22b59c,
  languageBcp47: 0x22b59d,
  flagForced: 0x55aa,
  flagHearingImpaired: 0x55ab,
  flagVisualImpaired: 0x55ac,
  flagCommentary: 0x55af,
  audio: 0xe1,
  channels: 0x9f,
  cluster: 0x1f43b675,
} as const;

const TRACK_AUDIO = 2;
const TRACK_SUBTITLE = 17;

interface Element {
  id: number;
  /** Where its data starts and ends in the buffer; end is null for an unknown size. */
  start: number;
  end: number | null;
}

/** A variable-length integer at `at` (an id keeps its marker bit, a size drops it); null past the end or when malformed. */
function vint(buf: Buffer, at: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } | null {
  if (at >= buf.length) return null;
  const first = buf[at];
  let length = 1;
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) length++;
  if (length > 8 || at + length > buf.length || (keepMarker && length > 4)) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + buf[at + i];
    if (buf[at + i] !== 0xff) allOnes = false;
  }
  return { value, length, unknown: !keepMarker && allOnes };
}

/** The element at `at`; null when its header does not fit or its size runs past `limit`. */
function element(buf: Buffer, at: number, limit: number): (Element & { next: number | null }) | null {
  const id = vint(buf, at, true);
  if (!id) return null;
  const size = vint(buf, at + id.length, false);
  if (!size) return null;
  const start = at + id.length + size.length;
  if (size.unknown) return { id: id.value, start, end: null, next: null };
  const end = start + size.value;
  if (end > limit) return null;
  return { id: id.value, start, end, next: end };
}

/** The child elements of [start, end); null when one of them does not fit. */
function children(buf: Buffer, start: number, end: number): Element[] | null {
  const out: Element[] = [];
  for (let at = start; at < end; ) {
    const el = element(buf, at, end);
    if (!el || el.end === null || el.next === null) return null;
    out.push(el);
    at = el.next;
  }
  return out;
}

function uint(buf: Buffer, el: Element): number {
  let v = 0;
  for (let i = el.start; i < (el.end as number); i++) v = v * 256 + buf[i];
  return v;
}

function float(buf: Buffer, el: Element): number | null {
  const size = (el.end as number) - el.start;
  if (size === 4) return buf.readFloatBE(el.start);
  if (size === 8) return buf.readDoubleBE(el.start);
  return null;
}

function str(buf: Buffer, el: Element): string {
  return buf.toString('latin1', el.start, el.end as number).replace(/\0+$/, '');
}

const find = (els: Element[], id: number): Element | undefined => els.find((e) => e.id === id);

/**
 * The streams of a Matroska (or WebM) file from the first bytes of it, numbered per kind in track
 * order as ffprobe numbers them, with the role flags (FlagForced, FlagHearingImpaired, FlagVisualImpaired,
 * FlagCommentary); null when the head does not tell them surely (see the module's comment).
 */
export function parseMatroskaHead(buf: Buffer): ProbedFile | null {
  const header = element(buf, 0, buf.length);
  if (!header || header.id !== ID.ebml || header.end === null) return null;
  const docType = find(children(buf, header.start, header.end) ?? [], ID.docType);
  if (!docType || !['matroska', 'webm'].includes(str(buf, docType))) return null;
  const segment = element(buf, header.end, Number.MAX_SAFE_INTEGER);
  if (!segment || segment.id !== ID.segment) return null;
  // The segment runs past the head read; its children are walked until the first cluster.
  let info: Element | null = null;
  let tracks: Element | null = null;
  for (let at = segment.start; at < Math.min(segment.end ?? buf.length, buf.length) && !(info && tracks); ) {
    const el = element(buf, at, buf.length);
    if (!el || el.id === ID.cluster || el.next === null) break;
    if (el.id === ID.info) info = el;
    if (el.id === ID.tracks) tracks = el;
    at = el.next;
  }
  if (!info || !tracks) return null;
  const infoEls = children(buf, info.start, info.end as number);
  const durationEl = infoEls && find(infoEls, ID.duration);
  const duration = durationEl ? float(buf, durationEl) : null;
  if (!infoEls || duration === null || !Number.isFinite(duration)) return null;
  const scaleEl = find(infoEls, ID.timestampScale);
  const seconds = (duration * (scaleEl ? uint(buf, scaleEl) : 1_000_000)) / 1e9;

  const entries = children(buf, tracks.start, tracks.end as number);
  if (!entries) return null;
  const audio: AudioStream[] = [];
  const subtitles: SubtitleStream[] = [];
  for (const entry of entries.filter((e) => e.id === ID.trackEntry)) {
    const els = children(buf, entry.start, entry.end as number);
    if (!els || find(els, ID.languageBcp47)) return null;
    const typeEl = find(els, ID.trackType);
    const type = typeEl ? uint(buf, typeEl) : 0;
    if (type !== TRACK_AUDIO && type !== TRACK_SUBTITLE) continue;
    const codecEl = find(els, ID.codecId);
    const codecId = codecEl ? str(buf, codecEl) : '';
    // Matroska's default language is English; "und" says none (ffprobe reports the same).
    const languageEl = find(els, ID.language);
    const language = normaliseLanguage(languageEl ? str(buf, languageEl) : 'eng');
    const flag = (id: number): boolean => {
      const el = find(els, id);
      return el ? uint(buf, el) === 1 : false;
    };
    const commentary = flag(ID.flagCommentary);
    if (type === TRACK_AUDIO) {
      if (/^A_DTS/i.test(codecId)) return null;
      const audioEl = find(els, ID.audio);
      const channelsEl = audioEl ? find(children(buf, audioEl.start, audioEl.end as number) ?? [], ID.channels) : undefined;
      const channels = channelsEl ? uint(buf, channelsEl) : 1;
      audio.push({ index: audio.length + 1, language, codec: audioCodec(codecId), channels: channels > 0 ? channels : null, ...trueRoles({ commentary, visual_impaired: flag(ID.flagVisualImpaired) }) });
    } else {
      subtitles.push({ index: subtitles.length + 1, language, codec: subtitleCodec(codecId), forced: flag(ID.flagForced), ...trueRoles({ hearing_impaired: flag(ID.flagHearingImpaired), commentary }) });
    }
  }
  return { seconds, audio, subtitles };
}

async function readHead(file: string): Promise<ProbedFile | null> {
  let handle: fs.FileHandle | null = null;
  try {
    handle = await fs.open(file, 'r');
    const buf = Buffer.allocUnsafe(HEAD_BYTES);
    const { bytesRead } = await handle.read(buf, 0, HEAD_BYTES, 0);
    return parseMatroskaHead(buf.subarray(0, bytesRead));
  } catch {
    return null;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * The streams of a Matroska file from its head (parseMatroskaHead); null when the file cannot be read
 * or its head does not tell. Rejects once `signal` aborts, also while a read hangs (a share that stopped answering).
 */
export async function readMatroskaStreams(file: string, signal?: AbortSignal): Promise<ProbedFile | null> {
  if (!signal) return readHead(file);
  signal.throwIfAborted();
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([readHead(file), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
