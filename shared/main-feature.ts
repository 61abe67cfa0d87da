/**
 * The main feature of a movie disc by evidence, not by length alone (pure; the agent's rip and the
 * coordinator's title scan for the rip dialog use the same rules).
 *
 * Blu-rays with playlist obfuscation carry dozens to hundreds of playlists of the film's length:
 * the same clips in another order (MakeMKV's segment map, TINFO 26). Only one plays them as the film
 * runs; "the longest title" is then any of them, and an automatic rip of every title rips them all.
 *
 * The candidates are the titles within MAIN_CANDIDATE_TOLERANCE of the longest one, and any title
 * whose length is the runtime the metadata lookup knows. Of them the main feature is, in this order
 * of evidence: one with audio (where the scan lists the streams); one of the known runtime (within
 * RUNTIME_TOLERANCE); one whose segments are not out of order; the longest; the largest; the first.
 *
 * An automatic rip then leaves titles (each with its reason and the title it yields to):
 *   - `duplicate`: the same segment map as a title taken, or the same length and size (unless both
 *     segment maps are known and share no segment: two different titles that happen to match);
 *   - `out_of_order`: similar to a title taken whose segments are in order, its own are not (a decoy
 *     of playlist obfuscation);
 *   - `similar`: more than `maxSimilar` (setting maxSimilarTitles) titles of near-identical length
 *     would be taken: the best ones are, the rest are left.
 * Two titles are similar when their lengths lie within SIMILAR_DURATION_SHARE (at least
 * SIMILAR_DURATION_MIN_S) of each other and, where both segment maps are known, they share at least
 * SIMILAR_SHARED_SEGMENTS of the shorter map's segments: decoys reuse the film's clips, while
 * language versions of a song or episodes of one length do not share theirs.
 *
 * Series discs do not go through this (their episodes are alike by nature): the agent applies it to
 * movie rips only.
 */

/** The runtime the metadata lookup knows counts as met within this share of it (TMDB rounds to minutes). */
export const RUNTIME_TOLERANCE = 0.02;
/**
 * Segments count as in order when at least this share of the steps between them goes forward: Frozen's
 * film plays 11 clips and steps back once, to its last (9 of 10); a shuffle of 15 clips comes this
 * close about once in 100 000.
 */
export const ORDERED_SHARE = 0.85;
/** Titles within this share of the longest one are candidates for the main feature (the share versions have, title-rules.ts VERSION_TOLERANCE). */
export const MAIN_CANDIDATE_TOLERANCE = 0.1;
/** Titles of near-identical length: within 1 % of each other... */
export const SIMILAR_DURATION_SHARE = 0.01;
/** ...and never less than 2 s (whole seconds on both sides, and rounding). */
export const SIMILAR_DURATION_MIN_S = 2;
/** Where both segment maps are known, similar titles share at least half of the shorter map's segments. */
export const SIMILAR_SHARED_SEGMENTS = 0.5;
/** Setting maxSimilarTitles: its default, and the bounds it is checked against. */
export const DEFAULT_MAX_SIMILAR_TITLES = 3;
export const MAX_SIMILAR_TITLES_MIN = 1;
export const MAX_SIMILAR_TITLES_MAX = 50;

/** What the scorer reads of a title (a scanned Track has all of it). */
export interface FeatureTitle {
  number: number;
  seconds: number;
  size_bytes: number;
  /** MakeMKV TINFO 26: "14,15,16" (Blu-ray clips) or "1-19,20-35" (DVD cells); absent when the scan does not say. */
  segment_map?: string | null;
  /** The title's audio streams; absent when the scan does not list them (then audio counts as present). */
  audio?: readonly unknown[];
}

/** Why a title is the main feature, as codes the UI translates (in the order the texts name them). */
export type MainFeatureReason = 'segments_in_order' | 'runtime' | 'longest' | 'largest' | 'audio';
export const MAIN_FEATURE_REASONS: readonly MainFeatureReason[] = ['segments_in_order', 'runtime', 'longest', 'largest', 'audio'];

/** Why an automatic rip leaves a title (see the module comment). */
export type LeftReason = 'duplicate' | 'out_of_order' | 'similar';

export interface LeftTitle {
  reason: LeftReason;
  /** The title taken instead: the one it duplicates, the one in order, or the best of its length. */
  of: number;
}

export interface MainFeatureOptions {
  /** The runtime the metadata lookup knows (TMDB, minutes); null or absent: the signal is skipped. */
  runtimeMinutes?: number | null;
  /** Setting maxSimilarTitles: at most this many titles of near-identical length are taken. */
  maxSimilar?: number;
  /** Setting minTitleSeconds: shorter titles are no candidates and are never left (a disc with no title that long keeps all). */
  minSeconds?: number;
}

export interface MainFeatureChoice {
  /** The main feature's title number; null for a disc without titles. */
  main: number | null;
  reasons: MainFeatureReason[];
  /** The titles an automatic rip leaves, by number. */
  left: Map<number, LeftTitle>;
}

type Segment = [number, number];

/** "1-19,20-35" → [[1,19],[20,35]]; "509,2754" → [[509,509],[2754,2754]]; null when absent or unreadable. */
export function parseSegments(map: string | null | undefined): Segment[] | null {
  if (!map) return null;
  const out: Segment[] = [];
  for (const part of map.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) return null;
    const start = Number(m[1]);
    out.push([start, m[2] === undefined ? start : Number(m[2])]);
  }
  return out.length > 0 ? out : null;
}

/** The share of steps from one segment to the next that go forward (1 for one segment or none known). */
export function forwardShare(segments: readonly Segment[] | null): number {
  if (!segments || segments.length < 2) return 1;
  let forward = 0;
  for (let i = 1; i < segments.length; i++) if (segments[i][0] > segments[i - 1][1]) forward++;
  return forward / (segments.length - 1);
}

/** in_order: two or more segments played forward; out_of_order: two or more that jump back; unknown: one segment or no map. */
export type SegmentOrder = 'in_order' | 'out_of_order' | 'unknown';

export function segmentOrder(map: string | null | undefined): SegmentOrder {
  const segments = parseSegments(map);
  if (!segments || segments.length < 2) return 'unknown';
  return forwardShare(segments) >= ORDERED_SHARE ? 'in_order' : 'out_of_order';
}

/** Whether a length lies within RUNTIME_TOLERANCE of the runtime the lookup knows. */
export function matchesRuntime(seconds: number, runtimeMinutes: number | null | undefined): boolean {
  if (!runtimeMinutes || runtimeMinutes <= 0 || seconds <= 0) return false;
  const runtime = runtimeMinutes * 60;
  return Math.abs(seconds - runtime) <= runtime * RUNTIME_TOLERANCE;
}

interface Scored<T extends FeatureTitle> {
  title: T;
  segments: Segment[] | null;
  cells: Set<number> | null;
  order: SegmentOrder;
  runtime: boolean;
  noAudio: boolean;
}

/** The segment numbers a map plays (DVD cell ranges expanded, at most 10 000 of them). */
function segmentSet(segments: Segment[] | null): Set<number> | null {
  if (!segments) return null;
  const out = new Set<number>();
  for (const [a, b] of segments) for (let n = a; n <= Math.max(a, b) && out.size < 10_000; n++) out.add(n);
  return out;
}

function score<T extends FeatureTitle>(title: T, runtimeMinutes: number | null | undefined): Scored<T> {
  const segments = parseSegments(title.segment_map);
  return {
    title,
    segments,
    cells: segmentSet(segments),
    order: segmentOrder(title.segment_map),
    runtime: matchesRuntime(title.seconds, runtimeMinutes),
    noAudio: Array.isArray(title.audio) && title.audio.length === 0,
  };
}

/** The ranking of candidates: audio, known runtime, segments not out of order, longer, larger, earlier. */
function better<T extends FeatureTitle>(a: Scored<T>, b: Scored<T>): number {
  return (
    Number(a.noAudio) - Number(b.noAudio) ||
    Number(b.runtime) - Number(a.runtime) ||
    Number(a.order === 'out_of_order') - Number(b.order === 'out_of_order') ||
    b.title.seconds - a.title.seconds ||
    b.title.size_bytes - a.title.size_bytes ||
    a.title.number - b.title.number
  );
}

/** Both maps known and no segment in common: certainly different titles. */
function disjoint(a: Scored<FeatureTitle>, b: Scored<FeatureTitle>): boolean {
  if (!a.cells || !b.cells) return false;
  for (const n of a.cells) if (b.cells.has(n)) return false;
  return true;
}

function sharesSegments(a: Scored<FeatureTitle>, b: Scored<FeatureTitle>): boolean {
  if (!a.cells || !b.cells) return true;
  let shared = 0;
  for (const n of a.cells) if (b.cells.has(n)) shared++;
  return shared >= Math.min(a.cells.size, b.cells.size) * SIMILAR_SHARED_SEGMENTS;
}

/** Near-identical length and (where known) the same clips: decoys of one another, or one film's copies. */
export function similarLength(a: number, b: number): boolean {
  return Math.abs(a - b) <= Math.max(SIMILAR_DURATION_MIN_S, Math.max(a, b) * SIMILAR_DURATION_SHARE);
}

function similar(a: Scored<FeatureTitle>, b: Scored<FeatureTitle>): boolean {
  return similarLength(a.title.seconds, b.title.seconds) && sharesSegments(a, b);
}

function sameMap(a: Scored<FeatureTitle>, b: Scored<FeatureTitle>): boolean {
  if (!a.segments || !b.segments || a.segments.length !== b.segments.length) return false;
  return a.segments.every((s, i) => s[0] === b.segments?.[i][0] && s[1] === b.segments?.[i][1]);
}

/**
 * The main feature of a movie disc's titles and the titles an automatic rip leaves (see the module
 * comment for the rules). Titles shorter than `minSeconds` take no part (when some title is that long).
 */
export function chooseMainFeature<T extends FeatureTitle>(titles: readonly T[], opts: MainFeatureOptions = {}): MainFeatureChoice {
  const left = new Map<number, LeftTitle>();
  const minSeconds = opts.minSeconds ?? 0;
  const long = titles.filter((t) => t.seconds >= minSeconds);
  const pool = (long.length > 0 ? long : [...titles]).map((t) => score(t, opts.runtimeMinutes));
  if (pool.length === 0) return { main: null, reasons: [], left };
  const longest = Math.max(...pool.map((s) => s.title.seconds));
  const largest = Math.max(...pool.map((s) => s.title.size_bytes));
  const isCandidate = (s: Scored<T>) => s.title.seconds >= longest * (1 - MAIN_CANDIDATE_TOLERANCE) || s.runtime;
  const candidates = pool.filter(isCandidate).sort(better);
  const main = candidates[0];

  const reasons: MainFeatureReason[] = [];
  if (main.order === 'in_order') reasons.push('segments_in_order');
  if (main.runtime) reasons.push('runtime');
  if (main.title.seconds >= longest) reasons.push('longest');
  if (main.title.size_bytes > 0 && main.title.size_bytes >= largest) reasons.push('largest');
  if (!main.noAudio && candidates.some((c) => c.noAudio)) reasons.push('audio');

  // The rip's view: the candidates best first, then every other title by the same ranking.
  const max = Math.max(MAX_SIMILAR_TITLES_MIN, opts.maxSimilar ?? DEFAULT_MAX_SIMILAR_TITLES);
  const kept: Scored<T>[] = [];
  for (const s of [...candidates, ...pool.filter((p) => !isCandidate(p)).sort(better)]) {
    const why = leftReason(s, kept, max);
    if (why) left.set(s.title.number, why);
    else kept.push(s);
  }
  return { main: main.title.number, reasons, left };
}

function leftReason(s: Scored<FeatureTitle>, kept: readonly Scored<FeatureTitle>[], max: number): LeftTitle | null {
  const copy = kept.find((k) => sameMap(s, k));
  if (copy) return { reason: 'duplicate', of: copy.title.number };
  const ordered = s.order === 'out_of_order' ? kept.find((k) => k.order === 'in_order' && similar(s, k)) : undefined;
  if (ordered) return { reason: 'out_of_order', of: ordered.title.number };
  const twin = kept.find((k) => k.title.size_bytes > 0 && k.title.size_bytes === s.title.size_bytes && Math.abs(k.title.seconds - s.title.seconds) <= 1 && !disjoint(s, k));
  if (twin) return { reason: 'duplicate', of: twin.title.number };
  const anchor = kept.find((k) => similar(s, k));
  if (anchor && kept.filter((k) => similar(anchor, k)).length >= max) return { reason: 'similar', of: anchor.title.number };
  return null;
}

/** "2:08:48" (or "8:05" under an hour), for the job log. */
export function clock(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

const REASON_TEXT: Record<MainFeatureReason, string> = {
  segments_in_order: 'segments in order',
  runtime: 'runtime like TMDB',
  longest: 'longest',
  largest: 'largest',
  audio: 'with audio',
};

/** The job log's line of the choice: "main feature: title 7 (segments in order, runtime like TMDB (128 min), longest)". */
export function describeMainFeature(choice: MainFeatureChoice, runtimeMinutes?: number | null): string | null {
  if (choice.main === null) return null;
  const why = choice.reasons.map((r) => (r === 'runtime' && runtimeMinutes ? `${REASON_TEXT[r]} (${runtimeMinutes} min)` : REASON_TEXT[r]));
  return `main feature: title ${choice.main}${why.length ? ` (${why.join(', ')})` : ''}`;
}

const LEFT_TEXT: Record<LeftReason, (of: number, max: number) => string> = {
  out_of_order: (of) => `segments out of order (playlist obfuscation); title ${of} plays them in order`,
  duplicate: (of) => `duplicates of title ${of} (same segments, or same length and size)`,
  similar: (of, max) => `more than ${max} titles of near-identical length (maxSimilarTitles); title ${of} and the best others are taken`,
};

/**
 * The job log's lines of the titles left, one per reason and length (of the title each yields to):
 * "118 titles of 1:52:10 left: segments out of order (playlist obfuscation); title 7 plays them in order".
 */
export function describeLeft<T extends FeatureTitle>(titles: readonly T[], choice: MainFeatureChoice, maxSimilar = DEFAULT_MAX_SIMILAR_TITLES): string[] {
  const byNumber = new Map(titles.map((t) => [t.number, t]));
  const groups = new Map<string, { count: number; numbers: number[]; seconds: number; reason: LeftReason; of: number }>();
  for (const [number, why] of choice.left) {
    const of = byNumber.get(why.of);
    const key = `${why.reason}:${why.of}`;
    const group = groups.get(key) ?? { count: 0, numbers: [], seconds: of?.seconds ?? 0, reason: why.reason, of: why.of };
    group.count++;
    group.numbers.push(number);
    groups.set(key, group);
  }
  return [...groups.values()].map((g) => {
    const which = g.count === 1 ? `title ${g.numbers[0]}` : g.count <= 10 ? `titles ${g.numbers.join(', ')}` : `${g.count} titles`;
    return `${which} of ${clock(g.seconds)} left: ${LEFT_TEXT[g.reason](g.of, Math.max(MAX_SIMILAR_TITLES_MIN, maxSimilar))}`;
  });
}
