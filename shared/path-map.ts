import posix from 'node:path/posix';
import win32 from 'node:path/win32';

/**
 * Translation between container paths (what the coordinator stores and sends, always POSIX) and the
 * local paths of an agent. Configured as `RIPWERK_PATH_MAP=/app/media=/mnt/media;/app/temp/raw=/srv/raw`.
 *
 * The local side is POSIX (`/mnt/media`) or, for a native Windows worker, a drive or UNC path
 * (`D:\Media`, `\\nas\media`); mapped paths use the separator of the local side.
 */

export type PathMapEntry = { from: string; to: string };

const WINDOWS_ABSOLUTE = /^(?:[A-Za-z]:[\\/]|\\\\[^\\/]+[\\/][^\\/]+)/u;

function isWindowsPath(p: string): boolean {
  return WINDOWS_ABSOLUTE.test(p);
}

function stripTrailingSeparators(p: string, minLength: number): string {
  let out = p;
  while (out.length > minLength && (out.endsWith('/') || out.endsWith('\\'))) out = out.slice(0, -1);
  return out;
}

function normaliseContainer(p: string): string {
  return stripTrailingSeparators(posix.normalize(p), 1);
}

function normaliseLocal(p: string): string {
  if (!isWindowsPath(p)) return normaliseContainer(p);
  const normalised = win32.normalize(p);
  return stripTrailingSeparators(normalised, win32.parse(normalised).root.length);
}

function hasDotDot(p: string): boolean {
  return p.split(/[\\/]/u).includes('..');
}

/**
 * Parses a path map. Entries are separated by `;` or `,`, the two sides of an entry by `=`. Both sides
 * must be absolute and free of `..`; the container side (left) is a POSIX path. Empty entries (a trailing
 * separator) are skipped; an empty value gives an empty map. Throws an Error naming the bad entry.
 */
export function parsePathMap(value: string): PathMapEntry[] {
  const entries: PathMapEntry[] = [];
  if (typeof value !== 'string') return entries;
  for (const raw of value.split(/[;,]/u)) {
    const entry = raw.trim();
    if (entry.length === 0) continue;
    const parts = entry.split('=');
    if (parts.length !== 2) throw new Error(`entry "${entry}" must have the form /container/path=/local/path`);
    const from = parts[0].trim();
    const to = parts[1].trim();
    if (from.length === 0 || to.length === 0) throw new Error(`entry "${entry}" needs a path on both sides of =`);
    if (from.includes('\0') || to.includes('\0')) throw new Error(`entry "${entry}" contains a NUL byte`);
    if (!posix.isAbsolute(from)) throw new Error(`container path "${from}" must be absolute`);
    if (!posix.isAbsolute(to) && !isWindowsPath(to)) throw new Error(`local path "${to}" must be absolute`);
    if (hasDotDot(from) || hasDotDot(to)) throw new Error(`entry "${entry}" must not contain ..`);
    const normalised = { from: normaliseContainer(from), to: normaliseLocal(to) };
    if (entries.some((e) => e.from === normalised.from)) throw new Error(`container path "${normalised.from}" is mapped twice`);
    entries.push(normalised);
  }
  return entries;
}

/** The rest of `p` below `prefix` (without a leading separator), or null when `p` is not at or below it. */
function restBelow(prefix: string, p: string, sep: string, caseless: boolean): string | null {
  const a = caseless ? prefix.toLowerCase() : prefix;
  const b = caseless ? p.toLowerCase() : p;
  if (b === a) return '';
  const withSep = a.endsWith(sep) ? a : a + sep;
  return b.startsWith(withSep) ? p.slice(withSep.length) : null;
}

/**
 * Translates a container path into the local path by the longest matching entry; the match is
 * boundary-aware (`/app/media` does not match `/app/media-x`). The path is normalised with POSIX rules
 * first, so `..` cannot step out of a mapped prefix. A path no entry covers comes back normalised but
 * otherwise unchanged.
 */
export function mapPath(map: readonly PathMapEntry[], p: string): string {
  const containerPath = normaliseContainer(p);
  let best: { entry: PathMapEntry; rest: string } | null = null;
  for (const entry of map) {
    const rest = restBelow(entry.from, containerPath, '/', false);
    if (rest !== null && (best === null || entry.from.length > best.entry.from.length)) best = { entry, rest };
  }
  if (best === null) return containerPath;
  if (best.rest === '') return best.entry.to;
  if (isWindowsPath(best.entry.to)) {
    const sep = best.entry.to.endsWith('\\') ? '' : '\\';
    return `${best.entry.to}${sep}${best.rest.replace(/\//gu, '\\')}`;
  }
  return posix.join(best.entry.to, best.rest);
}

/**
 * Translates a local path back into the container path by the longest matching local side. Windows local
 * paths match regardless of case and separator style. A path no entry covers comes back unchanged.
 */
export function unmapPath(map: readonly PathMapEntry[], localPath: string): string {
  let best: { entry: PathMapEntry; rest: string } | null = null;
  for (const entry of map) {
    const windows = isWindowsPath(entry.to);
    if (windows && !isWindowsPath(localPath)) continue;
    if (!windows && isWindowsPath(localPath)) continue;
    const candidate = windows ? normaliseLocal(localPath) : normaliseContainer(localPath);
    const rest = restBelow(entry.to, candidate, windows ? '\\' : '/', windows);
    if (rest !== null && (best === null || entry.to.length > best.entry.to.length)) best = { entry, rest };
  }
  if (best === null) return localPath;
  if (best.rest === '') return best.entry.from;
  const parts = best.rest.split(/[\\/]/u).filter((part) => part.length > 0);
  return normaliseContainer(posix.join(best.entry.from, ...parts));
}
