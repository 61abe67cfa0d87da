/**
 * Pure parsing for dvdbackup 0.4.2 (dvd-tools.md §3): the `-I` summary (VOB sizes per title set and
 * which titles each set holds), title size estimates, error reasons, and a CSS scrambling check of
 * VOB sectors.
 */

export interface DvdbackupInfo {
  /** Bytes of the title VOBs (VTS_nn_1.VOB …, menus VTS_nn_0.VOB excluded) per title set. */
  vobBytes: Map<number, number>;
  /** Title numbers (lsdvd's numbering) per title set. */
  titleSets: Map<number, number[]>;
}

/** `dvdbackup -i SRC -I` stdout → VOB bytes and titles per title set. */
export function parseDvdbackupInfo(stdout: string): DvdbackupInfo {
  const vobBytes = new Map<number, number>();
  const titleSets = new Map<number, number[]>();
  let currentSet: number | null = null;
  for (const line of stdout.split(/\r?\n/)) {
    const vob = /^\s*VTS_(\d+)_([1-9])\.VOB\s+(\d+)/.exec(line);
    if (vob) {
      const set = Number(vob[1]);
      vobBytes.set(set, (vobBytes.get(set) ?? 0) + Number(vob[3]));
      continue;
    }
    const set = /^\s*Title set (\d+)\s*$/.exec(line);
    if (set) {
      currentSet = Number(set[1]);
      titleSets.set(currentSet, []);
      continue;
    }
    const title = /^\s*Title (\d+):\s*$/.exec(line);
    if (title && currentSet !== null) titleSets.get(currentSet)?.push(Number(title[1]));
  }
  return { vobBytes, titleSets };
}

/**
 * Estimated bytes per title: the VOB bytes of its title set shared among the set's titles in
 * proportion to their length (a title alone in its set gets the whole set). Titles whose set is
 * unknown get 0.
 */
export function estimateTitleSizes(titles: { number: number; seconds: number }[], info: DvdbackupInfo): Map<number, number> {
  const seconds = new Map(titles.map((t) => [t.number, Math.max(t.seconds, 0)]));
  const sizes = new Map<number, number>(titles.map((t) => [t.number, 0]));
  for (const [set, members] of info.titleSets) {
    const bytes = info.vobBytes.get(set) ?? 0;
    const total = members.reduce((sum, n) => sum + (seconds.get(n) ?? 0), 0);
    for (const n of members) {
      if (!sizes.has(n)) continue;
      const share = total > 0 ? (seconds.get(n) ?? 0) / total : 1 / members.length;
      sizes.set(n, Math.round(bytes * share));
    }
  }
  return sizes;
}

/** A household-readable reason for a failed dvdbackup run. */
export function dvdbackupError(stderr: string, exitCode: number | null): string {
  const device = /Cannot open specified device (.+?)(?: - check your DVD device)?$/m.exec(stderr);
  if (device) return `The DVD ${device[1].trim()} could not be opened`;
  const last = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('*') && !/Encrypted DVD support unavailable/.test(l))
    .pop();
  const how = exitCode === null ? 'was stopped by a signal' : `failed with exit code ${exitCode}`;
  return `Copying the title off the DVD ${how}${last ? `: ${last}` : ''}`;
}

export const DVD_SECTOR = 2048;

export interface SectorScan {
  /** Sectors that start with an MPEG-2 pack header. */
  packs: number;
  /** Of those, audio/video sectors whose PES scrambling bits are set (CSS). */
  scrambled: number;
}

function isAvStream(id: number): boolean {
  return id === 0xbd || (id >= 0xc0 && id <= 0xef);
}

/**
 * Checks 2048-byte DVD sectors for CSS scrambling the way libdvdcss does: in a pack carrying an
 * audio/video PES packet, the PES_scrambling_control bits (mask 0x30 of the byte after the PES
 * length, offset 0x14 without pack stuffing) are non-zero when the sector is encrypted.
 */
export function scanVobSectors(data: Uint8Array): SectorScan {
  let packs = 0;
  let scrambled = 0;
  for (let off = 0; off + DVD_SECTOR <= data.length; off += DVD_SECTOR) {
    if (data[off] !== 0 || data[off + 1] !== 0 || data[off + 2] !== 1 || data[off + 3] !== 0xba) continue;
    packs++;
    const pes = off + 14 + (data[off + 13] & 0x07);
    if (data[pes] !== 0 || data[pes + 1] !== 0 || data[pes + 2] !== 1 || !isAvStream(data[pes + 3])) continue;
    if ((data[pes + 6] & 0x30) !== 0) scrambled++;
  }
  return { packs, scrambled };
}
