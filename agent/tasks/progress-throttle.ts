/**
 * Passes progress on at most once every `minMs` (the first value at once; a value arriving inside the
 * interval is held, sent with the first update after it, and by flush at the end). The bound is in
 * time, not in points: a task sends about one progress message a second however fast its tool runs,
 * so the coordinator's load grows with the number of running tasks, not with their speed (a short
 * encode printing 1 % steps used to send a hundred messages in a few seconds). The encoder's speed
 * (fps), where the tool tells it, rides along with the percent it came with.
 */
export class ProgressThrottle {
  private lastSent = -1;
  private lastAt = 0;
  private pending: number | null = null;
  private fps: number | undefined;

  constructor(
    private readonly send: (pct: number, fps?: number) => void,
    private readonly minMs = 1000,
    private readonly clock: () => number = Date.now,
  ) {}

  update(pct: number, fps?: number): void {
    if (fps !== undefined) this.fps = fps;
    const value = Math.max(0, Math.min(100, pct));
    const now = this.clock();
    if (this.lastSent < 0 || now - this.lastAt >= this.minMs) {
      if (value !== this.lastSent) this.emit(value, now);
      else this.pending = null;
    } else {
      this.pending = value;
    }
  }

  flush(): void {
    if (this.pending !== null && this.pending !== this.lastSent) this.emit(this.pending, this.clock());
    this.pending = null;
  }

  private emit(value: number, now: number): void {
    this.lastSent = value;
    this.lastAt = now;
    this.pending = null;
    if (this.fps === undefined) this.send(Math.round(value * 100) / 100);
    else this.send(Math.round(value * 100) / 100, Math.round(this.fps * 10) / 10);
  }
}
