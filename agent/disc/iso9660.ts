import { readExact, type DiscReader } from './disc-reader.js';
import { findEntry, type DiscEntry, type DiscTree, type FileHead } from './disc-tree.js';

/**
 * A user-space ISO 9660 reader (ECMA-119) with Joliet names: the volume label, and directory listings
 * and small file reads by path. On a UDF bridge disc this is the second way in.
 */

const SECTOR = 2048;
const FIRST_DESCRIPTOR = 16;
const MAX_DESCRIPTORS = 32;
const MAX_DIRECTORY_BYTES = 4 * 1024 * 1024;
const MAX_PATH_DEPTH = 32;
const MAX_CACHED_DIRECTORIES = 4096;
const JOLIET_ESCAPES = new Set(['%/@', '%/C', '%/E']);

export interface IsoDirectoryRecord extends DiscEntry {
  lba: number;
  size: number;
}

/** Volume Identifier and root directory of a Primary Volume Descriptor (ECMA-119 8.4: label at 40..71, space padded). */
export function parsePrimaryVolumeDescriptor(pvd: Buffer): { label: string; rootLba: number; rootSize: number } | null {
  if (pvd.length < 190 || pvd[0] !== 1 || pvd.toString('latin1', 1, 6) !== 'CD001') return null;
  const label = pvd.toString('latin1', 40, 72).replace(/[\s\0]+$/, '');
  // Root directory record at byte 156 (ECMA-119 8.4.18): extent location LE @2, data length LE @10.
  return { label, rootLba: pvd.readUInt32LE(156 + 2), rootSize: pvd.readUInt32LE(156 + 10) };
}

/** A Joliet Supplementary Volume Descriptor (type 2 with a UCS-2 escape): its label and root directory. */
export function parseJolietDescriptor(svd: Buffer): { label: string; rootLba: number; rootSize: number } | null {
  if (svd.length < 190 || svd[0] !== 2 || svd.toString('latin1', 1, 6) !== 'CD001') return null;
  if (!JOLIET_ESCAPES.has(svd.toString('latin1', 88, 91))) return null;
  const label = Buffer.from(svd.subarray(40, 72)).swap16().toString('utf16le').replace(/[\s\0]+$/, '');
  return { label, rootLba: svd.readUInt32LE(156 + 2), rootSize: svd.readUInt32LE(156 + 10) };
}

function decodeName(raw: Buffer, joliet: boolean): string {
  const even = raw.subarray(0, raw.length - (raw.length % 2));
  const name = joliet ? Buffer.from(even).swap16().toString('utf16le') : raw.toString('latin1');
  return name.replace(/;\d*$/, '').replace(/\.$/, '');
}

/** The directory records of one directory extent (ECMA-119 9.1), without the . and .. entries. */
export function parseDirectoryRecords(extent: Buffer, joliet = false): IsoDirectoryRecord[] {
  const records: IsoDirectoryRecord[] = [];
  let pos = 0;
  while (pos + 34 <= extent.length) {
    const len = extent[pos];
    if (len === 0) {
      // Records do not cross sector boundaries: the rest of this sector is padding.
      pos = (Math.floor(pos / SECTOR) + 1) * SECTOR;
      continue;
    }
    const nameLen = extent[pos + 32];
    if (len < 33 + nameLen || pos + len > extent.length) break;
    const raw = extent.subarray(pos + 33, pos + 33 + nameLen);
    if (!(nameLen === 1 && (raw[0] === 0 || raw[0] === 1))) {
      records.push({
        name: decodeName(raw, joliet),
        isDirectory: (extent[pos + 25] & 0x02) !== 0,
        lba: extent.readUInt32LE(pos + 2),
        size: extent.readUInt32LE(pos + 10),
      });
    }
    pos += len;
  }
  return records;
}

/** An opened ISO 9660 volume; names come from the Joliet tree when the disc has one. */
export class Iso9660Volume implements DiscTree {
  /** Primary Volume Descriptor's Volume Identifier. */
  readonly label: string;
  readonly joliet: boolean;
  private readonly reader: DiscReader;
  private readonly root: { lba: number; size: number };
  /** Directories read so far, by extent: a walk over every file reads each directory once. */
  private readonly directories = new Map<string, Promise<IsoDirectoryRecord[] | null>>();

  constructor(reader: DiscReader, label: string, root: { lba: number; size: number }, joliet: boolean) {
    this.reader = reader;
    this.label = label;
    this.root = root;
    this.joliet = joliet;
  }

  async list(dirPath: readonly string[]): Promise<DiscEntry[] | null> {
    const dir = await this.resolve(dirPath);
    if (!dir || !dir.isDirectory) return null;
    const records = await this.readDirectory(dir);
    return records && records.map((r) => ({ name: r.name, isDirectory: r.isDirectory }));
  }

  async readFile(filePath: readonly string[], maxBytes: number): Promise<FileHead | null> {
    const file = await this.resolve(filePath);
    if (!file || file.isDirectory) return null;
    const data = await readExact(this.reader, file.lba * SECTOR, Math.min(file.size, maxBytes));
    return data && { size: file.size, data };
  }

  private readDirectory(dir: { lba: number; size: number }): Promise<IsoDirectoryRecord[] | null> {
    const key = `${dir.lba}:${dir.size}`;
    let pending = this.directories.get(key);
    if (!pending) {
      if (this.directories.size >= MAX_CACHED_DIRECTORIES) this.directories.clear();
      pending = readExact(this.reader, dir.lba * SECTOR, Math.min(dir.size, MAX_DIRECTORY_BYTES)).then((extent) => extent && parseDirectoryRecords(extent, this.joliet));
      // A failed read (an unreadable sector) is not remembered.
      pending.catch(() => this.directories.delete(key));
      this.directories.set(key, pending);
    }
    return pending;
  }

  private async resolve(names: readonly string[]): Promise<Pick<IsoDirectoryRecord, 'lba' | 'size' | 'isDirectory'> | null> {
    if (names.length > MAX_PATH_DEPTH) return null;
    let current: Pick<IsoDirectoryRecord, 'lba' | 'size' | 'isDirectory'> = { ...this.root, isDirectory: true };
    for (const name of names) {
      if (!current.isDirectory) return null;
      const records = await this.readDirectory(current);
      const found = records && findEntry(records, name);
      if (!found) return null;
      current = found;
    }
    return current;
  }
}

/** Opens the ISO 9660 side of a disc image or drive (volume descriptors from sector 16); null when there is none. */
export async function openIso9660(reader: DiscReader): Promise<Iso9660Volume | null> {
  let primary: ReturnType<typeof parsePrimaryVolumeDescriptor> = null;
  let joliet: ReturnType<typeof parseJolietDescriptor> = null;
  for (let i = 0; i < MAX_DESCRIPTORS; i++) {
    const descriptor = await readExact(reader, (FIRST_DESCRIPTOR + i) * SECTOR, SECTOR);
    if (!descriptor || descriptor.toString('latin1', 1, 6) !== 'CD001' || descriptor[0] === 255) break;
    primary ??= parsePrimaryVolumeDescriptor(descriptor);
    joliet ??= parseJolietDescriptor(descriptor);
  }
  if (!primary) return null;
  const tree = joliet ?? primary;
  return new Iso9660Volume(reader, primary.label, { lba: tree.rootLba, size: tree.rootSize }, joliet !== null);
}
