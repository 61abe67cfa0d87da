import fs from 'node:fs/promises';
import path from 'node:path';
import { isRawMediaFile } from '../../shared/raw-media.js';

/** Whether the folder (or any folder below it) holds a video or audio file of a rip. */
export async function holdsRawMedia(dir: string): Promise<boolean> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (e.isFile() && isRawMediaFile(e.name)) return true;
    if (e.isDirectory() && (await holdsRawMedia(path.join(dir, e.name)))) return true;
  }
  return false;
}

/**
 * After a failed rip: removes the job's raw folder when no video or audio file made it there (the
 * rip failed before writing), so no empty folder offers a retry that has nothing to compress. A
 * folder with a partial rip stays for a look or a retry. True when the folder was removed.
 */
export async function removeRawFolderWithoutMedia(dir: string): Promise<boolean> {
  const st = await fs.stat(dir).catch(() => null);
  if (!st?.isDirectory() || (await holdsRawMedia(dir))) return false;
  await fs.rm(dir, { recursive: true, force: true });
  return true;
}
