import fs from 'node:fs';
import path from 'node:path';

/**
 * Modes of what only the service user may read: DATA_DIR (the SQLite files hold API keys, webhook
 * tokens and mount credentials; the broker secret and the disc keys lie there) and MakeMKV's data
 * folder. The process umask is left alone on purpose: the media files the same process writes must
 * stay readable by the media server. Every private file is created with its mode instead, and a
 * start puts right what an older version or another umask left behind.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Makes `dir` private: the folder itself 0700, every folder below it 0700 and every file 0600.
 * Symbolic links are neither followed nor changed (a link's target is not ours to change). Entries
 * that vanish meanwhile are skipped. Returns what could not be changed (owned by another user), so
 * the caller can say so; it does not stop the start.
 */
export function makePrivateTree(dir: string): string[] {
  const refused: string[] = [];
  const chmod = (p: string, mode: number): boolean => {
    try {
      fs.chmodSync(p, mode);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPERM' || code === 'EACCES') refused.push(p);
      return false;
    }
  };
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmod(dir, PRIVATE_DIR_MODE);
  const walk = (folder: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(folder, e.name);
      if (e.isDirectory()) {
        chmod(full, PRIVATE_DIR_MODE);
        walk(full);
      } else if (e.isFile()) {
        chmod(full, PRIVATE_FILE_MODE);
      }
    }
  };
  walk(dir);
  return refused;
}

/** Creates `file` empty when it is missing, and gives it mode 0600 either way. */
export function ensurePrivateFile(file: string): void {
  const fd = fs.openSync(file, 'a', PRIVATE_FILE_MODE);
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
}
