/**
 * One DVD title out of its title set: the cells of the title, in play order, cut from the set's
 * title VOBs (VTS_nn_1.VOB, VTS_nn_2.VOB … read as one run of 2048-byte sectors) into one file.
 *
 * Why not `dvdbackup -t N`: dvdbackup 0.4.2's title copy loses sectors where cells meet. On the
 * test image (scripts/make-dvd-image.sh, a 305 s title with a chapter every 5 s) it wrote 7616 of
 * 7625 frames with 198 decoder errors, and HandBrake then dropped 90 more frames on the broken
 * timestamps (a 301 s film from a 305 s title). The title set copied whole (`dvdbackup -T`) is
 * byte for byte the disc's, and the cells lsdvd names cut the title from it exactly.
 */
import fs from 'node:fs/promises';
import { DVD_SECTOR } from './dvdbackup-parser.js';

const CHUNK = 1024 * 1024;

/** Writes the cells' sectors of `vobs` (in that order, as one sector run) to `outFile`; returns its bytes. */
export async function joinTitleCells(vobs: string[], cells: { first: number; last: number }[], outFile: string): Promise<number> {
  const parts: { file: string; start: number; bytes: number }[] = [];
  let start = 0;
  for (const file of vobs) {
    const bytes = (await fs.stat(file)).size;
    parts.push({ file, start, bytes });
    start += bytes;
  }
  const total = start;
  const out = await fs.open(outFile, 'w');
  const handles = new Map<string, fs.FileHandle>();
  const buf = Buffer.alloc(CHUNK);
  let written = 0;
  try {
    for (const cell of cells) {
      let at = cell.first * DVD_SECTOR;
      const end = (cell.last + 1) * DVD_SECTOR;
      if (end > total) throw new Error(`the title's cell at sectors ${cell.first}-${cell.last} lies past the end of the copied title set (${total / DVD_SECTOR} sectors)`);
      while (at < end) {
        const part = parts.find((p) => at >= p.start && at < p.start + p.bytes);
        if (!part) throw new Error(`no copied VOB holds sector ${at / DVD_SECTOR}`);
        let handle = handles.get(part.file);
        if (!handle) {
          handle = await fs.open(part.file, 'r');
          handles.set(part.file, handle);
        }
        const length = Math.min(CHUNK, end - at, part.start + part.bytes - at);
        const { bytesRead } = await handle.read(buf, 0, length, at - part.start);
        if (bytesRead !== length) throw new Error(`${part.file} ended early at byte ${at - part.start + bytesRead}`);
        await out.write(buf, 0, length);
        at += length;
        written += length;
      }
    }
  } finally {
    for (const h of handles.values()) await h.close();
    await out.close();
  }
  return written;
}
