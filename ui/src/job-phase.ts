/**
 * A job's way through its phases, rip → compress → file away, for the jobs page. The API gives the
 * phase (rip, transcode) and one progress for the whole phase. The agent shares the transcode's
 * progress across its files in order (file i of n at p % reports (i + p/100) / n), so the file being
 * compressed follows from the progress and the number of ripped files (meta.raw_files, the files the
 * transcode was given); it is exact to the throttled report, not a guess.
 */
import type { Job } from '../../shared/api-types.js';
import { percent } from './i18n/index.js';

export type Step = 'rip' | 'transcode' | 'file';
export type StepState = 'done' | 'now' | 'next';

export interface PhaseLine {
  steps: { step: Step; state: StepState }[];
  /** The file being compressed, 1-based, when the transcode has more than one. */
  file: { index: number; count: number } | null;
}

const ACTIVE = new Set(['pending', 'processing', 'transcoding', 'canceling']);

/** The file being compressed (1-based) of count, from the shared progress; null for one file or none. */
export function transcodeFile(progress: number, count: number): { index: number; count: number } | null {
  if (!Number.isInteger(count) || count < 2 || !Number.isFinite(progress)) return null;
  const index = Math.floor((Math.max(0, Math.min(100, progress)) / 100) * count) + 1;
  return { index: Math.min(count, index), count };
}

/** The phase line of an active job; null for a finished, failed or canceled one (its status says it). */
export function phaseLine(job: Pick<Job, 'status' | 'phase' | 'progress' | 'meta'>): PhaseLine | null {
  if (!ACTIVE.has(job.status)) return null;
  // An audio CD is filed as it is ripped: no compress step.
  const compresses = !job.meta?.album;
  const order: Step[] = compresses ? ['rip', 'transcode', 'file'] : ['rip', 'file'];
  let now: Step = job.phase === 'transcode' ? 'transcode' : 'rip';
  // The last encoder has finished: the agent checks, flags and describes the files and moves them into place.
  if (now === 'transcode' && job.progress >= 100) now = 'file';
  const at = order.indexOf(now);
  return {
    steps: order.map((step, i) => ({ step, state: i < at ? 'done' : i === at ? 'now' : 'next' })),
    file: now === 'transcode' ? transcodeFile(job.progress, job.meta?.raw_files?.length ?? 0) : null,
  };
}

/**
 * Who encoded how much of a title encoded in chunks on several agents (issue 41, meta.chunk_frames):
 * "keller@nas: 60 %, wohnzimmer@pc: 40 %", each node's share of the frames encoded so far, the
 * largest first; null for a title encoded whole or before any frame is done.
 */
export function chunkSharesText(meta: Pick<NonNullable<Job['meta']>, 'chunk_frames'> | null | undefined): string | null {
  const frames = Object.entries(meta?.chunk_frames ?? {}).filter(([, n]) => Number.isFinite(n) && n >= 0);
  const total = frames.reduce((sum, [, n]) => sum + n, 0);
  if (total <= 0) return null;
  return frames
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([node, n]) => `${node}: ${percent((n / total) * 100)}`)
    .join(', ');
}
