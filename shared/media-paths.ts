import { constants, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import posix from 'node:path/posix';

/**
 * Path checks for everything a client may name: target and work folders of a job, browsing, and file
 * downloads. Container paths follow POSIX rules on every platform.
 */

export type MediaPathCheck = { ok: true; path: string } | { ok: false; reason: string };

function hasDotDotSegment(p: string): boolean {
  return p.split('/').includes('..');
}

/** Normalised form without a trailing slash (the root "/" stays "/"). */
function normaliseAbsolute(p: string): string {
  const normalised = posix.normalize(p);
  return normalised.length > 1 && normalised.endsWith('/') ? normalised.slice(0, -1) : normalised;
}

function isUsableAbsolute(p: string): boolean {
  return typeof p === 'string' && p.length > 0 && !p.includes('\0') && posix.isAbsolute(p);
}

/** True when `child` equals `parent` or lies below it; both must be normalised with `sep` as separator. */
function isWithin(parent: string, child: string, sep: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}

/**
 * Checks a client-supplied path against a root folder.
 *
 * Refused: an empty or relative path, a NUL byte, and any `..` segment (looked at before normalisation,
 * so `/app/media/x/../y` is refused even though it would stay inside). The comparison is boundary-aware:
 * `/app/media-x` is not under `/app/media`; the root itself counts as under. On success `path` is the
 * normalised path without a trailing slash.
 */
export function checkMediaPath(root: string, candidate: string): MediaPathCheck {
  if (!isUsableAbsolute(root) || hasDotDotSegment(root)) {
    return { ok: false, reason: 'root must be an absolute path without ..' };
  }
  const rootPath = normaliseAbsolute(root);
  if (typeof candidate !== 'string' || candidate.length === 0) return { ok: false, reason: 'path must not be empty' };
  if (candidate.includes('\0')) return { ok: false, reason: 'path must not contain NUL bytes' };
  if (hasDotDotSegment(candidate)) return { ok: false, reason: 'path must not contain ..' };
  if (!posix.isAbsolute(candidate)) return { ok: false, reason: 'path must be absolute' };
  const candidatePath = normaliseAbsolute(candidate);
  if (!isWithin(rootPath, candidatePath, '/')) return { ok: false, reason: `path must lie under ${rootPath}` };
  return { ok: true, path: candidatePath };
}

/** Boundary-aware containment test with the rules of checkMediaPath. */
export function isUnderRoot(root: string, candidate: string): boolean {
  return checkMediaPath(root, candidate).ok;
}

/** A name of a single entry in a folder: no slash or backslash, not `.` or `..`, no leading dot, no NUL, not empty. */
export function isBareFileName(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0) return false;
  if (name.includes('/') || name.includes('\\') || name.includes('\0')) return false;
  return !name.startsWith('.');
}

/** How deep below a job's output folder its files are listed and downloaded, the file counted (`Extras/x.mkv` is 2, `Season 01/Extras/x.mkv` 3). */
export const OUTPUT_FILE_DEPTH_MAX = 4;

/**
 * A folder below a job's output folder, as GET /jobs/{id}/files?subfolders=true names it in `folder`
 * and GET /jobs/{id}/files/{name}?folder= takes it: 1 to OUTPUT_FILE_DEPTH_MAX - 1 bare names joined
 * by `/` (no `..`, no hidden part, no backslash, no empty part, not absolute). The file's own name
 * stays a bare name, as the spec has it.
 */
export function isSubfolderPath(rel: string): boolean {
  if (typeof rel !== 'string' || rel.length === 0) return false;
  const parts = rel.split('/');
  return parts.length < OUTPUT_FILE_DEPTH_MAX && parts.every(isBareFileName);
}

export type RealPathResult =
  | { kind: 'inside'; path: string }
  | { kind: 'missing' }
  | { kind: 'outside'; path: string };

/**
 * Resolves `candidate` to its real path (every symbolic link followed) and tells whether that lies
 * under the real path of one of `roots`, boundary-aware (/media2 is not under /media). A candidate that
 * does not exist, or whose link leads nowhere, is `missing`; a root that does not exist counts for
 * nothing. This is the rule for every path the API serves, lists or deletes: a share user who can
 * write the media tree can put a symlink anywhere, so the lexical check alone is not enough.
 */
export async function realPathWithin(roots: readonly string[], candidate: string): Promise<RealPathResult> {
  if (typeof candidate !== 'string' || !path.isAbsolute(candidate) || candidate.includes('\0')) return { kind: 'missing' };
  const real = await fs.realpath(candidate).catch(() => null);
  if (real === null) return { kind: 'missing' };
  for (const root of roots) {
    if (typeof root !== 'string' || root.length === 0 || root.includes('\0')) continue;
    const realRoot = await fs.realpath(root).catch(() => null);
    if (realRoot !== null && isWithin(realRoot, real, path.sep)) return { kind: 'inside', path: real };
  }
  return { kind: 'outside', path: real };
}

/**
 * Whether a folder about to be written (made where it is missing) stays under the real path of
 * `root`: its deepest part that exists, every symbolic link followed, must lie there. A link that
 * leads nowhere (or loops) on the way counts as outside: once its target is made, it leads there.
 * The rule for every write under MEDIA_ROOT the coordinator makes (issue 42), as realPathWithin is
 * for what it reads.
 */
export async function writeStaysWithin(root: string, candidate: string): Promise<boolean> {
  if (!path.isAbsolute(candidate) || candidate.includes('\0')) return false;
  const realRoot = await fs.realpath(root).catch(() => null);
  if (realRoot === null) return false;
  let existing = candidate;
  while (!(await fs.lstat(existing).then(() => true, () => false))) {
    const up = path.dirname(existing);
    if (up === existing) return false;
    existing = up;
  }
  const real = await fs.realpath(existing).catch(() => null);
  return real !== null && isWithin(realRoot, real, path.sep);
}

export interface OpenedFile {
  /** A path naming exactly the opened file (on Linux /proc/self/fd/N), whatever happens to its folders now. */
  path: string;
  /** The opened file itself: reading from it reads the checked file. */
  handle: FileHandle;
  /** fstat of the opened file (its type, size and time). */
  stat: Stats;
  close(): Promise<void>;
}

/**
 * Opens `file` and checks what was really opened: its path as the kernel reports it must lie strictly
 * inside `realDir` (a real path). A share user could swap a folder for a symbolic link between an
 * earlier check and the open; this check comes after the open, so the race is gone. Null when the
 * file cannot be opened or the opened one lies elsewhere. Where the kernel does not report the path
 * (not Linux), the earlier check has to do and `file` is handed back. The fstat of the opened file
 * is asked for together with its path: each async call is a round trip through the thread pool, and
 * a download waits for them one after another before its first byte. A failing fstat is thrown.
 */
export async function openInside(realDir: string, file: string): Promise<OpenedFile | null> {
  if (process.platform !== 'linux') {
    const handle = await fs.open(file, 'r').catch(() => null);
    if (!handle) return null;
    const stat = await handle.stat().catch(async (err: unknown) => {
      await handle.close();
      throw err;
    });
    return { path: file, handle, stat, close: () => handle.close() };
  }
  // Non-blocking: a FIFO swapped in must not hang the open; on a regular file the flag changes nothing.
  const handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  const fdPath = `/proc/self/fd/${handle.fd}`;
  const [opened, stat] = await Promise.allSettled([fs.readlink(fdPath), handle.stat()]);
  const real = opened.status === 'fulfilled' ? opened.value : null;
  if (real === null || real === realDir || !isWithin(realDir, real, '/')) {
    await handle.close();
    return null;
  }
  if (stat.status === 'rejected') {
    await handle.close();
    throw stat.reason;
  }
  return { path: fdPath, handle, stat: stat.value, close: () => handle.close() };
}

/**
 * The real path of `dir/name` when it exists and stays strictly inside the real path of `dir`; null when
 * it is missing, when it is `dir` itself, or when a symlink (or `..`) leads outside. Callers that accept
 * only single entries check `name` with isBareFileName first.
 */
export async function resolveInside(dir: string, name: string): Promise<string | null> {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0') || dir.includes('\0')) return null;
  const realDir = await fs.realpath(dir).catch(() => null);
  if (realDir === null) return null;
  const found = await realPathWithin([realDir], path.join(realDir, name));
  return found.kind === 'inside' && found.path !== realDir ? found.path : null;
}
