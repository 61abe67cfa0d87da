/**
 * Spaces calls to a web service: each acquire() resolves no sooner than `intervalMs` after the
 * previous one did (MusicBrainz allows one request per second and source address). Callers queue in
 * order. Clock and sleep are injectable, so tests check the spacing without waiting.
 */
export class RateLimiter {
  private next = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Waits for this caller's turn; resolves at the moment its request may go out. */
  acquire(): Promise<void> {
    const turn = this.queue.then(async () => {
      const wait = this.next - this.now();
      if (wait > 0) await this.sleep(wait);
      this.next = Math.max(this.now(), this.next) + this.intervalMs;
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }
}
