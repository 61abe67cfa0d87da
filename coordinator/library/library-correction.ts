/**
 * A correction of a finished job's identity after the fact: its folder and files in the library are
 * renamed to the new title (a movie's `Title (Year)` folder and the files named after it, extras
 * included; a series' files move to `<Series>/Season NN` of the new name), the nfo and poster are
 * written anew, and the caller refreshes the media server. Nothing is overwritten: a name that exists
 * already, or files that were moved or deleted meanwhile, refuse the whole correction before
 * anything is touched. Renames done before a failure are rolled back.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { exists } from '../../shared/fs-exists.js';
import { writeLibraryFiles, type LibraryFilesOptions } from '../../shared/library-files.js';
import { writeStaysWithin } from '../../shared/media-paths.js';
import { movieFolderName, seasonFolder, seriesFolderName } from '../../shared/output-name.js';
import type { FileStreams, LibraryInfo } from '../../shared/protocol.js';
import { HttpError } from '../http/errors.js';
import { outputTarget, type JobRow } from '../jobs/jobs-store.js';
import type { DiscIdentity } from '../metadata/disc-identity.js';

export interface CorrectionPlan {
  /** MEDIA_ROOT: every folder the correction writes into must stay under its real path. */
  root: string;
  fromDir: string;
  toDir: string;
  /** File renames, absolute paths, in order. */
  moves: { from: string; to: string }[];
  /** The files relative to toDir after the correction. */
  files: string[];
}

/** The name of a file after the correction: the old base at its start replaced by the new base. */
function renamed(relative: string, oldBase: string, newBase: string): string {
  const dir = path.dirname(relative);
  const name = path.basename(relative);
  const next = name.startsWith(oldBase) ? `${newBase}${name.slice(oldBase.length)}` : name;
  return dir === '.' ? next : path.join(dir, next);
}

/** The refusal of a correction whose new folder leads out of MEDIA_ROOT through a link. */
function outsideRefusal(dir: string, root: string): HttpError {
  return new HttpError(409, `the corrected folder ${dir} leads outside ${root} through a symbolic link (or nowhere): nothing was changed`, 'correctionOutside', { dir });
}

/**
 * The file renames of a correction, checked against the disk: 409 when a file is gone or a target
 * exists, or when the new folder (or a series' folder above it, where tvshow.nfo goes) leads out of
 * the real MEDIA_ROOT through a symbolic link a share user put there (issue 42).
 */
export async function planCorrection(job: JobRow, identity: Pick<DiscIdentity, 'title' | 'year' | 'kind' | 'season'>, root: string): Promise<CorrectionPlan> {
  if (!job.output_path) throw new HttpError(409, 'the job has no output folder to rename', 'correctionNoOutput');
  const files = job.meta?.output_files ?? [];
  if (files.length === 0) throw new HttpError(409, 'the job does not record its output files (it finished before corrections were possible): rename the folder by hand', 'correctionNoFiles');
  const target = outputTarget(job);
  const fromDir = job.output_path;
  if (!(await exists(fromDir))) throw new HttpError(409, `the job's output folder ${fromDir} was moved or deleted meanwhile: nothing was changed`, 'correctionFolderGone', { dir: fromDir });
  for (const f of files) {
    if (!(await exists(path.join(fromDir, f)))) throw new HttpError(409, `the job's file ${path.join(fromDir, f)} was moved or deleted meanwhile: nothing was changed`, 'correctionFileGone', { file: path.join(fromDir, f) });
  }
  let toDir: string;
  let oldBase: string;
  let newBase: string;
  if (target.series && target.season !== null) {
    const season = identity.kind === 'series' && identity.season !== null ? identity.season : target.season;
    const seriesRoot = path.dirname(path.dirname(fromDir));
    // The names a rip of the corrected series writes (agent/output/output-folder.ts planOutput).
    const series = seriesFolderName(identity.title);
    toDir = path.join(seriesRoot, series, seasonFolder(season, series));
    oldBase = `${seriesFolderName(target.series)} - S${String(target.season).padStart(2, '0')}`;
    newBase = `${series} - S${String(season).padStart(2, '0')}`;
  } else {
    oldBase = path.basename(fromDir).replace(/ \[[A-Za-z0-9_-]{1,8}\]$/, '');
    newBase = movieFolderName(identity.title, identity.year);
    toDir = path.join(path.dirname(fromDir), newBase);
    if (toDir !== fromDir && (await exists(toDir))) throw new HttpError(409, `a folder named "${newBase}" exists already in ${path.dirname(fromDir)}: nothing was changed`, 'correctionFolderTaken', { name: newBase, dir: path.dirname(fromDir) });
  }
  for (const dir of target.series && target.season !== null ? [path.dirname(toDir), toDir] : [toDir]) {
    if (!(await writeStaysWithin(root, dir))) throw outsideRefusal(toDir, root);
  }
  const moves = files.map((f) => ({ from: path.join(fromDir, f), to: path.join(toDir, renamed(f, oldBase, newBase)) }));
  for (const m of moves) {
    if (m.to !== m.from && (await exists(m.to))) throw new HttpError(409, `${m.to} exists already: nothing was changed`, 'correctionFileTaken', { file: m.to });
  }
  return { root, fromDir, toDir, moves, files: moves.map((m) => path.relative(toDir, m.to)) };
}

/**
 * The job's stream list (meta.streams, one entry per file named as the worker wrote it: the file's
 * name) after a correction renamed `oldFiles` to `newFiles` (both relative to the output folder, in
 * the same order): each entry takes its file's new name; an entry of no renamed file stays as it is.
 */
export function renamedStreams(streams: readonly FileStreams[], oldFiles: readonly string[], newFiles: readonly string[]): FileStreams[] {
  return streams.map((s) => {
    let i = oldFiles.indexOf(s.file);
    if (i < 0) i = oldFiles.findIndex((f) => path.posix.basename(f) === s.file);
    if (i < 0 || newFiles[i] === undefined) return s;
    const next = oldFiles[i] === s.file ? newFiles[i] : path.posix.basename(newFiles[i]);
    return { ...s, file: next };
  });
}

/**
 * Carries a plan out. A movie folder is renamed as a whole after its files (so an nfo, poster or
 * anything else in it comes along); a series' files move into the new season folder, and the old
 * one is removed when it is left empty.
 */
export async function applyCorrection(plan: CorrectionPlan, series: boolean): Promise<void> {
  const done: { from: string; to: string }[] = [];
  try {
    for (const m of plan.moves) {
      if (m.from === m.to) continue;
      await fs.mkdir(path.dirname(m.to), { recursive: true });
      // Checked again now that it is there: a link put in its way since the plan is not renamed into.
      if (!(await writeStaysWithin(plan.root, path.dirname(m.to)))) throw outsideRefusal(plan.toDir, plan.root);
      if (!series) {
        // Inside the movie folder first: the folder itself is renamed after.
        const inside = path.join(plan.fromDir, path.relative(plan.toDir, m.to));
        await fs.rename(m.from, inside);
        done.push({ from: m.from, to: inside });
      } else {
        await fs.rename(m.from, m.to);
        done.push(m);
      }
    }
    if (!series && plan.fromDir !== plan.toDir) {
      await fs.rename(plan.fromDir, plan.toDir);
      done.push({ from: plan.fromDir, to: plan.toDir });
    }
  } catch (err) {
    for (const m of done.reverse()) await fs.rename(m.to, m.from).catch(() => undefined);
    if (err instanceof HttpError) throw err;
    throw new HttpError(500, `renaming the job's files failed (${(err as Error).message}); the names were put back`);
  }
  if (series) await fs.rmdir(plan.fromDir).catch(() => undefined);
}

/** Writes the nfo and poster for the corrected output; a failure is a log line, not a failed correction. */
export async function rewriteLibraryFiles(dir: string, info: LibraryInfo | null, log: (level: 'info' | 'warn', text: string) => void, opts: LibraryFilesOptions = {}): Promise<void> {
  if (!info) return;
  // A correction replaces the series metadata too: the old tvshow.nfo described another title.
  const nfo = path.join(info.kind === 'series' ? path.dirname(dir) : dir, info.kind === 'series' ? 'tvshow.nfo' : 'movie.nfo');
  if (info.kind === 'series') await fs.rm(nfo, { force: true });
  try {
    await writeLibraryFiles(dir, info, log, opts);
  } catch (err) {
    log('warn', `media-server files not written: ${(err as Error).message}`);
  }
}
