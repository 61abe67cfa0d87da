import type { Db } from '../../shared/sqlite.js';
import type { Logger } from '../../shared/log.js';
import type { JobMeta } from '../../shared/api-types.js';
import type { JobFields, JobRow, JobsStore } from '../jobs/jobs-store.js';
import type { JobStatus } from '../jobs/job-status.js';
import { endNoticeDue } from './event-rules.js';
import type { RippedTitle } from '../../shared/protocol.js';
import { LibraryTitles } from '../library/library-titles.js';

/**
 * What the dispatcher's parts write about a job besides its status: its log lines (in the job and in
 * the service log), its end (with the end hook for notifications and the library refresh) and the
 * history of ripped discs.
 */
export class JobJournal {
  private readonly libraryTitles: LibraryTitles;

  constructor(
    private readonly db: Db,
    private readonly jobs: JobsStore,
    private readonly log: Logger,
    /** Called when a job reaches an end state. */
    private readonly onEnd: (job: JobRow) => void,
  ) {
    this.libraryTitles = new LibraryTitles(db);
  }

  /** The titles a finished job put into the library, under its disc's identity (outputs[i] is the file of titles[i]). */
  recordLibraryTitles(job: JobRow, titles: readonly RippedTitle[], outputs: readonly string[]): void {
    const fp = job.meta?.fingerprint;
    if (fp === undefined || titles.length === 0) return;
    this.libraryTitles.record(fp, job.id, titles, outputs);
  }

  /** A line in the job's log and in the service log. */
  note(jobId: string, level: 'info' | 'warn' | 'error', message: string): void {
    this.jobs.addLog(jobId, level, message);
    this.log[level](message, jobId);
  }

  /**
   * Ends a job: moves it to its end status with the given fields and meta patch (one write, through
   * JobsStore.move) and tells the end hook, unless the job had ended with that very outcome already
   * (endNoticeDue: no household hears the same outcome twice). A move the state table refuses is
   * logged by the store and ends nothing.
   */
  finish(jobId: string, to: Extract<JobStatus, 'completed' | 'failed' | 'canceled'>, fields: JobFields, message: string, meta?: JobMeta): void {
    const before = this.jobs.get(jobId)?.status;
    const row = this.jobs.move(jobId, to, { ...fields, finished_at: new Date().toISOString() }, meta);
    if (!row) return;
    this.note(jobId, to === 'failed' ? 'error' : 'info', message);
    if (!endNoticeDue(before, row.status)) {
      this.log.info(`the job had ended ${row.status} already: no second notice`, jobId);
      return;
    }
    try {
      this.onEnd(row);
    } catch (err) {
      this.log.warn(`job end hook failed: ${(err as Error).message}`, jobId);
    }
  }

  /** The disc of a job counts as ripped once its rip finished (automatic rips skip it from then on). */
  recordHistory(job: JobRow): void {
    const fp = job.meta?.fingerprint;
    if (fp === undefined) return;
    this.db
      .prepare('INSERT INTO history (fingerprint, title, job_id, finished_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM history WHERE job_id = ?)')
      .run(fp, job.title, job.id, new Date().toISOString(), job.id);
  }
}
