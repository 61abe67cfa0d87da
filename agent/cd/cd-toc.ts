import { createHash } from 'node:crypto';

/** Table of contents of an audio CD as the disc ids use it: offsets include the 150-frame lead-in. */
export interface CdToc {
  first: number;
  last: number;
  /** Lead-out offset (LBA + 150). */
  leadout: number;
  /** Start of each track (LBA + 150), first track first. */
  offsets: number[];
}

const LEAD_IN = 150;

/** The TOC from track starts and lengths in frames counted from the first audio sector (LBA). */
export function tocFromTracks(tracks: { number: number; start: number; frames: number }[]): CdToc {
  const last = tracks[tracks.length - 1];
  return {
    first: tracks[0]?.number ?? 1,
    last: last?.number ?? 0,
    leadout: (last ? last.start + last.frames : 0) + LEAD_IN,
    offsets: tracks.map((t) => t.start + LEAD_IN),
  };
}

const hex = (n: number, width: number): string => n.toString(16).toUpperCase().padStart(width, '0');

/** MusicBrainz disc id: SHA-1 over the hex TOC, Base64 with + / = replaced by . _ - (audio-cd.md §4). */
export function musicbrainzDiscId(toc: CdToc): string {
  let text = hex(toc.first, 2) + hex(toc.last, 2) + hex(toc.leadout, 8);
  for (let i = 0; i < 99; i++) text += hex(toc.offsets[i] ?? 0, 8);
  return createHash('sha1').update(text, 'ascii').digest('base64').replace(/\+/g, '.').replace(/\//g, '_').replace(/=/g, '-');
}

/** freedb/CDDB disc id as 8 hex digits (audio-cd.md §4). */
export function freedbDiscId(toc: CdToc): string {
  const digitSum = (n: number): number => String(n).split('').reduce((s, d) => s + Number(d), 0);
  const n = toc.offsets.reduce((s, o) => s + digitSum(Math.floor(o / 75)), 0);
  const t = Math.floor(toc.leadout / 75) - Math.floor((toc.offsets[0] ?? 0) / 75);
  return ((((n % 255) << 24) | (t << 8) | toc.offsets.length) >>> 0).toString(16).padStart(8, '0');
}

/** The TOC as MusicBrainz's `toc` parameter takes it: "first last leadout offset1 offset2 …" (space separated). */
export function tocParam(toc: CdToc): string {
  return [toc.first, toc.last, toc.leadout, ...toc.offsets].join(' ');
}
