/**
 * The bytes of a job's files, measured by the coordinator where it sees them (the workers name them by
 * their shared paths): the raw files at rip_done, the finished files at job_done. The sum goes into
 * the job's meta (raw_bytes, output_bytes) for the statistics' space saved by compression. A file the
 * coordinator cannot see (a raw folder on a worker's own disk) leaves the size unknown: nothing is
 * written rather than a part of the sum.
 */
import fs from 'node:fs/promises';
import type { Logger } from '../../shared/log.js';
import type { JobsStore } from './jobs-store.js';

export type SizeKey = 'raw_bytes' | 'output_bytes';

/** The files' bytes together; null when one of them is no regular file here (missing, unreadable, a folder). */
export async function filesBytes(files: readonly string[]): Promise<number | null> {
  if (files.length === 0) return null;
  const sizes = await Promise.all(files.map((f) => fs.stat(f).then((st) => (st.isFile() ? st.size : null), () => null)));
  return sizes.every((n): n is number => n !== null) ? sizes.reduce((a, b) => a + b, 0) : null;
}

/**
 * Measures the files and records their bytes under `key` in the job's meta (its status stays). Runs
 * after the event's transaction, so a slow file system holds no event; returns when written (tests wait for it).
 */
export async function recordFilesBytes(jobs: JobsStore, jobId: string, key: SizeKey, files: readonly string[], log: Logger): Promise<void> {
  const total = await filesBytes(files);
  if (total === null) {
    log.info(`${key === 'raw_bytes' ? 'the raw files' : 'the finished files'} are not all visible to the coordinator: their size stays unknown in the statistics`, jobId);
    return;
  }
  jobs.update(jobId, {}, key === 'raw_bytes' ? { raw_bytes: total } : { output_bytes: total });
}
