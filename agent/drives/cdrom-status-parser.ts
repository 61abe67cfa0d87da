import { deviceErrorReason } from './device-errors.js';

/** CDROM_DRIVE_STATUS answers (linux/cdrom.h CDS_*). */
export type CdromDriveStatus = 'no_info' | 'no_disc' | 'tray_open' | 'not_ready' | 'disc_present';

const STATUS_CODES: Record<number, CdromDriveStatus> = {
  0: 'no_info',
  1: 'no_disc',
  2: 'tray_open',
  3: 'not_ready',
  4: 'disc_present',
};

/** Drive abilities from the CDROM_GET_CAPABILITY mask (linux/cdrom.h CDC_*). */
export interface DriveCapabilities {
  mask: number;
  canCloseTray: boolean;
  canOpenTray: boolean;
  canLockTray: boolean;
  canSelectSpeed: boolean;
  /** A changer (jukebox) that can select a disc slot. */
  canSelectDisc: boolean;
  reportsMediaChanged: boolean;
  reportsDriveStatus: boolean;
  canPlayAudio: boolean;
  canReadDvd: boolean;
}

export interface CdromStatusReport {
  status: CdromDriveStatus;
  capabilities: DriveCapabilities;
}

/**
 * The python3 one-liner that asks the kernel for the drive status (ioctl 0x5326 CDROM_DRIVE_STATUS,
 * slot CDSL_CURRENT) and the capability mask (0x5331 CDROM_GET_CAPABILITY) of the device in argv[1].
 * O_NONBLOCK: the open neither closes an open tray nor reads the disc.
 */
export const CDROM_STATUS_SCRIPT =
  'import os,fcntl,sys;fd=os.open(sys.argv[1],os.O_RDONLY|os.O_NONBLOCK);print(fcntl.ioctl(fd,0x5326,0x7fffffff),fcntl.ioctl(fd,0x5331,0))';

/** The status name of a CDS_* code; codes the kernel does not define read as no_info. */
export function cdromStatusName(code: number): CdromDriveStatus {
  return STATUS_CODES[code] ?? 'no_info';
}

export function capabilitiesFromMask(mask: number): DriveCapabilities {
  const has = (bit: number): boolean => (mask & bit) !== 0;
  return {
    mask,
    canCloseTray: has(0x1),
    canOpenTray: has(0x2),
    canLockTray: has(0x4),
    canSelectSpeed: has(0x8),
    canSelectDisc: has(0x10),
    reportsMediaChanged: has(0x80),
    reportsDriveStatus: has(0x800),
    canPlayAudio: has(0x100),
    canReadDvd: has(0x8000),
  };
}

/** The one-liner's output "<status> <capability mask>", e.g. "2 1015679"; null for anything else. */
export function parseCdromStatusLine(text: string): CdromStatusReport | null {
  const m = /^\s*(\d+) (\d+)\s*$/.exec(text);
  if (!m) return null;
  return { status: cdromStatusName(Number(m[1])), capabilities: capabilitiesFromMask(Number(m[2])) };
}

/**
 * The plain reason for a failed one-liner run: python's last traceback line, such as
 * "FileNotFoundError: [Errno 2] No such file or directory: '/dev/sr0'" or "OSError: [Errno 22] Invalid argument".
 */
export function cdromStatusError(stderr: string, exitCode: number | null, device: string): string {
  const m = /^\w*Error: \[Errno \d+\] ([^:\n]+)/m.exec(stderr);
  if (m) return deviceErrorReason(device, m[1]) ?? `reading the status of ${device} failed: ${m[1]}`;
  const exit = exitCode === null ? 'it was stopped' : `exit code ${exitCode}`;
  return `python3 could not read the status of ${device} (${exit})`;
}
