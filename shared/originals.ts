/**
 * Where keepOriginal keeps a job's raw files after its compression, the rule both sides use: the agent
 * moves them there, the coordinator accepts that folder as the job's raw data (GET /jobs/{id}/rohdaten,
 * DELETE /jobs/{id}?rohdaten=true) only when it has this shape.
 */
import path from 'node:path';
import { checkMediaPath } from './media-paths.js';

/** The folder under MEDIA_ROOT that keeps the original rips with keepOriginal (README: "Originale"). */
export const ORIGINALS_FOLDER = 'Originale';

/**
 * `<MEDIA_ROOT>/Originale/<output folder below its target>/<job id>`: the output folder's place below
 * its target (`Heat (1995)`, `Show/Season 02`), so the originals sit outside the library folders a
 * media server scans and are found under the same name; the last folder is named like the job, as every
 * raw folder is, so two rips of one film keep apart and each job's raw data is exactly its own.
 */
export function originalsDir(mediaRoot: string, targetDir: string, outputDir: string, jobId: string): string {
  const rel = path.relative(targetDir, outputDir);
  const inside = rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  return path.join(mediaRoot, ORIGINALS_FOLDER, inside ? rel : path.basename(outputDir), jobId);
}

/** Whether a folder a worker reports as a job's kept originals has that shape: under `<mediaRoot>/Originale`, named like the job, no `..`. */
export function isOriginalsDir(mediaRoot: string, dir: string, jobId: string): boolean {
  const root = path.posix.join(mediaRoot, ORIGINALS_FOLDER);
  const check = checkMediaPath(root, dir);
  return check.ok && check.path !== root && path.posix.basename(check.path) === jobId;
}
