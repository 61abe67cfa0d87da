import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ensurePrivateFile, PRIVATE_DIR_MODE } from './private-files.js';

export type Db = Database.Database;

export interface Migration {
  version: number;
  name: string;
  up: string;
}

/**
 * Opens a SQLite file with WAL, a busy timeout and the given versioned migrations applied in order.
 * The file is the service user's only (0600): SQLite gives its -wal and -shm files the mode of the
 * database file, and ones left by an older version are set right too.
 */
export function openDatabase(file: string, migrations: Migration[]): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  ensurePrivateFile(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const companion of [`${file}-wal`, `${file}-shm`]) if (fs.existsSync(companion)) ensurePrivateFile(companion);
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`cache_size = ${CACHE_SIZE}`);
  applyMigrations(db, migrations);
  return db;
}

/**
 * SQLite's own default page cache, 2 MB (in KiB, negative). better-sqlite3 builds SQLite with 16 MB,
 * and the cache keeps every page a burst of jobs touched: the coordinator's database of 1,000 jobs
 * sat in it whole after work. Freed pages do not go back to the OS (glibc keeps them), so only a
 * smaller cap helps. A page not in the cache comes from the OS's file cache.
 */
export const CACHE_SIZE = -2000;

/** Applies the migrations newer than the database's user_version, in order, each in its own transaction. */
export function applyMigrations(db: Db, migrations: Migration[]): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.up);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}

/** A database in memory with the given migrations applied (for tests: nothing touches the disk). */
export function memoryDatabase(migrations: Migration[]): Db {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  applyMigrations(db, migrations);
  return db;
}
