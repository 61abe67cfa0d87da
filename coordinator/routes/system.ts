import type { SystemInfo } from '../../shared/api-types.js';
import { Router } from 'express';
import type { AppContext } from '../context.js';
import { workerDiscKinds } from '../workers/disc-kinds.js';
import { PING_STALE_MS } from '../workers/fleet.js';
import { disk } from '../system/storage-space.js';
import { parseGithubLatest, parseMakemkvPage, parseNodeIndex, UpdateChecker } from '../integrations/update-check.js';
import { webhookKind } from '../integrations/webhook.js';


/** The tool versions the workers report, newest report first: one installed version per tool. */
function installedTools(ctx: AppContext): Record<string, string | null> {
  const out: Record<string, string | null> = { node: process.versions.node };
  for (const agent of ctx.fleet.list()) {
    for (const [tool, version] of Object.entries(agent.status?.capabilities?.tools ?? {})) {
      // Workers report what the tool prints ("HandBrake 1.6.1"): the version number is compared.
      const number = version ? /\d+(?:\.\d+)+/.exec(version)?.[0] : null;
      if (number && !out[tool]) out[tool] = number;
    }
  }
  return out;
}

/** /system/info, /system/updates and /health/vorraete: what the system page and monitoring read. */
export function systemRouter(ctx: AppContext): Router {
  const router = Router();
  const { config } = ctx;
  const updates = new UpdateChecker(
    [
      { tool: 'HandBrakeCLI', url: config.updateSources.handbrake, parse: parseGithubLatest },
      { tool: 'makemkvcon', url: config.updateSources.makemkv, parse: parseMakemkvPage },
      { tool: 'node', url: config.updateSources.node, parse: parseNodeIndex },
    ],
    ctx.log.child('updates'),
  );

  router.get('/system/info', async (_req, res) => {
    const s = ctx.settings.all();
    const disks = await Promise.all([disk('media', config.mediaRoot), disk('raw', config.rawDir), disk('data', config.dataDir), ...(s.workDir ? [disk('workDir', s.workDir)] : [])]);
    const info: SystemInfo = {
      node: process.versions.node,
      workers: ctx.fleet.list().map((a) => ({
        name: a.name,
        node: a.node,
        online: a.online,
        tools: a.status?.capabilities?.tools ?? {},
        disc_kinds: workerDiscKinds(ctx.fleet, a.node, a.status?.capabilities),
      })),
      disks,
      keys: {
        keystore: await ctx.keys.keystoreStatus(),
        keydb: await ctx.keys.keydbStatus(),
        ripper_app_key: s.ripperAppKey ? 'set' : 'not set',
      },
      webhook: { configured: Boolean(s.webhookUrl), kind: s.webhookUrl ? webhookKind(s.webhookUrl, s.webhookKind) : null, last: ctx.notifier.last },
      media_server: { type: s.mediaServerType || null, configured: Boolean(s.mediaServerType && s.mediaServerUrl) },
    };
    res.json(info);
  });

  router.get('/system/updates', async (_req, res) => {
    res.json({ tools: await updates.check(installedTools(ctx)) });
  });

  router.get('/health/vorraete', (_req, res) => {
    const now = Date.now();
    const pings = ctx.fleet.list().map((a) => a.lastPing).filter((t): t is number => t !== null);
    const newest = pings.length ? Math.max(...pings) : null;
    const sweep = ctx.raw.lastSweep;
    res.json({
      ping: {
        alter_sekunden: newest === null ? null : Math.round((now - newest) / 1000),
        // A ping younger than the stale limit counts as a finding (an older one GET /capabilities would renew).
        mit_treffer: pings.some((t) => now - t < PING_STALE_MS),
        workers_answering: pings.filter((t) => now - t < PING_STALE_MS).length,
      },
      rohdaten: {
        alter_sekunden: sweep ? Math.round((now - sweep.at) / 1000) : null,
        mit_treffer: sweep ? sweep.present > 0 : false,
        jobs_probed: sweep?.jobs ?? 0,
        jobs_with_raw_data: sweep?.present ?? 0,
      },
      mount_guard: ctx.mountGuard.state(),
    });
  });

  return router;
}
