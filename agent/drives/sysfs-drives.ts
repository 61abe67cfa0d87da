import fs from 'node:fs/promises';
import path from 'node:path';
import { cleanDriveText } from './drive-text.js';
import type { RomDrive } from './lsblk-parser.js';

export const SYS_BLOCK_DIR = '/sys/block';

const DRIVE_NAME = /^sr\d+$/;

async function readText(file: string): Promise<string | null> {
  return fs.readFile(file, 'utf8').then(
    (text) => text,
    () => null,
  );
}

/**
 * A drive's SCSI INQUIRY strings from sysfs (SYS_BLOCK_DIR/srN/device/{vendor,model,rev}), cleaned;
 * null when the kernel has no such block device.
 */
export async function readSysfsDrive(name: string, sysBlockDir: string = SYS_BLOCK_DIR): Promise<RomDrive | null> {
  const known = await fs.stat(path.join(sysBlockDir, name)).then(
    () => true,
    () => false,
  );
  if (!known) return null;
  const device = path.join(sysBlockDir, name, 'device');
  const [vendor, model, rev] = await Promise.all(['vendor', 'model', 'rev'].map((f) => readText(path.join(device, f))));
  return { name, path: `/dev/${name}`, vendor: cleanDriveText(vendor), model: cleanDriveText(model), revision: cleanDriveText(rev), transport: null };
}

/** The optical drives the kernel registered (SYS_BLOCK_DIR/sr*), by number. */
export async function listSysfsDrives(sysBlockDir: string = SYS_BLOCK_DIR): Promise<RomDrive[]> {
  const names = (await fs.readdir(sysBlockDir).catch(() => [] as string[]))
    .filter((n) => DRIVE_NAME.test(n))
    .sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)));
  const drives = await Promise.all(names.map((n) => readSysfsDrive(n, sysBlockDir)));
  return drives.filter((d): d is RomDrive => d !== null);
}
