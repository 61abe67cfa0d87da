/**
 * The job-status rules of the spec's table of states and transitions, in one place: which statuses a
 * job row can hold, which of them are still active, which keep its drive busy, which name the API
 * shows, and which moves between them are valid. Every module that asks "is this job still running?"
 * asks here.
 */

import type { JobStatusName } from '../../shared/api-types.js';

/** Every status a job row can hold (the column jobs.status). */
export const JOB_STATUSES = ['pending', 'running', 'transcoding', 'canceling', 'completed', 'failed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The status as the API shows it (shared/api-types.ts): an internal running job is reported as processing (spec, GET /jobs). */
export type ApiJobStatus = JobStatusName;
// The API's names are exactly the store's with running shown as processing: a change to one side fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const apiNamesMatch: Same<JobStatusName, Exclude<JobStatus, 'running'> | 'processing'> = true;
void apiNamesMatch;

/** Jobs that have not ended: a worker or the queue may still act on them; they cannot be deleted. */
export const ACTIVE_STATUSES: readonly JobStatus[] = ['pending', 'running', 'transcoding', 'canceling'];

/** Jobs that have ended: no event acts on them any more. */
export const TERMINAL_STATUSES: readonly JobStatus[] = ['failed', 'completed', 'canceled'];

/** Jobs in their rip stage: the drive holds the disc for them (no second rip, no eject). */
export const DRIVE_BUSY_STATUSES: readonly JobStatus[] = ['pending', 'running'];

/** Jobs whose progress moves with the clock (their ETA changes, so their view is never cached). */
export const LIVE_STATUSES: readonly JobStatus[] = ['running', 'transcoding'];

/** Jobs that can be run again (retry-rip, retry-transcode). */
export const RETRYABLE_STATUSES: readonly JobStatus[] = ['failed', 'canceled'];

/** The statuses in which an event of the rip stage or of the transcode stage may act. */
export const STAGE_STATUSES: Readonly<Record<'rip' | 'transcode', readonly JobStatus[]>> = {
  rip: ['pending', 'running', 'canceling'],
  transcode: ['transcoding', 'canceling'],
};

/**
 * The valid moves between statuses. From the spec: pending → running (rip starts), running →
 * transcoding (rip finished), any active → canceling (POST /jobs/{id}/cancel), any active → failed.
 * The rest is ours: a job ends completed (the last stage finished) or canceled (the worker confirmed,
 * or nothing ran), and a failed or canceled job's transcode may be run again (retry-transcode).
 * JobsStore.move is the one writer of a status and refuses any move not listed here. A status is
 * never moved to itself: a write that keeps it (a rip or transcode that starts again, the spec's
 * running → running on "rip starts") is no move and writes only its columns and meta.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  pending: ['running', 'transcoding', 'canceling', 'failed', 'completed', 'canceled'],
  running: ['transcoding', 'canceling', 'failed', 'completed', 'canceled'],
  transcoding: ['canceling', 'failed', 'completed', 'canceled'],
  canceling: ['failed', 'completed', 'canceled'],
  // failed → completed: a transcode taken away from a worker that finishes after the newer attempt failed (event-rules.ts).
  failed: ['transcoding', 'completed'],
  completed: [],
  canceled: ['transcoding'],
};

/**
 * The event types of a rip or transcode command, each with the statuses of its stage in which it may
 * act: an ended job takes no event, the rip's events belong to the rip stage, the transcode's to the
 * transcode stage.
 */
export const EVENT_STATUSES: Readonly<Record<string, Readonly<Record<'rip' | 'transcode', readonly JobStatus[]>>>> = {
  accepted: { rip: ACTIVE_STATUSES, transcode: ACTIVE_STATUSES },
  rejected: { rip: ACTIVE_STATUSES, transcode: ACTIVE_STATUSES },
  log: { rip: ACTIVE_STATUSES, transcode: ACTIVE_STATUSES },
  progress: STAGE_STATUSES,
  rip_started: { rip: STAGE_STATUSES.rip, transcode: [] },
  rip_done: { rip: STAGE_STATUSES.rip, transcode: [] },
  transcode_started: { rip: [], transcode: STAGE_STATUSES.transcode },
  transcode_ending: { rip: [], transcode: STAGE_STATUSES.transcode },
  transcode_encoded: { rip: [], transcode: STAGE_STATUSES.transcode },
  // A rip that is the last stage (no transcode, audio CDs) ends with job_done itself.
  job_done: STAGE_STATUSES,
  job_failed: STAGE_STATUSES,
  job_canceled: STAGE_STATUSES,
};

export function isActive(status: JobStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** A job in its rip stage keeps its drive (and its disc) busy. */
export function isDriveBusy(status: JobStatus): boolean {
  return DRIVE_BUSY_STATUSES.includes(status);
}

export function isLive(status: JobStatus): boolean {
  return LIVE_STATUSES.includes(status);
}

export function isRetryable(status: JobStatus): boolean {
  return RETRYABLE_STATUSES.includes(status);
}

export function canMove(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The name the API (and every message to a user) gives a status: running is shown as processing. */
export function apiStatus(status: JobStatus): ApiJobStatus {
  return status === 'running' ? 'processing' : status;
}

/** The statuses as an SQL IN-list ('pending','running',…): the values are this module's constants, never input. */
export function sqlList(statuses: readonly JobStatus[]): string {
  return statuses.map((s) => `'${s}'`).join(',');
}
