import fs from 'node:fs/promises';
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

/**
 * The real path of `dir/name` when it exists and stays strictly inside the real path of `dir`; null when
 * it is missing, when it is `dir` itself, or when a symlink (or `..`) leads outside. Callers that accept
 * only single entries check `name` with isBareFileName first.
 */
export async function resolveInside(dir: string, name: string): Promise<string | null> {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0') || dir.includes('\0')) return null;
  try {
    const realDir = await fs.realpath(dir);
    const realTarget = await fs.realpath(path.join(dir, name));
    if (realTarget === realDir || !isWithin(realDir, realTarget, path.sep)) return null;
    return realTarget;
  } catch {
    return null;
  }
}
