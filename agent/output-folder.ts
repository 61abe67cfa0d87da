import fs from 'node:fs/promises';
import path from 'node:path';
import { folderName, safeName, seasonFolder, withCollisionSuffix } from '../shared/output-name.js';

export interface OutputTarget {
  target_dir: string;
  title: string;
  year: number | null;
  series: string | null;
  season: number | null;
  job_id: string;
}

export interface OutputPlan {
  dir: string;
  /** Base of the file names inside dir, without extension. */
  fileBase: string;
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}

/**
 * Where a job's finished files go: `<target>/Title (Year)` (with the job id appended when that folder
 * exists already), or `<target>/<Series>/Season NN` for a series rip. The folder is created.
 */
export async function planOutput(t: OutputTarget): Promise<OutputPlan> {
  if (t.series && t.season !== null && t.season !== undefined) {
    const series = safeName(t.series);
    const dir = path.join(t.target_dir, series, seasonFolder(t.season));
    await fs.mkdir(dir, { recursive: true });
    return { dir, fileBase: `${series} - S${String(t.season).padStart(2, '0')}` };
  }
  const name = folderName(t.title, t.year);
  let dir = path.join(t.target_dir, name);
  // An empty folder of that name (left by an attempt that died before writing) is not a collision.
  const taken = await fs.readdir(dir).then((entries) => entries.length > 0, () => exists(dir));
  if (taken) dir = path.join(t.target_dir, withCollisionSuffix(name, t.job_id));
  await fs.mkdir(dir, { recursive: true });
  return { dir, fileBase: name };
}

/** The n-th output file's name: one file keeps the folder name, several get a title number. */
export function outputFileName(plan: OutputPlan, index: number, count: number, ext: string, isSeries: boolean): string {
  if (count === 1 && !isSeries) return `${plan.fileBase}${ext}`;
  return `${plan.fileBase} - t${String(index + 1).padStart(2, '0')}${ext}`;
}

/** Picks a file name inside dir that is not taken yet. */
export async function freeFileName(dir: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const base = name.slice(0, name.length - ext.length);
  let candidate = name;
  for (let i = 2; await exists(path.join(dir, candidate)); i++) candidate = `${base} (${i})${ext}`;
  return candidate;
}

/** Output files (full paths) a job of this process has picked and not finished yet. */
const claimed = new Set<string>();

/**
 * Like freeFileName, but a name another job of this agent has picked and not finished yet counts as
 * taken too: the next disc of a season never overwrites an earlier disc's file, and two jobs writing
 * into one season folder at the same time do not pick the same name. Nothing is put on disk (a killed
 * agent leaves no placeholder behind); call releaseFileName once the file is written or removed.
 */
export async function claimFileName(dir: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const base = name.slice(0, name.length - ext.length);
  for (let i = 1; ; i++) {
    const candidate = i === 1 ? name : `${base} (${i})${ext}`;
    const full = path.join(dir, candidate);
    if (claimed.has(full) || (await exists(full))) continue;
    // checked again after the await: another job may have picked it meanwhile
    if (claimed.has(full)) continue;
    claimed.add(full);
    return candidate;
  }
}

export function releaseFileName(dir: string, name: string): void {
  claimed.delete(path.join(dir, name));
}

/** 1.2 GB, 300.0 MB: a size for a message. */
function sizeText(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Free bytes for an unprivileged writer in the file system holding dir. */
export async function freeSpace(dir: string): Promise<number> {
  const st = await fs.statfs(dir);
  return st.bavail * st.bsize;
}

/**
 * Moves a file: rename first; across file systems check the free space at the target, copy, check
 * the size, then remove the original. A refusal or a failed copy leaves the original where it was.
 */
export async function moveFile(from: string, to: string, free: (dir: string) => Promise<number> = freeSpace, rename: (from: string, to: string) => Promise<void> = fs.rename): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    const size = (await fs.stat(from)).size;
    const available = await free(path.dirname(to));
    if (size > available) {
      throw new Error(`not enough free space in ${path.dirname(to)} to move ${path.basename(from)} there: ${sizeText(size)} needed, ${sizeText(available)} free`);
    }
    await fs.copyFile(from, to);
    const copied = (await fs.stat(to)).size;
    if (copied !== size) {
      await fs.rm(to, { force: true });
      throw new Error(`copy of ${path.basename(from)} is incomplete (${copied} of ${size} bytes)`);
    }
    await fs.rm(from);
  }
}

/** Removes a folder we created when it stayed empty (a failed or canceled job). */
export async function removeIfEmpty(dir: string): Promise<void> {
  try {
    if ((await fs.readdir(dir)).length === 0) await fs.rmdir(dir);
  } catch {
    /* already gone or not empty */
  }
}
