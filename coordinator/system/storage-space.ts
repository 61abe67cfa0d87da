import fs from 'node:fs/promises';
import path from 'node:path';

/** Free space below this is called out (the size of a UHD disc's raw rip plus its encode). */
export const LOW_SPACE_BYTES = 60 * 1000 ** 3;

import type { DiskSpace } from '../../shared/api-types.js';
export type { DiskSpace };

export function lowSpaceWarning(dir: string, freeBytes: number): string | null {
  return freeBytes < LOW_SPACE_BYTES ? `less than ${LOW_SPACE_BYTES / 1000 ** 3} GB free on ${dir}` : null;
}

/** Total and free bytes of the file system holding `dir` (fs.statfs), with the 60 GB warning. */
export async function disk(name: string, dir: string): Promise<DiskSpace> {
  try {
    // A folder not made yet (a quick pick before its first rip) lands on its parent's file system.
    let existing = dir;
    while (!(await fs.stat(existing).then(() => true, () => false)) && path.dirname(existing) !== existing) existing = path.dirname(existing);
    const st = await fs.statfs(existing);
    const free = st.bavail * st.bsize;
    return { name, path: dir, total_bytes: st.blocks * st.bsize, free_bytes: free, warning: lowSpaceWarning(dir, free) };
  } catch (err) {
    return { name, path: dir, total_bytes: null, free_bytes: null, warning: `${dir} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
}
