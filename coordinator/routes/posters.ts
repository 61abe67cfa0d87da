import path from 'node:path';
import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError } from '../http/errors.js';
import { PosterError } from '../library/poster-cache.js';

/** /posters/{key}: the posters of disc cards and jobs, fetched once and served by Ripwerk. */
export function postersRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/posters/:key', async (req, res) => {
    const key = String(req.params.key);
    if (!/^[0-9a-f]{32}$/.test(key)) throw new HttpError(400, 'a poster key is 32 hexadecimal characters (the disc card\'s poster_url names it)');
    try {
      const poster = await ctx.posters.get(key);
      res.setHeader('Cache-Control', 'public, max-age=86400');
      // The file is named relative to its folder: the folder is the coordinator's own (DATA_DIR/posters,
      // under ./.data with npm start's defaults), and a dot-folder above it must not hide it. Only the
      // part below that folder gets the dot-file rule (a poster's name is its hexadecimal key).
      res.type(poster.contentType).sendFile(path.basename(poster.file), { root: path.dirname(poster.file) });
    } catch (err) {
      if (err instanceof PosterError) throw new HttpError(err.status, err.message);
      throw err;
    }
  });
  return router;
}
