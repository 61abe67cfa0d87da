import type { PathMapAdvice } from '../../shared/api-types.js';
import { mountSource, uncPath } from './mount-spec.js';
import type { MountRow } from './mounts-store.js';

export type { PathMapAdvice };

/**
 * Derived from the mounts the service attached itself. An SMB share maps its mount point to the share's
 * UNC path (\\nas\movies), which a native Windows worker opens directly. An NFS export maps to "": a
 * Linux worker mounts the same export at the same path and needs no translation.
 */
export function pathMapAdvice(rows: readonly MountRow[]): PathMapAdvice {
  const entries = rows.map((row) => ({
    name: row.name,
    protocol: row.protocol === 'smb' ? ('SMB' as const) : ('NFS' as const),
    mount_point: row.mount_point,
    source: mountSource(row),
    value: row.protocol === 'smb' ? `${row.mount_point}=${uncPath(row)}` : '',
  }));
  const value = entries.map((e) => e.value).filter(Boolean).join(';');
  let hint: string;
  if (entries.length === 0) {
    hint =
      'Ripwerk has not mounted any network share, so there is nothing to map: an external worker cannot reach the files this service writes. ' +
      'Remedy: add the NAS share on the storage page (Speicher, or POST /storage-mounts), let the rips go there, then come back here for the value.';
  } else if (!value) {
    hint = 'Only NFS exports are mounted: mount the same exports at the same paths on the worker and leave RIPWERK_PATH_MAP empty.';
  } else {
    hint = `Set RIPWERK_PATH_MAP=${value} on the external worker (the worker service's environment or config file), so it opens the share directly under the paths the coordinator sends.`;
  }
  return { variable: 'RIPWERK_PATH_MAP', value, entries, hint };
}
