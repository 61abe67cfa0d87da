import type { QueuedTranscode, WorkerJob } from '../../shared/api-types.js';
import { TASKS } from '../../shared/protocol.js';
import type { OpenWork } from '../dispatch/commands.js';
import type { WaitingTranscode } from '../dispatch/transcode-queue.js';
import type { JobRow } from '../jobs/jobs-store.js';
import { toView } from '../jobs/jobs-store.js';
import type { EncoderSpeeds } from '../jobs/encoder-speeds.js';

/** GET /transcode-queue lists the first this many waiting transcodes. */
export const QUEUE_VIEW_LIMIT = 100;

const secondsSince = (iso: string, now: number): number => Math.max(0, Math.round((now - Date.parse(iso)) / 1000));

/**
 * The rips and transcodes a node runs now, oldest first, from its open commands: each with its job's
 * progress, the encoder's speed, the time since it was sent and the remaining time. A command whose
 * job row is gone is left out.
 */
export function workerJobs(node: string, running: readonly OpenWork[], jobOf: (id: string) => JobRow | undefined, speeds: EncoderSpeeds, now: number): WorkerJob[] {
  const out: WorkerJob[] = [];
  for (const c of running) {
    if (c.node !== node) continue;
    const row = jobOf(c.job_id);
    if (!row) continue;
    const phase = c.task === TASKS.ripDisc ? 'rip' : 'transcode';
    // The row's progress and estimate belong to the phase it is in; a command of the other phase (a transcode sent ahead) shows none yet.
    const own = row.phase === phase;
    const view = toView(row, now);
    out.push({
      id: row.id,
      title: row.title,
      phase,
      status: view.status,
      progress: own ? row.progress : 0,
      fps: c.encoded ? null : speeds.of(row.id, phase, now),
      started_at: c.created_at,
      elapsed_seconds: secondsSince(c.created_at, now),
      eta_seconds: own ? view.eta_sekunden : null,
      encoded: c.encoded === 1,
    });
  }
  return out;
}

/** A worker as the queue view needs it. */
export interface QueueCandidate {
  name: string;
  node: string;
  online: boolean;
  encoders: number;
}

/**
 * The workers that may take a waiting transcode, as TranscodeQueue.pump chooses: the node chosen for it
 * while that node is online with an encoder, else every online worker with an encoder.
 */
export function mayTake(preferred: string | null, workers: readonly QueueCandidate[]): string[] {
  const able = workers.filter((w) => w.online && w.encoders > 0);
  const chosen = preferred ? able.find((w) => w.node === preferred) : undefined;
  return (chosen ? [chosen] : able).map((w) => w.name);
}

/** The waiting transcodes in the order they are handed out, with their titles and who may take them. */
export function queueView(waiting: readonly WaitingTranscode[], jobOf: (id: string) => JobRow | undefined, workers: readonly QueueCandidate[], now: number): QueuedTranscode[] {
  return waiting.map((w, i) => ({
    position: i + 1,
    job_id: w.job_id,
    title: jobOf(w.job_id)?.title ?? w.job_id,
    queued_at: w.created_at,
    waiting_seconds: secondsSince(w.created_at, now),
    preferred_node: w.preferred_node,
    may_take: mayTake(w.preferred_node, workers),
  }));
}
