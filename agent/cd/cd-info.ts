import type { CdText } from '../../shared/protocol.js';
import type { DiscLayout, TocTrack } from './cd-toc.js';

/**
 * The CD-Text blocks of `cd-info` (libcdio-utils): "CD-TEXT for Disc:" and "CD-TEXT for Track  N:",
 * each followed by tab-indented "TITLE: …" / "PERFORMER: …" lines (audio-cd.md §3). cdparanoia does
 * not read CD-Text. Only the first language block counts; null when the output holds no title or performer.
 */
export function parseCdInfoCdText(output: string): CdText | null {
  const text: CdText = { title: null, performer: null, tracks: [] };
  let current: { title: string | null; performer: string | null } | null = null;
  const seen = new Set<string>();
  let any = false;
  for (const line of output.split(/\r?\n/)) {
    const block = /^CD-TEXT for (Disc|Track\s+(\d+)):\s*$/.exec(line.trim());
    if (block) {
      const key = block[2] ? `t${Number(block[2])}` : 'disc';
      if (seen.has(key)) {
        current = null; // a later language block
        continue;
      }
      seen.add(key);
      if (block[2]) {
        const track = { number: Number(block[2]), title: null, performer: null };
        text.tracks.push(track);
        current = track;
      } else {
        current = text;
      }
      continue;
    }
    const field = /^\s+(TITLE|PERFORMER):\s?(.*)$/.exec(line);
    if (field && current) {
      const value = field[2].trim() || null;
      if (field[1] === 'TITLE') current.title = value;
      else current.performer = value;
      if (value) any = true;
    } else if (line.trim() && !/^\s/.test(line)) {
      current = null;
    }
  }
  return any ? text : null;
}

/**
 * The "CD-ROM Track List" of `cd-info`: every track with its LSN and type (`audio`, `data`, `XA`,
 * `CD-i`, ...; audio-cd.md §3) and the lead-out row `170: … leadout`. Unlike `cdparanoia -Q` it
 * keeps the data tracks of mixed-mode and enhanced CDs, which the disc id needs. Null when the
 * output has no such list.
 */
export function parseCdInfoToc(output: string): DiscLayout | null {
  const tracks: TocTrack[] = [];
  let leadout: number | null = null;
  for (const line of output.split(/\r?\n/)) {
    const m = /^\s*(\d+):\s+\d+:\d+:\d+\s+(\d+)\s+(\S+)/.exec(line);
    if (!m) continue;
    const [n, lsn, type] = [Number(m[1]), Number(m[2]), m[3]];
    if (type === 'leadout') leadout = lsn;
    else if (n >= 1 && n <= 99) tracks.push({ number: n, lba: lsn, audio: type === 'audio' });
  }
  return tracks.length && leadout !== null ? { tracks, leadout } : null;
}
