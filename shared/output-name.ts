/**
 * Names of output folders and files. They must be valid on Linux and readable through an SMB share from
 * Windows, and they follow the media-server convention `Title (Year)`.
 */

/** Upper bound of a name in UTF-8 bytes; common file systems allow 255, the rest is room for suffixes. */
export const MAX_NAME_BYTES = 200;

/** The name used when nothing usable is left of a title. */
export const FALLBACK_NAME = 'Unbenannt';

const RESERVED_WINDOWS = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])$/i;
const encoder = new TextEncoder();
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes at a grapheme boundary (never inside a character). */
function capBytes(text: string, maxBytes: number): string {
  if (byteLength(text) <= maxBytes) return text;
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const size = byteLength(segment);
    if (used + size > maxBytes) break;
    out += segment;
    used += size;
  }
  return out;
}

/** Removes trailing dots and spaces (Windows drops them silently) and leading dots and spaces (hidden on Linux). */
function trimEnds(text: string): string {
  return text.replace(/^[.\s]+/u, '').replace(/[.\s]+$/u, '');
}

/** Appends "_" to a Windows device name, also when an extension follows ("CON.nfo" → "CON_.nfo"). */
function avoidReserved(name: string): string {
  const dot = name.indexOf('.');
  const stem = dot === -1 ? name : name.slice(0, dot);
  if (!RESERVED_WINDOWS.test(stem.trimEnd())) return name;
  return `${stem.trimEnd()}_${dot === -1 ? '' : name.slice(dot)}`;
}

function sanitise(title: string, maxBytes: number, checkReserved: boolean): string {
  let name = String(title ?? '').normalize('NFC');
  name = name.replace(/[\u0000-\u001f\u007f]/gu, ' ');
  name = name.replace(/\s*:\s*/gu, ' - ');
  name = name.replace(/\//gu, '-');
  name = name.replace(/"/gu, "'");
  name = name.replace(/[\\*?<>|]/gu, '');
  name = name.replace(/\s+/gu, ' ');
  name = trimEnds(name);
  name = trimEnds(capBytes(name, maxBytes));
  if (checkReserved) name = avoidReserved(name);
  return name.length > 0 ? name : FALLBACK_NAME;
}

/**
 * A folder or file name made from a title.
 *
 * `:` becomes " - " ("Alien: Covenant" → "Alien - Covenant"), `/` becomes "-", `"` becomes `'`, and
 * `\ * ? < > |` and control characters are removed. Whitespace is collapsed; leading and trailing dots and
 * spaces are removed (a leading dot would hide the entry on Linux). Letters beyond ASCII stay (NFC form).
 * Windows device names (CON, PRN, AUX, NUL, COM1..9, LPT1..9) get "_" appended. The result holds at most
 * 200 UTF-8 bytes without splitting a character, and is never empty ("Unbenannt").
 */
export function safeName(title: string): string {
  return sanitise(title, MAX_NAME_BYTES, true);
}

function normaliseYear(year: number | string | null | undefined): string | null {
  if (year === null || year === undefined) return null;
  const text = typeof year === 'number' ? (Number.isInteger(year) ? String(year) : '') : year.trim();
  return /^\d{4}$/.test(text) ? text : null;
}

/**
 * The output folder name `Title (Year)`; without a usable four-digit year just the safe title.
 *
 * A year is never doubled:
 * - a title ending in "(1999)" keeps its year when no year is given; with a year given, that year
 *   replaces the one in brackets ("Movie (1999)" + 1999 → "Movie (1999)");
 * - a title ending in " 1999" with the year 1999 becomes "Movie (1999)"; a different trailing number is
 *   part of the title ("Blade Runner 2049" + 2017 → "Blade Runner 2049 (2017)").
 */
export function folderName(title: string, year?: number | string | null): string {
  const yearText = normaliseYear(year);
  if (yearText === null) return safeName(title);
  const suffix = ` (${yearText})`;
  let base = String(title ?? '').normalize('NFC').trim();
  const bracketed = /\s*\(\d{4}\)$/u.exec(base);
  if (bracketed) {
    base = base.slice(0, bracketed.index);
  } else if (base.endsWith(yearText) && /\s$/u.test(base.slice(0, -yearText.length))) {
    base = base.slice(0, -yearText.length);
  }
  // The year suffix already makes a Windows device name harmless ("Con (1999)"), so no "_" is added.
  const name = sanitise(base, MAX_NAME_BYTES - byteLength(suffix), false);
  return `${name}${suffix}`;
}

/**
 * Name for a folder that collides with an existing one: `Name [<first 8 characters of the job id>]`.
 * Throws a RangeError for an id without usable characters.
 */
export function withCollisionSuffix(name: string, jobId: string): string {
  const shortId = String(jobId ?? '')
    .trim()
    .replace(/[^A-Za-z0-9_-]/gu, '')
    .slice(0, 8);
  if (shortId.length === 0) throw new RangeError('job id must not be empty');
  return `${name} [${shortId}]`;
}

/** Season folder of a series, two digits at least: 1 → "Season 01", 0 (specials) → "Season 00". */
export function seasonFolder(season: number): string {
  if (!Number.isInteger(season) || season < 0) throw new RangeError(`season must be a whole number of 0 or more, got ${season}`);
  return `Season ${String(season).padStart(2, '0')}`;
}

/**
 * A readable title from a disc label: underscores become spaces, whitespace is collapsed, and every word
 * gets its first letter in upper case and the rest in lower case ("MY_TEST_MOVIE" → "My Test Movie").
 * Digits stay; in a word that starts with digits the first letter is raised ("3D" stays "3D").
 */
export function normaliseDiscLabel(label: string): string {
  const words = String(label ?? '')
    .normalize('NFC')
    .replace(/_/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim()
    .split(' ')
    .filter((word) => word.length > 0);
  return words
    .map((word) => word.toLowerCase().replace(/\p{L}/u, (letter) => letter.toUpperCase()))
    .join(' ');
}
