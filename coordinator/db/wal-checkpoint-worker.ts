/**
 * The worker thread of wal-checkpointer.ts: its own connection to the coordinator's database, which
 * copies the write-ahead log into the database file every few seconds (a passive checkpoint: it takes
 * no lock that holds up the main thread's reads or writes). The copy and its fsync happen here, off
 * the event loop that answers the API.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { file, everyMs, walSizeLimit } = workerData as { file: string; everyMs: number; walSizeLimit: number };
const db = new Database(file, { fileMustExist: true });
db.pragma(`journal_size_limit = ${walSizeLimit}`);
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), everyMs);
parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
parentPort?.postMessage('ready');
