/**
 * Passes progress on at most every `minMs` or when it moved by `minStep` points, so a tool printing
 * hundreds of updates a second does not flood the outbox. Values below 1 % are passed on as they are.
 */
export class ProgressThrottle {
  private lastSent = -1;
  private lastAt = 0;
  private pending: number | null = null;

  constructor(
    private readonly send: (pct: number) => void,
    private readonly minMs = 1000,
    private readonly minStep = 1,
    private readonly clock: () => number = Date.now,
  ) {}

  update(pct: number): void {
    const value = Math.max(0, Math.min(100, pct));
    const now = this.clock();
    if (this.lastSent < 0 || value - this.lastSent >= this.minStep || now - this.lastAt >= this.minMs) {
      this.emit(value, now);
    } else {
      this.pending = value;
    }
  }

  flush(): void {
    if (this.pending !== null && this.pending !== this.lastSent) this.emit(this.pending, this.clock());
  }

  private emit(value: number, now: number): void {
    this.lastSent = value;
    this.lastAt = now;
    this.pending = null;
    this.send(Math.round(value * 100) / 100);
  }
}
