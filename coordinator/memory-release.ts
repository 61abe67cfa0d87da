import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from '../shared/log.js';
import { IdleRelease } from '../shared/idle-release.js';
import type { Db } from '../shared/sqlite.js';

/** Checks every 10 s; 30 s without job traffic after a burst counts as idle. */
const CHECK_MS = 10_000;
const QUIET_MS = 30_000;
/**
 * Row changes that make a burst: a few jobs' worth (every job writes its row, events and log lines
 * many times). Status beacons of the workers (one row a minute each) stay below QUIET_CHANGES per
 * check and reach this only after hours.
 */
const BURST_CHANGES = 1000;
const QUIET_CHANGES = 20;

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

type Gc = (options: { type: 'major'; execution: 'sync' }) => void;
let gcFn: Gc | null = null;

/**
 * V8's full garbage collection. Node gives it only with --expose-gc; the flag is set here, at the
 * first release, instead of on every command line that starts the coordinator (units, npm start,
 * test harness). A fresh context reads the `gc` function the flag makes.
 */
function fullGc(): Gc {
  if (gcFn) return gcFn;
  const global = (globalThis as { gc?: Gc }).gc;
  if (global) return (gcFn = global);
  v8.setFlagsFromString('--expose-gc');
  return (gcFn = vm.runInNewContext('gc') as Gc);
}

/**
 * After a burst of jobs, once the coordinator is idle: SQLite gives back its page cache. Its cache
 * may grow to 16 MB (better-sqlite3 builds SQLite with cache_size -16000) and holds every page a
 * burst touched; the pages are read again from the OS's file cache when needed. Started by the
 * coordinator's entry points; stopped with the process.
 */
export function startMemoryRelease(db: Db, log: Logger, clock: () => number = Date.now): IdleRelease {
  // total_changes(): rows this connection inserted, updated or deleted since it opened; every job
  // write goes through it, so it is a free activity counter.
  const changes = db.prepare('SELECT total_changes()').pluck();
  const idle = new IdleRelease({
    activity: () => changes.get() as number,
    release: () => {
      const before = process.memoryUsage.rss();
      db.pragma('shrink_memory');
      const afterSqlite = process.memoryUsage.rss();
      const t0 = performance.now();
      fullGc()({ type: 'major', execution: 'sync' });
      const gcMs = performance.now() - t0;
      log.info(`idle after a burst of work: memory given back, RSS ${mb(before)} MB → ${mb(afterSqlite)} MB (SQLite page cache) → ${mb(process.memoryUsage.rss())} MB (full GC, ${gcMs.toFixed(0)} ms)`);
    },
    burstChanges: BURST_CHANGES,
    quietChanges: QUIET_CHANGES,
    quietMs: QUIET_MS,
    checkMs: CHECK_MS,
    clock,
  });
  idle.start();
  return idle;
}
