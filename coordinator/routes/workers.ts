import { Router } from 'express';
import type { Worker } from '../../shared/api-types.js';
import type { Capabilities } from '../../shared/protocol.js';
import type { AppContext } from '../context.js';
import { workerDiscKinds } from '../workers/disc-kinds.js';
import { PING_STALE_MS } from '../workers/fleet.js';
import { HttpError } from '../http/errors.js';
import { forgetNode } from '../workers/forget-node.js';
import { refuseLocalAgent } from './mqtt-credentials.js';
import { queueView, QUEUE_VIEW_LIMIT, workerJobs } from '../workers/live-work.js';
import type { JobRow } from '../jobs/jobs-store.js';

const SYNC_PING_TIMEOUT_MS = 2000;

/** Job rows read once per answer, however many commands or queue rows name them. */
function cachedJobs(ctx: AppContext): (id: string) => JobRow | undefined {
  const seen = new Map<string, JobRow | undefined>();
  return (id) => {
    if (!seen.has(id)) seen.set(id, ctx.jobs.get(id));
    return seen.get(id);
  };
}

/** /capabilities, /transcode-queue and /workers: the worker list with online state, tools, slots and what each runs now; the waiting transcodes. */
export function workersRouter(ctx: AppContext): Router {
  const router = Router();
  const { fleet, db } = ctx;
  const extra = db.prepare<[string], { host: string | null; ip: string | null; last_seen: string | null; last_ping: string | null; capabilities: string | null }>(
    'SELECT host, ip, last_seen, last_ping, capabilities FROM workers WHERE node = ?',
  );
  router.get('/capabilities', async (_req, res) => {
    // Served from the background ping (every 5 s); when that is older than 30 s, one ping now.
    const now = Date.now();
    if (fleet.online().some((a) => a.lastPing === null || now - a.lastPing > PING_STALE_MS)) await ctx.dispatcher.pingNow(SYNC_PING_TIMEOUT_MS);
    const { running, chunks } = ctx.dispatcher.liveWork(0);
    const at = Date.now();
    const jobOf = cachedJobs(ctx);
    res.json(
      fleet.list().map((a): Worker => {
        const jobs = workerJobs(a.node, running, chunks, jobOf, ctx.jobs.speeds, at);
        const row = extra.get(a.node);
        let caps: unknown = a.status?.capabilities ?? null;
        if (!caps && row?.capabilities) caps = JSON.parse(row.capabilities) as unknown;
        const c = (caps ?? {}) as Partial<Capabilities>;
        return {
          name: a.name,
          node: a.node,
          host: a.status?.host ?? row?.host ?? null,
          ip: a.status?.ip ?? row?.ip ?? null,
          online: a.online,
          slots: a.status?.slots ?? null,
          encoders: c.encoders ?? [],
          tools: c.tools ?? {},
          key_source: c.key_source ?? null,
          schluessel: c.schluessel ?? 0,
          rip_backend: c.rip_backend ?? null,
          transcode_only: c.transcode_only ?? null,
          native: c.native === true,
          disc_kinds: workerDiscKinds(fleet, a.node, caps as Capabilities | null),
          last_seen: a.status?.last_seen ?? row?.last_seen ?? null,
          last_ping: row?.last_ping ?? null,
          // Each running chunk takes a slot, as the hand-out counts it (ChunkBoard.runningByNode).
          slots_used: jobs.filter((j) => !j.encoded).length,
          jobs,
        };
      }),
    );
  });
  router.get('/transcode-queue', (_req, res) => {
    const { waiting } = ctx.dispatcher.liveWork(QUEUE_VIEW_LIMIT);
    const workers = fleet.list().map((a) => ({ name: a.name, node: a.node, online: a.online, encoders: a.status?.capabilities?.encoders.length ?? 0 }));
    res.json(queueView(waiting, cachedJobs(ctx), workers, Date.now()));
  });
  router.delete('/workers/:name', (req, res) => {
    const name = String(req.params.name);
    const agent = fleet.find(name);
    const node = agent?.node ?? name;
    refuseLocalAgent(ctx, node);
    // The worker's credential: the one named like the node, or the one bound to it (issued as its worker name).
    const credential = ctx.credentials.credentialFor(node) ?? node;
    const hasOwn = ctx.credentials.has(credential);
    const sessions = ctx.broker?.sessionsOf(node) ?? { count: 0, legacy: false };
    if (!agent && !hasOwn && sessions.count === 0) throw new HttpError(404, `no worker named "${name.slice(0, 100).replace(/[\r\n]/g, ' ')}"`);
    // A worker on the broker secret (legacy) would be back at once: it has to be stopped first. One
    // whose credentials are gone but whose sessions still stand is cut like the first time: a DELETE
    // does the same however often it comes.
    const legacyOnline = ctx.broker ? sessions.legacy : agent?.online === true && !hasOwn;
    if (legacyOnline) throw new HttpError(409, `the worker ${node} is online with the shared broker secret (legacy); stop it before removing its record`);
    // Revoked first, then cut: a login whose password check is still running is refused (credentials.epoch).
    const revoked = ctx.credentials.revoke(credential);
    const cut = (ctx.broker?.disconnect(node) ?? 0) + (credential !== node ? (ctx.broker?.disconnect(credential) ?? 0) : 0);
    // Its work ends now: no last will, no grace period and no login will ever end it otherwise.
    forgetNode(ctx, node);
    if (revoked) ctx.log.info(`MQTT credentials of worker ${node}${credential !== node ? ` (user ${credential})` : ''} revoked`);
    if (cut > 0) ctx.log.info(`${cut} MQTT session(s) of worker ${node} cut`);
    res.json({ removed: node, credentials_revoked: revoked });
  });
  return router;
}
