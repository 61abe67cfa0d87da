import { XMLParser } from 'fast-xml-parser';

/**
 * Pure parsing of lsdvd 0.17 output (dvd-tools.md §2): `lsdvd -Ox -a -c` XML, its error exits, and
 * the libdvdread "no css library" banner (which by itself is not an error).
 */

export interface LsdvdTitle {
  number: number;
  seconds: number;
  /** Length of each chapter in seconds, in order. */
  chapters: number[];
  /** ISO 639-2/B code per audio stream, in lsdvd's order ("und" when the disc does not say). */
  audioLangs: string[];
  /** MPEG stream id per audio stream (0x80 = first AC-3), null when lsdvd did not print it. */
  audioStreamIds: (number | null)[];
}

export interface LsdvdDisc {
  label: string;
  /** lsdvd's "Longest track": the main feature. */
  longest: number;
  titles: LsdvdTitle[];
}

const ARRAY_TAGS = new Set(['track', 'audio', 'chapter', 'cell', 'subp', 'angle']);

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

function streamId(value: unknown): number | null {
  const raw = text(value);
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(raw)) return null;
  return Number(raw);
}

function parseTrack(track: Node): LsdvdTitle {
  const audio = asList(track.audio);
  return {
    number: number(track.ix),
    seconds: number(track.length),
    chapters: asList(track.chapter).map((c) => number(c.length)),
    audioLangs: audio.map((a) => toMatroskaLanguage(text(a.langcode))),
    audioStreamIds: audio.map((a) => streamId(a.streamid)),
  };
}

/** `lsdvd -Ox -a -c` stdout (banner lines before `<?xml` are dropped) → label, main feature, titles. */
export function parseLsdvdXml(stdout: string): LsdvdDisc {
  const start = stdout.indexOf('<?xml');
  if (start === -1) throw new Error('lsdvd printed no XML');
  const doc = asNode(xml.parse(escapeStrayAmpersands(stdout.slice(start))));
  const root = asNode(doc.lsdvd);
  const titles = asList(root.track).map(parseTrack);
  return { label: text(root.title), longest: number(root.longest_track), titles };
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

/** ISO 639-1 → ISO 639-2/B (the form Matroska expects) for languages found on DVDs. */
const ISO639_1_TO_2B: Record<string, string> = {
  af: 'afr', ar: 'ara', bg: 'bul', bn: 'ben', bs: 'bos', ca: 'cat', cs: 'cze', cy: 'wel', da: 'dan', de: 'ger',
  el: 'gre', en: 'eng', eo: 'epo', es: 'spa', et: 'est', eu: 'baq', fa: 'per', fi: 'fin', fr: 'fre', ga: 'gle',
  gd: 'gla', gl: 'glg', he: 'heb', hi: 'hin', hr: 'hrv', hu: 'hun', hy: 'arm', id: 'ind', is: 'ice', it: 'ita',
  iw: 'heb', ja: 'jpn', ka: 'geo', kk: 'kaz', km: 'khm', ko: 'kor', ku: 'kur', la: 'lat', lb: 'ltz', lt: 'lit',
  lv: 'lav', mk: 'mac', ml: 'mal', mn: 'mon', ms: 'may', mt: 'mlt', nb: 'nob', nl: 'dut', nn: 'nno', no: 'nor',
  pa: 'pan', pl: 'pol', pt: 'por', ro: 'rum', ru: 'rus', sk: 'slo', sl: 'slv', sq: 'alb', sr: 'srp', sv: 'swe',
  sw: 'swa', ta: 'tam', te: 'tel', th: 'tha', tl: 'tgl', tr: 'tur', uk: 'ukr', ur: 'urd', vi: 'vie', yi: 'yid',
  zh: 'chi', zu: 'zul',
};

/** A DVD language code (2 letters, "xx" = unknown) → ISO 639-2/B, "und" when unknown. */
export function toMatroskaLanguage(code: string): string {
  const c = code.trim().toLowerCase();
  if (/^[a-z]{3}$/.test(c)) return c;
  return ISO639_1_TO_2B[c] ?? 'und';
}
