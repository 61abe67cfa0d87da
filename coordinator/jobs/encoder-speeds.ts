import type { Phase } from '../../shared/protocol.js';

/** A speed older than this (no progress event since) is not shown: the encoder may have stalled. */
export const SPEED_STALE_MS = 30_000;

/** Above this many entries, those stale already are dropped when a new one comes. */
const PRUNE_ABOVE = 256;

interface Speed {
  phase: Phase;
  fps: number;
  at: number;
}

/**
 * The encoder speed (frames per second) of each job's running phase, as its last progress event told
 * it. Kept in memory only: it is worth something only while the phase runs, and the next progress
 * event after a restart brings it back.
 */
export class EncoderSpeeds {
  private readonly byJob = new Map<string, Speed>();

  /** A progress event of `phase`: its fps, or none (the tool does not tell it, or not yet), which forgets the last one. */
  record(jobId: string, phase: Phase, fps: number | undefined, now: number): void {
    if (fps === undefined || !Number.isFinite(fps) || fps < 0) {
      this.byJob.delete(jobId);
      return;
    }
    if (this.byJob.size >= PRUNE_ABOVE) for (const [id, s] of this.byJob) if (now - s.at > SPEED_STALE_MS) this.byJob.delete(id);
    this.byJob.set(jobId, { phase, fps, at: now });
  }

  /** The job's encoder speed in `phase`, or null when none was told for that phase within SPEED_STALE_MS. */
  of(jobId: string, phase: Phase, now: number): number | null {
    const s = this.byJob.get(jobId);
    if (!s || s.phase !== phase) return null;
    if (now - s.at > SPEED_STALE_MS) {
      this.byJob.delete(jobId);
      return null;
    }
    return s.fps;
  }
}
