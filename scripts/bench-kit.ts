/**
 * What every bench measure shares: the results it records, the temp folders to remove, percentiles,
 * RSS and CPU readings, and small API helpers. scripts/bench.ts runs the measures and prints the
 * table; a measure in its own file (scripts/bench-*.ts) imports from here.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { api, Proc, sleep, tempDir, world, type World } from '../test/e2e/harness.js';

// ------------------------------------------------------------------ results

/** The unit of a measure's figure and of its reference. */
export type FigureUnit = 'ms' | 'MB' | 'cores' | 'jobs';

/**
 * One measure: Ripwerk's figure, the bare reference measured in the same run and the same moments,
 * and the ratio of the two that the target bounds. On a shared host an absolute time says how busy
 * the host was; the ratio against what the bare tool (or a bare Node process) took in the same
 * moments says what Ripwerk adds. Counts that must be zero (jobs lost) have no reference.
 */
export interface Measure {
  key: string;
  name: string;
  /** Ripwerk's figure, in unit. */
  figure: number;
  /** The bare reference of the same run and moments, in unit; null for a count whose target is the count itself. */
  reference: number | null;
  /** What the reference is, a few words for the table ("bare server", "nginx"). */
  referenceName: string;
  unit: FigureUnit;
  /** What the target bounds: figure / reference, or a median of paired ratios where the detail says so; the count itself without a reference. */
  ratio: number;
  /** Upper bound: the measure passes when ratio <= target. */
  target: number;
  detail: string;
  samples?: Record<string, number[]>;
}

export const measures: Measure[] = [];
export const failures: { measure: string; error: string }[] = [];
export const cleanup: string[] = [];

export function sorted(values: number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Nearest-rank percentile. */
export function pct(values: number[], p: number): number {
  if (values.length === 0) throw new Error('no samples');
  const s = sorted(values);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export function median(values: number[]): number {
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export const ms = (v: number): string => `${v.toFixed(1)} ms`;
export const round = (v: number, digits = 2): number => Math.round(v * 10 ** digits) / 10 ** digits;

export function newWorld(): World {
  const w = world();
  cleanup.push(w.root);
  return w;
}

export function rssMb(pid: number | undefined): number {
  if (pid === undefined) throw new Error('process has no pid');
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  if (!line) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(line.replace(/\D+/g, '')) / 1024;
}

/**
 * Runs a command to its end with its output discarded; resolves with the wall time in ms. With
 * `pipeStdout` its stdout is read through a pipe and dropped, as Ripwerk reads a tool's progress,
 * so a bare run of a chatty tool pays for the pipe as the run inside Ripwerk does.
 */
export function timedRun(bin: string, args: string[], opts: { pipeStdout?: boolean } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(bin, args, { stdio: ['ignore', opts.pipeStdout ? 'pipe' : 'ignore', 'pipe'] });
    let err = '';
    child.stdout?.resume();
    child.stderr?.on('data', (c: Buffer) => {
      err = (err + c.toString('utf8')).slice(-4000);
    });
    child.once('error', reject);
    // 'close': after the exit and the end of its output, so a piped stdout is read to its end.
    child.once('close', (code, signal) => {
      const took = performance.now() - t0;
      if (code === 0) resolve(took);
      else reject(new Error(`${bin} ${args.join(' ')} ended with ${code ?? signal}: ${err.split('\n').slice(-5).join(' | ')}`));
    });
  });
}

export function expectStatus(reply: { status: number; text: string }, status: number, what: string): void {
  if (reply.status !== status) throw new Error(`${what}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`);
}

export async function logTimes(base: string, id: string): Promise<{ ts: number; message: string }[]> {
  const r = await api<{ logs: { ts: string; message: string }[] }>(base, 'GET', `/jobs/${id}/detail`);
  expectStatus(r, 200, `GET /jobs/${id}/detail`);
  return r.body.logs.map((l) => ({ ts: Date.parse(l.ts), message: l.message }));
}

export function logTime(logs: { ts: number; message: string }[], pattern: RegExp, id: string): number {
  const hit = logs.find((l) => pattern.test(l.message));
  if (!hit) throw new Error(`job ${id} has no log line matching ${pattern}: ${logs.map((l) => l.message).join(' | ')}`);
  return hit.ts;
}

/** Share of CPU time not idle over `windowMs`, all CPUs (from /proc/stat). */
export async function cpuBusy(windowMs: number): Promise<number> {
  const read = (): { idle: number; total: number } => {
    const f = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    return { idle: (f[3] ?? 0) + (f[4] ?? 0), total: f.slice(0, 8).reduce((x, y) => x + y, 0) };
  };
  const a = read();
  await sleep(windowMs);
  const b = read();
  return b.total > a.total ? 1 - (b.idle - a.idle) / (b.total - a.total) : 0;
}

/** Writes an executable script `name` into a fresh temp folder (removed after the run); returns both. */
export function benchScript(prefix: string, name: string, lines: (dir: string) => string[]): { file: string; dir: string } {
  const dir = tempDir(prefix);
  cleanup.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, [...lines(dir), ''].join('\n'), { mode: 0o755 });
  return { file, dir };
}

/**
 * Bash `case` branch of a makemkvcon wrapper that answers `info` from a recording: the stand-in
 * (`$fake`) runs once per argument list and its lines and exit code are replayed after that, so the
 * measure sees the start-up of a compiled tool, not of a Node stand-in. Stamps `info`/`info-end`.
 */
export function infoReplayBranch(cache: string): string[] {
  return [
    `  *" info "*) cache=${JSON.stringify(cache)}; echo "info $EPOCHREALTIME" >> "$stamps"`,
    '    if [[ -f "$cache.rc" && "$(<"$cache.args")" == "$*" ]]; then cat "$cache"; rc=$(<"$cache.rc")',
    '    else "$fake" "$@" > "$cache"; rc=$?; printf "%s" "$*" > "$cache.args"; echo "$rc" > "$cache.rc"; cat "$cache"; fi',
    '    echo "info-end $EPOCHREALTIME" >> "$stamps"; exit $rc ;;',
  ];
}

/** A plain Node server sending a fixed body: what HTTP alone costs for a body of that size. */
export async function bareHttpServer(bodyFile: string): Promise<{ url: string; proc: Proc }> {
  const code = `const b=require('fs').readFileSync(${JSON.stringify(bodyFile)});require('http').createServer((q,s)=>{s.setHeader('content-type','application/json; charset=utf-8');s.end(b)}).listen(0,'127.0.0.1',function(){console.log('port '+this.address().port)})`;
  const proc = new Proc('bare-http', spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const line = await proc.waitForLine(/^port \d+$/);
  return { url: `http://127.0.0.1:${line.split(' ')[1]}/`, proc };
}
