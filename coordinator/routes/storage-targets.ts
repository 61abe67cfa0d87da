import fs from 'node:fs/promises';
import path from 'node:path';
import { Router } from 'express';
import type { AppContext } from '../context.js';
import { disk } from '../storage-space.js';

/** GET /storage-targets: where output and raw data go, with free space and the 60 GB warning. */
export function storageTargetsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/storage-targets', async (_req, res) => {
    const s = ctx.settings.all();
    const { mediaRoot, rawDir } = ctx.config;
    const targets: [string, string][] = [
      ['media', mediaRoot],
      ['movies', path.join(mediaRoot, s.quickPickMovies)],
      ['series', path.join(mediaRoot, s.quickPickSeries)],
      ['music', path.join(mediaRoot, s.quickPickMusic)],
      ['raw', rawDir],
      ...(s.workDir ? [['workDir', s.workDir] as [string, string]] : []),
    ];
    res.json(await Promise.all(targets.map(async ([name, dir]) => ({ ...(await disk(name, dir)), exists: await fs.stat(dir).then((st) => st.isDirectory(), () => false) }))));
  });
  return router;
}
