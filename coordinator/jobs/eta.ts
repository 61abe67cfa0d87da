/**
 * Remaining-time estimate of one job phase (rip or transcode).
 *
 * The API keeps one progress series per phase; a new phase starts an empty series. The estimate is
 * computed on read with an injected `now`, so a job that stops reporting progress gets a growing
 * estimate instead of a frozen one.
 */

/** One measured progress value: `t` in milliseconds since the epoch, `p` in percent (0..100). */
export type ProgressPoint = { t: number; p: number };

/** Spec, Limits (ETA): no value below this many measured points... */
export const MIN_POINTS = 2;

/** ...or below this span between the first and the last point. */
export const MIN_SPAN_MS = 60_000;

/** Default bound of a stored series. */
export const DEFAULT_MAX_POINTS = 200;

/** Below this percentage a backward step is taken as a restart of the tool's count, not as jitter. */
export const RESTART_BELOW_PERCENT = 1;

function isValidPoint(point: ProgressPoint | undefined): point is ProgressPoint {
  return point !== undefined && Number.isFinite(point.t) && Number.isFinite(point.p);
}

/**
 * Remaining seconds of the phase, or null when no honest estimate exists: fewer than 2 points, a span
 * below 60 seconds between first and last point, no progress since the first point, or progress at or
 * above 100 %.
 *
 * The rate is measured from the first point up to `now` (not up to the last point), so a standstill
 * without new points lowers the rate and lengthens the estimate. The result is rounded to whole
 * seconds and is at least 1.
 */
export function computeEtaSeconds(points: readonly ProgressPoint[], now: number): number | null {
  if (points.length < MIN_POINTS) return null;
  const first = points[0];
  const last = points[points.length - 1];
  if (!isValidPoint(first) || !isValidPoint(last) || !Number.isFinite(now)) return null;
  if (last.t - first.t < MIN_SPAN_MS) return null;
  if (last.p <= first.p) return null;
  if (last.p >= 100) return null;
  const elapsedMs = Math.max(now, last.t) - first.t;
  const ratePerMs = (last.p - first.p) / elapsedMs;
  const remainingMs = (100 - last.p) / ratePerMs;
  return Math.max(1, Math.round(remainingMs / 1000));
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * German text of a remaining time: "noch weniger als eine Minute", "noch etwa 12 Minuten",
 * "noch etwa 2 Stunden 5 Minuten". Minutes are rounded to the nearest whole minute; null stays null.
 */
export function etaText(seconds: number | null): string | null {
  if (seconds === null || Number.isNaN(seconds)) return null;
  if (seconds < 60) return 'noch weniger als eine Minute';
  if (!Number.isFinite(seconds)) return null;
  const totalMinutes = Math.round(seconds / 60);
  if (totalMinutes < 60) return `noch etwa ${plural(totalMinutes, 'Minute', 'Minuten')}`;
  const hours = Math.floor(totalMinutes / 60);
  const minutes = totalMinutes % 60;
  const hourText = plural(hours, 'Stunde', 'Stunden');
  return minutes === 0 ? `noch etwa ${hourText}` : `noch etwa ${hourText} ${plural(minutes, 'Minute', 'Minuten')}`;
}

/**
 * Index of the middle point whose removal leaves the smallest gap in time. Removing that point again and
 * again keeps the remaining points spread evenly over the whole phase.
 */
function densestMiddleIndex(points: readonly ProgressPoint[]): number {
  let best = 1;
  let bestGap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < points.length - 1; i++) {
    const gap = points[i + 1].t - points[i - 1].t;
    if (gap < bestGap) {
      bestGap = gap;
      best = i;
    }
  }
  return best;
}

/**
 * Returns a new series with `point` appended; the input array is not changed.
 *
 * - A point with a non-finite time or percentage, or a time before the last point, is ignored.
 * - A series whose last point is unreadable (a damaged stored value) restarts with the new point.
 * - The percentage is clamped to 0..100.
 * - A point whose percentage is lower than the last one is ignored (tools jitter backwards), except a
 *   value below 1 %: that is the tool starting its count again, so the series restarts with that point
 *   (the older points belong to the previous run and would distort the rate).
 * - Bound: when the series grows beyond `max` (at least 2), the first point of the phase and the newest
 *   point are always kept and the middle is thinned by removing the point in the densest stretch of time.
 *   The first point anchors the rate in computeEtaSeconds, so it must never be dropped.
 */
export function appendPoint(points: readonly ProgressPoint[], point: ProgressPoint, max: number = DEFAULT_MAX_POINTS): ProgressPoint[] {
  const bound = Number.isFinite(max) ? Math.max(2, Math.floor(max)) : DEFAULT_MAX_POINTS;
  if (!isValidPoint(point)) return [...points];
  const next: ProgressPoint = { t: point.t, p: Math.min(100, Math.max(0, point.p)) };
  const last = points.length > 0 ? points[points.length - 1] : undefined;
  let series: ProgressPoint[];
  if (!isValidPoint(last)) {
    series = [next];
  } else if (next.t < last.t) {
    return [...points];
  } else if (next.p < last.p) {
    if (next.p >= RESTART_BELOW_PERCENT) return [...points];
    series = [next];
  } else {
    series = [...points, next];
  }
  while (series.length > bound) series.splice(densestMiddleIndex(series), 1);
  return series;
}
