import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError, objectBody } from '../http/errors.js';
import { checkMountName, MountSpecError, splitHostPort } from '../mounts/mount-spec.js';
import { listShares, SmbListError } from '../mounts/smb-shares.js';

function mountName(raw: string): string {
  try {
    return checkMountName(raw);
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
}

/** The network shares Ripwerk mounts under the media root: list, add, repair, remove, and the shares of a host. */
export function storageMountsRouter(ctx: AppContext): Router {
  const router = Router();

  router.get('/storage-mounts', async (_req, res) => {
    res.json(await ctx.mounts.list());
  });

  router.get('/storage-mounts/shares', async (req, res) => {
    const raw = typeof req.query.host === 'string' ? req.query.host.trim() : '';
    if (!raw) throw new HttpError(400, 'query parameter host is missing (the NAS name or address, optionally with :port)');
    let target;
    try {
      target = splitHostPort(raw);
    } catch (err) {
      if (err instanceof MountSpecError) throw new HttpError(400, err.message);
      throw err;
    }
    try {
      const shares = await listShares(target.host, target.port);
      res.json({ host: raw, shares });
    } catch (err) {
      if (err instanceof SmbListError) throw new HttpError(err.timedOut ? 504 : 502, `shares of ${raw}: ${err.message}`);
      throw err;
    }
  });

  router.post('/storage-mounts', async (req, res) => {
    const { created, mount } = await ctx.mounts.add(objectBody(req));
    res.status(created ? 201 : 200).json(mount);
  });

  router.post('/storage-mounts/:name/repair', async (req, res) => {
    res.json(await ctx.mounts.repair(mountName(req.params.name)));
  });

  router.delete('/storage-mounts/:name', async (req, res) => {
    const busy = ctx.jobs.active().flatMap((j) => [j.target_dir, j.raw_path, j.output_path]).filter((d): d is string => typeof d === 'string');
    await ctx.mounts.remove(mountName(req.params.name), busy);
    res.status(204).end();
  });

  return router;
}
