import type { EpisodeRuntime } from '../../shared/protocol.js';

export type EpisodeAssignment = { ok: true; episodes: number[]; stage: 'runtimes' | 'sequence' } | { ok: false; reason: string };

/** A file fits an episode when its length is within 3 minutes or 15 % of the listed runtime. */
export function fits(seconds: number, minutes: number | null): boolean {
  if (minutes === null || minutes <= 0 || !(seconds > 0)) return false;
  const diff = Math.abs(seconds / 60 - minutes);
  return diff <= Math.max(3, minutes * 0.15);
}

function minutesText(seconds: number): string {
  return `${Math.round(seconds / 60)} min`;
}

/** All runtimes known and each within the tolerance of the median: episodes cannot be told apart by length. */
export function uniformRuntimes(season: EpisodeRuntime[]): boolean {
  const known = season.map((e) => e.minutes).filter((m): m is number => m !== null && m > 0);
  if (known.length !== season.length || known.length < 2) return false;
  const median = [...known].sort((a, b) => a - b)[Math.floor(known.length / 2)];
  return known.every((m) => fits(m * 60, median));
}

/**
 * Matches ripped files (in title order, durations from the transcoder scan) to a season's episodes,
 * keeping the order: file i+1 gets a later episode than file i. Stage one counts the assignments by
 * runtime; exactly one is the answer. When several fit and the season's runtimes are uniform, the
 * sequence stage assumes the files are consecutive episodes: a single possible run (the whole season
 * on one disc), or the run the disc number points to when each disc holds as many episodes as this one.
 * Anything else is ambiguous, with the reason in words.
 */
export function matchEpisodes(durations: number[], season: EpisodeRuntime[], discNumber: number | null = null): EpisodeAssignment {
  const n = durations.length;
  const eps = [...season].sort((a, b) => a.episode - b.episode);
  if (n === 0) return { ok: false, reason: 'there are no files to match' };
  if (eps.length === 0) return { ok: false, reason: 'the season lists no episodes' };
  if (n > eps.length) return { ok: false, reason: `${n} files but the season has only ${eps.length} episodes` };
  const lonely = durations.findIndex((d) => !eps.some((e) => fits(d, e.minutes)));
  if (lonely >= 0) return { ok: false, reason: `file ${lonely + 1} (${minutesText(durations[lonely])}) fits no episode runtime of the season` };

  // ways[i][j]: assignments of files i.. to episodes j.. (order kept), capped at 2 (we only need "one or more than one").
  const ways: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(eps.length + 1).fill(0));
  for (let j = 0; j <= eps.length; j++) ways[n][j] = 1;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = eps.length - 1; j >= 0; j--) {
      const take = fits(durations[i], eps[j].minutes) ? ways[i + 1][j + 1] : 0;
      ways[i][j] = Math.min(2, ways[i][j + 1] + take);
    }
  }
  if (ways[0][0] === 0) return { ok: false, reason: 'the files fit the runtimes only in a different order than they were ripped' };
  if (ways[0][0] === 1) {
    const out: number[] = [];
    let j = 0;
    for (let i = 0; i < n; i++) {
      while (!(fits(durations[i], eps[j].minutes) && ways[i + 1][j + 1] > 0)) j++;
      out.push(eps[j].episode);
      j++;
    }
    return { ok: true, episodes: out, stage: 'runtimes' };
  }

  if (!uniformRuntimes(eps)) return { ok: false, reason: `the ${n} files fit the season's runtimes in more than one way` };
  const starts: number[] = [];
  for (let s = 0; s + n <= eps.length; s++) {
    if (durations.every((d, i) => fits(d, eps[s + i].minutes))) starts.push(s);
  }
  if (starts.length === 1) return { ok: true, episodes: eps.slice(starts[0], starts[0] + n).map((e) => e.episode), stage: 'sequence' };
  if (discNumber !== null && discNumber >= 1) {
    const s = (discNumber - 1) * n;
    if (starts.includes(s)) return { ok: true, episodes: eps.slice(s, s + n).map((e) => e.episode), stage: 'sequence' };
  }
  return { ok: false, reason: `the season's runtimes are all alike and the ${n} files could be episodes starting at ${starts.length} different places${discNumber ? '' : ' (the disc label names no disc number)'}` };
}
