/**
 * The history figures of GET /stats, computed from the ended jobs as the store reads them: jobs per
 * ISO week by outcome, rip and transcode times per disc kind, space saved by compression, and the
 * reasons of failures grouped into a few kinds. Pure: the rows and the moment come in, the figures go out.
 */
import type { FailureKind, JobStats, StageTimes, StatsDiscKind } from '../../shared/api-types.js';

/** The weeks GET /stats counts without `weeks`, and the most it takes (two years). */
export const STATS_WEEKS_DEFAULT = 12;
export const STATS_WEEKS_MAX = 104;
/** A failure's example reason is cut to this many characters. */
export const FAILURE_EXAMPLE_CHARS = 200;

const DAY_MS = 86_400_000;

/** What the figures need of an ended job (JobsStore.endedSince). */
export interface StatsRow {
  id: string;
  status: string;
  error: string | null;
  finished_at: string;
  disc_type: unknown;
  rip_seconds: unknown;
  transcode_seconds: unknown;
  raw_bytes: unknown;
  output_bytes: unknown;
}

/** Midnight UTC of the Monday of the ISO week holding `ms`. */
export function weekStart(ms: number): number {
  const day = Math.floor(ms / DAY_MS) * DAY_MS;
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return day - weekday * DAY_MS;
}

/** The ISO week of a moment (UTC) as "2026-W48": the year is the one its Thursday lies in. */
export function isoWeek(ms: number): string {
  const monday = weekStart(ms);
  const thursday = new Date(monday + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** The first moment the figures of `weeks` weeks up to `now` count: Monday of the earliest week. */
export function statsFrom(weeks: number, now: number): number {
  return weekStart(now) - (weeks - 1) * 7 * DAY_MS;
}

/**
 * The kind of a failed or canceled job's reason. The patterns are the reasons Ripwerk's own parts
 * write (agent/output/output-proof.ts, the ripper and transcoder parsers, coordinator/dispatch);
 * the first that matches wins, so "the transcoder could not read the input" is the encoder's.
 */
const FAILURE_PATTERNS: readonly [Exclude<FailureKind, 'canceled' | 'other'>, RegExp][] = [
  ['worker_lost', /\bthe worker \S+ (went offline|was removed|no longer runs|did not answer)/i],
  ['no_space', /not enough free space|no space left/i],
  ['output_proof', /\bthe output (is|has|ends|cannot)\b|\bis missing from the output\b|\bof the output is\b/i],
  ['encoder', /\btranscoder\b|\bencode failed\b|HandBrake|\bpreset\b/i],
  ['disc_key', /\bvolume key\b|\bkey store\b|KEYDB|LibreDrive|\bdisc key/i],
  ['read_error', /\bread errors?\b|could not read|cannot be read|\bunreadable\b|\bthe rip is broken\b|no titles the ripper could read/i],
];

export function failureKind(status: string, error: string | null): FailureKind {
  if (status === 'canceled') return 'canceled';
  const text = error ?? '';
  return FAILURE_PATTERNS.find(([, re]) => re.test(text))?.[0] ?? 'other';
}

const DISC_KINDS: readonly StatsDiscKind[] = ['dvd', 'bluray', 'uhd', 'cd'];

function discKind(v: unknown): StatsDiscKind {
  return DISC_KINDS.find((k) => k === v) ?? 'unknown';
}

/** A stored number of seconds or bytes; anything else (absent, text, below 0) is unknown. */
function amount(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function stageTimes(values: readonly number[]): StageTimes {
  return { jobs: values.length, median_seconds: median(values), total_seconds: values.reduce((a, b) => a + b, 0) };
}

const OUTCOMES = ['completed', 'failed', 'canceled'] as const;
type Outcome = (typeof OUTCOMES)[number];
const isOutcome = (s: string): s is Outcome => (OUTCOMES as readonly string[]).includes(s);

/** The figures of the jobs that ended from the Monday `weeks - 1` weeks before `now`'s week up to `now`. */
export function computeStats(rows: readonly StatsRow[], weeks: number, now: number): JobStats {
  const from = statsFrom(weeks, now);
  const perWeek = Array.from({ length: weeks }, (_, i) => {
    const starts = from + i * 7 * DAY_MS;
    return { week: isoWeek(starts), starts: new Date(starts).toISOString().slice(0, 10), completed: 0, failed: 0, canceled: 0 };
  });
  const times = new Map<StatsDiscKind, { jobs: number; rip: number[]; transcode: number[] }>();
  const space = { jobs: 0, raw_bytes: 0, output_bytes: 0, saved_bytes: 0, without_sizes: 0 };
  // Each kind keeps its latest reason as the example.
  const failures = new Map<FailureKind, { kind: FailureKind; count: number; example: string | null; job_id: string; at: string }>();
  for (const row of rows) {
    const at = Date.parse(row.finished_at);
    if (!Number.isFinite(at) || at < from || at > now || !isOutcome(row.status)) continue;
    perWeek[Math.floor((weekStart(at) - from) / (7 * DAY_MS))][row.status]++;
    if (row.status === 'completed') {
      const kind = discKind(row.disc_type);
      const entry = times.get(kind) ?? { jobs: 0, rip: [], transcode: [] };
      entry.jobs++;
      const rip = amount(row.rip_seconds);
      const transcode = amount(row.transcode_seconds);
      if (rip !== null) entry.rip.push(rip);
      if (transcode !== null) entry.transcode.push(transcode);
      times.set(kind, entry);
      const raw = amount(row.raw_bytes);
      const out = amount(row.output_bytes);
      if (raw === null || out === null) space.without_sizes++;
      else {
        space.jobs++;
        space.raw_bytes += raw;
        space.output_bytes += out;
      }
      continue;
    }
    const kind = failureKind(row.status, row.error);
    const seen = failures.get(kind);
    if (seen) {
      seen.count++;
      if (row.finished_at > seen.at) Object.assign(seen, { at: row.finished_at, job_id: row.id, example: example(row.error) });
    } else failures.set(kind, { kind, count: 1, example: example(row.error), job_id: row.id, at: row.finished_at });
  }
  space.saved_bytes = space.raw_bytes - space.output_bytes;
  return {
    weeks,
    from: new Date(from).toISOString().slice(0, 10),
    generated_at: new Date(now).toISOString(),
    per_week: perWeek,
    per_kind: [...DISC_KINDS, 'unknown' as const].flatMap((kind) => {
      const e = times.get(kind);
      return e ? [{ kind, jobs: e.jobs, rip: stageTimes(e.rip), transcode: stageTimes(e.transcode) }] : [];
    }),
    space,
    failures: [...failures.values()].sort((a, b) => b.count - a.count || (a.kind < b.kind ? -1 : 1)).map(({ at: _at, ...f }) => f),
  };
}

function example(error: string | null): string | null {
  if (!error) return null;
  return error.length > FAILURE_EXAMPLE_CHARS ? `${error.slice(0, FAILURE_EXAMPLE_CHARS - 1)}…` : error;
}
