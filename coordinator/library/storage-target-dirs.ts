import path from 'node:path';
import type { MountRow } from '../mounts/mounts-store.js';
import type { Settings } from '../system/settings-store.js';

/**
 * The storage targets of GET /storage-targets, by name: the media root, the quick-pick folders, the
 * raw folder, the workDir setting and every storage mount. The raw-data search looks in the same list.
 */
export function storageTargetDirs(mediaRoot: string, rawDir: string, s: Settings, shares: Pick<MountRow, 'name' | 'mount_point'>[]): [string, string][] {
  return [
    ['media', mediaRoot],
    ['movies', path.join(mediaRoot, s.quickPickMovies)],
    ['series', path.join(mediaRoot, s.quickPickSeries)],
    ['music', path.join(mediaRoot, s.quickPickMusic)],
    ['raw', rawDir],
    ...(s.workDir ? [['workDir', s.workDir] as [string, string]] : []),
    ...shares.map((m): [string, string] => [`mount:${m.name}`, m.mount_point]),
  ];
}
