import { deviceErrorReason, unknownFailure } from './device-errors.js';

/**
 * The capacity sr reports for an empty drive (2097151 sectors of 512 bytes, lsblk "1024M"): the
 * default it sets when READ CAPACITY fails. Never a disc size.
 */
export const EMPTY_DRIVE_BYTES = 1073741312;

/** The byte count printed by `blockdev --getsize64`; null for 0, the empty-drive default, or no number. */
export function parseBlockdevSize(stdout: string): number | null {
  const text = stdout.trim();
  if (!/^\d+$/.test(text)) return null;
  const bytes = Number(text);
  return bytes === 0 || bytes === EMPTY_DRIVE_BYTES || !Number.isSafeInteger(bytes) ? null : bytes;
}

/**
 * The plain reason for a failed blockdev run: "blockdev: cannot open /dev/sr0: No such file or
 * directory" or "blockdev: ioctl error on BLKGETSIZE64: Inappropriate ioctl for device" (both exit 1).
 */
export function blockdevError(stderr: string, exitCode: number | null, device: string): string {
  const open = /cannot open [^:]+: (.+)/.exec(stderr);
  if (open) return deviceErrorReason(device, open[1]) ?? `blockdev could not open ${device}: ${open[1].trim()}`;
  if (/ioctl error on BLKGETSIZE64/.test(stderr)) return `${device} is not a block device`;
  return unknownFailure('blockdev', stderr, exitCode);
}
