import { readExact, type DiscReader } from './disc-reader.js';
import { findEntry, type DiscEntry, type DiscTree, type FileHead } from './disc-tree.js';

/**
 * A user-space UDF reader (ECMA-167 / OSTA UDF 1.02 to 2.60) for disc images and optical drives: the
 * volume labels, and enough of the file system to list directories and read small files by path.
 * Partitions: physical (type 1), sparable (read as physical) and the UDF 2.50 metadata partition.
 * Virtual partitions (VAT, written by packet-writing burners on -R media) are not followed: such a
 * volume still gives its labels but no files.
 */

const VRS_START = 16 * 2048;
const VRS_SLOTS = 32;
/** Block sizes tried for the anchor, most likely first (2048 on every optical disc). */
const BLOCK_SIZES = [2048, 512, 1024, 4096];
const ANCHOR_SECTOR = 256;
const MAX_VDS_BLOCKS = 64;
const MAX_VDS_POINTER_HOPS = 4;
const MAX_EXTENTS = 4096;
const MAX_AED_HOPS = 64;
const MAX_DIRECTORY_BYTES = 4 * 1024 * 1024;
const MAX_PATH_DEPTH = 32;
const MAX_CACHED_DIRECTORIES = 4096;

const TAG_PVD = 1;
const TAG_AVDP = 2;
const TAG_VDP = 3;
const TAG_PARTITION = 5;
const TAG_LVD = 6;
const TAG_TERMINATOR = 8;
const TAG_FSD = 256;
const TAG_FID = 257;
const TAG_AED = 258;
const TAG_FILE_ENTRY = 261;
const TAG_EXTENDED_FILE_ENTRY = 266;

export interface DescriptorTag {
  id: number;
  version: number;
  location: number;
}

/** The 16-byte descriptor tag at `offset`, or null when its checksum is wrong. */
export function parseTag(buf: Buffer, offset = 0): DescriptorTag | null {
  if (offset < 0 || offset + 16 > buf.length) return null;
  let sum = 0;
  for (let i = 0; i < 16; i++) if (i !== 4) sum += buf[offset + i];
  if ((sum & 0xff) !== buf[offset + 4]) return null;
  return { id: buf.readUInt16LE(offset), version: buf.readUInt16LE(offset + 2), location: buf.readUInt32LE(offset + 12) };
}

/** OSTA compressed unicode characters: id 8 (or 254) one byte each (Latin-1), 16 (or 255) UTF-16BE. */
export function decodeDchars(bytes: Buffer): string {
  if (bytes.length === 0) return '';
  const id = bytes[0];
  const body = bytes.subarray(1);
  if (id === 8 || id === 254) return body.toString('latin1');
  if (id === 16 || id === 255) {
    const even = body.subarray(0, body.length - (body.length % 2));
    return Buffer.from(even).swap16().toString('utf16le');
  }
  return '';
}

/** A fixed-size dstring field: the last byte holds the number of bytes used (compression id included). */
export function decodeDstring(field: Buffer): string {
  if (field.length < 2) return '';
  const used = field[field.length - 1];
  if (used === 0 || used > field.length - 1) return '';
  return decodeDchars(field.subarray(0, used)).normalize('NFC');
}

interface LongAd {
  length: number;
  lbn: number;
  partRef: number;
}

function parseLongAd(buf: Buffer, offset: number): LongAd {
  return { length: buf.readUInt32LE(offset) & 0x3fffffff, lbn: buf.readUInt32LE(offset + 4), partRef: buf.readUInt16LE(offset + 8) };
}

type PartitionMap =
  | { kind: 'physical'; partitionNumber: number }
  | { kind: 'metadata'; partitionNumber: number; fileLocation: number; mirrorLocation: number }
  | { kind: 'unsupported'; partitionNumber: number; type: string };

/** The partition maps of a Logical Volume Descriptor (ECMA-167 3/10.6.13, UDF 2.2.4, 2.2.8-2.2.10). */
export function parsePartitionMaps(lvd: Buffer): PartitionMap[] {
  const maps: PartitionMap[] = [];
  const tableLength = lvd.readUInt32LE(264);
  const count = lvd.readUInt32LE(268);
  const end = Math.min(lvd.length, 440 + tableLength);
  let pos = 440;
  for (let i = 0; i < count && pos + 2 <= end; i++) {
    const type = lvd[pos];
    const length = lvd[pos + 1];
    if (length < 6 || pos + length > end) break;
    if (type === 1) {
      maps.push({ kind: 'physical', partitionNumber: lvd.readUInt16LE(pos + 4) });
    } else if (type === 2 && length >= 40) {
      const ident = lvd.toString('latin1', pos + 5, pos + 28).replace(/\0+$/, '');
      const partitionNumber = lvd.readUInt16LE(pos + 38);
      if (ident === '*UDF Sparable Partition') maps.push({ kind: 'physical', partitionNumber });
      else if (ident === '*UDF Metadata Partition' && length >= 52)
        maps.push({ kind: 'metadata', partitionNumber, fileLocation: lvd.readUInt32LE(pos + 40), mirrorLocation: lvd.readUInt32LE(pos + 44) });
      else maps.push({ kind: 'unsupported', partitionNumber, type: ident });
    } else {
      maps.push({ kind: 'unsupported', partitionNumber: -1, type: `type ${type}` });
    }
    pos += length;
  }
  return maps;
}

export interface FileEntry {
  /** ICB file type: 4 directory, 5 file. */
  fileType: number;
  /** 0 short, 1 long, 2 extended allocation descriptors, 3 data embedded in the entry. */
  adType: number;
  infoLength: number;
  /** The allocation descriptors, or the file data itself when adType is 3. */
  allocation: Buffer;
}

/** A File Entry (tag 261) or Extended File Entry (tag 266) in one logical block. */
export function parseFileEntry(block: Buffer): FileEntry | null {
  const tag = parseTag(block);
  if (!tag || (tag.id !== TAG_FILE_ENTRY && tag.id !== TAG_EXTENDED_FILE_ENTRY)) return null;
  const extended = tag.id === TAG_EXTENDED_FILE_ENTRY;
  const fieldsAt = extended ? 208 : 168;
  if (block.length < fieldsAt + 8) return null;
  const eaLength = block.readUInt32LE(fieldsAt);
  const adLength = block.readUInt32LE(fieldsAt + 4);
  const start = fieldsAt + 8 + eaLength;
  if (start + adLength > block.length) return null;
  const infoLength = block.readBigUInt64LE(56);
  return {
    fileType: block[27],
    adType: block.readUInt16LE(34) & 7,
    infoLength: infoLength > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(infoLength),
    allocation: block.subarray(start, start + adLength),
  };
}

export interface FileIdentifier {
  name: string;
  isDirectory: boolean;
  icb: LongAd;
}

/** File Identifier Descriptors (tag 257) of a directory's data; parent and deleted entries left out. */
export function parseFileIdentifiers(data: Buffer): FileIdentifier[] {
  const entries: FileIdentifier[] = [];
  let pos = 0;
  while (pos + 38 <= data.length) {
    const tag = parseTag(data, pos);
    if (!tag || tag.id !== TAG_FID) break;
    const characteristics = data[pos + 18];
    const nameLength = data[pos + 19];
    const implLength = data.readUInt16LE(pos + 36);
    const nameAt = pos + 38 + implLength;
    if (nameAt + nameLength > data.length) break;
    const deleted = (characteristics & 0x04) !== 0;
    const parent = (characteristics & 0x08) !== 0;
    if (!deleted && !parent && nameLength > 0) {
      entries.push({
        name: decodeDchars(data.subarray(nameAt, nameAt + nameLength)).normalize('NFC'),
        isDirectory: (characteristics & 0x02) !== 0,
        icb: parseLongAd(data, pos + 20),
      });
    }
    pos += (38 + implLength + nameLength + 3) & ~3;
  }
  return entries;
}

interface Extent {
  length: number;
  lbn: number;
  partRef: number;
  recorded: boolean;
}

interface PartitionDescriptor {
  start: number;
  length: number;
}

interface VolumeDescriptors {
  volumeId: string | null;
  logicalVolumeId: string | null;
  logicalBlockSize: number;
  fsd: LongAd | null;
  maps: PartitionMap[];
  partitions: Map<number, PartitionDescriptor>;
}

export type UdfRevisionClass = 'NSR02' | 'NSR03';

/** Identifiers of the Volume Recognition Sequence from byte 32768 (CD001, BEA01, NSR02, NSR03, TEA01 …). */
export async function readRecognitionSequence(reader: DiscReader): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < VRS_SLOTS; i++) {
    const head = await readExact(reader, VRS_START + i * 2048, 7);
    if (!head) break;
    const id = head.toString('latin1', 1, 6);
    if (!/^(CD001|BEA01|NSR02|NSR03|TEA01|BOOT2|CDW02)$/.test(id)) continue;
    ids.push(id);
    if (id === 'TEA01') break;
  }
  return ids;
}

async function findAnchor(reader: DiscReader, sizeBytes: number): Promise<{ blockSize: number; main: [number, number]; reserve: [number, number] } | null> {
  for (const blockSize of BLOCK_SIZES) {
    const last = Math.floor(sizeBytes / blockSize) - 1;
    const sectors = [ANCHOR_SECTOR, last - ANCHOR_SECTOR, last].filter((s, i, all) => s >= ANCHOR_SECTOR && all.indexOf(s) === i);
    for (const sector of sectors) {
      const block = await readExact(reader, sector * blockSize, 32).catch(() => null);
      const tag = block && parseTag(block);
      if (!block || !tag || tag.id !== TAG_AVDP || tag.location !== sector) continue;
      return {
        blockSize,
        main: [block.readUInt32LE(16), block.readUInt32LE(20)],
        reserve: [block.readUInt32LE(24), block.readUInt32LE(28)],
      };
    }
  }
  return null;
}

async function readVolumeDescriptors(reader: DiscReader, blockSize: number, extent: [number, number]): Promise<VolumeDescriptors | null> {
  const found: VolumeDescriptors = { volumeId: null, logicalVolumeId: null, logicalBlockSize: 0, fsd: null, maps: [], partitions: new Map() };
  let pvdSeq = -1;
  let lvdSeq = -1;
  let [length, location] = extent;
  for (let hop = 0; hop <= MAX_VDS_POINTER_HOPS; hop++) {
    const blocks = Math.min(Math.ceil(length / blockSize), MAX_VDS_BLOCKS);
    const data = blocks > 0 ? await readExact(reader, location * blockSize, blocks * blockSize) : null;
    if (!data) break;
    let next: [number, number] | null = null;
    for (let i = 0; i < blocks && next === null; i++) {
      const block = data.subarray(i * blockSize, (i + 1) * blockSize);
      const tag = parseTag(block);
      if (!tag || tag.id === 0 || tag.id === TAG_TERMINATOR) break;
      const seq = block.readUInt32LE(16);
      if (tag.id === TAG_PVD && seq >= pvdSeq) {
        pvdSeq = seq;
        found.volumeId = decodeDstring(block.subarray(24, 56));
      } else if (tag.id === TAG_LVD && seq >= lvdSeq && block.length >= 440) {
        lvdSeq = seq;
        found.logicalVolumeId = decodeDstring(block.subarray(84, 212));
        found.logicalBlockSize = block.readUInt32LE(212);
        found.fsd = parseLongAd(block, 248);
        found.maps = parsePartitionMaps(block);
      } else if (tag.id === TAG_PARTITION) {
        found.partitions.set(block.readUInt16LE(22), { start: block.readUInt32LE(188), length: block.readUInt32LE(192) });
      } else if (tag.id === TAG_VDP) {
        next = [block.readUInt32LE(20), block.readUInt32LE(24)];
      }
    }
    if (next === null) break;
    [length, location] = next;
  }
  return found.volumeId === null && found.logicalVolumeId === null ? null : found;
}

/** An opened UDF volume: its labels and a DiscTree over its files. */
export class UdfVolume implements DiscTree {
  readonly revision: UdfRevisionClass;
  readonly blockSize: number;
  /** Primary Volume Descriptor's Volume Identifier (dstring[32]). */
  readonly volumeId: string;
  /** Logical Volume Descriptor's Logical Volume Identifier (dstring[128]); what blkid calls LABEL. */
  readonly logicalVolumeId: string;
  private readonly reader: DiscReader;
  private readonly descriptors: VolumeDescriptors;
  private readonly metadataExtents = new Map<number, Promise<Extent[] | null>>();
  /** Directories read so far, by partition and block: a walk over every file reads each directory once. */
  private readonly directories = new Map<string, Promise<FileIdentifier[] | null>>();
  private rootIcb: Promise<LongAd | null> | null = null;

  constructor(reader: DiscReader, revision: UdfRevisionClass, blockSize: number, descriptors: VolumeDescriptors) {
    this.reader = reader;
    this.revision = revision;
    this.blockSize = blockSize;
    this.descriptors = descriptors;
    this.volumeId = descriptors.volumeId ?? '';
    this.logicalVolumeId = descriptors.logicalVolumeId ?? '';
  }

  async list(dirPath: readonly string[]): Promise<DiscEntry[] | null> {
    const icb = await this.resolvePath(dirPath);
    if (!icb) return null;
    const entries = await this.readDirectory(icb);
    return entries && entries.map((e) => ({ name: e.name, isDirectory: e.isDirectory }));
  }

  async readFile(filePath: readonly string[], maxBytes: number): Promise<FileHead | null> {
    const icb = await this.resolvePath(filePath);
    const entry = icb && (await this.readFileEntry(icb));
    if (!icb || !entry || entry.fileType === 4) return null;
    const data = await this.readData(entry, icb.partRef, maxBytes);
    return data && { size: entry.infoLength, data };
  }

  private async resolvePath(names: readonly string[]): Promise<LongAd | null> {
    if (names.length > MAX_PATH_DEPTH) return null;
    this.rootIcb ??= this.readRootIcb();
    let icb = await this.rootIcb;
    for (const name of names) {
      if (!icb) return null;
      const entries = await this.readDirectory(icb);
      icb = (entries && findEntry(entries, name)?.icb) ?? null;
    }
    return icb;
  }

  private async readRootIcb(): Promise<LongAd | null> {
    const { fsd } = this.descriptors;
    if (!fsd || this.descriptors.logicalBlockSize !== this.blockSize) return null;
    const block = await this.readLogical(fsd.partRef, fsd.lbn, this.blockSize);
    const tag = block && parseTag(block);
    if (!block || !tag || tag.id !== TAG_FSD || block.length < 416) return null;
    return parseLongAd(block, 400);
  }

  private async readFileEntry(icb: LongAd): Promise<FileEntry | null> {
    const block = await this.readLogical(icb.partRef, icb.lbn, this.blockSize);
    return block && parseFileEntry(block);
  }

  private readDirectory(icb: LongAd): Promise<FileIdentifier[] | null> {
    const key = `${icb.partRef}:${icb.lbn}`;
    let pending = this.directories.get(key);
    if (!pending) {
      if (this.directories.size >= MAX_CACHED_DIRECTORIES) this.directories.clear();
      pending = (async () => {
        const entry = await this.readFileEntry(icb);
        if (!entry || entry.fileType !== 4) return null;
        const data = await this.readData(entry, icb.partRef, MAX_DIRECTORY_BYTES);
        return data && parseFileIdentifiers(data);
      })();
      // A failed read (an unreadable sector) is not remembered.
      pending.catch(() => this.directories.delete(key));
      this.directories.set(key, pending);
    }
    return pending;
  }

  /** The extents a file's allocation descriptors describe, following allocation extent descriptors. */
  private async extentsOf(entry: FileEntry, icbPartRef: number): Promise<Extent[] | null> {
    const extents: Extent[] = [];
    let ads = entry.allocation;
    for (let hop = 0; hop <= MAX_AED_HOPS; hop++) {
      const size = entry.adType === 0 ? 8 : entry.adType === 1 ? 16 : 20;
      let continuation: Extent | null = null;
      for (let pos = 0; pos + size <= ads.length; pos += size) {
        const raw = ads.readUInt32LE(pos);
        const length = raw & 0x3fffffff;
        const kind = raw >>> 30;
        if (length === 0) break;
        const where =
          entry.adType === 0
            ? { lbn: ads.readUInt32LE(pos + 4), partRef: icbPartRef }
            : entry.adType === 1
              ? { lbn: ads.readUInt32LE(pos + 4), partRef: ads.readUInt16LE(pos + 8) }
              : { lbn: ads.readUInt32LE(pos + 12), partRef: ads.readUInt16LE(pos + 16) };
        if (kind === 3) {
          continuation = { length, ...where, recorded: true };
          break;
        }
        if (extents.length >= MAX_EXTENTS) return null;
        extents.push({ length, ...where, recorded: kind === 0 });
      }
      if (!continuation) return extents;
      const block = await this.readLogical(continuation.partRef, continuation.lbn, this.blockSize);
      const tag = block && parseTag(block);
      if (!block || !tag || tag.id !== TAG_AED) return null;
      const adLength = Math.min(block.readUInt32LE(20), block.length - 24);
      ads = block.subarray(24, 24 + adLength);
      icbPartRef = continuation.partRef;
    }
    return null;
  }

  /** The first min(size, maxBytes) bytes of a file or directory. */
  private async readData(entry: FileEntry, icbPartRef: number, maxBytes: number): Promise<Buffer | null> {
    const want = Math.min(entry.infoLength, maxBytes);
    if (entry.adType === 3) return entry.allocation.subarray(0, want);
    if (entry.adType > 3) return null;
    const extents = await this.extentsOf(entry, icbPartRef);
    if (!extents) return null;
    const out = Buffer.alloc(want);
    let done = 0;
    for (const extent of extents) {
      if (done >= want) break;
      const take = Math.min(extent.length, want - done);
      if (extent.recorded) {
        const chunk = await this.readLogical(extent.partRef, extent.lbn, take);
        if (!chunk) return null;
        chunk.copy(out, done);
      }
      done += take;
    }
    return out.subarray(0, done);
  }

  /** `length` bytes from logical block `lbn` of partition reference `partRef`. */
  private async readLogical(partRef: number, lbn: number, length: number): Promise<Buffer | null> {
    const out = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const run = await this.physicalRun(partRef, lbn * this.blockSize + done);
      if (!run || run.bytes <= 0) return null;
      const take = Math.min(run.bytes, length - done);
      const chunk = await readExact(this.reader, run.position, take);
      if (!chunk) return null;
      chunk.copy(out, done);
      done += take;
    }
    return out;
  }

  /** Where byte `offset` of a partition lies on the medium, and how many bytes follow contiguously. */
  private async physicalRun(partRef: number, offset: number): Promise<{ position: number; bytes: number } | null> {
    const map = this.descriptors.maps[partRef];
    if (!map) return null;
    if (map.kind === 'physical') {
      const partition = this.descriptors.partitions.get(map.partitionNumber);
      const size = partition ? partition.length * this.blockSize : 0;
      if (!partition || offset >= size) return null;
      return { position: partition.start * this.blockSize + offset, bytes: size - offset };
    }
    if (map.kind === 'metadata') {
      const extents = await this.metadataFile(partRef, map);
      let base = 0;
      for (const extent of extents ?? []) {
        if (offset < base + extent.length) {
          if (!extent.recorded) return null;
          const inner = await this.physicalRun(extent.partRef, extent.lbn * this.blockSize + (offset - base));
          return inner && { position: inner.position, bytes: Math.min(inner.bytes, base + extent.length - offset) };
        }
        base += extent.length;
      }
    }
    return null;
  }

  /** Extents of the metadata file (or its mirror) that holds a UDF 2.50 metadata partition. */
  private metadataFile(partRef: number, map: Extract<PartitionMap, { kind: 'metadata' }>): Promise<Extent[] | null> {
    let pending = this.metadataExtents.get(partRef);
    if (!pending) {
      pending = (async () => {
        const physicalRef = this.descriptors.maps.findIndex((m) => m.kind === 'physical' && m.partitionNumber === map.partitionNumber);
        if (physicalRef < 0) return null;
        for (const location of [map.fileLocation, map.mirrorLocation]) {
          const entry = await this.readFileEntry({ length: this.blockSize, lbn: location, partRef: physicalRef });
          const extents = entry && entry.adType !== 3 ? await this.extentsOf(entry, physicalRef) : null;
          if (extents && extents.length > 0 && extents.every((e) => e.partRef === physicalRef)) return extents;
        }
        return null;
      })();
      this.metadataExtents.set(partRef, pending);
    }
    return pending;
  }
}

/**
 * Opens the UDF file system of a disc image or drive: Volume Recognition Sequence (NSR02/NSR03), the
 * anchor at sector 256 (else last sector − 256, else the last sector), then the Main Volume
 * Descriptor Sequence (the Reserve one when the main one is unreadable). Null when there is no UDF.
 * `sizeBytes` is the medium size (0 when unknown: only the anchor at 256 is tried).
 */
export async function openUdf(reader: DiscReader, sizeBytes: number): Promise<UdfVolume | null> {
  const vrs = await readRecognitionSequence(reader);
  const revision = vrs.find((id): id is UdfRevisionClass => id === 'NSR02' || id === 'NSR03');
  if (!revision) return null;
  const anchor = await findAnchor(reader, sizeBytes);
  if (!anchor) return null;
  const descriptors =
    (await readVolumeDescriptors(reader, anchor.blockSize, anchor.main).catch(() => null)) ??
    (await readVolumeDescriptors(reader, anchor.blockSize, anchor.reserve).catch(() => null));
  return descriptors && new UdfVolume(reader, revision, anchor.blockSize, descriptors);
}
