/** One line per event, with the job id or drive name in it. Secrets never reach a line: see redact(). */
export type LogLevel = 'info' | 'warn' | 'error';

export interface LogEntry {
  ts: string;
  level: LogLevel;
  source: string;
  message: string;
  job_id?: string;
}

export type LogSink = (entry: LogEntry) => void;

const SECRET_PATTERNS: RegExp[] = [
  /(api_key|apikey|token|password|passwd|secret|key)=([^&\s]+)/gi,
  /(Authorization:\s*Bearer\s+)(\S+)/gi,
  /(\/\/[^:/\s]+:)([^@/\s]+)(@)/g,
];

export function redact(text: string): string {
  let out = text;
  out = out.replace(SECRET_PATTERNS[0], (_m, k: string) => `${k}=***`);
  out = out.replace(SECRET_PATTERNS[1], (_m, p: string) => `${p}***`);
  out = out.replace(SECRET_PATTERNS[2], (_m, a: string, _b: string, c: string) => `${a}***${c}`);
  return out;
}

/**
 * The printed lines of one tick go out in one write. A write to a pipe or a socket (systemd's
 * journal, the test harness) is synchronous on Linux: a write per line was a system call each on the
 * event loop, and on a busy host the process lost the CPU in it to the reader it woke (2 s of the
 * coordinator's 75 busy seconds in a profiled scale run). Info lines go to stdout, warnings and
 * errors to stderr, in the order they were logged: switching streams writes what the other one holds
 * first. Lines still held when the process exits are written then; a SIGKILL loses at most its last
 * tick's lines.
 */
class LineOutput {
  private held = '';
  private heldForErr = false;
  private scheduled = false;

  constructor() {
    process.once('exit', () => this.flush());
  }

  push(toErr: boolean, line: string): void {
    if (this.held && toErr !== this.heldForErr) this.flush();
    this.held += line;
    this.heldForErr = toErr;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  flush(): void {
    if (!this.held) return;
    const text = this.held;
    this.held = '';
    (this.heldForErr ? process.stderr : process.stdout).write(text);
  }
}

const lineOutput = new LineOutput();

export class Logger {
  private sinks: LogSink[] = [];
  constructor(private readonly source: string, private readonly quiet = false) {}

  addSink(sink: LogSink): void {
    this.sinks.push(sink);
  }

  child(source: string): Logger {
    const child = new Logger(source, this.quiet);
    child.sinks = this.sinks;
    return child;
  }

  info(message: string, jobId?: string): void {
    this.write('info', message, jobId);
  }
  warn(message: string, jobId?: string): void {
    this.write('warn', message, jobId);
  }
  error(message: string, jobId?: string): void {
    this.write('error', message, jobId);
  }

  private write(level: LogLevel, message: string, jobId?: string): void {
    const entry: LogEntry = { ts: new Date().toISOString(), level, source: this.source, message: redact(message).replace(/[\r\n]+/g, ' ') };
    if (jobId) entry.job_id = jobId;
    if (!this.quiet) {
      lineOutput.push(level !== 'info', `${entry.ts} ${level.toUpperCase()} [${this.source}]${jobId ? ` job=${jobId}` : ''} ${entry.message}\n`);
    }
    for (const sink of this.sinks) {
      try {
        sink(entry);
      } catch (err) {
        // A sink that cannot write (a full disk under the log table) must never take the process down.
        reportSinkFailure(err);
      }
    }
  }
}

let lastSinkFailure = 0;

/** Notes a failing log sink on stderr, at most once a minute. */
function reportSinkFailure(err: unknown): void {
  const now = Date.now();
  if (now - lastSinkFailure < 60_000) return;
  lastSinkFailure = now;
  process.stderr.write(`${new Date(now).toISOString()} ERROR [log] a log sink failed (${(err as Error).message}); lines are printed but not stored\n`);
}
