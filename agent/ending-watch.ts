/** How long before its expected end an encoder run says so (transcode_ending). */
export const ENDING_WITHIN_MS = 10_000;

/**
 * Tells once that an encoder run is expected to end within `withinMs`, from its progress: the time it
 * has run so far times the share still to do over the share done (a steady rate). HandBrake's output
 * reaches the agent in 4 KB pieces, about eight seconds of progress each, so the estimate comes late
 * rather than early; a wrong one costs only a successor waiting a little longer for its slot.
 */
export class EndingWatch {
  private readonly startedAt: number;
  private told = false;

  constructor(
    private readonly onEnding: () => void,
    private readonly withinMs = ENDING_WITHIN_MS,
    private readonly clock: () => number = Date.now,
  ) {
    this.startedAt = clock();
  }

  /** The run's own percentage (0-100). */
  update(pct: number): void {
    if (this.told || !(pct > 0)) return;
    const remaining = pct >= 100 ? 0 : ((this.clock() - this.startedAt) * (100 - pct)) / pct;
    if (remaining > this.withinMs) return;
    this.told = true;
    this.onEnding();
  }
}
