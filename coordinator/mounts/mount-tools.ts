import fs from 'node:fs/promises';
import { runTool, ToolError } from '../../shared/process.js';
import { layersAt, parseMountinfo, type MountLayer } from './mountinfo.js';

/**
 * The mount(8) and umount(8) runs. Both are called by name, so PATH decides which binary runs (the
 * tests put a stand-in first). A mount that hangs is stopped after MOUNT_LIMIT_MS.
 */

const MOUNT_LIMIT_MS = 30_000;
/** More layers than this on one mount point means something else keeps mounting there. */
const MAX_LAYERS = 32;

export type MountRun = { ok: true } | { ok: false; stderr: string; timedOut: boolean };

/** Never rejects: a run that hangs, is missing or fails comes back as data. */
async function bounded(bin: string, args: string[], limitMs: number): Promise<MountRun> {
  const run = runTool(bin, args, { timeoutMs: limitMs }).then(
    (r): MountRun => (r.exitCode === 0 ? { ok: true } : { ok: false, stderr: r.stderr, timedOut: false }),
    (err: unknown): MountRun => ({ ok: false, stderr: (err as Error).message, timedOut: err instanceof ToolError && err.timedOut }),
  );
  // A mount stuck in the kernel may ignore SIGKILL; the caller is answered at the deadline anyway.
  const deadline = new Promise<MountRun>((resolve) => setTimeout(() => resolve({ ok: false, stderr: `${bin} did not finish within ${Math.round(limitMs / 1000)} s`, timedOut: true }), limitMs + 5000).unref());
  return Promise.race([run, deadline]);
}

export function runMount(args: string[]): Promise<MountRun> {
  return bounded('mount', args, MOUNT_LIMIT_MS);
}

/** All mounts of this process's mount namespace. */
export async function readMountLayers(): Promise<MountLayer[]> {
  return parseMountinfo(await fs.readFile('/proc/self/mountinfo', 'utf8'));
}

export async function layersOf(mountPoint: string): Promise<MountLayer[]> {
  return layersAt(await readMountLayers(), mountPoint);
}

/**
 * Lazily detaches every layer stacked on the mount point (umount -l takes the top one, immediately,
 * even when the server is dead). Returns how many were detached; throws when layers remain.
 */
export async function detachAll(mountPoint: string): Promise<number> {
  let detached = 0;
  for (let i = 0; i < MAX_LAYERS; i++) {
    if ((await layersOf(mountPoint)).length === 0) return detached;
    const r = await bounded('umount', ['-l', mountPoint], 10_000);
    if (!r.ok) throw new Error(`umount -l ${mountPoint} failed: ${r.stderr.trim().split('\n')[0] ?? ''}`);
    detached++;
  }
  throw new Error(`${mountPoint} still holds mounts after ${MAX_LAYERS} detaches`);
}
