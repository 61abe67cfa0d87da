import type { CdText } from '../../shared/protocol.js';

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

export interface CueSheet {
  title: string | null;
  performer: string | null;
  /** The FILE the tracks live in, as written in the sheet. */
  file: string | null;
  /** BINARY (little-endian raw CD-DA), MOTOROLA (big-endian), WAVE, … */
  fileType: string | null;
  tracks: CueTrack[];
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

/** Parses a cue sheet; only AUDIO tracks are kept. */
export function parseCueSheet(text: string): CueSheet {
  const sheet: CueSheet = { title: null, performer: null, file: null, fileType: null, tracks: [] };
  let current: (CueTrack & { audio: boolean }) | null = null;
  const finish = (): void => {
    if (current?.audio && current.start >= 0) sheet.tracks.push({ number: current.number, title: current.title, performer: current.performer, start: current.start, pregap: current.pregap });
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
        current = t ? { number: Number(t[1]), title: null, performer: null, start: -1, pregap: null, audio: t[2].toUpperCase() === 'AUDIO' } : null;
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

/**
 * Each track's frame range: from its INDEX 01 to the next track's INDEX 01 (a pregap belongs to the
 * track before it, as most rippers append it), the last one to the end of the file.
 */
export function trackSpans(sheet: CueSheet, totalFrames: number): { number: number; start: number; frames: number }[] {
  return sheet.tracks.map((t, i) => {
    const end = i + 1 < sheet.tracks.length ? sheet.tracks[i + 1].start : totalFrames;
    return { number: t.number, start: t.start, frames: Math.max(0, end - t.start) };
  });
}
