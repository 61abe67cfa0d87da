/**
 * Rules over a disc's titles by their lengths (pure): which titles an unattended rip takes, the
 * "play all" title of a series DVD, and how the files of a movie rip divide into the main feature,
 * its versions and the extras.
 */

export interface TitleLength {
  number: number;
  seconds: number;
}

/** A "play all" title is within this share of the sum of two or more other titles. */
export const PLAY_ALL_TOLERANCE = 0.02;
/** A title within this share of the main feature's length is another version of it. */
export const VERSION_TOLERANCE = 0.1;

/**
 * The titles that play two or more other titles in a row: a title whose length lies within 2 % of
 * the sum of some two or more other titles (a subset-sum over whole seconds, so the check holds for
 * any selection of episodes, not only all of them).
 */
export function playAllTitles(titles: TitleLength[]): Set<number> {
  const found = new Set<number>();
  for (const candidate of titles) {
    const target = Math.round(candidate.seconds);
    if (target <= 0) continue;
    const low = Math.floor(target * (1 - PLAY_ALL_TOLERANCE));
    const high = Math.ceil(target * (1 + PLAY_ALL_TOLERANCE));
    const others = titles.filter((t) => t !== candidate && t.seconds > 0 && Math.round(t.seconds) <= high).map((t) => Math.round(t.seconds));
    if (others.length < 2) continue;
    // one[s]: the sum s is reachable with exactly one title; many[s]: with two or more.
    const one = new Uint8Array(high + 1);
    const many = new Uint8Array(high + 1);
    for (const len of others) {
      for (let s = high; s >= len; s--) {
        if (one[s - len] || many[s - len]) many[s] = 1;
      }
      one[len] = 1;
    }
    for (let s = low; s <= high; s++) {
      if (many[s]) {
        found.add(candidate.number);
        break;
      }
    }
  }
  return found;
}

/**
 * What a rip without chosen titles takes: every title of at least `minSeconds` (as MakeMKV's minimum
 * length; a disc with no title that long keeps all of them), for a series without its "play all"
 * titles. Chosen titles are never filtered.
 */
export function unattendedTitles<T extends TitleLength>(titles: T[], minSeconds: number, series: boolean): { keep: T[]; short: T[]; playAll: T[] } {
  const long = titles.filter((t) => t.seconds >= minSeconds);
  const pool = long.length > 0 ? long : titles;
  const short = long.length > 0 ? titles.filter((t) => t.seconds < minSeconds) : [];
  const playAllNumbers = series ? playAllTitles(pool) : new Set<number>();
  const playAll = pool.filter((t) => playAllNumbers.has(t.number));
  return { keep: pool.filter((t) => !playAllNumbers.has(t.number)), short, playAll };
}

export type MovieRole = { role: 'main' } | { role: 'version'; n: number } | { role: 'extra'; n: number };

/**
 * The role of each file of a movie rip, by length: the main feature is the file the rip chose by
 * evidence (`mainIndex`, shared/main-feature.ts), else the longest; files within 10 % of its length
 * are versions (numbered from 2, the main feature being version 1); every other file is an extra
 * (numbered from 1). Order of the result = order of the input.
 */
export function movieRoles(seconds: number[], mainIndex?: number | null): MovieRole[] {
  if (seconds.length === 0) return [];
  let main = 0;
  seconds.forEach((s, i) => {
    if (s > seconds[main]) main = i;
  });
  if (typeof mainIndex === 'number' && Number.isInteger(mainIndex) && mainIndex >= 0 && mainIndex < seconds.length) main = mainIndex;
  const mainLength = seconds[main];
  let versions = 1;
  let extras = 0;
  return seconds.map((s, i) => {
    if (i === main) return { role: 'main' };
    if (mainLength > 0 && Math.abs(s - mainLength) <= mainLength * VERSION_TOLERANCE) return { role: 'version', n: ++versions };
    return { role: 'extra', n: ++extras };
  });
}
