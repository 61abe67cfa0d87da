import { Worker } from 'node:worker_threads';
import type { Db } from '../../shared/sqlite.js';
import type { Logger } from '../../shared/log.js';

/** How often the worker copies the log into the database file. */
const CHECKPOINT_EVERY_MS = 2000;
/**
 * The -wal file is cut back to at most this many bytes when SQLite starts the log over after a
 * checkpoint copied all of it (journal_size_limit): without it the file keeps the size of the biggest
 * burst it ever held. 4 MiB is about SQLite's default checkpoint size (1,000 pages of 4 KiB).
 */
export const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;
/** SQLite's own default: the committing connection copies the log once it holds this many pages. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * Moves SQLite's checkpoints off the event loop. By default the commit that takes the write-ahead log
 * past 1,000 pages copies the whole log into the database file and waits for the disk: measured on the
 * test host, 1 commit in 500 took 5-19 ms instead of 0.03 ms, and the coordinator commits every MQTT
 * event, so a GET /jobs arriving then waited as long. Here the main connection never checkpoints; a
 * worker thread with its own connection does (wal-checkpoint-worker.ts). Should the worker fail, the
 * main connection checkpoints as before. The -wal file is cut back to WAL_SIZE_LIMIT_BYTES whenever
 * the log starts over, so one burst of writes does not leave a file of its size behind for good.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private stopping = false;
  /** Whether the worker has opened the database (false: it failed, the main connection checkpoints). */
  readonly started: Promise<boolean>;

  constructor(private readonly db: Db, file: string, private readonly log: Logger, everyMs = CHECKPOINT_EVERY_MS) {
    db.pragma('wal_autocheckpoint = 0');
    // Per connection: the main one commits (and so starts the log over), the worker's checkpoints.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    this.worker = new Worker(new URL('./wal-checkpoint-worker.js', import.meta.url), {
      workerData: { file, everyMs, walSizeLimit: WAL_SIZE_LIMIT_BYTES },
      // It holds a connection and a timer: a small heap is plenty.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    });
    this.started = new Promise((resolve) => {
      this.worker.once('message', () => resolve(true));
      this.worker.once('exit', () => resolve(false));
    });
    this.worker.on('error', (err: Error) => this.fallBack(err.message));
    this.worker.on('exit', (code) => {
      if (!this.stopping) this.fallBack(`it exited with code ${code}`);
    });
    this.worker.unref();
  }

  private fallBack(why: string): void {
    if (this.stopping) return;
    this.stopping = true;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    this.log.warn(`the database checkpoint thread stopped (${why}): the coordinator checkpoints itself again`);
  }

  /** Stops the worker; the main connection's close then checkpoints what is left. */
  async close(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('stop');
    await Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, 2000).unref())]);
    await this.worker.terminate();
  }
}
