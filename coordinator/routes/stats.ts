import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError } from '../http/errors.js';
import { computeStats, statsFrom, STATS_WEEKS_DEFAULT, STATS_WEEKS_MAX } from '../jobs/job-stats.js';

/** The query GET /stats takes; any other parameter is refused, so a misspelt one is not silently ignored. */
const STATS_PARAMS: readonly string[] = ['weeks'];

/** `weeks` of the query: a whole number from 1 to STATS_WEEKS_MAX, given once; the default without it. */
export function weeksOf(query: Record<string, unknown>): number {
  const unknown = Object.keys(query).filter((k) => !STATS_PARAMS.includes(k));
  if (unknown.length) throw new HttpError(400, `unknown parameter ${unknown.slice(0, 3).map((k) => `"${k.slice(0, 60)}"`).join(', ')}: GET /stats takes only weeks`);
  const v = query.weeks;
  if (v === undefined) return STATS_WEEKS_DEFAULT;
  if (typeof v !== 'string') throw new HttpError(400, 'weeks must be given once, as a whole number');
  if (!/^\d{1,4}$/.test(v) || Number(v) < 1 || Number(v) > STATS_WEEKS_MAX) throw new HttpError(400, `weeks must be a whole number from 1 to ${STATS_WEEKS_MAX} (got "${v.slice(0, 40)}")`);
  return Number(v);
}

/** GET /stats: jobs per week, times per disc kind, space saved and failure reasons (our addition to the spec). */
export function statsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/stats', (req, res) => {
    const weeks = weeksOf(req.query as Record<string, unknown>);
    const now = Date.now();
    res.json(computeStats(ctx.jobs.endedSince(new Date(statsFrom(weeks, now)).toISOString()), weeks, now));
  });
  return router;
}
