import type { CdText } from '../../shared/protocol.js';
import { SESSION_GAP_FRAMES, type DiscLayout } from './cd-toc.js';

/**
 * Cue sheets of audio CD images (a .cue beside its .bin): disc and track titles, and where each
 * track starts. Times are mm:ss:ff with ff in CD frames (1/75 s), not hundredths (audio-cd.md §1).
 */

export const FRAMES_PER_SECOND = 75;
export const BYTES_PER_FRAME = 2352;

export interface CueTrack {
  number: number;
  title: string | null;
  performer: string | null;
  /** INDEX 01: where the track's audio starts, in frames from the start of the file. */
  start: number;
  /** INDEX 00: the pregap's start, when the sheet has one. */
  pregap: number | null;
}

/** A data track (MODE1/2352, MODE2/2352, ...): never ripped, but part of the TOC and of the file. */
export interface CueDataTrack {
  number: number;
  /** The sheet's track type: MODE1/2352, MODE2/2336, CDI/2352, ... */
  mode: string;
  start: number;
  pregap: number | null;
}

export interface CueSheet {
  title: string | null;
  performer: string | null;
  /** The FILE the tracks live in, as written in the sheet. */
  file: string | null;
  /** BINARY (little-endian raw CD-DA), MOTOROLA (big-endian), WAVE, … */
  fileType: string | null;
  tracks: CueTrack[];
  /** The data tracks of a mixed-mode or enhanced CD, when the sheet lists them. */
  data: CueDataTrack[];
}

/** mm:ss:ff to frames; null when it is not such a time. */
export function cueTimeToFrames(text: string): number | null {
  const m = /^(\d{1,3}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const [min, sec, frames] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (sec > 59 || frames > 74) return null;
  return (min * 60 + sec) * FRAMES_PER_SECOND + frames;
}

/** A quoted or bare value: `"A 440"` or `A440`. */
function value(rest: string): string {
  const t = rest.trim();
  const quoted = /^"(.*)"$/.exec(t);
  return quoted ? quoted[1] : t;
}

/** Parses a cue sheet: AUDIO tracks into `tracks`, every other type into `data`. */
export function parseCueSheet(text: string): CueSheet {
  const sheet: CueSheet = { title: null, performer: null, file: null, fileType: null, tracks: [], data: [] };
  let current: (CueTrack & { mode: string }) | null = null;
  const finish = (): void => {
    if (!current || current.start < 0) return;
    if (current.mode === 'AUDIO') sheet.tracks.push({ number: current.number, title: current.title, performer: current.performer, start: current.start, pregap: current.pregap });
    else sheet.data.push({ number: current.number, mode: current.mode, start: current.start, pregap: current.pregap });
  };
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const line = raw.trim();
    const m = /^(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const [, keyword, rest] = m;
    switch (keyword.toUpperCase()) {
      case 'FILE': {
        const f = /^"(.*)"\s+(\S+)$/.exec(rest.trim()) ?? /^(\S+)\s+(\S+)$/.exec(rest.trim());
        if (f && sheet.file === null) {
          sheet.file = f[1];
          sheet.fileType = f[2].toUpperCase();
        }
        break;
      }
      case 'TRACK': {
        finish();
        const t = /^(\d+)\s+(\S+)/.exec(rest);
        current = t ? { number: Number(t[1]), title: null, performer: null, start: -1, pregap: null, mode: t[2].toUpperCase() } : null;
        break;
      }
      case 'TITLE':
        if (current) current.title = value(rest);
        else sheet.title = value(rest);
        break;
      case 'PERFORMER':
        if (current) current.performer = value(rest);
        else sheet.performer = value(rest);
        break;
      case 'INDEX': {
        const i = /^(\d+)\s+(\S+)/.exec(rest);
        const frames = i ? cueTimeToFrames(i[2]) : null;
        if (!current || !i || frames === null) break;
        if (Number(i[1]) === 1) current.start = frames;
        else if (Number(i[1]) === 0) current.pregap = frames;
        break;
      }
      default:
        break;
    }
  }
  finish();
  return sheet;
}

/** The sheet's TITLE/PERFORMER lines as CD-Text (what cd-info reports for an image); null when it has none. */
export function cueCdText(sheet: CueSheet): CdText | null {
  const any = sheet.title || sheet.performer || sheet.tracks.some((t) => t.title || t.performer);
  if (!any) return null;
  return { title: sheet.title, performer: sheet.performer, tracks: sheet.tracks.map((t) => ({ number: t.number, title: t.title, performer: t.performer })) };
}

/** Bytes per sector of a cue track type: 2352 for AUDIO and the raw modes, 2048 or 2336 for cooked data, 2448 with subchannels (CDG). */
export function sectorBytes(mode: string): number {
  const m = /\/(\d+)$/.exec(mode);
  return m ? Number(m[1]) : mode === 'CDG' ? 2448 : BYTES_PER_FRAME;
}

/** Every track of the sheet in the file, by number: audio and data, where its part of the file begins (INDEX 00, else 01) and its byte offset. */
function fileRegions(sheet: CueSheet): { number: number; audio: boolean; start: number; region: number; size: number; byte: number }[] {
  const all = [...sheet.tracks.map((t) => ({ number: t.number, audio: true, start: t.start, region: t.pregap ?? t.start, size: BYTES_PER_FRAME })), ...sheet.data.map((t) => ({ number: t.number, audio: false, start: t.start, region: t.pregap ?? t.start, size: sectorBytes(t.mode) }))].sort((a, b) => a.number - b.number);
  let byte = 0;
  return all.map((t, i) => {
    byte = i === 0 ? t.region * t.size : byte + (t.region - all[i - 1].region) * all[i - 1].size;
    return { ...t, byte };
  });
}

/** The frame the file ends at (its size in sectors, data tracks of other sector sizes counted as theirs). */
function fileEndFrame(sheet: CueSheet, fileBytes: number): number {
  const regions = fileRegions(sheet);
  const last = regions[regions.length - 1];
  return last ? last.region + Math.max(0, Math.floor((fileBytes - last.byte) / last.size)) : Math.floor(fileBytes / BYTES_PER_FRAME);
}

/** An audio track's part of the image: frames from its INDEX 01, and the byte where that starts in the file. */
export interface TrackSpan {
  number: number;
  start: number;
  frames: number;
  byteStart: number;
}

/**
 * Each audio track's frame range: from its INDEX 01 to the next track's INDEX 01 (a pregap belongs to
 * the track before it, as most rippers append it), up to a data track where one follows (an enhanced
 * CD's data track in the same file is no audio), the last one to the end of the file.
 */
export function trackSpans(sheet: CueSheet, fileBytes: number): TrackSpan[] {
  const regions = fileRegions(sheet);
  const end = fileEndFrame(sheet, fileBytes);
  return regions.flatMap((t, i) => {
    if (!t.audio) return [];
    const next = regions[i + 1];
    const stop = next ? (next.audio ? next.start : next.region) : end;
    return [{ number: t.number, start: t.start, frames: Math.max(0, stop - t.start), byteStart: t.byte + (t.start - t.region) * t.size }];
  });
}

/**
 * The disc an image was read from, as its TOC had it: every track at its INDEX 01 (the file's frames
 * are the disc's sectors). Data tracks after the last audio track are an enhanced CD's second
 * session, whose gap (SESSION_GAP_FRAMES) a cue/bin image leaves out: on the disc they start that
 * much later, so libdiscid's rule puts the lead-out where the audio ends in the file.
 */
export function cueLayout(sheet: CueSheet, fileBytes: number): DiscLayout {
  const regions = fileRegions(sheet);
  const lastAudio = Math.max(0, ...regions.filter((t) => t.audio).map((t) => t.number));
  const trailing = (n: number): boolean => n > lastAudio;
  const end = fileEndFrame(sheet, fileBytes);
  return {
    tracks: regions.map((t) => ({ number: t.number, lba: trailing(t.number) ? t.region + SESSION_GAP_FRAMES : t.start, audio: t.audio })),
    leadout: regions.some((t) => trailing(t.number)) ? end + SESSION_GAP_FRAMES : end,
  };
}
