import fs from 'node:fs/promises';
import path from 'node:path';
import { freeFileName, freeSpace, mkdirInside, moveFile, OutsideWrite } from './output-folder.js';

export interface MoveOps {
  rename: (from: string, to: string) => Promise<void>;
  free: (dir: string) => Promise<number>;
}

const REAL_OPS: MoveOps = { rename: fs.rename, free: freeSpace };

/**
 * keepOriginal after a finished compression: moves the raw files into `to.dir` (rename first; across
 * file systems the free space is checked, then copy, size check, and the original removed). A name
 * that is taken there gets a number. The folder is made inside the real path of `to.mediaRoot`: an
 * Originale folder (or one below it) that is a link leading out of it is refused with OutsideWrite,
 * and the files stay where they are. Returns the new paths; on a failure the files not moved yet
 * stay where they were and the error says why.
 */
export async function keepOriginals(files: string[], to: { dir: string; mediaRoot: string }, ops: MoveOps = REAL_OPS): Promise<string[]> {
  const rel = path.relative(to.mediaRoot, to.dir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new OutsideWrite(`the originals folder ${to.dir} is not inside ${to.mediaRoot}: refused`);
  const dir = await mkdirInside(to.mediaRoot, rel);
  const moved: string[] = [];
  for (const file of files) {
    const dest = path.join(dir, await freeFileName(dir, path.basename(file)));
    await moveFile(file, dest, ops.free, ops.rename);
    moved.push(dest);
  }
  return moved;
}
