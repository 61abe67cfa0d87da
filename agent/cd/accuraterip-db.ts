/**
 * The AccurateRip database's answer for one disc (`dBAR-…bin`) and what it says of a rip.
 *
 * The answer is one or more pressings of the disc back to back, each: track count (1 byte), id1, id2
 * and freedb id (4 bytes each, little endian), then per track its confidence (1 byte: how many rips
 * agreed), checksum and the checksum of frame 450 (4 bytes each, little endian). The format as
 * whipper reads it (whipper/common/accurip.py).
 */

export interface AccurateRipPressing {
  id1: string;
  id2: string;
  freedb: string;
  tracks: { confidence: number; checksum: string }[];
}

const HEADER_BYTES = 13;
const TRACK_BYTES = 9;
/** A confidence the database reports can be believed from here on (one other rip agreeing can be chance). */
export const CONFIDENT_ENTRY = 2;

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

/** The pressings of an answer; throws a RangeError for bytes that are not one (cut short, no tracks). */
export function parseAccurateRip(data: Buffer): AccurateRipPressing[] {
  const out: AccurateRipPressing[] = [];
  let pos = 0;
  while (pos < data.length) {
    const count = data[pos];
    const end = pos + HEADER_BYTES + count * TRACK_BYTES;
    if (count === 0 || end > data.length) throw new RangeError(`not an AccurateRip answer: pressing ${out.length + 1} is cut short or has no tracks`);
    const pressing: AccurateRipPressing = { id1: hex8(data.readUInt32LE(pos + 1)), id2: hex8(data.readUInt32LE(pos + 5)), freedb: hex8(data.readUInt32LE(pos + 9)), tracks: [] };
    for (let p = pos + HEADER_BYTES; p < end; p += TRACK_BYTES) pressing.tracks.push({ confidence: data[p], checksum: hex8(data.readUInt32LE(p + 1)) });
    out.push(pressing);
    pos = end;
  }
  return out;
}

export type TrackVerdict =
  /** The checksum is in the database: `confidence` rips agree (the best pressing), `version` says which checksum matched. */
  | { status: 'accurate'; confidence: number; version: 'v1' | 'v2' }
  /** The database knows the track, this rip differs; `confidence` is the best entry's. */
  | { status: 'inaccurate'; confidence: number }
  /** The database has no checksum for this track (not in any pressing, or too short to have one). */
  | { status: 'unknown' };

export interface TrackChecksums {
  /** The track's number on the disc. */
  number: number;
  /** Its place in the database's list: from 1, a mixed-mode CD's data track 1 takes place 1. */
  slot: number;
  v1: string;
  v2: string;
}

/**
 * Each track's verdict against every pressing: accurate when v1 or v2 equals a pressing's checksum
 * in the track's slot (the highest confidence among the matches), else inaccurate when some pressing
 * has a checksum there with a confidence above 0, else unknown.
 */
export function verifyTracks(tracks: TrackChecksums[], pressings: AccurateRipPressing[]): TrackVerdict[] {
  return tracks.map((t) => {
    let best: TrackVerdict = { status: 'unknown' };
    let known = 0;
    for (const p of pressings) {
      const entry = p.tracks[t.slot - 1];
      if (!entry || entry.confidence === 0) continue;
      known = Math.max(known, entry.confidence);
      const version = entry.checksum === t.v2 ? 'v2' : entry.checksum === t.v1 ? 'v1' : null;
      if (version && (best.status !== 'accurate' || entry.confidence > best.confidence)) best = { status: 'accurate', confidence: entry.confidence, version };
    }
    if (best.status === 'accurate') return best;
    return known > 0 ? { status: 'inaccurate', confidence: known } : best;
  });
}
