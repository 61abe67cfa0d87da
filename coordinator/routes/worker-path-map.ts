import { Router } from 'express';
import type { AppContext } from '../context.js';
import { pathMapAdvice } from '../mounts/path-map-advice.js';

/** GET /worker-setup/pfad-map: RIPWERK_PATH_MAP for an external worker, from the mounts Ripwerk attached. */
export function workerPathMapRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/worker-setup/pfad-map', (_req, res) => {
    res.json(pathMapAdvice(ctx.mounts.store.all()));
  });
  return router;
}
