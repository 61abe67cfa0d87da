import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import type { Readable } from 'node:stream';

/** Grace period between SIGTERM and SIGKILL when a tool's process group is stopped. */
export const KILL_GRACE_MS = 3000;

/** How much of stderr a run keeps (the tail) for failure reasons. */
const STDERR_KEEP_CHARS = 256 * 1024;

/** A tool run that failed; `message` is the plain reason shown to the household. */
export class ToolError extends Error {
  readonly tool: string;
  readonly exitCode?: number;
  readonly reason: string;
  readonly canceled: boolean;
  readonly timedOut: boolean;

  constructor(tool: string, reason: string, opts: { exitCode?: number; canceled?: boolean; timedOut?: boolean; cause?: unknown } = {}) {
    super(reason, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ToolError';
    this.tool = tool;
    this.reason = reason;
    if (opts.exitCode !== undefined) this.exitCode = opts.exitCode;
    this.canceled = opts.canceled ?? false;
    this.timedOut = opts.timedOut ?? false;
  }
}

export interface RunToolOptions {
  signal?: AbortSignal;
  onStdoutLine?: (line: string) => void;
  onStderrLine?: (line: string) => void;
  onSpawn?: (pid: number) => void;
  timeoutMs?: number;
  cwd?: string;
  env?: Record<string, string>;
  /** Keep the whole stdout text in the result (for short outputs such as scans). */
  captureStdout?: boolean;
  /**
   * Run the tool at this nice value (1-19; 0 or none: the service's own), for work that must leave
   * the cores to the API and to the household's other services on the host. Processes the tool starts
   * inherit it, and so does its disk priority (Linux derives a best-effort I/O priority from it).
   */
  nice?: number;
  /**
   * Start the tool only once this resolves (its slot is free), but have it forked now: spawn() copies
   * the page tables of the whole service, 6-15 ms on a small host and more under load, and that is
   * paid while the slot is still busy. The process waits as a small shell reading one line from its
   * stdin, which then execs the tool in place (same pid, process group, pipes and nice value). A
   * rejection stops the waiting shell and is thrown; an abort meanwhile ends it as canceled.
   */
  startWhen?: Promise<unknown>;
}

/**
 * The waiting shell of `startWhen`: $0 is the tool, "$@" its arguments (never parsed by the shell).
 * Without its line (the service is gone, stdin at its end) it exits without starting the tool.
 */
const START_ON_LINE = 'read -r _ || exit 125; exec "$0" "$@" </dev/null';

/** Whether `bin` (a path, or a name looked up on PATH) names an executable file. */
function executable(bin: string, searchPath: string | undefined): boolean {
  const candidates = bin.includes('/') ? [bin] : (searchPath ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, bin));
  return candidates.some((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

export interface ToolResult {
  /** null when the process was ended by a signal. */
  exitCode: number | null;
  signal: string | null;
  /** Whole stdout when captureStdout was set, else "". */
  stdout: string;
  /** The tail of stderr. */
  stderr: string;
}

function toolName(bin: string): string {
  return path.basename(bin);
}

export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a whole process group (the tool and everything it started): SIGTERM now, SIGKILL after
 * KILL_GRACE_MS if anything of the group is still there. Safe to call for a group that is gone.
 * Resolves once the group is gone or SIGKILL was sent.
 */
export async function killProcessGroup(pid: number, graceMs: number = KILL_GRACE_MS): Promise<void> {
  // Windows has no process groups or SIGTERM (the native worker): taskkill ends the tool and its children.
  if (process.platform === 'win32') {
    await new Promise<void>((resolve) => execFile('taskkill', ['/PID', String(pid), '/T', '/F'], { windowsHide: true }, () => resolve()));
    return;
  }
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (!groupAlive(pid)) return;
  }
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    return;
  }
}

/**
 * Sets a started process to a nice value. spawn() returns once the process is executing, before it
 * has done much, so what it starts later (find, du, HandBrake's own threads) gets it as well. A
 * process already gone, or a platform that refuses, runs at normal priority: the priority is a
 * courtesy, never a reason to fail.
 */
export function setNice(pid: number, nice: number): void {
  try {
    os.setPriority(pid, nice);
  } catch {
    // ESRCH (ended already) or EACCES: nothing to do.
  }
}

function readLines(stream: Readable | null, onLine: (line: string) => void): Promise<void> {
  if (!stream) return Promise.resolve();
  stream.setEncoding('utf8');
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  rl.on('line', onLine);
  return once(rl, 'close').then(() => undefined);
}

class TailBuffer {
  private text = '';
  constructor(private readonly keep: number) {}

  add(line: string): void {
    this.text += `${line}\n`;
    if (this.text.length > this.keep * 2) this.text = this.text.slice(-this.keep);
  }

  toString(): string {
    return this.text.length > this.keep ? this.text.slice(-this.keep) : this.text;
  }
}

/**
 * What Ripwerk's own process has in its environment that no tool it starts may get: glibc's malloc
 * settings the services give Node (systemd units, scripts/start.sh), which made HandBrakeCLI take 1.7
 * times as long on a DVD title (13.3 against 7.6 s, same arguments, measured 2026-11-27), and the
 * broker credentials.
 */
const NOT_FOR_TOOLS = ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'RIPWERK_BROKER_SECRET', 'MQTT_PASSWORD'];

/** The environment a tool is started with: this process's, without what is Ripwerk's own (NOT_FOR_TOOLS). */
export function toolEnvironment(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const name of NOT_FOR_TOOLS) delete env[name];
  return env;
}

/**
 * Runs one external tool with an argv array (never parsed by a shell) as the leader of its own process group.
 * Lines of stdout/stderr go to the callbacks as they arrive (invalid UTF-8 becomes U+FFFD). Any exit
 * code resolves: the runners judge success from the tool's own output. Throws a ToolError when the
 * binary is missing, when `signal` aborts (reason "canceled") or when `timeoutMs` passes; in both of
 * the last cases the whole process group is stopped first.
 */
export async function runTool(bin: string, args: string[], opts: RunToolOptions = {}): Promise<ToolResult> {
  const tool = toolName(bin);
  // A gate that fails while this throws for another reason (an abort, no such tool) is no unhandled rejection.
  opts.startWhen?.catch(() => undefined);
  if (opts.signal?.aborted) throw new ToolError(tool, 'canceled', { canceled: true });

  const env = { ...toolEnvironment(), ...opts.env };
  // Forked ahead only where there is a POSIX shell; elsewhere the tool starts once the gate opens.
  const ahead = opts.startWhen !== undefined && process.platform !== 'win32';
  if (opts.startWhen && !ahead) {
    await opts.startWhen;
    if (opts.signal?.aborted) throw new ToolError(tool, 'canceled', { canceled: true });
  }
  if (ahead && !executable(bin, env.PATH)) throw new ToolError(tool, `${tool} is not installed (looked for ${bin})`);
  // A plain spawn: execa, used here before, added nothing this needs and kept about 13 MB in every
  // process after its first tool run. windowsHide: no console window per tool on a Windows worker.
  const child = spawn(ahead ? '/bin/sh' : bin, ahead ? ['-c', START_ON_LINE, bin, ...args] : args, {
    detached: true,
    stdio: [ahead ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    cwd: opts.cwd,
    env,
    windowsHide: true,
  });
  const ended = new Promise<{ exitCode: number | null; signal: string | null; error?: NodeJS.ErrnoException }>((resolve) => {
    // A binary that cannot be started reports 'error' (and may not report 'close').
    child.on('error', (error: NodeJS.ErrnoException) => resolve({ exitCode: null, signal: null, error }));
    child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
  });

  let stopping: 'canceled' | 'timeout' | null = null;
  let killing: Promise<void> = Promise.resolve();
  const stop = (why: 'canceled' | 'timeout'): void => {
    if (stopping || child.pid === undefined) return;
    stopping = why;
    killing = killProcessGroup(child.pid);
  };
  const onAbort = (): void => stop('canceled');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (child.pid !== undefined && opts.nice) setNice(child.pid, opts.nice);

  let stdout = '';
  const stderr = new TailBuffer(STDERR_KEEP_CHARS);
  const reading = Promise.all([
    readLines(child.stdout, (line) => {
      if (opts.captureStdout) stdout += `${line}\n`;
      opts.onStdoutLine?.(line);
    }),
    readLines(child.stderr, (line) => {
      stderr.add(line);
      opts.onStderrLine?.(line);
    }),
  ]);

  let timer: NodeJS.Timeout | undefined;
  try {
    if (ahead) {
      // The waiting shell may end before its line (stopped from outside): no write error then.
      child.stdin?.on('error', () => undefined);
      const gate = await Promise.race([
        (opts.startWhen as Promise<unknown>).then(
          () => ({ open: true as const }),
          (error: unknown) => ({ open: false as const, error }),
        ),
        ended.then(() => ({ open: false as const, error: undefined })),
      ]);
      if (!gate.open) {
        stop('canceled');
        await ended;
        await killing;
        if (opts.signal?.aborted) throw new ToolError(tool, 'canceled', { canceled: true });
        throw gate.error ?? new ToolError(tool, `${tool} ended before it was started`);
      }
      child.stdin?.end('go\n');
    }
    timer = opts.timeoutMs ? setTimeout(() => stop('timeout'), opts.timeoutMs) : undefined;
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    const result = await ended;
    if (result.error) {
      if (result.error.code === 'ENOENT') throw new ToolError(tool, `${tool} is not installed (looked for ${bin})`, { cause: result.error });
      throw new ToolError(tool, `${tool} could not be started: ${result.error.message}`, { cause: result.error });
    }
    await reading;
    await killing;
    if (stopping === 'canceled') throw new ToolError(tool, 'canceled', { canceled: true });
    if (stopping === 'timeout') {
      throw new ToolError(tool, `${tool} did not finish within ${Math.round((opts.timeoutMs ?? 0) / 1000)} s and was stopped`, { timedOut: true });
    }
    return { exitCode: result.exitCode ?? null, signal: result.signal ?? null, stdout, stderr: stderr.toString() };
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/** A plain description of how a process ended, for failure reasons. */
export function describeExit(result: Pick<ToolResult, 'exitCode' | 'signal'>): string {
  if (result.exitCode !== null) return `exit code ${result.exitCode}`;
  return `stopped by signal ${result.signal ?? 'unknown'}`;
}
