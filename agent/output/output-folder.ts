import { createHash } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { exists } from '../../shared/fs-exists.js';
import { PRIVATE_PREFIX } from './private-encode.js';
import { movieFolderName, seasonFolder, seriesFolderName, withCollisionSuffix } from '../../shared/output-name.js';

export interface OutputTarget {
  target_dir: string;
  title: string;
  year: number | null;
  series: string | null;
  season: number | null;
  job_id: string;
  /** A movie whose titles are partly in the library: the folder an earlier job filed it in (a folder directly in target_dir). */
  library_folder?: string | null;
  /** The movie's database ids, when the job knows them: a `Title (Year)` folder whose movie.nfo names other ids holds another movie. */
  library?: { tmdb_id: number | null; imdb_id: string | null } | null;
  /** A transcode redone after its worker was lost (TranscodeArgs.redone): a folder holding files is never joined, the lost worker's output may be in it. */
  redone?: boolean;
}

export interface OutputPlan {
  dir: string;
  /** Base of the file names inside dir, without extension. */
  fileBase: string;
}

/**
 * A write refused because its folder leaves the folder it belongs in through a symbolic link (or a
 * link that leads nowhere): a share user who can write the media tree may plant one where a new
 * folder or file is about to go (issue 42). Nothing was written when it is thrown.
 */
export class OutsideWrite extends Error {}

function within(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
}

/**
 * The real path of `p` when it exists, or null when it does not. Throws OutsideWrite when it exists
 * but its real path is not inside `realBase` (the real path of `base`), or cannot be resolved.
 */
async function realInside(realBase: string, base: string, p: string): Promise<string | null> {
  if (!(await exists(p))) return null;
  const real = await fs.realpath(p).catch(() => null);
  if (real === null || !within(realBase, real)) throw new OutsideWrite(`the folder ${p} leads outside ${base} through a symbolic link (or nowhere): refused, nothing was written there`);
  return real;
}

/**
 * Makes the folders of `rel` below `base` one at a time, each checked once it is there: its real
 * path must lie inside the real path of `base` (a link that stays inside is followed, as reads
 * follow it). A folder that is a link leading elsewhere or nowhere is refused with OutsideWrite
 * before anything is made through it; `base` itself is made when missing. Returns base/rel.
 */
export async function mkdirInside(base: string, rel: string): Promise<string> {
  await fs.mkdir(base, { recursive: true });
  const realBase = await fs.realpath(base);
  let dir = base;
  for (const part of rel.split(path.sep).filter((p) => p !== '' && p !== '.')) {
    if (part === '..') throw new OutsideWrite(`the folder ${path.join(base, rel)} leads outside ${base}: refused, nothing was written there`);
    dir = path.join(dir, part);
    // A dangling link makes mkdir fail with EEXIST without creating its target: the check then refuses it.
    await fs.mkdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await realInside(realBase, base, dir);
  }
  return dir;
}

/**
 * Why `dir` (a folder files are about to be written into) may not be written: it exists and is a
 * link leading out of its parent folder (an extras folder planted in a movie or season folder).
 * Throws OutsideWrite; the folders above it were checked when they were planned.
 */
export async function checkFolderInParent(dir: string): Promise<void> {
  const parent = path.dirname(dir);
  const realParent = await fs.realpath(parent).catch(() => null);
  if (realParent !== null) await realInside(realParent, parent, dir);
}

/** The largest movie.nfo read to compare ids; Ripwerk's own are well below 10 KB. */
const NFO_MAX_BYTES = 256 * 1024;

/** The TMDB and IMDb ids a movie.nfo names (Kodi's <uniqueid type=…>, Emby's <tmdbid>/<imdbid>); null fields where it names none. */
export function nfoIds(xml: string): { tmdb_id: string | null; imdb_id: string | null } {
  const pick = (type: 'tmdb' | 'imdb'): string | null => {
    const m = new RegExp(`<uniqueid\\b[^>]*\\btype\\s*=\\s*["']${type}["'][^>]*>\\s*([^<\\s]+)\\s*</uniqueid>|<${type}id>\\s*([^<\\s]+)\\s*</${type}id>`, 'i').exec(xml);
    return m ? (m[1] ?? m[2]).toLowerCase() : null;
  };
  return { tmdb_id: pick('tmdb'), imdb_id: pick('imdb') };
}

/**
 * Whether an existing `Title (Year)` folder holds the same movie as the job (issue 39), decided by what is
 * in it: its movie.nfo names a TMDB or IMDb id the job has too, and none that differs → the same; an id of
 * a kind both name that differs → another movie. A folder without movie.nfo, an nfo without ids, or a job
 * without ids: the same, as the media servers go by the name `Title (Year)` alone then (and would file
 * both under one movie anyway).
 */
async function sameMovie(dir: string, ids: OutputTarget['library']): Promise<boolean> {
  const file = path.join(dir, 'movie.nfo');
  const st = await fs.lstat(file).catch(() => null);
  if (!st?.isFile() || st.size > NFO_MAX_BYTES || !ids) return true;
  const there = nfoIds(await fs.readFile(file, 'utf8').catch(() => ''));
  const wanted = { tmdb_id: ids.tmdb_id ? String(ids.tmdb_id) : null, imdb_id: ids.imdb_id ? ids.imdb_id.toLowerCase() : null };
  const compared = (['tmdb_id', 'imdb_id'] as const).filter((k) => there[k] !== null && wanted[k] !== null);
  return compared.every((k) => there[k] === wanted[k]);
}

/**
 * Where a job's finished files go: `<target>/Title (Year)`, or `<target>/<Series>/Season NN` for a series
 * rip (`SNN` where Jellyfin would misread the season, seasonFolder). A `Title (Year)` folder that holds
 * files already is joined when it holds the same movie (sameMovie: a second rip becomes a version of it,
 * claimFileName), and left alone otherwise, or when the transcode is redone after its worker was lost
 * (that worker's own output may be what is there): the job gets `Title (Year) [<job id>]`. The folder is created,
 * inside the real path of the target folder: a folder on the way that is a link leading out of it (a share
 * user's plant) fails the job with OutsideWrite, and nothing is written through it.
 */
export async function planOutput(t: OutputTarget): Promise<OutputPlan> {
  if (t.series && t.season !== null && t.season !== undefined) {
    const series = seriesFolderName(t.series);
    const dir = await mkdirInside(t.target_dir, path.join(series, seasonFolder(t.season, series)));
    return { dir, fileBase: `${series} - S${String(t.season).padStart(2, '0')}` };
  }
  const name = movieFolderName(t.title, t.year);
  const earlier = t.library_folder ? await folderInTarget(t.target_dir, t.library_folder) : null;
  if (earlier) return { dir: earlier, fileBase: name };
  await fs.mkdir(t.target_dir, { recursive: true });
  let dir = path.join(t.target_dir, name);
  // A link at the name that leads out of the target is refused, not taken as a collision: it was planted.
  await realInside(await fs.realpath(t.target_dir), t.target_dir, dir);
  // An empty folder of that name (left by an attempt that died before writing, perhaps with its private
  // encode folder, which that worker removes when it returns) is not a collision.
  const taken = await fs.readdir(dir).then((entries) => entries.some((e) => !e.startsWith(PRIVATE_PREFIX)), () => exists(dir));
  const isFolder = taken && (await fs.lstat(dir).then((st) => st.isDirectory(), () => false));
  if (taken && (t.redone || !(isFolder && (await sameMovie(dir, t.library))))) dir = path.join(t.target_dir, withCollisionSuffix(name, t.job_id));
  await mkdirInside(t.target_dir, path.basename(dir));
  return { dir, fileBase: name };
}

/**
 * An earlier job's folder of the same disc, when it is a folder directly inside the target folder
 * (real paths compared, so no symbolic link leads elsewhere); null otherwise (the usual folder is used).
 */
export async function folderInTarget(targetDir: string, folder: string): Promise<string | null> {
  try {
    const [target, real] = await Promise.all([fs.realpath(targetDir), fs.realpath(folder)]);
    if (path.dirname(real) !== target || !(await fs.stat(real)).isDirectory()) return null;
    return real;
  } catch {
    return null;
  }
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
 * agent leaves no placeholder behind); call releaseFileName once the file is written or removed. A
 * link at a name counts as taken (exists does not follow it); a folder that is a link leading out
 * of its parent is refused with OutsideWrite.
 */
export async function claimFileName(dir: string, name: string): Promise<string> {
  // The folder (an extras folder below the planned one) must not be a link leading out of it.
  await checkFolderInParent(dir);
  const ext = path.extname(name);
  const base = name.slice(0, name.length - ext.length);
  const candidates = versionNames(path.basename(dir), base, ext) ?? numberedNames(base, ext);
  for (const candidate of candidates) {
    const full = path.join(dir, candidate);
    if (claimed.has(full) || (await exists(full))) continue;
    // checked again after the await: another job may have picked it meanwhile
    if (claimed.has(full)) continue;
    claimed.add(full);
    return candidate;
  }
  throw new Error('unreachable: the names never end');
}

function* numberedNames(base: string, ext: string): Generator<string> {
  yield `${base}${ext}`;
  for (let i = 2; ; i++) yield `${base} (${i})${ext}`;
}

/**
 * A movie file named after its folder (`Title (Year).mkv`, or a `Title (Year) - Version N.mkv`): when
 * taken, the next `Title (Year) - Version N.mkv` from 2 on, the version form Jellyfin, Emby and Plex read
 * as another version of the movie in that folder (Jellyfin: the file starts with the folder's name and
 * what follows starts with "-"; a `Title (Year) (2).mkv` would be a movie of its own). Null for any other name.
 */
function versionNames(folder: string, base: string, ext: string): Generator<string> | null {
  if (base !== folder && !(base.startsWith(`${folder} - Version `) && /^\d+$/u.test(base.slice(folder.length + 11)))) return null;
  return (function* () {
    yield `${base}${ext}`;
    for (let i = 2; ; i++) yield `${folder} - Version ${i}${ext}`;
  })();
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
    // EXCL: a name taken meanwhile (a link planted there) is not written through, the copy fails.
    await fs.copyFile(from, to, fsSync.constants.COPYFILE_EXCL);
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

/** What identifies one written file: the same file system entry (dev, ino), unchanged since (size, mtime). */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** One output a transcode claimed; `identity` once its encoder finished it. */
export interface LedgerEntry {
  path: string;
  identity?: FileIdentity;
}

/** What a transcode had made when its last encode ended well: enough to finish it after a restart without encoding again. */
export interface EncodedOutputs {
  output_path: string;
  files: string[];
  /** A series whose episode numbers were counted on from the season folder (TranscodeResult). */
  episodes_guessed: boolean;
}

interface LedgerContent {
  job_id: string;
  files: LedgerEntry[];
  /** The folders the outputs are in, removed again when nothing is left in them. */
  dirs: string[];
  /** Every encode ended and the run went on to remove (or move away) the raw files: nothing could redo them. */
  raw_released?: boolean;
  /** Every encode ended well and each output's identity is recorded (OutputLedger.encoded). */
  encoded?: EncodedOutputs;
  /** The private folders its encoders wrote into (private-encode.ts): the run's own by their unique names. */
  private?: string[];
}

/** The ledger file of a command in the agent's data folder (its name hashed: a command id is the coordinator's text). */
export function outputLedgerFile(dataDir: string, commandId: string): string {
  return path.join(dataDir, 'outputs', `${createHash('sha256').update(commandId).digest('hex').slice(0, 32)}.json`);
}

/**
 * What a transcode wrote into MEDIA_ROOT, kept in the agent's data folder while the transcode runs and
 * until its outcome is stored (the job runner discards it then). An agent that dies in between finds
 * it at its restart: if the coordinator cancels the leftover task (the encode went to another worker,
 * which may have written the same path), removeOwnOutputs removes exactly the files this run finished,
 * each only while it is still the very file written then. Written synchronously: an entry is on disk
 * before the encoder starts, its identity right after the encoder ended.
 */
export class OutputLedger {
  constructor(
    readonly file: string,
    private readonly jobId: string,
  ) {}

  private read(): LedgerContent {
    try {
      return JSON.parse(fsSync.readFileSync(this.file, 'utf8')) as LedgerContent;
    } catch {
      return { job_id: this.jobId, files: [], dirs: [] };
    }
  }

  /** Best effort: a ledger that cannot be written only means nothing is cleaned up after a crash (nothing is removed that it does not list). */
  private write(content: LedgerContent): void {
    try {
      fsSync.mkdirSync(path.dirname(this.file), { recursive: true });
      const tmp = `${this.file}.tmp`;
      fsSync.writeFileSync(tmp, JSON.stringify(content));
      fsSync.renameSync(tmp, this.file);
    } catch {
      /* see above */
    }
  }

  /** An output name this run picked (in `dir`), before anything is written to it. */
  claimed(file: string, dirs: string[]): void {
    const content = this.read();
    if (!content.files.some((f) => f.path === file)) content.files.push({ path: file });
    for (const d of dirs) if (!content.dirs.includes(d)) content.dirs.push(d);
    this.write(content);
  }

  /**
   * The output is finished: its identity is recorded (a file that cannot be read stays without one).
   * The stat is asynchronous: the output lies in MEDIA_ROOT, which may be a network share that hangs.
   */
  async written(file: string): Promise<void> {
    const st = await fs.stat(file).catch(() => null);
    if (!st) return;
    const content = this.read();
    const identity: FileIdentity = { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    const entry = content.files.find((f) => f.path === file);
    if (entry) entry.identity = identity;
    else content.files.push({ path: file, identity });
    this.write(content);
  }

  /**
   * Every encode ended and the raw files are about to be removed or moved to the originals: from now
   * on the outputs may be the job's only encode (no other worker can redo it), so they are never removed.
   */
  releasingRaw(): void {
    const content = this.read();
    content.raw_released = true;
    this.write(content);
  }

  /**
   * Every encode ended well and its output is recorded (written): a run after a restart finishes the
   * transcode from here (finishedEncode) instead of encoding again.
   */
  encoded(outputs: EncodedOutputs): void {
    const content = this.read();
    content.encoded = outputs;
    this.write(content);
  }

  /**
   * A private folder an encoder of this run is about to write into (private-encode.ts), recorded
   * before it starts: a run cut off leaves it with a partial file, which removeOwnOutputs removes.
   */
  privateFolder(dir: string): void {
    const content = this.read();
    content.private = [...(content.private ?? []).filter((d) => d !== dir), dir];
    this.write(content);
  }

  /** The outcome is stored (or the outputs removed): nothing to clean up after a restart. */
  discard(): void {
    fsSync.rmSync(this.file, { force: true });
    fsSync.rmSync(`${this.file}.tmp`, { force: true });
  }
}

/** Whether the file at `file` is still the one recorded: same entry, same size and time of the last change. */
async function isSameFile(file: string, id: FileIdentity): Promise<boolean> {
  const st = await fs.lstat(file).catch(() => null);
  return st !== null && st.isFile() && st.dev === id.dev && st.ino === id.ino && st.size === id.size && st.mtimeMs === id.mtimeMs;
}

/**
 * The outputs of a transcode whose encodes all ended before the agent stopped, when each of them is
 * still the very file written then; null when the run had not got that far or a file changed or went
 * (then the transcode starts over).
 */
export async function finishedEncode(ledgerFile: string): Promise<EncodedOutputs | null> {
  let content: LedgerContent;
  try {
    content = JSON.parse(await fs.readFile(ledgerFile, 'utf8')) as LedgerContent;
  } catch {
    return null;
  }
  const encoded = content.encoded;
  if (!encoded || !Array.isArray(encoded.files) || encoded.files.length === 0) return null;
  for (const file of encoded.files) {
    const identity = content.files?.find((f) => f.path === file)?.identity;
    if (!identity || !(await isSameFile(file, identity))) return null;
  }
  return encoded;
}

/**
 * Removes the outputs a ledger lists as finished by its run, then the folders it lists that held one
 * of them and are empty now, then the ledger. Only files that are provably that run's own go: each
 * must still be the very file recorded when its writer ended (another worker's result at the same
 * path is a different file, or the same one rewritten: either way it stays). An output without a
 * recorded identity (an encode cut off before it ended) stays too: the run cannot tell its
 * half-written file from another worker's file that took the name later. And nothing goes once the
 * run had released its raw files: then no other worker could redo the encode, and these files may be
 * the job's only one.
 */
export async function removeOwnOutputs(ledgerFile: string): Promise<{ removed: string[]; keptAfterRawReleased: boolean }> {
  let content: LedgerContent;
  try {
    content = JSON.parse(await fs.readFile(ledgerFile, 'utf8')) as LedgerContent;
  } catch {
    return { removed: [], keptAfterRawReleased: false };
  }
  // The private folders are the run's own whatever else happened (their names are unique, and a
  // finished output was moved out of its folder before it counted): only a half-written file is in one.
  for (const dir of content.private ?? []) {
    const st = await fs.lstat(dir).catch(() => null);
    if (st?.isDirectory() && path.basename(dir).startsWith(PRIVATE_PREFIX)) await fs.rm(dir, { recursive: true, force: true });
  }
  const removed: string[] = [];
  if (!content.raw_released) {
    for (const entry of content.files ?? []) {
      if (!entry.identity || !(await isSameFile(entry.path, entry.identity))) continue;
      await fs.rm(entry.path, { force: true });
      removed.push(entry.path);
    }
    // Only folders that held a file removed here, deepest first (a subfolder, extras, before the
    // folder holding it). A folder left empty without one (the encode was cut off before its encoder
    // wrote) stays: the worker that took the job over reuses an empty folder of its name, and may be
    // encoding into it right now.
    const held = (dir: string): boolean => removed.some((f) => f.startsWith(`${dir}${path.sep}`));
    for (const dir of (content.dirs ?? []).filter(held).sort((a, b) => b.length - a.length)) await removeIfEmpty(dir);
  }
  await fs.rm(ledgerFile, { force: true });
  return { removed, keptAfterRawReleased: content.raw_released === true };
}
