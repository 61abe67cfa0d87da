import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError, objectBody } from '../http/errors.js';
import { SHORT_TEXT_MAX } from '../../shared/protocol-schemas.js';
import { SESSION_DISCS_MAX } from '../sessions/session-plan.js';

const SESSION_FIELDS = ['drive', 'series', 'season', 'discs', 'kind'];

/** /sessions: box-set and multi-CD sessions, their progress, starting one and ending one by hand. */
export function sessionsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/sessions', (_req, res) => {
    res.json(ctx.sessions.list());
  });

  router.post('/sessions', (req, res) => {
    const body = objectBody(req);
    const unknown = Object.keys(body).filter((k) => !SESSION_FIELDS.includes(k));
    if (unknown.length) throw new HttpError(400, `unknown field ${unknown.slice(0, 5).map((k) => `"${k.slice(0, 60)}"`).join(', ')}: POST /sessions takes ${SESSION_FIELDS.join(', ')}`);
    const kind = body.kind ?? 'series';
    if (kind !== 'series' && kind !== 'album') throw new HttpError(400, 'kind must be "series" or "album"');
    const discs = body.discs;
    if (typeof discs !== 'number' || !Number.isInteger(discs) || discs < 2 || discs > SESSION_DISCS_MAX) throw new HttpError(400, `discs must be a whole number from 2 to ${SESSION_DISCS_MAX}: how many discs the set has`);
    const drive = body.drive ?? null;
    if (drive !== null && (typeof drive !== 'string' || !ctx.fleet.device(drive))) throw new HttpError(400, `drive must be null (any drive) or a device name from GET /devices`);
    const series = typeof body.series === 'string' ? body.series.trim() : body.series == null ? '' : null;
    if (series === null) throw new HttpError(400, 'series must be a string');
    if (series.length > SHORT_TEXT_MAX) throw new HttpError(400, `series is longer than ${SHORT_TEXT_MAX} characters`);
    const season = body.season ?? null;
    if (kind === 'series') {
      if (!series) throw new HttpError(400, 'series is required for a series session (the name its files are filed under)');
      if (typeof season !== 'number' || !Number.isInteger(season) || season < 0 || season > 999) throw new HttpError(400, 'season must be a whole number from 0 to 999 for a series session');
    } else if (season !== null) throw new HttpError(400, 'an album session has no season');
    const busy = drive ? ctx.sessions.list().find((s) => s.state === 'open' && s.drive === drive) : undefined;
    if (busy) throw new HttpError(409, `drive ${drive} has an open session already (${busy.id}): end it first (POST /sessions/${busy.id}/end)`);
    res.status(201).json(ctx.sessions.start({ kind, series: series || null, season: kind === 'series' ? (season as number) : null, disc_total: discs, drive }));
  });

  router.get('/sessions/:id', (req, res) => {
    const session = ctx.sessions.get(req.params.id);
    if (!session) throw new HttpError(404, `no session with id ${req.params.id}`);
    res.json(session);
  });

  router.post('/sessions/:id/end', (req, res) => {
    const session = ctx.sessions.end(req.params.id);
    if (!session) throw new HttpError(404, `no session with id ${req.params.id}`);
    res.json(session);
  });
  return router;
}
