import { Router, type Request } from 'express';
import type { Device, DeviceTracks, ScannedDiscTrack } from '../../shared/api-types.js';
import { TASKS, type Track } from '../../shared/protocol.js';
import type { AppContext } from '../context.js';
import type { StoredTracks } from '../dispatch/dispatcher.js';
import type { DeviceEntry } from '../workers/fleet.js';
import { HttpError } from '../http/errors.js';
import { isDriveBusy } from '../jobs/job-status.js';
import { annotateMainFeature, annotateScan } from '../discs/title-plan.js';
import { ripsAsSeries } from '../../shared/rip-as-series.js';
import { labelIdentity } from '../metadata/disc-identity.js';

/** /devices: drives of all workers with their disc, eject and the title scan. */
export function devicesRouter(ctx: AppContext): Router {
  const router = Router();
  const { fleet, jobs, dispatcher, settings, discs } = ctx;

  const device = (req: Request): DeviceEntry => {
    const d = fleet.device(String(req.params.name));
    if (!d) throw new HttpError(404, `no device named "${String(req.params.name)}"`);
    return d;
  };

  router.get('/devices', (_req, res) => {
    res.json(
      fleet.devices().map((d): Device => {
        const worker = fleet.get(d.state.node);
        const busy = jobs.active().find((j) => j.device === d.name && isDriveBusy(j.status));
        return {
          name: d.name,
          node: d.state.node,
          worker: worker?.name ?? null,
          worker_online: worker?.online ?? false,
          drive: d.state.drive,
          kind: d.state.kind,
          path: d.state.path,
          vendor: d.state.vendor,
          model: d.state.model,
          status: d.state.status,
          busy_job: busy?.id ?? null,
          disc: d.state.disc ? discs.view(d.state.disc, d.name) : null,
        };
      }),
    );
  });

  router.post('/devices/:name/eject', async (req, res) => {
    const d = device(req);
    await ejectDevice(ctx, d);
    res.json({ device: d.name, ejected: true });
  });

  router.post('/devices/:name/scan-tracks', (req, res) => {
    const d = device(req);
    if (!d.state.disc) throw new HttpError(409, `there is no disc in ${d.name}`);
    dispatcher.scanTracks(d.state.node, d.state.drive);
    res.status(202).json({ device: d.name, scanning: true, poll: `/devices/${encodeURIComponent(d.name)}/tracks` });
  });

  router.get('/devices/:name/tracks', (req, res) => {
    const d = device(req);
    const stored = settings.getRaw(`tracks:${d.name}`) as StoredTracks | undefined;
    const tracks = stored?.tracks ?? [];
    // A recognised disc: each scanned title with what TheDiscDB says it is, found by its evidence.
    const known = d.state.disc ? discs.knownTitles(d.state.disc) : null;
    const answer: DeviceTracks = { device: d.name, scanned_at: stored?.scanned_at ?? null, scanning: stored?.scanning ?? false, error: stored?.error ?? null, tracks: known ? annotateScan(tracks, known) : mainFeatureOf(d, tracks) };
    res.json(answer);
  });

  /** A movie disc: its main feature and the titles an automatic rip leaves, as the agent's rip decides them. */
  const mainFeatureOf = (d: DeviceEntry, tracks: Track[]): ScannedDiscTrack[] => {
    const disc = d.state.disc;
    if (!disc || disc.type === 'cd' || tracks.length === 0) return tracks;
    const identity = discs.identity(disc.fingerprint);
    if (ripsAsSeries(identity ?? labelIdentity(disc)) || identity?.kind === 'series') return tracks;
    const s = settings.all();
    return annotateMainFeature(tracks, { minSeconds: s.minTitleSeconds, maxSimilar: s.maxSimilarTitles, runtimeMinutes: identity?.runtime_minutes ?? null });
  };

  return router;
}

/** Ejects a drive's disc through its agent: refused (409) while a rip on it is pending or running. */
export async function ejectDevice(ctx: AppContext, d: DeviceEntry): Promise<void> {
  const busy = ctx.jobs.active().find((j) => j.device === d.name && isDriveBusy(j.status));
  if (busy) throw new HttpError(409, `${d.name} is busy with job ${busy.id}; cancel it before ejecting`);
  try {
    await ctx.dispatcher.request(d.state.node, TASKS.eject, d.state.drive);
  } catch (err) {
    const e = err as Error & { status?: number };
    throw new HttpError(e.status ?? 502, `eject of ${d.name} failed: ${e.message}`);
  }
}
