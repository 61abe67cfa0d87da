/**
 * Which TheDiscDB title each scanned title is: the disc's titles as the shared DiscTitle (evidence
 * and role), paired with the scan by shared/disc-titles.ts (source playlist, clip or DVD title
 * number, segment map, duration and size, the evidence TheDiscDB's own importer uses; never the
 * title number).
 */
import { matchTitles as pairTitles, type DiscTitle, type ScannedEvidence } from '../../../shared/disc-titles.js';
import { titleRole, type TitleRole } from './roles.js';
import type { TddbDisc } from './types.js';

/** What the matcher reads of a scanned title (the protocol's Track; the source fields are optional). */
export type ScannedTitle = ScannedEvidence;

export interface TitleMapping {
  /** The scanned title's number (MakeMKV's or lsdvd's). */
  number: number;
  /** TheDiscDB's Index of the matched title. */
  index: number;
  role: TitleRole;
  /** What agreed: "source", "segments", "size", "duration". */
  evidence: string[];
}

/** Every title of a TheDiscDB disc with its evidence and role, in TheDiscDB's order. */
export function discTitles(disc: TddbDisc): DiscTitle[] {
  return disc.titles.map((t) => ({
    index: t.index,
    source_file: t.sourceFile,
    segment_map: t.segmentMap,
    seconds: t.seconds ?? 0,
    size_bytes: t.size ?? 0,
    role: titleRole(t, disc),
  }));
}

/** Each scanned title TheDiscDB knows with its index and role, in the scan's order. */
export function matchTitles(scanned: readonly ScannedTitle[], disc: TddbDisc): TitleMapping[] {
  return pairTitles(scanned, discTitles(disc)).map((p) => ({ number: p.scan.number, index: p.known.index, role: p.known.role, evidence: p.evidence }));
}
