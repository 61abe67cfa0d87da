import { execFile } from 'node:child_process';
import { toolEnvironment } from '../../shared/process.js';

/**
 * Looks at a network mount only from child processes. On a dead server stat/open/readdir sleep in the
 * kernel (D state); in this process that would block libuv's thread pool or the event loop. A child
 * that hangs is killed, and because a child stuck in D state may never exit, our own timer decides
 * "unreachable" at the deadline and the child is unref'd and forgotten.
 */

export type ProbeResult =
  | { ok: true; fsType: string; totalBytes: number; freeBytes: number; ms: number }
  | { ok: false; reason: 'timeout' | 'error'; detail: string; ms: number };

export const PROBE_LIMIT_MS = 3000;
const WRITE_TEST_LIMIT_MS = 10_000;

function runLimited(bin: string, args: string[], limitMs: number): Promise<{ timedOut: true } | { timedOut: false; code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const child = execFile(bin, args, { timeout: limitMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024, env: toolEnvironment() }, (err, stdout, stderr) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const e = err as (Error & { code?: number | string; killed?: boolean }) | null;
      if (e?.killed) return resolve({ timedOut: true });
      resolve({ timedOut: false, code: e ? (typeof e.code === 'number' ? e.code : 127) : 0, stdout: String(stdout), stderr: e && !stderr ? e.message : String(stderr) });
    });
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      child.unref();
      resolve({ timedOut: true });
    }, limitMs + 200);
  });
}

/** stat -f on the mount point with a hard limit (3 s by default): type, size and free space, or why not. */
export async function probeMount(mountPoint: string, limitMs = PROBE_LIMIT_MS): Promise<ProbeResult> {
  const t0 = Date.now();
  const r = await runLimited('stat', ['-f', '-c', '%T %S %b %a', mountPoint], limitMs);
  const ms = Date.now() - t0;
  if (r.timedOut) return { ok: false, reason: 'timeout', detail: `no answer within ${Math.round(limitMs / 1000)} s`, ms };
  if (r.code !== 0) return { ok: false, reason: 'error', detail: r.stderr.trim() || `stat ended with exit code ${r.code}`, ms };
  const [fsType, bsize, blocks, bavail] = r.stdout.trim().split(' ');
  return { ok: true, fsType, totalBytes: Number(bsize) * Number(blocks), freeBytes: Number(bsize) * Number(bavail), ms };
}

/** Node code for the write-test child: exclusive create, write, fsync, read back, delete. */
const WRITE_TEST_SCRIPT = `
const fs = require('node:fs');
const path = require('node:path');
const file = path.join(process.argv[1], '.ripwerk-write-test-' + process.pid + '-' + Date.now());
const data = Buffer.from('ripwerk write test\\n');
let fd;
try {
  fd = fs.openSync(file, 'wx');
  fs.writeSync(fd, data);
  fs.fsyncSync(fd);
  fs.closeSync(fd); fd = undefined;
  if (!fs.readFileSync(file).equals(data)) { process.stderr.write('read back differs'); process.exit(3); }
  fs.unlinkSync(file);
} catch (e) {
  if (fd !== undefined) try { fs.closeSync(fd); } catch {}
  try { fs.unlinkSync(file); } catch {}
  process.stderr.write(String(e.code || e.message));
  process.exit(2);
}
`;

export type WriteTestResult = { writable: true } | { writable: false; reason: string };

/** Writes, syncs, reads back and deletes a small file on the mount, in a child with a hard limit. */
export async function writeTest(mountPoint: string, limitMs = WRITE_TEST_LIMIT_MS): Promise<WriteTestResult> {
  const r = await runLimited(process.execPath, ['-e', WRITE_TEST_SCRIPT, mountPoint], limitMs);
  if (r.timedOut) return { writable: false, reason: `writing a test file did not finish within ${Math.round(limitMs / 1000)} s` };
  if (r.code === 0) return { writable: true };
  const code = r.stderr.trim();
  if (code === 'EROFS') return { writable: false, reason: 'the share is read-only' };
  if (code === 'EACCES' || code === 'EPERM') return { writable: false, reason: 'the share does not let Ripwerk write (permission denied)' };
  if (code === 'ENOSPC' || code === 'EDQUOT') return { writable: false, reason: 'the share is full' };
  return { writable: false, reason: `writing a test file failed: ${code || `exit code ${r.code}`}` };
}
