import type { LogEntry } from '../../shared/api-types.js';
import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError } from '../http/errors.js';

/** /logs: the newest log entries of the coordinator and its jobs (?limit=, ?job_id=, ?level=). */
export function logsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/logs', (req, res) => {
    const limit = req.query.limit === undefined ? 200 : Number(req.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 5000) throw new HttpError(400, 'limit must be a whole number from 1 to 5000');
    const where: string[] = [];
    const params: string[] = [];
    if (typeof req.query.job_id === 'string') {
      where.push('job_id = ?');
      params.push(req.query.job_id);
    }
    if (typeof req.query.level === 'string') {
      if (!['info', 'warn', 'error'].includes(req.query.level)) throw new HttpError(400, 'level must be info, warn or error');
      where.push('level = ?');
      params.push(req.query.level);
    }
    const sql = `SELECT ts, level, source, job_id, message FROM logs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limit}`;
    res.json(ctx.db.prepare<string[], LogEntry>(sql).all(...params));
  });
  return router;
}
