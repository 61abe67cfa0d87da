import { freedbDiscId, type DiscLayout } from './cd-toc.js';

const LEAD_IN = 150;

/**
 * The disc as the AccurateRip database files it: its entry is named by the number of audio tracks,
 * two ids summed over the audio tracks' starts, and the freedb id of the whole disc
 * (`dBAR-nnn-aaaaaaaa-bbbbbbbb-ffffffff.bin`).
 */
export interface AccurateRipDisc {
  /** Audio tracks, in disc order: their numbers on the disc (a mixed-mode CD's first audio track is 2). */
  audioTracks: number[];
  id1: string;
  id2: string;
  freedb: string;
  /** The entry's path below the database's base URL: `/a/b/c/dBAR-…bin` with a, b, c the last three hex digits of id1. */
  path: string;
}

const hex8 = (n: number): string => (n >>> 0).toString(16).padStart(8, '0');

/**
 * AccurateRip's ids of a disc, by the rules dBpoweramp (the database's own ripper) applies, as the
 * ARver project documents them (doc/data_track.md, checked there against dBpoweramp and EAC):
 * - id1 sums every audio track's start (LBA, without the lead-in) and the lead-out; id2 sums each
 *   start (at least 1) times the track's place among the audio tracks, and the lead-out times the
 *   number of audio tracks plus one. Data tracks add nothing to either id.
 * - The lead-out is the disc's real one: for an enhanced CD the end of its data session, not the end
 *   of its audio (libdiscid's rule for MusicBrainz differs here).
 * - The freedb id counts every track, data tracks included, with that lead-out.
 * Null for a disc without audio tracks.
 */
export function accurateRipDisc(layout: DiscLayout): AccurateRipDisc | null {
  const tracks = [...layout.tracks].sort((a, b) => a.number - b.number);
  const audio = tracks.filter((t) => t.audio);
  if (audio.length === 0) return null;
  let id1 = 0;
  let id2 = 0;
  for (const [i, t] of audio.entries()) {
    id1 = (id1 + t.lba) >>> 0;
    id2 = (id2 + Math.max(t.lba, 1) * (i + 1)) >>> 0;
  }
  id1 = (id1 + layout.leadout) >>> 0;
  id2 = (id2 + layout.leadout * (audio.length + 1)) >>> 0;
  const freedb = freedbDiscId({ first: tracks[0].number, last: tracks[tracks.length - 1].number, leadout: layout.leadout + LEAD_IN, offsets: tracks.map((t) => t.lba + LEAD_IN) });
  const a = hex8(id1);
  const name = `dBAR-${String(audio.length).padStart(3, '0')}-${a}-${hex8(id2)}-${freedb}.bin`;
  return { audioTracks: audio.map((t) => t.number), id1: a, id2: hex8(id2), freedb, path: `/${a[7]}/${a[6]}/${a[5]}/${name}` };
}
