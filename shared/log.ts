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
      const line = `${entry.ts} ${level.toUpperCase()} [${this.source}]${jobId ? ` job=${jobId}` : ''} ${entry.message}\n`;
      (level === 'info' ? process.stdout : process.stderr).write(line);
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
