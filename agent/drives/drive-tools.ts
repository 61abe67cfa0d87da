/**
 * Runners for the system tools that list and query optical drives. None of them reads the disc:
 * lsblk and udevadm read sysfs and the udev database, the python3 one-liner opens the node with
 * O_NONBLOCK for two ioctls. Each returns the device's answer (or a plain problem) and throws a
 * ToolError only when the tool itself could not run (missing binary, timeout, cancel).
 */
import { DRIVE_TOOL_TIMEOUT_MS, EJECT_TIMEOUT_MS } from '../../shared/drive-limits.js';
import { runTool, type RunToolOptions } from '../../shared/process.js';
import { blockdevError, parseBlockdevSize } from './blockdev-parser.js';
import { CDROM_STATUS_SCRIPT, cdromStatusError, parseCdromStatusLine, type CdromStatusReport } from './cdrom-status-parser.js';
import { classifyEjectError, type EjectFailure } from './eject-parser.js';
import { lsblkError, parseLsblkJson, type RomDrive } from './lsblk-parser.js';
import { parseSetcdInfo, setcdError, type SetcdReport } from './setcd-parser.js';
import { parseUdevProperties, udevadmError } from './udev-parser.js';

/** Paths of the drive tools; tests point them at stand-ins. */
export interface DriveToolPaths {
  lsblk: string;
  udevadm: string;
  python3: string;
  eject: string;
  setcd: string;
  blockdev: string;
}

export const DEFAULT_DRIVE_TOOLS: DriveToolPaths = {
  lsblk: 'lsblk',
  udevadm: 'udevadm',
  python3: 'python3',
  eject: 'eject',
  setcd: 'setcd',
  blockdev: 'blockdev',
};

export interface DriveToolOptions {
  tools?: Partial<DriveToolPaths>;
  /** Limit per tool call (default DRIVE_TOOL_TIMEOUT_MS). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What a device answered: a value, or a plain reason why it could not. */
export type DeviceAnswer<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * lsblk columns. Without -b: SIZE is a human string, which is never used (an empty drive shows the
 * 1024M default capacity, and a disc's size comes from blockdev once a disc is known to be in);
 * this is also the form of the recorded samples.
 */
export const LSBLK_ARGS = ['-J', '-d', '-o', 'NAME,TYPE,VENDOR,MODEL,REV,SIZE,TRAN,RM'];

function toolPaths(opts: DriveToolOptions): DriveToolPaths {
  return { ...DEFAULT_DRIVE_TOOLS, ...opts.tools };
}

function runOptions(opts: DriveToolOptions): RunToolOptions {
  return { signal: opts.signal, timeoutMs: opts.timeoutMs ?? DRIVE_TOOL_TIMEOUT_MS, captureStdout: true };
}

/** The optical drives lsblk lists (all of them, or only DEVICE). */
export async function runLsblk(opts: DriveToolOptions, device?: string): Promise<DeviceAnswer<RomDrive[]>> {
  const args = device === undefined ? LSBLK_ARGS : [...LSBLK_ARGS, device];
  const result = await runTool(toolPaths(opts).lsblk, args, runOptions(opts));
  if (result.exitCode !== 0) return { ok: false, problem: lsblkError(result.stderr, result.exitCode) };
  try {
    return { ok: true, value: parseLsblkJson(result.stdout) };
  } catch (err) {
    return { ok: false, problem: (err as Error).message };
  }
}

/** The udev database properties of DEVICE (`udevadm info --query=property`). */
export async function runUdevadmInfo(device: string, opts: DriveToolOptions): Promise<DeviceAnswer<Map<string, string>>> {
  const result = await runTool(toolPaths(opts).udevadm, ['info', '--query=property', `--name=${device}`], runOptions(opts));
  if (result.exitCode !== 0) return { ok: false, problem: udevadmError(result.stderr, result.exitCode) };
  return { ok: true, value: parseUdevProperties(result.stdout) };
}

/** The kernel's drive status and capability mask of DEVICE (CDROM_DRIVE_STATUS, CDROM_GET_CAPABILITY). */
export async function runCdromStatus(device: string, opts: DriveToolOptions): Promise<DeviceAnswer<CdromStatusReport>> {
  const result = await runTool(toolPaths(opts).python3, ['-c', CDROM_STATUS_SCRIPT, device], runOptions(opts));
  if (result.exitCode !== 0) return { ok: false, problem: cdromStatusError(result.stderr, result.exitCode, device) };
  const report = parseCdromStatusLine(result.stdout);
  return report ? { ok: true, value: report } : { ok: false, problem: `python3 printed no drive status for ${device}` };
}

/** The drive status of DEVICE as `setcd -i` prints it. Its exit code is not trusted: the text decides. */
export async function runSetcdInfo(device: string, opts: DriveToolOptions): Promise<DeviceAnswer<SetcdReport>> {
  const result = await runTool(toolPaths(opts).setcd, ['-i', device], runOptions(opts));
  const report = parseSetcdInfo(result.stdout);
  return report ? { ok: true, value: report } : { ok: false, problem: setcdError(result.stderr, result.exitCode, device) };
}

/** The size of the disc in DEVICE in bytes; null for the empty-drive default capacity. */
export async function runBlockdevSize(device: string, opts: DriveToolOptions): Promise<DeviceAnswer<number | null>> {
  const result = await runTool(toolPaths(opts).blockdev, ['--getsize64', device], runOptions(opts));
  if (result.exitCode !== 0) return { ok: false, problem: blockdevError(result.stderr, result.exitCode, device) };
  return { ok: true, value: parseBlockdevSize(result.stdout) };
}

/** Runs `eject ARGS DEVICE` (limit EJECT_TIMEOUT_MS); null on success (exit 0), else why it failed. */
export async function runEject(args: string[], device: string, opts: DriveToolOptions): Promise<EjectFailure | null> {
  const result = await runTool(toolPaths(opts).eject, [...args, device], { ...runOptions(opts), timeoutMs: EJECT_TIMEOUT_MS });
  return result.exitCode === 0 ? null : classifyEjectError(result.stderr, result.exitCode, device);
}
