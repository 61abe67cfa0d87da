/**
 * Physical optical drives (/dev/srN): listing, status and eject, all through short-lived tools
 * (drive-tools.ts) so the event loop never blocks and no sector of the disc is read.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { EJECT_POLL_MS, EJECT_WAIT_MS } from '../../shared/drive-limits.js';
import { ToolError } from '../../shared/process.js';
import type { CdromDriveStatus } from './cdrom-status-parser.js';
import { runBlockdevSize, runCdromStatus, runEject, runLsblk, runSetcdInfo, runUdevadmInfo, type DeviceAnswer, type DriveToolOptions } from './drive-tools.js';
import type { EjectFailure } from './eject-parser.js';
import type { RomDrive } from './lsblk-parser.js';
import { parseProcCdromInfo, type ProcCdromDrive } from './proc-cdrom-parser.js';
import { listSysfsDrives, readSysfsDrive } from './sysfs-drives.js';
import { isUdevCdrom, summarizeMedia, type MediaSummary } from './udev-parser.js';

export type PhysicalDriveStatus = 'no_disc' | 'tray_open' | 'disc_present' | 'unknown';

export const PROC_CDROM_INFO = '/proc/sys/dev/cdrom/info';

export interface PhysicalDriveOptions extends DriveToolOptions {
  /** Where the kernel lists block devices (default /sys/block). */
  sysBlockDir?: string;
  /** The cdrom driver's capability table (default /proc/sys/dev/cdrom/info). */
  procCdromInfo?: string;
}

/** A drive from the system device listing plus what the cdrom driver says it can do. */
export interface PhysicalDriveInfo extends RomDrive {
  /** From /proc/sys/dev/cdrom/info; null when the file or the drive's column is missing. */
  capabilities: ProcCdromDrive | null;
}

export interface PhysicalDriveReading {
  status: PhysicalDriveStatus;
  /** The kernel's own answer (CDROM_DRIVE_STATUS); null when it could not be read. */
  driveStatus: CdromDriveStatus | null;
  /**
   * The udev database's view of the disc. A drive may report disc_present before udev has
   * described the disc (media.mediaPresent false): wait for the next reading in that case.
   */
  media: MediaSummary;
  /** Size of the disc (blockdev), read only when a disc is present; null otherwise or when unknown. */
  sizeBytes: number | null;
  /** Why the kernel drive status could not be read; the status then comes from udev alone, or is unknown. */
  problem: string | null;
}

export type EjectResult = 'tray_open' | 'no_disc';

export interface EjectOptions extends PhysicalDriveOptions {
  /** How long to wait for an open tray or an empty drive (default EJECT_WAIT_MS). */
  waitMs?: number;
  /** Pause between status reads (default EJECT_POLL_MS). */
  pollMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** A drive operation that failed; `message` is the plain reason. */
export class DriveError extends Error {
  constructor(
    readonly device: string,
    message: string,
  ) {
    super(message);
    this.name = 'DriveError';
  }
}

const FROM_KERNEL: Record<CdromDriveStatus, PhysicalDriveStatus> = {
  no_disc: 'no_disc',
  tray_open: 'tray_open',
  disc_present: 'disc_present',
  not_ready: 'unknown',
  no_info: 'unknown',
};

function toolFailure(err: unknown): string {
  if (err instanceof ToolError && !err.canceled) return err.reason;
  throw err;
}

/** A runner's answer, with a tool that could not run (missing, timed out) turned into a problem. */
async function answer<T>(run: Promise<DeviceAnswer<T>>): Promise<DeviceAnswer<T>> {
  try {
    return await run;
  } catch (err) {
    return { ok: false, problem: toolFailure(err) };
  }
}

/** CDROM_DRIVE_STATUS via the python3 one-liner; via `setcd -i` when python3 cannot run. */
async function readKernelStatus(device: string, opts: DriveToolOptions): Promise<DeviceAnswer<CdromDriveStatus>> {
  let pythonProblem: string;
  try {
    const viaPython = await runCdromStatus(device, opts);
    return viaPython.ok ? { ok: true, value: viaPython.value.status } : viaPython;
  } catch (err) {
    pythonProblem = toolFailure(err);
  }
  const viaSetcd = await answer(runSetcdInfo(device, opts));
  if (viaSetcd.ok) return { ok: true, value: viaSetcd.value.status };
  return { ok: false, problem: `${pythonProblem}; ${viaSetcd.problem}` };
}

/** The drive status without the size: kernel status first, udev's media flag when the kernel cannot be asked. */
async function readStatus(device: string, opts: DriveToolOptions): Promise<Omit<PhysicalDriveReading, 'sizeBytes'>> {
  const [udev, kernel] = await Promise.all([answer(runUdevadmInfo(device, opts)), readKernelStatus(device, opts)]);
  const props = udev.ok ? udev.value : new Map<string, string>();
  const media = summarizeMedia(props);
  if (kernel.ok) return { status: FROM_KERNEL[kernel.value], driveStatus: kernel.value, media, problem: null };
  const status: PhysicalDriveStatus = isUdevCdrom(props) ? (media.mediaPresent ? 'disc_present' : 'no_disc') : 'unknown';
  return { status, driveStatus: null, media, problem: kernel.problem };
}

/** The optical drives of this host (DRIVES=auto): from lsblk, or from /sys/block/sr* when lsblk fails. */
export async function listPhysicalDrives(opts: PhysicalDriveOptions = {}): Promise<RomDrive[]> {
  const listed = await answer(runLsblk(opts));
  return listed.ok ? listed.value : listSysfsDrives(opts.sysBlockDir);
}

async function readCapabilities(name: string, file: string): Promise<ProcCdromDrive | null> {
  const text = await fs.readFile(file, 'utf8').catch(() => null);
  return text === null ? null : (parseProcCdromInfo(text).find((d) => d.name === name) ?? null);
}

/**
 * Vendor, model and abilities of a configured device path (a symlink such as /dev/cdrom is
 * followed): from sysfs, else from lsblk; vendor and model stay null when neither knows the drive.
 */
export async function describeDrive(devicePath: string, opts: PhysicalDriveOptions = {}): Promise<PhysicalDriveInfo> {
  const name = path.basename(await fs.realpath(devicePath).catch(() => devicePath));
  let drive = await readSysfsDrive(name, opts.sysBlockDir);
  if (!drive) {
    const listed = await answer(runLsblk(opts, devicePath));
    drive = listed.ok ? (listed.value.find((d) => d.name === name) ?? null) : null;
  }
  const capabilities = await readCapabilities(drive?.name ?? name, opts.procCdromInfo ?? PROC_CDROM_INFO);
  const base: RomDrive = drive ?? { name, path: devicePath, vendor: null, model: null, revision: null, transport: null };
  return { ...base, path: devicePath, capabilities };
}

/** Status and disc facts of a drive, without reading the disc. */
export async function readDriveStatus(devicePath: string, opts: PhysicalDriveOptions = {}): Promise<PhysicalDriveReading> {
  const reading = await readStatus(devicePath, opts);
  if (reading.status !== 'disc_present') return { ...reading, sizeBytes: null };
  const size = await answer(runBlockdevSize(devicePath, opts));
  return { ...reading, sizeBytes: size.ok ? size.value : null };
}

async function ejectStep(args: string[], devicePath: string, opts: DriveToolOptions): Promise<EjectFailure | null> {
  try {
    return await runEject(args, devicePath, opts);
  } catch (err) {
    return { kind: 'failed', reason: toolFailure(err) };
  }
}

function stillInside(name: string, last: Awaited<ReturnType<typeof readStatus>>, waitMs: number): string {
  const seconds = waitMs / 1000;
  if (last.status === 'disc_present') {
    return `the disc is still in drive ${name} after eject: the drive still reported a disc ${seconds} s after the eject command (the tray may be blocked)`;
  }
  const said = last.driveStatus ? `it kept reporting "${last.driveStatus.replace('_', ' ')}"` : `its status could not be read: ${last.problem ?? 'no answer'}`;
  return `the disc may still be in drive ${name} after eject: within ${seconds} s the drive reported neither an open tray nor an empty drive (${said})`;
}

/**
 * Ejects the disc by the spec's rule: unlock the door (`eject -i off`; a drive without a lock is
 * fine), `eject`, then read the drive status every pollMs for up to waitMs. An open tray or an empty
 * drive (slot drives never report an open tray) is success. Throws a DriveError with a plain reason
 * when the device is missing, another program holds it, or the disc stays in.
 */
export async function ejectDrive(devicePath: string, opts: EjectOptions = {}): Promise<EjectResult> {
  const name = path.basename(devicePath);
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const waitMs = opts.waitMs ?? EJECT_WAIT_MS;
  const unlock = await ejectStep(['-i', 'off'], devicePath, opts);
  if (unlock?.kind === 'no_device') throw new DriveError(devicePath, `could not eject drive ${name}: ${unlock.reason}`);
  const ejected = await ejectStep([], devicePath, opts);
  if (ejected) {
    const unlockNote = unlock && unlock.kind !== 'lock_unsupported' && unlock.reason !== ejected.reason ? ` (unlocking the door failed too: ${unlock.reason})` : '';
    throw new DriveError(devicePath, `could not eject drive ${name}: ${ejected.reason}${unlockNote}`);
  }
  const deadline = now() + waitMs;
  for (;;) {
    const last = await readStatus(devicePath, opts);
    if (last.status === 'tray_open' || last.status === 'no_disc') return last.status;
    if (now() >= deadline) throw new DriveError(devicePath, stillInside(name, last, waitMs));
    await sleep(opts.pollMs ?? EJECT_POLL_MS);
  }
}
