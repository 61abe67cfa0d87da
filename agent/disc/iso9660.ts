import fs from 'node:fs/promises';

const SECTOR = 2048;
const PVD_OFFSET = 16 * SECTOR;

export interface Iso9660Summary {
  label: string;
  rootNames: string[];
}

/** Volume Identifier of a Primary Volume Descriptor (ECMA-119 8.4.6: bytes 40..71, space padded). */
export function parsePrimaryVolumeDescriptor(pvd: Buffer): { label: string; rootLba: number; rootSize: number } | null {
  if (pvd.length < 190 || pvd[0] !== 1 || pvd.toString('latin1', 1, 6) !== 'CD001') return null;
  const label = pvd.toString('latin1', 40, 72).replace(/[\s\0]+$/, '');
  // Root directory record at byte 156 (ECMA-119 8.4.18): extent location LE @2, data length LE @10.
  const rootLba = pvd.readUInt32LE(156 + 2);
  const rootSize = pvd.readUInt32LE(156 + 10);
  return { label, rootLba, rootSize };
}

/** File identifiers of the directory records in one directory extent (ECMA-119 9.1). */
export function parseDirectoryNames(extent: Buffer): string[] {
  const names: string[] = [];
  let pos = 0;
  while (pos < extent.length) {
    const len = extent[pos];
    if (len === 0) {
      // Records do not cross sector boundaries: skip to the next sector.
      pos = (Math.floor(pos / SECTOR) + 1) * SECTOR;
      continue;
    }
    const nameLen = extent[pos + 32];
    const raw = extent.subarray(pos + 33, pos + 33 + nameLen);
    if (!(nameLen === 1 && (raw[0] === 0 || raw[0] === 1))) names.push(raw.toString('latin1').replace(/;\d+$/, ''));
    pos += len;
  }
  return names;
}

/** Reads label and root directory names of an ISO 9660 image (or the ISO side of a UDF bridge image). */
export async function readIso9660(file: string): Promise<Iso9660Summary | null> {
  const fh = await fs.open(file, 'r');
  try {
    const pvd = Buffer.alloc(SECTOR);
    const { bytesRead } = await fh.read(pvd, 0, SECTOR, PVD_OFFSET);
    if (bytesRead < SECTOR) return null;
    const parsed = parsePrimaryVolumeDescriptor(pvd);
    if (!parsed) return null;
    const size = Math.min(parsed.rootSize, 64 * SECTOR);
    const extent = Buffer.alloc(size);
    await fh.read(extent, 0, size, parsed.rootLba * SECTOR);
    return { label: parsed.label, rootNames: parseDirectoryNames(extent) };
  } finally {
    await fh.close();
  }
}
