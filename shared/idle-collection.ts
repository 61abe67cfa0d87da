import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * One full garbage collection now. V8 gives the heap it grew during a burst of work back on its own
 * only when it grew by at least 10 MB since its memory reducer last ran (src/heap/memory-reducer.cc):
 * an agent's heap that grew by 7 MB over a thousand jobs kept them, half-empty pages, for good. A
 * full collection compacts and frees them. The function is V8's own (`--expose-gc`), taken from a
 * context made once after setting the flag, so no start command needs the flag. False where it is
 * not to be had.
 */
export function collectFully(): boolean {
  collector ??= exposedGc();
  if (!collector) return false;
  collector();
  return true;
}

let collector: (() => void) | null | undefined;

function exposedGc(): (() => void) | null {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as () => void;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

/** How long a process is idle after its last piece of work before the collection. */
export const IDLE_COLLECTION_MS = 30_000;

/**
 * After work, once the process has been idle for `quietMs`, one full collection gives back what the
 * work left (collectFully). `workEnded()` is told each end of a piece of work; the collection runs
 * when the last of them is `quietMs` ago and `isIdle()` says nothing runs, and only once per quiet spell.
 */
export class IdleCollection {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly quietMs: number,
    private readonly isIdle: () => boolean,
    private readonly collect: () => unknown = collectFully,
  ) {}

  workEnded(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.isIdle()) this.collect();
    }, this.quietMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
