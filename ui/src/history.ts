/**
 * The history list of the "Verlauf & Statistik" page: GET /jobs filtered and sorted in the browser
 * (the API takes no filter parameters), and the statistics' numbers in words a household reads.
 * Pure: the page and the unit tests call the same functions.
 */
import { bytes } from './format.js';
import { t, tCount } from './i18n/index.js';

/** What the list needs of a job (shared/api-types.ts Job). */
export interface HistoryJob {
  id: string;
  title: string;
  status: string;
  meta: { disc_type?: string } | null;
  created_at: string;
  finished_at: string | null;
}

export const STATUS_FILTERS = ['', 'completed', 'failed', 'canceled', 'active'] as const;
export const KIND_FILTERS = ['', 'dvd', 'bluray', 'uhd', 'cd', 'unknown'] as const;
export const SORTS = ['newest', 'oldest', 'title', 'longest', 'shortest'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];
export type KindFilter = (typeof KIND_FILTERS)[number];
export type Sort = (typeof SORTS)[number];

export interface HistoryFilter {
  status: StatusFilter;
  kind: KindFilter;
  /** Words that must all be in the title (any case). */
  text: string;
  /** Dates (YYYY-MM-DD, the browser's day) the job was made on or after, on or before; '' for none. */
  from: string;
  to: string;
}

export const NO_FILTER: HistoryFilter = { status: '', kind: '', text: '', from: '', to: '' };

const ENDED = ['completed', 'failed', 'canceled'];

/** The disc kind the statistics count the job under (GET /stats per_kind). */
export function jobKind(job: HistoryJob): Exclude<KindFilter, ''> {
  const type = job.meta?.disc_type;
  return type === 'dvd' || type === 'bluray' || type === 'uhd' || type === 'cd' ? type : 'unknown';
}

/** Seconds from the job's creation to its end; null while it runs (or when a time cannot be read). */
export function jobSeconds(job: HistoryJob): number | null {
  if (!job.finished_at) return null;
  const s = (Date.parse(job.finished_at) - Date.parse(job.created_at)) / 1000;
  return Number.isFinite(s) && s >= 0 ? s : null;
}

/** The browser's day of an ISO time as YYYY-MM-DD (what a date field holds). */
export function localDay(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

export function filterJobs<J extends HistoryJob>(jobs: readonly J[], f: HistoryFilter): J[] {
  const words = f.text.toLocaleLowerCase().split(/\s+/).filter(Boolean);
  return jobs.filter((job) => {
    if (f.status === 'active' ? ENDED.includes(job.status) : f.status && job.status !== f.status) return false;
    if (f.kind && jobKind(job) !== f.kind) return false;
    const title = job.title.toLocaleLowerCase();
    if (!words.every((w) => title.includes(w))) return false;
    const day = localDay(job.created_at);
    if (f.from && day < f.from) return false;
    if (f.to && day > f.to) return false;
    return true;
  });
}

/** A new sorted list; jobs without a duration (still running) come last in both duration orders, ties newest first. */
export function sortJobs<J extends HistoryJob>(jobs: readonly J[], sort: Sort, collator: Intl.Collator = new Intl.Collator()): J[] {
  const newest = (a: J, b: J) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0);
  const byDuration = (dir: 1 | -1) => (a: J, b: J) => {
    const x = jobSeconds(a);
    const y = jobSeconds(b);
    if (x === null || y === null) return x === y ? newest(a, b) : x === null ? 1 : -1;
    return (x - y) * dir || newest(a, b);
  };
  const compare: Record<Sort, (a: J, b: J) => number> = {
    newest,
    oldest: (a, b) => -newest(a, b),
    title: (a, b) => collator.compare(a.title, b.title) || newest(a, b),
    longest: byDuration(-1),
    shortest: byDuration(1),
  };
  return [...jobs].sort(compare[sort]);
}

/** A time in words: "2 Stunden 5 Minuten", "40 Minuten", "unter einer Minute"; "–" when unknown. */
export function durationWords(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '–';
  if (seconds < 60) return t('history.underMinute');
  const total = Math.round(seconds / 60);
  const hours = Math.floor(total / 60);
  const minutes = total % 60;
  if (hours === 0) return tCount('eta.minutes', minutes);
  return minutes === 0 ? tCount('eta.hours', hours) : `${tCount('eta.hours', hours)} ${tCount('eta.minutes', minutes)}`;
}

/** "3,2 GB gespart" / "3.2 GB saved"; a negative saving (the files grew) says so. */
export function savedWords(savedBytes: number): string {
  return savedBytes >= 0 ? t('history.saved', { size: bytes(savedBytes) }) : t('history.grew', { size: bytes(-savedBytes) });
}

/** "KW 48" / "Wk 48" from an ISO week "2026-W48". */
export function weekLabel(week: string): string {
  return t('history.weekShort', { n: String(Number(week.slice(week.indexOf('W') + 1))) });
}
