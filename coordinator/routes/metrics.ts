import { Router } from 'express';
import type { AppContext } from '../context.js';
import { apiStatus, JOB_STATUSES, type JobStatus } from '../jobs/job-status.js';

const STATUSES: string[] = JOB_STATUSES.map(apiStatus);

/** One metric in the Prometheus text format 0.0.4: HELP, TYPE and its samples. */
function metric(name: string, type: 'gauge' | 'counter', help: string, samples: [Record<string, string> | null, number][]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value] of samples) {
    const l = labels ? `{${Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}"`).join(',')}}` : '';
    lines.push(`${name}${l} ${value}`);
  }
  return lines.join('\n');
}

/** The embedded broker's counters of what it refused before login (none with an external broker). */
function brokerMetrics(ctx: AppContext): string[] {
  if (!ctx.broker) return [];
  const stats = ctx.broker.stats();
  return [
    metric('ripwerk_mqtt_refused_logins_total', 'counter', 'MQTT logins the embedded broker refused (wrong or no credentials, a client id of another credential).', [[null, stats.refusedLogins]]),
    metric('ripwerk_mqtt_cut_before_login_total', 'counter', 'MQTT connections the embedded broker cut before they logged in, by reason.', Object.entries(stats.cutBeforeLogin).map(([reason, n]) => [{ reason }, n])),
  ];
}

/** GET /metrics: jobs by status, queue length, workers online, finished rips and transcodes, for Prometheus. */
export function metricsRouter(ctx: AppContext): Router {
  const router = Router();
  const count = (sql: string) => (ctx.db.prepare<[], { n: number }>(sql).get() as { n: number }).n;
  router.get('/metrics', (_req, res) => {
    const byStatus = new Map<string, number>(STATUSES.map((s) => [s, 0]));
    for (const row of ctx.db.prepare<[], { status: string; n: number }>('SELECT status, COUNT(*) AS n FROM jobs GROUP BY status').all()) {
      const status = apiStatus(row.status as JobStatus);
      byStatus.set(status, (byStatus.get(status) ?? 0) + row.n);
    }
    const workers = ctx.fleet.list();
    const body = [
      metric('ripwerk_jobs', 'gauge', 'Jobs by status (running is reported as processing, as in the API).', [...byStatus].map(([status, n]) => [{ status }, n])),
      metric('ripwerk_transcode_queue_length', 'gauge', 'Transcodes waiting in the shared queue for a free worker.', [[null, count(`SELECT COUNT(*) AS n FROM transcode_queue WHERE state = 'queued'`)]]),
      metric('ripwerk_workers', 'gauge', 'Known workers by state.', [
        [{ state: 'online' }, workers.filter((w) => w.online).length],
        [{ state: 'offline' }, workers.filter((w) => !w.online).length],
      ]),
      metric('ripwerk_workers_online', 'gauge', 'Workers online now.', [[null, workers.filter((w) => w.online).length]]),
      metric('ripwerk_rips_finished_total', 'counter', 'Rips that finished (each disc rip once, from the history).', [[null, count('SELECT COUNT(*) AS n FROM history')]]),
      metric('ripwerk_transcodes_finished_total', 'counter', 'Jobs completed after a transcode stage.', [[null, count(`SELECT COUNT(*) AS n FROM jobs WHERE status = 'completed' AND transcode_node IS NOT NULL`)]]),
      ...brokerMetrics(ctx),
    ].join('\n');
    res.type('text/plain; version=0.0.4; charset=utf-8').send(`${body}\n`);
  });
  return router;
}
