import type { Logger } from '../../shared/log.js';

/** Runs a timer's or handler's work so that no error in it can end the process: it is logged instead. */
export function guarded(log: Logger, what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    log.error(`${what} failed: ${(err as Error).message}`);
  }
}
