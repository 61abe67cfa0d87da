/** How often one topic may write a line about dropped messages. */
const WINDOW_MS = 60_000;
/** Topics tracked separately; beyond that (a flood of made-up topics) they share one entry. */
const MAX_KEYS = 500;

interface Entry {
  lastLine: number;
  suppressed: number;
}

/**
 * Logs dropped MQTT messages without letting a flood of them flood the log: at most one line per
 * topic per minute, the next line saying how many were dropped silently in between.
 */
export class DropLog {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly log: { warn(message: string): void },
    private readonly now: () => number = Date.now,
  ) {}

  /** Records one dropped message; writes a line unless this topic had one within the last minute. */
  drop(topic: string, reason: string): void {
    const key = this.entries.has(topic) || this.entries.size < MAX_KEYS ? topic : '(other topics)';
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry && now - entry.lastLine < WINDOW_MS) {
      entry.suppressed++;
      return;
    }
    const more = entry?.suppressed ? ` (and ${entry.suppressed} more dropped on this topic in the last minute)` : '';
    this.entries.set(key, { lastLine: now, suppressed: 0 });
    this.log.warn(`dropped a message on ${key.slice(0, 200)}: ${reason.replace(/[\r\n]+/g, ' ').slice(0, 300)}${more}`);
  }
}
