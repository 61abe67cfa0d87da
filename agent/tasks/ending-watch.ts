/** How long before its expected end an encoder run says so (transcode_ending). */
export const ENDING_WITHIN_MS = 10_000;

/**
 * Lines that arrive this close together came in one piece of output: the tool's stdio writes into
 * the pipe in 4 KB pieces (HandBrake's --json blocks are 348 bytes, written every 200 ms: a piece is
 * about 2.4 s of progress), and the agent reads a whole piece at once.
 */
const ONE_PIECE_MS = 250;

/**
 * Tells once that an encoder run is expected to end within `withinMs`, from its progress. Once two
 * pieces of output have arrived, the rate is the one between them (the last percentage of the first
 * piece and the current one): what the run did before its first progress (starting up, HandBrake's
 * own scan of the source, waiting for a disk) does not count as encoding. Before that, the time since
 * the start over the share done: slower than the real rate, so that estimate comes late rather than
 * early; a wrong one costs only a successor waiting a little longer for its slot.
 */
export class EndingWatch {
  private readonly startedAt: number;
  /** The first piece of progress: when it arrived and the last percentage in it. */
  private first: { at: number; pct: number } | null = null;
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
    const now = this.clock();
    if (!this.first || now - this.first.at < ONE_PIECE_MS) this.first = { at: this.first?.at ?? now, pct };
    const { first } = this;
    let remaining: number;
    if (pct >= 100) remaining = 0;
    else if (now - first.at >= ONE_PIECE_MS && pct > first.pct) remaining = ((now - first.at) * (100 - pct)) / (pct - first.pct);
    else remaining = ((now - this.startedAt) * (100 - pct)) / pct;
    if (remaining > this.withinMs) return;
    this.told = true;
    this.onEnding();
  }
}
