/**
 * What a connection may cost the broker before it has logged in, and how refused logins are logged.
 * Before authentication nobody is known: a flood of CONNECTs must cost a counter, not a log row, a
 * database write or megabytes of half-read packets each.
 */

/** Connections not yet logged in from one address (an IPv6 address counts by its /64 network). */
export const PRELOGIN_CONNECTIONS_PER_ADDRESS = 32;
/** Connections not yet logged in, from all addresses together. */
export const PRELOGIN_CONNECTIONS_TOTAL = 1024;
/** Bytes read from the connections of one address before they logged in (four CONNECTs of the largest size). */
export const PRELOGIN_BYTES_PER_ADDRESS = 256 * 1024;
/** Bytes read from all connections before they logged in. */
export const PRELOGIN_BYTES_TOTAL = 8 * 1024 * 1024;
/** A connection that has not logged in (CONNECT sent and accepted) this long after it opened is cut. */
export const CONNECT_TIMEOUT_MS = 10_000;
/**
 * Password checks (scrypt, ~50 ms and 16 MiB each, on libuv's thread pool of 4 that file access shares)
 * running at once: a flood of logins with a real user name and wrong passwords keeps two threads busy
 * at most, never the whole pool.
 */
export const PASSWORD_CHECKS_AT_ONCE = 2;
/** Logins of one address waiting for a password check; more are refused at once (CONNACK 3, server unavailable) and the client tries again. */
export const PASSWORD_CHECKS_WAITING_PER_ADDRESS = 8;
/** Logins waiting for a password check, from all addresses together. */
export const PASSWORD_CHECKS_WAITING_TOTAL = 256;
/** Refused logins and cuts before login are summed up per address over this window: one line at the first, one summary at the end. */
export const REFUSAL_SUMMARY_MS = 60_000;
/** Addresses summed up separately; beyond that (a flood from many addresses) they share one entry. */
const MAX_SUMMARY_KEYS = 1000;

export interface PreLoginLimits {
  connectionsPerAddress: number;
  connectionsTotal: number;
  bytesPerAddress: number;
  bytesTotal: number;
  connectTimeoutMs: number;
  summaryWindowMs: number;
  passwordChecksAtOnce: number;
  passwordChecksWaitingPerAddress: number;
  passwordChecksWaitingTotal: number;
}

export const PRELOGIN_LIMITS: PreLoginLimits = {
  connectionsPerAddress: PRELOGIN_CONNECTIONS_PER_ADDRESS,
  connectionsTotal: PRELOGIN_CONNECTIONS_TOTAL,
  bytesPerAddress: PRELOGIN_BYTES_PER_ADDRESS,
  bytesTotal: PRELOGIN_BYTES_TOTAL,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  summaryWindowMs: REFUSAL_SUMMARY_MS,
  passwordChecksAtOnce: PASSWORD_CHECKS_AT_ONCE,
  passwordChecksWaitingPerAddress: PASSWORD_CHECKS_WAITING_PER_ADDRESS,
  passwordChecksWaitingTotal: PASSWORD_CHECKS_WAITING_TOTAL,
};

/** Password checks one after another, a few at once, with a bounded wait per address and in total. */
export class PasswordChecks {
  private running = 0;
  private readonly queue: { key: string; start: () => void }[] = [];
  private readonly waitingBy = new Map<string, number>();

  constructor(private readonly limits: Pick<PreLoginLimits, 'passwordChecksAtOnce' | 'passwordChecksWaitingPerAddress' | 'passwordChecksWaitingTotal'>) {}

  /** Runs `check` when a slot is free; null (and `check` never runs) when too many wait already. */
  run<T>(address: string, check: () => Promise<T>): Promise<T> | null {
    const key = addressKey(address);
    const waiting = this.waitingBy.get(key) ?? 0;
    if (this.running >= this.limits.passwordChecksAtOnce && (waiting >= this.limits.passwordChecksWaitingPerAddress || this.queue.length >= this.limits.passwordChecksWaitingTotal)) return null;
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        this.running++;
        check()
          .then(resolve, reject)
          .finally(() => {
            this.running--;
            const next = this.queue.shift();
            if (!next) return;
            const left = (this.waitingBy.get(next.key) ?? 1) - 1;
            if (left > 0) this.waitingBy.set(next.key, left);
            else this.waitingBy.delete(next.key);
            next.start();
          });
      };
      if (this.running < this.limits.passwordChecksAtOnce) return start();
      this.waitingBy.set(key, waiting + 1);
      this.queue.push({ key, start });
    });
  }
}

/** Why a connection was cut before it logged in (the keys of the counters in GET /metrics). */
export type CutReason = 'connectionsPerAddress' | 'connectionsTotal' | 'bytesPerAddress' | 'bytesTotal' | 'timeout';

/** 2001:db8:1:2:… → 2001:db8:1:2::/64; an IPv4 address (or anything else) stays as it is. */
export function addressKey(address: string): string {
  if (!address.includes(':')) return address;
  const [head, tail] = address.split('%')[0]!.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => (g || '0').toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** One connection's claim on the pre-login budget, given back when it logs in or closes. */
export interface PreLoginTicket {
  /** Counts bytes read before login; the reason when they pass a limit (the connection is then cut). */
  read(bytes: number): CutReason | null;
  release(): void;
}

/** The budget of connections and bytes before login, per address and in total. */
export class PreLoginBudget {
  private readonly perAddress = new Map<string, { connections: number; bytes: number }>();
  private connections = 0;
  private bytes = 0;

  constructor(private readonly limits: PreLoginLimits) {}

  /** A ticket for a new connection from `address`, or why it is refused. */
  admit(address: string): PreLoginTicket | CutReason {
    const key = addressKey(address);
    const entry = this.perAddress.get(key) ?? { connections: 0, bytes: 0 };
    if (entry.connections >= this.limits.connectionsPerAddress) return 'connectionsPerAddress';
    if (this.connections >= this.limits.connectionsTotal) return 'connectionsTotal';
    entry.connections++;
    this.connections++;
    this.perAddress.set(key, entry);
    let held = 0;
    let released = false;
    return {
      read: (n) => {
        if (released) return null;
        held += n;
        entry.bytes += n;
        this.bytes += n;
        if (entry.bytes > this.limits.bytesPerAddress) return 'bytesPerAddress';
        if (this.bytes > this.limits.bytesTotal) return 'bytesTotal';
        return null;
      },
      release: () => {
        if (released) return;
        released = true;
        entry.connections--;
        entry.bytes -= held;
        this.connections--;
        this.bytes -= held;
        if (entry.connections === 0) this.perAddress.delete(key);
      },
    };
  }

  /** Connections and bytes held now (for tests and the log). */
  held(): { connections: number; bytes: number } {
    return { connections: this.connections, bytes: this.bytes };
  }
}

interface SummaryEntry {
  started: number;
  more: number;
  reasons: Map<string, number>;
}

/**
 * Refusals before login, logged without letting a flood write a row each: per address and category
 * (login, cut) the first one in a window is a line with its details, the others are counted, and the
 * window's end writes one summary line with the count by reason. The log rows a flood costs are two
 * per address and minute, whatever its rate.
 */
export class RefusalLog {
  private readonly entries = new Map<string, SummaryEntry>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: { warn(message: string): void },
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records one refusal from `address`. `what` names the category in the summary ("logins refused",
   * "connections cut before login"); `firstLine` is written when this is the first of its window.
   */
  note(address: string, what: string, reason: string, firstLine: () => string): void {
    const now = this.now();
    const wanted = `${what}\u0000${address}`;
    const key = this.entries.has(wanted) || this.entries.size < MAX_SUMMARY_KEYS ? wanted : `${what}\u0000(other addresses)`;
    const entry = this.entries.get(key);
    if (entry && now - entry.started < this.windowMs) {
      entry.more++;
      entry.reasons.set(reason, (entry.reasons.get(reason) ?? 0) + 1);
      return;
    }
    if (entry) this.summarise(key, entry);
    this.entries.set(key, { started: now, more: 0, reasons: new Map() });
    this.log.warn(firstLine());
    this.schedule();
  }

  /** Writes the summaries of the windows that have ended. */
  flush(all = false): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (!all && now - entry.started < this.windowMs) continue;
      this.summarise(key, entry);
      this.entries.delete(key);
    }
    if (this.entries.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  close(): void {
    this.flush(true);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), Math.max(10, Math.min(this.windowMs, 5000)));
    this.timer.unref();
  }

  private summarise(key: string, entry: SummaryEntry): void {
    if (entry.more === 0) return;
    const [what, address] = key.split('\u0000') as [string, string];
    const reasons = [...entry.reasons].map(([r, n]) => `${r}: ${n}`).join(', ');
    this.log.warn(`MQTT ${what} from ${address} in the last minute: ${entry.more} more (${reasons})`);
  }
}
