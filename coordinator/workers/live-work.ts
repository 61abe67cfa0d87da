import type { QueuedTranscode, WorkerJob } from '../../shared/api-types.js';
import { TASKS } from '../../shared/protocol.js';
import type { OpenWork } from '../dispatch/commands.js';
import type { WaitingTranscode } from '../dispatch/transcode-queue.js';
import type { JobRow } from '../jobs/jobs-store.js';
import { toView } from '../jobs/jobs-store.js';
import type { EncoderSpeeds } from '../jobs/encoder-speeds.js';
import { MIN_SPAN_MS } from '../jobs/eta.js';
import type { RunningChunk } from '../dispatch/chunk-board.js';

/** GET /transcode-queue lists the first this many waiting transcodes. */
export const QUEUE_VIEW_LIMIT = 100;

const secondsSince = (iso: string, now: number): number => Math.max(0, Math.round((now - Date.parse(iso)) / 1000));

/**
 * A running chunk's estimate: its frames left at its rate since it was handed out (a standstill
 * lowers the rate, so the estimate grows), none before its first frames or before it has run
 * MIN_SPAN_MS (the job ETA's rule, docs/rules.md L22).
 */
export function chunkEtaSeconds(frames: number, framesDone: number, elapsedMs: number): number | null {
  if (framesDone <= 0 || elapsedMs < MIN_SPAN_MS) return null;
  const rate = framesDone / (elapsedMs / 1000);
  return Math.round(Math.max(0, frames - framesDone) / rate);
}

/** A running chunk as its worker's live work: its job's title, the chunk's progress, rate and estimate. */
function chunkJob(c: RunningChunk, row: JobRow, now: number): WorkerJob {
  const started = c.handed_at ?? c.updated_at;
  const elapsedMs = Math.max(0, now - Date.parse(started));
  const rate = c.frames_done > 0 && elapsedMs > 0 ? c.frames_done / (elapsedMs / 1000) : null;
  return {
    id: row.id,
    title: row.title,
    phase: 'transcode',
    status: toView(row, now).status,
    progress: c.frames > 0 ? Math.min(100, Math.round((c.frames_done / c.frames) * 1000) / 10) : 0,
    fps: rate === null ? null : Math.round(rate * 10) / 10,
    started_at: started,
    elapsed_seconds: secondsSince(started, now),
    eta_seconds: chunkEtaSeconds(c.frames, c.frames_done, elapsedMs),
    encoded: false,
    chunk: { number: c.idx + 1, of: c.of, title_index: c.title, frames: c.frames, frames_done: c.frames_done },
  };
}

/**
 * The rips and transcodes a node runs now and the chunks of long titles it encodes, oldest first:
 * each with its progress, the encoder's speed, the time since it was sent and the remaining time. A
 * command or chunk whose job row is gone is left out.
 */
export function workerJobs(node: string, running: readonly OpenWork[], chunks: readonly RunningChunk[], jobOf: (id: string) => JobRow | undefined, speeds: EncoderSpeeds, now: number): WorkerJob[] {
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
  for (const c of chunks) {
    if (c.node !== node) continue;
    const row = jobOf(c.job_id);
    if (row) out.push(chunkJob(c, row, now));
  }
  // Both lists are oldest first; merged by their start (a stable sort keeps a tie in list order).
  return out.sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at));
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
