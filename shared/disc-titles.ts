/**
 * What each title of a disc is, as a disc database (TheDiscDB) knows it, and how a scanned title is
 * found among them. Both sides use this: the coordinator plans a rip from a disc's titles, the agent
 * finds the planned titles in its own scan (the number never counts: MakeMKV numbers titles after
 * dropping those shorter than its minimum length, and versions differ).
 */

/** The extras folders the media servers know by name (Jellyfin/Emby and Plex agree on these eight). */
export type ExtraFolder = 'Deleted Scenes' | 'Trailers' | 'Featurettes' | 'Behind The Scenes' | 'Interviews' | 'Scenes' | 'Shorts' | 'Other';

export interface EpisodeRange {
  first: number;
  last: number;
}

export type TitleRole =
  | { role: 'main_movie'; name: string | null }
  | { role: 'episode'; name: string | null; season: number | null; episodes: EpisodeRange | null }
  /** Every episode (or a run of them) in one title: ripping it too would duplicate the episodes. */
  | { role: 'play_all'; name: string | null; season: number | null; episodes: EpisodeRange | null }
  | { role: 'extra'; name: string | null; kind: string; folder: ExtraFolder; season: number | null; episodes: EpisodeRange | null }
  /** The database has the title but not what it is. */
  | { role: 'unidentified' };

/** What a title is recognised by: where it comes from, its segments, its duration and size. */
export interface TitleEvidence {
  /** Blu-ray: the playlist or clip ("00800.mpls", "00006.m2ts"); DVD: the DVD title number ("01"). */
  source_file?: string | null;
  /** DVD cell ranges "1-19,20-35", Blu-ray clip numbers "14,15,16". */
  segment_map?: string | null;
  /** Whole seconds; 0 when unknown. */
  seconds: number;
  /** Bytes; 0 when unknown. */
  size_bytes: number;
}

/** One title of a disc as the database knows it: its evidence and its role. */
export interface DiscTitle extends TitleEvidence {
  /** The database's own index of the title (TheDiscDB's Index), for logs. */
  index: number;
  role: TitleRole;
}

/** A scanned title: the scan's number and the evidence (MakeMKV's TINFO 24 counts as the source of a DVD title). */
export interface ScannedEvidence extends TitleEvidence {
  number: number;
  original_title_id?: string | null;
}

/** Durations are whole seconds on both sides; a second either way allows for rounding. */
export const DURATION_TOLERANCE_S = 1;
/** Sizes within this share count as near (an older MakeMKV, an lsdvd/dvdbackup estimate). */
export const SIZE_NEAR = 0.01;

/** "00800.MPLS" and "00800.mpls" are one playlist; DVD title numbers compare as numbers ("1" = "01"). */
function sourceKey(value: string | null | undefined): string | null {
  if (!value) return null;
  const v = value.trim().toLowerCase();
  return /^\d+$/.test(v) ? String(Number(v)) : v;
}

function segmentKey(value: string | null | undefined): string | null {
  if (!value) return null;
  const key = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .join(',');
  return key || null;
}

/** The evidence one pair shows (a score and what agreed), or null when something known on both sides disagrees. */
export function compareTitles(scan: ScannedEvidence, known: TitleEvidence): { score: number; evidence: string[] } | null {
  const evidence: string[] = [];
  let score = 0;
  const scanSource = sourceKey(scan.source_file ?? scan.original_title_id);
  const knownSource = sourceKey(known.source_file);
  if (scanSource && knownSource) {
    if (scanSource !== knownSource) return null;
    score += 4;
    evidence.push('source');
  }
  const scanSegments = segmentKey(scan.segment_map);
  const knownSegments = segmentKey(known.segment_map);
  if (scanSegments && knownSegments) {
    if (scanSegments !== knownSegments) return null;
    score += 2;
    evidence.push('segments');
  }
  if (scan.seconds > 0 && known.seconds > 0) {
    if (Math.abs(scan.seconds - known.seconds) > DURATION_TOLERANCE_S) return null;
    score += 1;
    evidence.push('duration');
  }
  if (scan.size_bytes > 0 && known.size_bytes > 0) {
    if (scan.size_bytes === known.size_bytes) {
      score += 3;
      evidence.push('size');
    } else if (Math.abs(scan.size_bytes - known.size_bytes) <= known.size_bytes * SIZE_NEAR) {
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

export interface TitlePair<S, K> {
  scan: S;
  known: K;
  /** What agreed: "source", "segments", "duration", "size". */
  evidence: string[];
}

/**
 * Each scanned title paired with at most one known title and each known title used at most once,
 * the strongest pairs first (ties: the earlier title on both sides). Scanned titles without a
 * partner are left out; the list is in the scan's order.
 */
export function matchTitles<S extends ScannedEvidence, K extends TitleEvidence>(scanned: readonly S[], known: readonly K[]): TitlePair<S, K>[] {
  const pairs: { s: number; k: number; score: number; evidence: string[] }[] = [];
  scanned.forEach((scan, s) => {
    known.forEach((title, k) => {
      const c = compareTitles(scan, title);
      if (c) pairs.push({ s, k, ...c });
    });
  });
  pairs.sort((a, b) => b.score - a.score || a.s - b.s || a.k - b.k);
  const usedScan = new Set<number>();
  const usedKnown = new Set<number>();
  const chosen: { s: number; k: number; evidence: string[] }[] = [];
  for (const p of pairs) {
    if (usedScan.has(p.s) || usedKnown.has(p.k)) continue;
    usedScan.add(p.s);
    usedKnown.add(p.k);
    chosen.push(p);
  }
  return chosen.sort((a, b) => a.s - b.s).map(({ s, k, evidence }) => ({ scan: scanned[s], known: known[k], evidence }));
}

/** The kinds of titles a household can want from a disc the database knows (setting ripTitleKinds). */
export const RIP_TITLE_KINDS = ['main_feature', 'episodes', 'extras'] as const;
export type RipTitleKind = (typeof RIP_TITLE_KINDS)[number];

/** Which kind a role belongs to; play-all and unidentified titles belong to none (never ripped by a plan). */
export function kindOfRole(role: TitleRole): RipTitleKind | null {
  if (role.role === 'main_movie') return 'main_feature';
  if (role.role === 'episode') return 'episodes';
  if (role.role === 'extra') return 'extras';
  return null;
}

/** A short description of a role for logs and the dialog: "main movie", "S04E03", "Featurettes: Making of". */
export function describeRole(role: TitleRole): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  switch (role.role) {
    case 'main_movie':
      return role.name ? `main movie "${role.name}"` : 'main movie';
    case 'episode': {
      const s = role.season !== null ? `S${pad(role.season)}` : '';
      const e = role.episodes ? (role.episodes.last > role.episodes.first ? `E${pad(role.episodes.first)}-E${pad(role.episodes.last)}` : `E${pad(role.episodes.first)}`) : '';
      return `episode ${s}${e}${role.name ? ` "${role.name}"` : ''}`.trim();
    }
    case 'play_all':
      return 'play all';
    case 'extra':
      return `${role.folder}${role.name ? `: "${role.name}"` : ''}`;
    default:
      return 'unidentified';
  }
}
