/**
 * A fixed number of slots; work waits in order for a free one. Work holds its slot until it ends or
 * gives it back earlier (the `release` it is started with: a transcode once its encoder is done).
 */
export class SlotPool {
  private running = 0;
  private readonly waiting: { id: string; start: (release: () => void) => Promise<void> }[] = [];

  constructor(readonly size: number) {}

  get free(): number {
    return Math.max(0, this.size - this.running);
  }

  get busy(): number {
    return this.running;
  }

  /** Queues work; it starts when a slot is free. True when it started at once (a slot was free), false when it waits. */
  submit(id: string, start: (release: () => void) => Promise<void>): boolean {
    // The queue is pumped empty whenever a slot frees, so a free slot means nothing waits ahead of this work.
    const startsNow = this.running < this.size;
    this.waiting.push({ id, start });
    this.pump();
    return startsNow;
  }

  /**
   * Waits in order for a free slot, for work that prepares before it takes one (a transcode checks its
   * files, plans its output folder and scans its first file first). Resolves with the slot's release;
   * an abort while it waits withdraws it and rejects.
   */
  take(id: string, signal: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const onAbort = (): void => {
        if (this.withdraw(id)) reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.submit(id, (release) => new Promise<void>((done) => {
        signal.removeEventListener('abort', onAbort);
        resolve(() => {
          release();
          done();
        });
      }));
    });
  }

  /** Drops work that has not started yet; returns true when it was waiting. */
  withdraw(id: string): boolean {
    const i = this.waiting.findIndex((w) => w.id === id);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    return true;
  }

  private pump(): void {
    while (this.running < this.size && this.waiting.length > 0) {
      const next = this.waiting.shift() as { id: string; start: (release: () => void) => Promise<void> };
      this.running++;
      let held = true;
      const release = (): void => {
        if (!held) return;
        held = false;
        this.running--;
        this.pump();
      };
      // The work reports its own failures; a rejection (or a start that throws at once) must still
      // free the slot and must not surface as an unhandled rejection that ends the agent.
      let work: Promise<void>;
      try {
        work = next.start(release);
      } catch (err) {
        work = Promise.reject(err);
      }
      void work.catch(() => undefined).finally(release);
    }
  }
}
