import { cleanDriveText } from './drive-text.js';
import { unknownFailure } from './device-errors.js';

/** An optical drive as the system device listing names it. */
export interface RomDrive {
  /** Kernel name, e.g. "sr0". */
  name: string;
  /** Device node, e.g. "/dev/sr0". */
  path: string;
  vendor: string | null;
  model: string | null;
  /** Firmware revision. */
  revision: string | null;
  /** Transport: "sata", "usb", "sas", ... (lsblk only). */
  transport: string | null;
}

interface LsblkDevice {
  name?: unknown;
  type?: unknown;
  vendor?: unknown;
  model?: unknown;
  rev?: unknown;
  tran?: unknown;
}

/**
 * The optical drives (type "rom") in the JSON of `lsblk -J -d -o NAME,TYPE,VENDOR,MODEL,REV,...`.
 * Text columns are cleaned (trimmed, inner space runs collapsed); missing columns are null.
 * Throws when the text is not lsblk's device list.
 */
export function parseLsblkJson(text: string): RomDrive[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('lsblk printed no device list');
  }
  const devices = (doc as { blockdevices?: unknown } | null)?.blockdevices;
  if (!Array.isArray(devices)) throw new Error('lsblk printed no device list');
  const drives: RomDrive[] = [];
  for (const dev of devices as LsblkDevice[]) {
    if (dev?.type !== 'rom' || typeof dev.name !== 'string' || dev.name === '') continue;
    drives.push({
      name: dev.name,
      path: `/dev/${dev.name}`,
      vendor: cleanDriveText(dev.vendor),
      model: cleanDriveText(dev.model),
      revision: cleanDriveText(dev.rev),
      transport: cleanDriveText(dev.tran),
    });
  }
  return drives;
}

/** The plain reason for a failed lsblk run ("lsblk: /dev/sr0: not a block device", exit 32). */
export function lsblkError(stderr: string, exitCode: number | null): string {
  const notBlock = /lsblk: (.+): not a block device/.exec(stderr);
  if (notBlock) return `${notBlock[1]} is not a block device (no such drive)`;
  return unknownFailure('lsblk', stderr, exitCode);
}
