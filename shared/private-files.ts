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
 * Ripwerk's own entries at the top of DATA_DIR: the databases with their -wal/-shm files, the agents'
 * stores, the broker secret, the disc keys and dumps, mount credentials, the worker-setup and poster
 * caches, and MakeMKV's data folder when it lives there.
 */
const OWN_ENTRY = /^(coordinator\.sqlite(-wal|-shm)?|agent-.+\.(sqlite(-wal|-shm)?|json)|broker-secret|KEYDB\.cfg|keystore(\.old)?|\.keystore-.+|aacs-dumps|mount-credentials|worker-setup|posters|\.MakeMKV)$/;

export interface PrivateTreeResult {
  /** Entries owned by another user, whose mode could not be changed. */
  refused: string[];
  /** The first entry that is not Ripwerk's, when there is one: then the folder kept its mode. */
  foreign: string | null;
}

/**
 * Makes a data folder private: Ripwerk's own entries in it 0600 (files) and 0700 (folders, with
 * everything below them), and the folder itself 0700 (created so when missing). A folder that also
 * holds other things (the media tree, a home folder named by mistake) keeps its mode and so do those
 * things: closing it could lock the media server out, and their modes are not ours to change.
 * Symbolic links are neither followed nor changed. Nothing here stops the start: what could not be
 * changed is reported.
 */
export function makePrivateTree(dir: string): PrivateTreeResult {
  const refused: string[] = [];
  const chmod = (p: string, mode: number): void => {
    try {
      fs.chmodSync(p, mode);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPERM' || code === 'EACCES') refused.push(p);
    }
  };
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
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  let foreign: string | null = null;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (!OWN_ENTRY.test(e.name)) foreign ??= e.name;
    else if (e.isDirectory()) {
      chmod(full, PRIVATE_DIR_MODE);
      walk(full);
    } else if (e.isFile()) chmod(full, PRIVATE_FILE_MODE);
  }
  if (foreign === null) chmod(dir, PRIVATE_DIR_MODE);
  return { refused, foreign };
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
