/**
 * Gives memory back once a burst of work is over. A process that has just run a thousand jobs keeps
 * what the burst grew (SQLite's page cache, V8's old space pages); none of it is needed while it
 * waits. This watches a cheap activity counter and, once the counter has moved by at least
 * `burstChanges` since the last release and then stood (nearly) still for `quietMs`, calls
 * `release` once. Steady trickles (a worker's status beacon) are no burst: they reach `burstChanges`
 * only slowly, so the release runs at most once per that much work.
 */

export interface IdleReleaseOptions {
  /** A number that grows with work, e.g. SQLite's total_changes(). Read once per check. */
  activity: () => number;
  /** Gives memory back; runs on the check's tick, never in the middle of a request. */
  release: () => void;
  /** Work (activity counted) since the last release that makes a release worth it. */
  burstChanges: number;
  /** A check whose activity moved by at most this much counts as quiet. */
  quietChanges: number;
  /** How long the checks must be quiet before the release. */
  quietMs: number;
  /** How often to check. */
  checkMs: number;
  clock?: () => number;
}

export class IdleRelease {
  private readonly clock: () => number;
  private last: number;
  /** When the previous check ran: a quiet check means quiet since then. */
  private lastCheck: number;
  /** Activity counted since the last release. */
  private work = 0;
  /** When the checks went quiet (null: the last check saw work). */
  private quietSince: number | null;
  private timer: NodeJS.Timeout | null = null;
  /** How many releases ran (for tests and the log). */
  releases = 0;

  constructor(private readonly opts: IdleReleaseOptions) {
    this.clock = opts.clock ?? Date.now;
    this.last = opts.activity();
    this.lastCheck = this.clock();
    this.quietSince = this.lastCheck;
  }

  /** One check; returns true when it released. */
  check(): boolean {
    const now = this.clock();
    const current = this.opts.activity();
    const moved = current - this.last;
    const since = this.lastCheck;
    this.last = current;
    this.lastCheck = now;
    this.work += Math.max(0, moved);
    if (moved > this.opts.quietChanges) {
      this.quietSince = null;
      return false;
    }
    this.quietSince ??= since;
    if (this.work < this.opts.burstChanges || now - this.quietSince < this.opts.quietMs) return false;
    this.work = 0;
    this.releases++;
    this.opts.release();
    return true;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.check(), this.opts.checkMs);
    // The check alone must never keep the process alive.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
