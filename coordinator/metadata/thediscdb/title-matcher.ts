/**
 * Which TheDiscDB title each scanned title is. MakeMKV numbers titles after dropping those shorter
 * than its minimum length, and versions differ, so the number is never compared: a title is matched
 * on where it comes from (source playlist, clip or DVD title number), its segment map, its duration
 * and its size, the same evidence TheDiscDB's own importer uses.
 */
import type { Track } from '../../../shared/protocol.js';
import { titleRole, type TitleRole } from './roles.js';
import type { TddbDisc, TddbTitle } from './types.js';

/** What the matcher reads of a scanned title (the protocol's Track; the source fields are optional). */
export type ScannedTitle = Pick<Track, 'number' | 'seconds' | 'size_bytes' | 'source_file' | 'original_title_id' | 'segment_map'>;

/** Durations are whole seconds on both sides; a second either way allows for rounding. */
const DURATION_TOLERANCE_S = 1;
/** Sizes within this share count as near (an older MakeMKV, an lsdvd/dvdbackup estimate). */
const SIZE_NEAR = 0.01;

export interface TitleMapping {
  /** The scanned title's number (MakeMKV's or lsdvd's). */
  number: number;
  /** TheDiscDB's Index of the matched title. */
  index: number;
  role: TitleRole;
  /** What agreed: "source", "segments", "size", "duration". */
  evidence: string[];
}

/** "00800.MPLS" and "00800.mpls" are one playlist; DVD title numbers compare as numbers ("1" = "01"). */
function sourceKey(value: string | null | undefined): string | null {
  if (!value) return null;
  const v = value.trim().toLowerCase();
  return /^\d+$/.test(v) ? String(Number(v)) : v;
}

function segmentKey(value: string | null | undefined): string | null {
  if (!value) return null;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .join(',');
}

/** The evidence one pair shows, or null when something known on both sides disagrees. */
export function compareTitles(scan: ScannedTitle, tddb: TddbTitle): { score: number; evidence: string[] } | null {
  const evidence: string[] = [];
  let score = 0;
  const scanSource = sourceKey(scan.source_file ?? scan.original_title_id);
  const tddbSource = sourceKey(tddb.sourceFile);
  if (scanSource && tddbSource) {
    if (scanSource !== tddbSource) return null;
    score += 4;
    evidence.push('source');
  }
  const scanSegments = segmentKey(scan.segment_map);
  const tddbSegments = segmentKey(tddb.segmentMap);
  if (scanSegments && tddbSegments) {
    if (scanSegments !== tddbSegments) return null;
    score += 2;
    evidence.push('segments');
  }
  if (scan.seconds > 0 && tddb.seconds !== null) {
    if (Math.abs(scan.seconds - tddb.seconds) > DURATION_TOLERANCE_S) return null;
    score += 1;
    evidence.push('duration');
  }
  if (scan.size_bytes > 0 && tddb.size) {
    if (scan.size_bytes === tddb.size) {
      score += 3;
      evidence.push('size');
    } else if (Math.abs(scan.size_bytes - tddb.size) <= tddb.size * SIZE_NEAR) {
      score += 1;
      evidence.push('size');
    } else if (!evidence.includes('source') && !evidence.includes('segments')) {
      return null;
    }
  }
  // A duration alone is no identity: many short titles (logos, warnings) last the same.
  if (!evidence.some((e) => e === 'source' || e === 'segments' || e === 'size')) return null;
  return { score, evidence };
}

/**
 * Each scanned title paired with at most one TheDiscDB title and each TheDiscDB title used at most
 * once, the strongest pairs first (ties: the earlier title on both sides). Scanned titles without a
 * partner are left out; the list is in the scan's order.
 */
export function matchTitles(scanned: readonly ScannedTitle[], disc: TddbDisc): TitleMapping[] {
  const pairs: { s: number; t: number; score: number; evidence: string[] }[] = [];
  scanned.forEach((scan, s) => {
    disc.titles.forEach((title, t) => {
      const c = compareTitles(scan, title);
      if (c) pairs.push({ s, t, ...c });
    });
  });
  pairs.sort((a, b) => b.score - a.score || a.s - b.s || a.t - b.t);
  const usedScan = new Set<number>();
  const usedTddb = new Set<number>();
  const chosen: { s: number; t: number; evidence: string[] }[] = [];
  for (const p of pairs) {
    if (usedScan.has(p.s) || usedTddb.has(p.t)) continue;
    usedScan.add(p.s);
    usedTddb.add(p.t);
    chosen.push(p);
  }
  return chosen
    .sort((a, b) => a.s - b.s)
    .map(({ s, t, evidence }) => ({ number: scanned[s].number, index: disc.titles[t].index, role: titleRole(disc.titles[t], disc), evidence }));
}
