import { createHash } from 'node:crypto';

/**
 * Table of contents of an audio CD as the disc ids use it (libdiscid's rules applied): offsets include
 * the 150-frame lead-in, and `offsets[i]` is the start of track `first + i`: a data track between
 * audio tracks keeps its place, a leading data track is track 1.
 */
export interface CdToc {
  first: number;
  last: number;
  /** Lead-out offset (LBA + 150). */
  leadout: number;
  /** Start of each track first..last (LBA + 150), by track number. */
  offsets: number[];
}

/** One track of a disc's full table of contents, data tracks included: its number, start (LBA) and kind. */
export interface TocTrack {
  number: number;
  /** Start of the track (INDEX 01) as an LBA: frames from the first sector, without the lead-in. */
  lba: number;
  audio: boolean;
}

/** Everything a drive's TOC says: every track in order and the lead-out of the last session (LBA). */
export interface DiscLayout {
  tracks: TocTrack[];
  leadout: number;
}

const LEAD_IN = 150;

/**
 * The gap between the audio session of an enhanced CD (CD-Extra, CD-Plus) and its data track: the
 * first session's lead-out (90 s), the second session's lead-in (60 s) and the data track's pregap
 * (2 s), 152 s = 11400 frames. libdiscid (src/toc.c, XA_INTERVAL) drops a trailing data track and
 * puts the lead-out this far before its start; a cue/bin image leaves the gap out of its file.
 */
export const SESSION_GAP_FRAMES = (90 + 60 + 2) * 75;

/**
 * The longest disc libdiscid takes (discid_put, MAX_DISC_LENGTH): 90 minutes, 405000 frames, for
 * the lead-out offset. A TOC beyond it gets no disc id.
 */
export const MAX_DISC_FRAMES = 90 * 60 * 75;

/**
 * The MusicBrainz TOC of a disc by libdiscid's rules (mb_disc_load_toc, then discid_put's checks):
 * the first track of the disc stays first, data track or not (MusicBrainz refuses a TOC that does not
 * start at track 1); data tracks after the last audio track are dropped and the lead-out moves to
 * the next one's start minus SESSION_GAP_FRAMES; a data track between audio tracks keeps its offset.
 * Null when there is no disc id to give: no audio track, track numbers outside 1..99, offsets out of
 * order or past the lead-out, or a lead-out past MAX_DISC_FRAMES.
 */
export function musicbrainzToc(layout: DiscLayout): CdToc | null {
  const tracks = [...layout.tracks].sort((a, b) => a.number - b.number);
  const audio = tracks.filter((t) => t.audio);
  if (tracks.length === 0 || audio.length === 0) return null;
  const first = tracks[0].number;
  let last = audio[audio.length - 1].number;
  if (first < 1 || last > 99) return null;
  const byNumber = new Map(tracks.map((t) => [t.number, t]));
  const offsets: number[] = [];
  for (let n = first; n <= last; n++) {
    const t = byNumber.get(n);
    if (!t) return null; // a hole in the numbering: not a TOC a drive reports
    offsets.push(t.lba > 0 ? t.lba + LEAD_IN : LEAD_IN);
  }
  const leadoutAfter = (n: number): number => {
    const next = byNumber.get(n + 1);
    return next ? next.lba - SESSION_GAP_FRAMES + LEAD_IN : layout.leadout + LEAD_IN;
  };
  let leadout = leadoutAfter(last);
  // libdiscid: a last track that starts past the lead-out is no track (copy-protected discs).
  while (last > first && leadout < offsets[last - first]) {
    offsets.pop();
    last--;
    leadout = leadoutAfter(last);
  }
  if (leadout > MAX_DISC_FRAMES || leadout < offsets[offsets.length - 1]) return null;
  if (offsets.some((o, i) => i > 0 && offsets[i - 1] > o)) return null;
  return { first, last, leadout, offsets };
}

/** The layout of a disc whose tracks are all audio, from their starts and lengths in frames (LBA). */
export function audioLayout(tracks: { number: number; start: number; frames: number }[]): DiscLayout {
  const last = tracks[tracks.length - 1];
  return { tracks: tracks.map((t) => ({ number: t.number, lba: t.start, audio: true })), leadout: last ? last.start + last.frames : 0 };
}

/** The TOC from track starts and lengths in frames counted from the first audio sector (LBA), every track audio. */
export function tocFromTracks(tracks: { number: number; start: number; frames: number }[]): CdToc | null {
  return musicbrainzToc(audioLayout(tracks));
}

const hex = (n: number, width: number): string => n.toString(16).toUpperCase().padStart(width, '0');

/**
 * MusicBrainz disc id: SHA-1 over the hex TOC, Base64 with + / = replaced by . _ - (audio-cd.md §4).
 * Slot k of the 99 holds track k's offset (libdiscid's track_offsets), 0 where there is no track k.
 */
export function musicbrainzDiscId(toc: CdToc): string {
  let text = hex(toc.first, 2) + hex(toc.last, 2) + hex(toc.leadout, 8);
  for (let k = 1; k <= 99; k++) text += hex(k >= toc.first && k <= toc.last ? (toc.offsets[k - toc.first] ?? 0) : 0, 8);
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
