import { createHash } from 'node:crypto';
import type { DiscIds, DiscType } from '../../shared/protocol.js';
import { MAX_READ_BYTES } from './disc-reader.js';
import type { DiscTree } from './disc-tree.js';

/**
 * Ids computed from what is on a disc, without mounting or decrypting it (disc-databases.md):
 * - DVD: libdvdread's DVDDiscID (MD5 over VIDEO_TS.IFO and the title sets' IFOs);
 * - Blu-ray/UHD: the AACS disc id (SHA-1 of AACS/Unit_Key_RO.inf), what KEYDB.cfg and bd_info use;
 * - TheDiscDB's ContentHash (MD5 over file sizes);
 * - matrix256 v1 (SHA-256 over every file's path and size).
 * Only the IFOs and Unit_Key_RO.inf are read; everything else is sizes from the file system.
 */

/** One file of a disc: its path from the root (`/` between names) and its size in bytes. */
export interface DiscFile {
  path: string;
  size: number;
}

const SECTOR = 2048;
/** IFOs are tens of KiB (a VTS IFO of a long multi-angle title a few hundred); anything larger is not read. */
export const IFO_MAX_BYTES = MAX_READ_BYTES;
/** Unit_Key_RO.inf is 512 KiB on pressed discs. */
export const UNIT_KEY_MAX_BYTES = MAX_READ_BYTES;
/** libdvdread hashes at most this many IFOs: VIDEO_TS.IFO and VTS_01_0.IFO … VTS_09_0.IFO. */
const DVD_DISC_ID_MAX_FILES = 10;
/** A disc with more files than this gets no file fingerprint (a BD-J disc has a few thousand). */
export const MAX_DISC_FILES = 50_000;
const MAX_WALK_DEPTH = 32;

const hex = (digest: Buffer, upper: boolean): string => (upper ? digest.toString('hex').toUpperCase() : digest.toString('hex'));

/**
 * DVDDiscID of libdvdread from the IFOs by title-set number (0 = VIDEO_TS.IFO): the title-set count is
 * the big-endian u16 at 0x3E of VIDEO_TS.IFO; VIDEO_TS.IFO and VTS_nn_0.IFO for nn = 1 … count, at most
 * 10 files in all, a missing one skipped; each file as libdvdread sees it, in whole 2048-byte sectors
 * (a real IFO is a whole number of sectors, so that is all of it). Upper-case hex, as TheDiscDB stores
 * it. Null without a VIDEO_TS.IFO that libdvdread would open (magic DVDVIDEO-VMG).
 */
export function dvdDiscIdOf(ifos: ReadonlyMap<number, Buffer>): string | null {
  const vmg = ifos.get(0);
  if (!vmg || vmg.length < 0x40 || vmg.toString('latin1', 0, 12) !== 'DVDVIDEO-VMG') return null;
  const titleSets = vmg.readUInt16BE(0x3e);
  const md5 = createHash('md5');
  for (let n = 0; n < DVD_DISC_ID_MAX_FILES && n <= titleSets; n++) {
    const ifo = ifos.get(n);
    if (ifo) md5.update(ifo.subarray(0, ifo.length - (ifo.length % SECTOR)));
  }
  return hex(md5.digest(), true);
}

/** The IFO names DVDDiscID reads, by title-set number. */
export function ifoName(titleSet: number): string {
  return titleSet === 0 ? 'VIDEO_TS.IFO' : `VTS_${String(titleSet).padStart(2, '0')}_0.IFO`;
}

/** A whole small file, or null when it is missing, unreadable or larger than `cap`. */
async function readWhole(tree: DiscTree, filePath: readonly string[], cap: number): Promise<Buffer | null> {
  const head = await tree.readFile(filePath, cap).catch(() => null);
  return head && head.size <= cap && head.data.length === head.size ? head.data : null;
}

/** DVDDiscID read from a disc tree (VIDEO_TS.IFO first; the title-set IFOs it counts). */
export async function readDvdDiscId(tree: DiscTree): Promise<string | null> {
  const vmg = await readWhole(tree, ['VIDEO_TS', ifoName(0)], IFO_MAX_BYTES);
  if (!vmg || vmg.length < 0x40) return null;
  const ifos = new Map<number, Buffer>([[0, vmg]]);
  const titleSets = Math.min(vmg.readUInt16BE(0x3e), DVD_DISC_ID_MAX_FILES - 1);
  for (let n = 1; n <= titleSets; n++) {
    const ifo = await readWhole(tree, ['VIDEO_TS', ifoName(n)], IFO_MAX_BYTES);
    if (ifo) ifos.set(n, ifo);
  }
  return dvdDiscIdOf(ifos);
}

/** SHA-1 of the bytes of Unit_Key_RO.inf, 40 upper-case hex digits. */
export function aacsDiscIdOf(unitKeyRo: Buffer): string {
  return hex(createHash('sha1').update(unitKeyRo).digest(), true);
}

/** The AACS disc id from AACS/Unit_Key_RO.inf, else AACS/DUPLICATE/Unit_Key_RO.inf; null when neither can be read. */
export async function readAacsDiscId(tree: DiscTree): Promise<string | null> {
  for (const filePath of [
    ['AACS', 'Unit_Key_RO.inf'],
    ['AACS', 'DUPLICATE', 'Unit_Key_RO.inf'],
  ]) {
    const data = await readWhole(tree, filePath, UNIT_KEY_MAX_BYTES);
    if (data) return aacsDiscIdOf(data);
  }
  return null;
}

/**
 * TheDiscDB's ContentHash: the files sorted ordinally by bare name, each file's size fed to MD5 as an
 * 8-byte little-endian signed integer (nothing else), 32 upper-case hex digits. Null for no files
 * (TheDiscDB never computes that case).
 */
export function contentHashOf(files: readonly { name: string; size: number }[]): string | null {
  if (files.length === 0) return null;
  const md5 = createHash('md5');
  const size = Buffer.alloc(8);
  for (const file of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    size.writeBigInt64LE(BigInt(file.size));
    md5.update(size);
  }
  return hex(md5.digest(), true);
}

/** The ContentHash files: Blu-ray `BDMV/STREAM/*.m2ts` (direct children; SSIF/ and BACKUP/ never count), DVD every file directly in VIDEO_TS. */
export async function readContentHash(tree: DiscTree, layout: 'dvd' | 'bluray'): Promise<string | null> {
  const dir = layout === 'bluray' ? ['BDMV', 'STREAM'] : ['VIDEO_TS'];
  const entries = await tree.list(dir).catch(() => null);
  if (!entries) return null;
  const files: { name: string; size: number }[] = [];
  for (const entry of entries) {
    if (entry.isDirectory || entry.isFile === false) continue;
    if (layout === 'bluray' && !entry.name.toLowerCase().endsWith('.m2ts')) continue;
    const head = await tree.readFile([...dir, entry.name], 0).catch(() => null);
    if (!head) return null;
    files.push({ name: entry.name, size: head.size });
  }
  return contentHashOf(files);
}

/**
 * matrix256 v1: every regular file's path (from the root, `/` between names, NFC, UTF-8) sorted by its
 * bytes, each as `path NUL size LF` (size in decimal), SHA-256, 64 lower-case hex digits. Null when
 * two paths are the same after NFC (the reference rejects such a tree).
 */
export function fileFingerprintOf(files: readonly DiscFile[]): string | null {
  const encoded = files.map((f) => ({ path: Buffer.from(f.path.normalize('NFC'), 'utf8'), size: f.size }));
  encoded.sort((a, b) => Buffer.compare(a.path, b.path));
  const sha = createHash('sha256');
  for (let i = 0; i < encoded.length; i++) {
    if (i > 0 && encoded[i].path.equals(encoded[i - 1].path)) return null;
    sha.update(encoded[i].path);
    sha.update(`\0${encoded[i].size}\n`);
  }
  return sha.digest('hex');
}

/**
 * Every file of a disc tree with its size (read from the file system, no content), depth first.
 * Null when a directory or file cannot be read, the tree is deeper than 32 levels, holds more than
 * `maxFiles` files, or `deadline` (a Date.now() value) passes: no fingerprint beats a wrong one.
 */
export async function listDiscFiles(tree: DiscTree, maxFiles = MAX_DISC_FILES, deadline = Infinity): Promise<DiscFile[] | null> {
  const files: DiscFile[] = [];
  async function walk(dir: string[]): Promise<boolean> {
    if (dir.length > MAX_WALK_DEPTH || Date.now() > deadline) return false;
    const entries = await tree.list(dir).catch(() => null);
    if (!entries) return false;
    for (const entry of entries) {
      const entryPath = [...dir, entry.name];
      if (entry.isDirectory) {
        if (!(await walk(entryPath))) return false;
        continue;
      }
      if (entry.isFile === false) continue; // symbolic links, devices, FIFOs, sockets
      if (files.length >= maxFiles || Date.now() > deadline) return false;
      const head = await tree.readFile(entryPath, 0).catch(() => null);
      if (!head) return false;
      files.push({ path: entryPath.join('/'), size: head.size });
    }
    return true;
  }
  return (await walk([])) ? files : null;
}

/** How long reading a disc's ids may take before the file fingerprint is given up (a slow drive, a huge tree). */
export const DISC_IDS_BUDGET_MS = 60_000;

/**
 * The ids of a DVD or Blu-ray tree. `files` is the disc's file list when the caller has it already (a
 * disc folder walked for its size); otherwise the tree is walked once.
 */
export async function readDiscIds(tree: DiscTree, layout: 'dvd' | 'bluray', files?: readonly DiscFile[] | null): Promise<DiscIds> {
  const deadline = Date.now() + DISC_IDS_BUDGET_MS;
  const dvd_disc_id = layout === 'dvd' ? await readDvdDiscId(tree) : null;
  const aacs_disc_id = layout === 'bluray' ? await readAacsDiscId(tree) : null;
  const content_hash = await readContentHash(tree, layout);
  const list = files ?? (await listDiscFiles(tree, MAX_DISC_FILES, deadline));
  return { dvd_disc_id, aacs_disc_id, content_hash, file_fingerprint: list ? fileFingerprintOf(list) : null };
}

/**
 * The disc's identity key: the first id that could be read, by kind: DVD `dvd:<DVDDiscID>`; Blu-ray and
 * UHD `aacs:<AACS disc id>`, else `files:<matrix256>`; audio CD `mb:<MusicBrainz disc id>`. Where none
 * can be read, the label fingerprint.
 */
export function identityKey(type: DiscType, ids: DiscIds | null | undefined, labelFingerprint: string, musicbrainzDiscId?: string | null): string {
  if (type === 'dvd' && ids?.dvd_disc_id) return `dvd:${ids.dvd_disc_id}`;
  if (type === 'bluray' || type === 'uhd') {
    if (ids?.aacs_disc_id) return `aacs:${ids.aacs_disc_id}`;
    if (ids?.file_fingerprint) return `files:${ids.file_fingerprint}`;
  }
  if (type === 'cd' && musicbrainzDiscId) return `mb:${musicbrainzDiscId}`;
  return labelFingerprint;
}
