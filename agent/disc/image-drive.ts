import fs from 'node:fs/promises';
import path from 'node:path';
import type { DiscInfo } from '../../shared/protocol.js';
import { makeDiscInfo } from './disc-info.js';
import { identifyImageFile, identifyImageFolder } from './identify.js';

export const EJECTED_DIR = 'ejected';

/**
 * Where a ripper reads the disc from: an ISO file, a folder holding VIDEO_TS or BDMV, a physical
 * drive (/dev/srN), or an audio CD image (a .cue sheet beside its .bin).
 */
export type DiscSource =
  | { kind: 'iso'; path: string }
  | { kind: 'folder'; path: string }
  | { kind: 'device'; path: string }
  | { kind: 'cue'; path: string };

export interface ImageDisc {
  source: DiscSource;
  disc: DiscInfo;
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(
    () => true,
    () => false,
  );
}

async function folderSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await folderSize(full);
    else if (entry.isFile()) total += (await fs.stat(full)).size;
  }
  return total;
}

async function inspectIso(file: string): Promise<ImageDisc> {
  const size = (await fs.stat(file)).size;
  const identity = await identifyImageFile(file);
  return { source: { kind: 'iso', path: file }, disc: makeDiscInfo(identity, size, file) };
}

async function inspectFolder(dir: string): Promise<ImageDisc | null> {
  const identity = await identifyImageFolder(dir);
  if (identity.layout === 'unknown') return null;
  const size = await folderSize(dir);
  return { source: { kind: 'folder', path: dir }, disc: makeDiscInfo(identity, size, dir) };
}

/**
 * The disc "inserted" in an image drive: the one .iso file or disc folder in DIR (ejected/ and hidden
 * entries ignored). Several candidates: the first by name is used.
 */
export async function readImageDrive(dir: string): Promise<ImageDisc | null> {
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  const candidates = entries.filter((e) => !e.name.startsWith('.') && e.name !== EJECTED_DIR).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of candidates) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.toLowerCase().endsWith('.iso')) return inspectIso(full);
    if (entry.isDirectory()) {
      const found = await inspectFolder(full);
      if (found) return found;
    }
  }
  return null;
}

/** Ejects an image drive: the disc image moves into DIR/ejected/ (a unique name if taken). */
export async function ejectImage(dir: string, disc: ImageDisc): Promise<string> {
  const target = path.join(dir, EJECTED_DIR);
  await fs.mkdir(target, { recursive: true });
  const base = path.basename(disc.source.path);
  let dest = path.join(target, base);
  for (let i = 1; await exists(dest); i++) dest = path.join(target, `${i}-${base}`);
  await fs.rename(disc.source.path, dest);
  return dest;
}
