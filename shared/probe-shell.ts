import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { setNice, toolEnvironment } from './process.js';

/** Nice 19: the lowest CPU priority, and with it the lowest best-effort disk priority. */
const LOWEST_PRIORITY = 19;

/**
 * Long-lived bash processes that answer probe requests one after another, so the coordinator (its
 * raw-data probes) and an agent (its ffprobe scans) do not start a process per probe. Starting a child
 * holds Node's event loop until the child has been forked and has exec'd, and on a busy two-core host
 * that was 16 to 40 ms per start (up to 250 ms in the scale bench), paid by every API request or
 * encoder exit waiting behind it. A shell forks its find, du or ffprobe itself, outside Node.
 *
 * A request's fields are written NUL-terminated into the shell's request file, and its file
 * descriptor 3 gets the request's sequence number. The request file is a temporary file created for
 * the shell alone (mode 0600, O_EXCL) and unlinked at once: the shell has it open as its descriptor 4,
 * nothing of it stays on disk when the coordinator is killed, and no other process can open it by
 * name. The pool's loop around the script reads the fields at once with `mapfile -d ''` from
 * /dev/fd/4 (a new open file, read from the start), calls the script's function `answer` with them as
 * its arguments, and ends the answer with the line "end<TAB><sequence>". (bash reads a pipe one byte
 * per system call, since it must not read past a delimiter: a sweep's requests cost the shell 0.65 s
 * of CPU per 2,000 jobs that way, read from a file 0.08 s.) Not stdin: Node's pipes are socket pairs,
 * and bash takes a socket on stdin for a remote shell and runs the user's ~/.bashrc (even with
 * --norc); stdin is /dev/null.
 * A request that does not answer within its time limit (a hanging network mount) stops the shell's
 * whole process group and answers null; the next request starts a new shell.
 */
export interface ProbeShellOptions {
  /** The bash script: defines the function `answer`, called with a request's fields, which answers on stdout. */
  script: string;
  /** At most this many shells answer at once; further requests wait for one. */
  max: number;
  /** Nice 19 for the shells and everything they start (find and du inherit it). */
  lowPriority: boolean;
  /** A shell that had nothing to do this long ends (its request channel is closed). */
  idleMs: number;
}

/** The loop around the script: a request's number on descriptor 3, its fields from descriptor 4 to `answer`. */
const REQUEST_LOOP = [
  'while IFS= read -r -d "" -u 3 seq; do',
  // A request file that cannot be read gives no fields (an answer without lines), never the last request's.
  '  fields=(); mapfile -d "" -t fields < /dev/fd/4',
  '  answer "${fields[@]}"',
  '  printf "end\\t%s\\n" "$seq"',
  'done',
].join('\n');

interface Pending {
  fields: string[];
  timeoutMs: number;
  resolve: (answer: string | null) => void;
  signal?: AbortSignal;
}

/** One bash process; answers one request at a time. */
class Shell {
  private readonly child: ChildProcess;
  /** The request file (unlinked), open for reading and writing; the shell has it as its descriptor 4. */
  private readonly requestFd: number;
  private readonly requests: Writable;
  private readonly answers: Readable;
  private partial = '';
  private seq = 0;
  private current: { seq: number; lines: string[]; resolve: (answer: string | null) => void; timer: NodeJS.Timeout } | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private dead = false;
  /** Its stdin is closed after idling: it ends and takes no more requests. */
  private retiring = false;

  constructor(
    script: string,
    private readonly opts: ProbeShellOptions,
    private readonly onGone: (shell: Shell) => void,
  ) {
    // Its own process group, so a timed-out request stops the find or du it is waiting for too.
    // No BASH_ENV or ENV either: nothing of the service user's shell set-up runs in it; nor what is Ripwerk's own (toolEnvironment).
    const { BASH_ENV: _bashEnv, ENV: _env, ...env } = toolEnvironment();
    // "wx+": created here (a link or file of that name already there fails), then unlinked at once.
    const file = path.join(os.tmpdir(), `ripwerk-probe-${randomUUID()}`);
    this.requestFd = fs.openSync(file, 'wx+', 0o600);
    fs.unlinkSync(file);
    try {
      this.child = spawn('bash', ['-c', `${script}\n${REQUEST_LOOP}`, 'probe-shell'], { detached: true, stdio: ['ignore', 'pipe', 'ignore', 'pipe', this.requestFd], env });
    } catch (err) {
      fs.closeSync(this.requestFd);
      throw err;
    }
    this.requests = this.child.stdio[3] as Writable;
    this.answers = this.child.stdout as Readable;
    // The handles never keep the coordinator alive: a request in flight does that with its timer.
    this.child.unref();
    for (const s of [this.requests, this.answers] as unknown as { unref?: () => void }[]) s.unref?.();
    if (opts.lowPriority && this.child.pid !== undefined) setNice(this.child.pid, LOWEST_PRIORITY);
    this.answers.setEncoding('utf8');
    this.answers.on('data', (chunk: string) => this.onData(chunk));
    // A shell that died reports EPIPE on the request channel; 'close' below settles the request.
    this.requests.on('error', () => undefined);
    this.child.on('error', () => this.gone());
    this.child.on('close', () => this.gone());
    // A shell started ahead of its first request ends like any idle one if none comes.
    this.armIdle();
  }

  /** Ready for a request now. */
  get available(): boolean {
    return this.current === null && !this.dead && !this.retiring;
  }

  run(fields: string[], timeoutMs: number, resolve: (answer: string | null) => void, signal?: AbortSignal): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const seq = ++this.seq;
    const timer = setTimeout(() => this.stop(), timeoutMs);
    if (signal) {
      // An abort stops the request like its time limit does; the listener goes with the answer.
      const onAbort = (): void => this.stop();
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = resolve;
      resolve = (answer) => {
        signal.removeEventListener('abort', onAbort);
        settle(answer);
      };
    }
    this.current = { seq, lines: [], resolve, timer };
    // The shell answers one request at a time, and has read the last one's fields before answering it.
    const request = Buffer.from(fields.map((f) => `${f.replaceAll('\0', '')}\0`).join(''));
    try {
      fs.writeSync(this.requestFd, request, 0, request.length, 0);
      fs.ftruncateSync(this.requestFd, request.length);
    } catch {
      // A full temporary disk: this request answers null (unclear), as a shell that died does.
      this.stop();
      return;
    }
    this.requests.write(`${seq}\0`);
  }

  /** Stops the shell and everything it started; a request in flight answers null. */
  stop(): void {
    const pid = this.child.pid;
    if (!this.dead && pid !== undefined) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    this.gone();
  }

  private onData(chunk: string): void {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      const cur = this.current;
      if (!cur) continue;
      if (line === `end\t${cur.seq}`) this.finish(cur.lines.join('\n') + (cur.lines.length ? '\n' : ''));
      else cur.lines.push(line);
    }
  }

  private finish(answer: string | null): void {
    const cur = this.current;
    if (!cur) return;
    clearTimeout(cur.timer);
    this.current = null;
    this.armIdle();
    cur.resolve(answer);
  }

  private armIdle(): void {
    if (this.dead) return;
    this.idleTimer = setTimeout(() => {
      this.retiring = true;
      this.requests.end();
    }, this.opts.idleMs);
    this.idleTimer.unref();
  }

  private gone(): void {
    if (this.dead) return;
    this.dead = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    fs.closeSync(this.requestFd);
    this.finish(null);
    this.onGone(this);
  }
}

/** A few shells for one kind of probe, started when needed and ended when idle. */
export class ProbeShellPool {
  private readonly shells: Shell[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;

  constructor(private readonly opts: ProbeShellOptions) {}

  /**
   * The shell's answer (stdout without the end line), or null on a timeout, an abort (`signal`: a
   * request in flight stops its shell and all it started, a waiting one leaves the queue) or a shell
   * that died.
   */
  run(fields: string[], timeoutMs: number, signal?: AbortSignal): Promise<string | null> {
    if (this.closed || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const pending: Pending = { fields, timeoutMs, resolve, signal };
      if (signal) {
        const onAbort = (): void => {
          const i = this.queue.indexOf(pending);
          if (i >= 0) {
            this.queue.splice(i, 1);
            resolve(null);
          }
        };
        signal.addEventListener('abort', onAbort, { once: true });
        pending.resolve = (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        };
      }
      this.queue.push(pending);
      this.next();
    });
  }

  /**
   * Starts a shell ahead of the first request, when none runs. Starting one holds the event loop
   * (the fork copies the coordinator's page tables): at start-up no request waits for it, and the
   * process is small. Unused, it ends after idleMs like any idle shell.
   */
  warm(): void {
    if (!this.closed && this.shells.length === 0) this.spawnShell();
  }

  /** How many shells are running now (for tests and the health view). */
  get size(): number {
    return this.shells.length;
  }

  /** Stops every shell; waiting requests answer null. */
  close(): void {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.resolve(null);
    for (const s of [...this.shells]) s.stop();
  }

  private next(): void {
    while (this.queue.length > 0) {
      let shell = this.shells.find((s) => s.available);
      if (!shell && this.shells.length < this.opts.max) shell = this.spawnShell() ?? undefined;
      if (!shell) {
        // No shell could be started and none runs to take the queue later: the waiting requests answer null.
        if (this.shells.length === 0) for (const p of this.queue.splice(0)) p.resolve(null);
        return;
      }
      const p = this.queue.shift() as Pending;
      shell.run(
        p.fields,
        p.timeoutMs,
        (answer) => {
          p.resolve(answer);
          this.next();
        },
        p.signal,
      );
    }
  }

  /** A new shell, or null when its request file could not be made (no temporary directory, a full disk). */
  private spawnShell(): Shell | null {
    let shell: Shell;
    try {
      shell = new Shell(this.opts.script, this.opts, (gone) => this.forget(gone));
    } catch {
      return null;
    }
    this.shells.push(shell);
    return shell;
  }

  private forget(shell: Shell): void {
    const i = this.shells.indexOf(shell);
    if (i >= 0) this.shells.splice(i, 1);
    if (!this.closed) this.next();
  }
}
