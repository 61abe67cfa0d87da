import { Worker } from 'node:worker_threads';
import type { Db } from '../../shared/sqlite.js';
import type { Logger } from '../../shared/log.js';

/** How often the worker copies the log into the database file. */
const CHECKPOINT_EVERY_MS = 2000;
/** SQLite's own default: the committing connection copies the log once it holds this many pages. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * Moves SQLite's checkpoints off the event loop. By default the commit that takes the write-ahead log
 * past 1,000 pages copies the whole log into the database file and waits for the disk: measured on the
 * test host, 1 commit in 500 took 5-19 ms instead of 0.03 ms, and the coordinator commits every MQTT
 * event, so a GET /jobs arriving then waited as long. Here the main connection never checkpoints; a
 * worker thread with its own connection does (wal-checkpoint-worker.ts). Should the worker fail, the
 * main connection checkpoints as before.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private stopping = false;
  /** Whether the worker has opened the database (false: it failed, the main connection checkpoints). */
  readonly started: Promise<boolean>;

  constructor(private readonly db: Db, file: string, private readonly log: Logger, everyMs = CHECKPOINT_EVERY_MS) {
    db.pragma('wal_autocheckpoint = 0');
    this.worker = new Worker(new URL('./wal-checkpoint-worker.js', import.meta.url), {
      workerData: { file, everyMs },
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
