import type { BrowseListing } from '../../shared/api-types.js';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Router } from 'express';
import { realPathWithin } from '../../shared/media-paths.js';
import type { AppContext } from '../context.js';
import { HttpError, mediaDir, objectBody } from '../http/errors.js';

/** At most this many entries are listed (folders first); the answer says when more were left out. */
const MAX_ENTRIES = 2000;

/**
 * /browse and /browse/mkdir: folders and files under MEDIA_ROOT only (no "..", boundary-aware, no
 * symlink leading out), for the folder picker of the rip dialog.
 */
export function browseRouter(ctx: AppContext): Router {
  const router = Router();
  const root = ctx.config.mediaRoot;

  router.get('/browse', async (req, res) => {
    const unknown = Object.keys(req.query).filter((k) => k !== 'path');
    if (unknown.length) throw new HttpError(400, `unknown query parameter "${unknown[0].slice(0, 60)}": /browse takes path only`);
    const given = req.query.path;
    if (given !== undefined && typeof given !== 'string') throw new HttpError(400, 'path must be given once, as one folder path (a string)');
    const asked = given ? given : root;
    const dir = await mediaDir(root, asked, 'path');
    // The listing reads the real folder, checked once more: a link swapped in since the check leads nowhere.
    const found = await realPathWithin([root], dir);
    if (found.kind === 'missing') throw new HttpError(404, `${dir} does not exist`);
    if (found.kind === 'outside') throw new HttpError(403, `path refused: it leads outside ${root} through a symbolic link`);
    const st = await fs.stat(found.path).catch(() => null);
    if (!st) throw new HttpError(404, `${dir} does not exist`);
    if (!st.isDirectory()) throw new HttpError(400, `${dir} is not a folder`);
    const dirents = await fs.readdir(found.path, { withFileTypes: true });
    const entries: BrowseListing['entries'] = [];
    for (const d of dirents) {
      if (d.name.startsWith('.')) continue;
      // A symbolic link is listed only when it stays under the media root.
      const full = path.join(found.path, d.name);
      const inside = d.isSymbolicLink() ? (await realPathWithin([root], full)).kind === 'inside' : true;
      const target = !inside ? null : d.isSymbolicLink() ? await fs.stat(full).catch(() => null) : await fs.lstat(full).catch(() => null);
      if (!target) continue;
      if (target.isDirectory()) entries.push({ name: d.name, type: 'dir', size: null });
      else if (target.isFile()) entries.push({ name: d.name, type: 'file', size: target.size });
    }
    entries.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name, 'de') : a.type === 'dir' ? -1 : 1));
    const listing: BrowseListing = {
      path: dir,
      root: path.resolve(root),
      parent: dir === path.resolve(root) ? null : path.dirname(dir),
      entries: entries.slice(0, MAX_ENTRIES),
      truncated: entries.length > MAX_ENTRIES,
    };
    res.json(listing);
  });

  router.post('/browse/mkdir', async (req, res) => {
    const body = objectBody(req);
    const dir = await mediaDir(root, body.path, 'path');
    const st = await fs.lstat(dir).catch(() => null);
    if (st?.isDirectory()) throw new HttpError(409, `${dir} exists already`);
    if (st) throw new HttpError(409, `${dir} exists and is not a folder`);
    await fs.mkdir(dir, { recursive: true });
    // A symlink raced in between the check and mkdir would show up here.
    await mediaDir(root, dir, 'path');
    ctx.log.info(`folder created: ${dir}`);
    res.status(201).json({ path: dir });
  });

  return router;
}
