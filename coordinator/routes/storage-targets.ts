import fs from 'node:fs/promises';
import { Router } from 'express';
import type { StorageTarget } from '../../shared/api-types.js';
import { isUnderRoot } from '../../shared/media-paths.js';
import type { AppContext } from '../context.js';
import { readMountLayers } from '../mounts/mount-tools.js';
import { probeMount } from '../mounts/probe.js';
import { disk, lowSpaceWarning, type DiskSpace } from '../system/storage-space.js';
import { storageTargetDirs } from '../library/storage-target-dirs.js';

const NETWORK_FS = new Set(['cifs', 'smb3', 'nfs', 'nfs4']);

/**
 * GET /storage-targets: where output and raw data go (those under the media root), and every storage mount, with free space, the
 * 60 GB warning, whether the folder sits on a file system mounted into the media root (`mounted`) and
 * whether that is a network share (`network`). A network folder is measured from a child process
 * (3 s limit), never with statfs here: a dead share would hang this process's thread pool.
 */
export function storageTargetsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/storage-targets', async (_req, res) => {
    const s = ctx.settings.all();
    const { mediaRoot, rawDir } = ctx.config;
    const shares = ctx.mounts.store.all();
    // A storage target is a directory under the media root (spec): the raw folder and workDir are
    // listed only where they lie there; the raw-data search still looks in them (app.ts).
    const targets = storageTargetDirs(mediaRoot, rawDir, s, shares).filter(([, dir]) => isUnderRoot(mediaRoot, dir));
    const layers = await readMountLayers();
    res.json(
      await Promise.all(
        targets.map(async ([name, dir]): Promise<StorageTarget> => {
          // The file system a folder is on: the deepest mount point at or above it.
          const covering = layers.filter((l) => isUnderRoot(l.mountPoint, dir)).sort((a, b) => b.mountPoint.length - a.mountPoint.length)[0];
          const mounted = covering !== undefined && covering.mountPoint !== '/' && (isUnderRoot(mediaRoot, covering.mountPoint) || covering.mountPoint === dir);
          const share = shares.find((m) => isUnderRoot(m.mount_point, dir));
          const network = share !== undefined || (covering !== undefined && NETWORK_FS.has(covering.fsType));
          let space: DiskSpace;
          let exists: boolean;
          if (network) {
            const p = mounted ? await probeMount(dir) : null;
            exists = p?.ok ?? false;
            space = p?.ok
              ? { name, path: dir, total_bytes: p.totalBytes, free_bytes: p.freeBytes, warning: lowSpaceWarning(dir, p.freeBytes) }
              : { name, path: dir, total_bytes: null, free_bytes: null, warning: mounted ? `the network share at ${dir} is not answering` : `the network share for ${dir} is not mounted` };
          } else {
            space = await disk(name, dir);
            exists = await fs.stat(dir).then((st) => st.isDirectory(), () => false);
          }
          return { ...space, exists, mounted, network, ...(share ? { mount: share.name } : {}) };
        }),
      ),
    );
  });
  return router;
}
