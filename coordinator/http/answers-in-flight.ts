import type { ServerResponse } from 'node:http';

/**
 * The big answers being sent (GET /jobs: 8 MB for 10,000 jobs), so background work can wait for them.
 * Such an answer goes out in many socket writes, each when the client has read the one before, and a
 * millisecond of the raw-data sweep's storing between two of them holds the answer that long.
 * Waiting costs the sweep nothing it has to keep: it is background work with 30 s between runs.
 */
export class AnswersInFlight {
  private sending = 0;
  private waiters: (() => void)[] = [];

  /** Counts `res` until it has been handed to the socket in full, or its connection is gone. */
  track(res: ServerResponse): void {
    this.sending++;
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      if (--this.sending === 0) this.wake();
    };
    res.once('finish', end);
    res.once('close', end);
  }

  /** How many answers are being sent now. */
  get count(): number {
    return this.sending;
  }

  /**
   * Resolves once no tracked answer is being sent, or after `maxWaitMs` at the latest: a client that
   * reads slowly (a phone on a weak signal) or a stream of requests never holds the waiter for longer.
   */
  idle(maxWaitMs: number): Promise<void> {
    if (this.sending === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        const i = this.waiters.indexOf(done);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve();
      };
      const timer = setTimeout(done, maxWaitMs);
      this.waiters.push(done);
    });
  }

  private wake(): void {
    for (const done of this.waiters.splice(0)) done();
  }
}
