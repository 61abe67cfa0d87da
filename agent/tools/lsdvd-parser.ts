import { XMLParser } from 'fast-xml-parser';
import { normaliseLanguage } from '../../shared/languages.js';
import { audioCodec } from './stream-codec.js';

/**
 * Pure parsing of lsdvd 0.17 output (dvd-tools.md §2): `lsdvd -Ox -a -s -c -v -P` XML, its error
 * exits, and the libdvdread "no css library" banner (which by itself is not an error).
 */

export interface LsdvdTitle {
  number: number;
  seconds: number;
  /** Length of each chapter in seconds, in order. */
  chapters: number[];
  /** The audio streams in lsdvd's (the IFO's) order. */
  audio: LsdvdAudio[];
  /** The subpicture streams in the IFO's order (`lsdvd -s`). */
  subtitles: LsdvdSubpicture[];
  /**
   * The colour lookup table of the title's program chain (`lsdvd -P`): the 16 colours its subpictures
   * index, each 0x00YYCrCb as the IFO stores it; empty when lsdvd printed no palette of 16 colours.
   */
  palette: number[];
  /** The video standard from the title set's video attributes (`lsdvd -v`); null when not printed. */
  videoFormat: 'PAL' | 'NTSC' | null;
  /** The video height lsdvd printed (`lsdvd -v`: 576, 480, 288 …); null when not printed. */
  videoHeight: number | null;
}

export interface LsdvdAudio {
  /** ISO 639-2/T ("und" when the disc does not say: lsdvd prints "xx" or nothing). */
  language: string;
  /** ac3, dts, lpcm, mp2 … */
  codec: string;
  channels: number | null;
  /** MPEG stream id (0x80 = first AC-3), null when lsdvd did not print it. */
  streamId: number | null;
  /** The IFO's content code says "Comments1" or "Comments2" (director's comments). */
  commentary: boolean;
  /** The IFO's content code says "Impaired": audio description for the visually impaired. */
  visualImpaired: boolean;
}

export interface LsdvdSubpicture {
  language: string;
  /** The IFO's content code says "Forced". */
  forced: boolean;
  /** Closed captions ("Normal_CC", "Large_CC", "Children_CC"): for the hard of hearing. */
  hearingImpaired: boolean;
  /** Subtitles of the director's comments ("Director", "Large_Director", "Children_Director"). */
  commentary: boolean;
  /** Private stream 1 sub-id, 0x20..0x3f; null when lsdvd did not print it. */
  streamId: number | null;
}

export interface LsdvdDisc {
  label: string;
  /** lsdvd's "Longest track": the main feature. */
  longest: number;
  titles: LsdvdTitle[];
}

const ARRAY_TAGS = new Set(['track', 'audio', 'chapter', 'cell', 'subp', 'angle', 'color']);

const xml = new XMLParser({
  parseTagValue: false,
  ignoreAttributes: true,
  isArray: (tagName) => ARRAY_TAGS.has(tagName),
});

/** libdvdread prints this on stdout whenever libdvdcss is absent, for every disc (encrypted or not). */
export function cssLibraryMissing(text: string): boolean {
  return text.includes('Encrypted DVD support unavailable') || text.includes('No css library available');
}

/** lsdvd writes values like `P&S + Letter` with a raw `&` (with -x/-v): escape stray ampersands. */
function escapeStrayAmpersands(text: string): string {
  return text.replace(/&(?!(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);)/g, '&amp;');
}

type Node = Record<string, unknown>;

function asNode(value: unknown): Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Node) : {};
}

function asList(value: unknown): Node[] {
  return Array.isArray(value) ? value.map(asNode) : [];
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '';
}

function number(value: unknown): number {
  const n = Number(text(value));
  return Number.isFinite(n) ? n : 0;
}

/** `<palette><color>eb8080</color>…` → 16 numbers (0x00YYCrCb); [] unless all 16 are six hex digits. */
function palette(value: unknown): number[] {
  const colors = (Array.isArray(asNode(value).color) ? (asNode(value).color as unknown[]) : []).map(text);
  if (colors.length !== 16 || !colors.every((c) => /^[0-9a-f]{6}$/i.test(c))) return [];
  return colors.map((c) => parseInt(c, 16));
}

function videoFormat(value: unknown): LsdvdTitle['videoFormat'] {
  const raw = text(value).toUpperCase();
  return raw === 'PAL' || raw === 'NTSC' ? raw : null;
}

function streamId(value: unknown): number | null {
  const raw = text(value);
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(raw)) return null;
  return Number(raw);
}

/**
 * lsdvd's words for the IFO's content codes (its audio_type and subp_type tables): audio "Undefined",
 * "Normal", "Impaired", "Comments1", "Comments2"; subpictures "Undefined", "Normal", "Large",
 * "Children", "Normal_CC", "Large_CC", "Children_CC", "Forced", "Director", "Large_Director",
 * "Children_Director" (and "reserved").
 */
export const LSDVD_CONTENT = {
  audioCommentary: /^comments[12]$/i,
  audioVisualImpaired: /^impaired$/i,
  subpictureForced: /^forced/i,
  subpictureClosedCaption: /^(normal|large|children)_cc$/i,
  subpictureCommentary: /^(large_|children_)?director$/i,
} as const;

function parseTrack(track: Node): LsdvdTitle {
  return {
    number: number(track.ix),
    seconds: number(track.length),
    chapters: asList(track.chapter).map((c) => number(c.length)),
    audio: asList(track.audio).map((a) => ({
      language: normaliseLanguage(text(a.langcode)),
      codec: audioCodec(text(a.format)),
      channels: number(a.channels) || null,
      streamId: streamId(a.streamid),
      commentary: LSDVD_CONTENT.audioCommentary.test(text(a.content)),
      visualImpaired: LSDVD_CONTENT.audioVisualImpaired.test(text(a.content)),
    })),
    subtitles: asList(track.subp).map((sp) => ({
      language: normaliseLanguage(text(sp.langcode)),
      forced: LSDVD_CONTENT.subpictureForced.test(text(sp.content)),
      streamId: streamId(sp.streamid),
      hearingImpaired: LSDVD_CONTENT.subpictureClosedCaption.test(text(sp.content)),
      commentary: LSDVD_CONTENT.subpictureCommentary.test(text(sp.content)),
    })),
    palette: palette(track.palette),
    videoFormat: videoFormat(track.format),
    videoHeight: number(track.height) || null,
  };
}

/** `lsdvd -Ox -a -s -c -v -P` stdout (banner lines before `<?xml` are dropped) → label, main feature, titles. */
export function parseLsdvdXml(stdout: string): LsdvdDisc {
  const start = stdout.indexOf('<?xml');
  if (start === -1) throw new Error('lsdvd printed no XML');
  const doc = asNode(xml.parse(escapeStrayAmpersands(stdout.slice(start))));
  const root = asNode(doc.lsdvd);
  const titles = asList(root.track).map(parseTrack);
  return { label: text(root.title), longest: number(root.longest_track), titles };
}

/** Where one title lies in its title set: the set's number and its cells' sectors in play order. */
export interface LsdvdTitleCells {
  /** The title set (VTS_nn_*.VOB) that holds the title. */
  titleSet: number;
  /** Sectors of each cell (first and last, both included), counted from the start of the set's title VOBs. */
  cells: { first: number; last: number }[];
}

/**
 * `lsdvd -t N -x -Oy SRC` (Python literal) → the title's set and cell sectors. lsdvd 0.17 prints the
 * sectors only in its Python, Perl and Ruby output (the XML leaves them out), so this reads the
 * Python form: one `'vts' : n` per title, one `'first_sector'`/`'last_sector'` pair per cell.
 */
export function parseLsdvdTitleCells(stdout: string): LsdvdTitleCells {
  const set = /'vts'\s*:\s*(\d+)/.exec(stdout);
  if (!set) throw new Error('lsdvd printed no title set');
  const cells: { first: number; last: number }[] = [];
  for (const m of stdout.matchAll(/'first_sector'\s*:\s*(\d+),\s*'last_sector'\s*:\s*(\d+)/g)) {
    const first = Number(m[1]);
    const last = Number(m[2]);
    if (last < first) throw new Error(`lsdvd printed a cell that ends before it starts (${first}-${last})`);
    cells.push({ first, last });
  }
  if (cells.length === 0) throw new Error('lsdvd printed no cells');
  return { titleSet: Number(set[1]), cells };
}

/** A household-readable reason for a failed lsdvd run (exit 1: path missing, exit 3: not a DVD). */
export function lsdvdError(stderr: string, exitCode: number | null): string {
  const missing = /Can't find device (.+)$/m.exec(stderr);
  if (missing) return `The disc or image ${missing[1].trim()} was not found`;
  if (exitCode === 1) return 'The disc or image was not found';
  if (/Can't open main ifo/.test(stderr) || exitCode === 3) return 'This is not a readable DVD-Video disc: it has no usable VIDEO_TS';
  const last = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('*') && !cssLibraryMissing(l))
    .pop();
  const how = exitCode === null ? 'was stopped by a signal' : `failed with exit code ${exitCode}`;
  return `Reading the DVD's title list ${how}${last ? `: ${last}` : ''}`;
}
