/**
 * Names of output folders and files. They must be valid on Linux and readable through an SMB share from
 * Windows, and they follow the media-server convention `Title (Year)`.
 */

/** Upper bound of a name in UTF-8 bytes; common file systems allow 255, the rest is room for suffixes. */
export const MAX_NAME_BYTES = 200;

/** The name used when nothing usable is left of a title. */
export const FALLBACK_NAME = 'Unbenannt';

const RESERVED_WINDOWS = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])$/i;

/**
 * Words Jellyfin's CleanStrings and Kodi's default video clean strings take for a release tag when a
 * separator (space, `_ , . ( ) [ ] -`) stands before them, cutting the title there ("AC-DC" reads as
 * "AC"). Single words only, lower case; from Jellyfin's Emby.Naming NamingOptions.CleanStrings and
 * Kodi's CAdvancedSettings m_videoCleanStringRegExps (docs/library.md, "How the servers read the names").
 */
export const RELEASE_TAGS: readonly string[] = [
  '3d', '4k', 'aac', 'ac3', 'aka', 'atmos', 'avi', 'bd', 'bd5', 'bdremux', 'bdrip', 'bluray', 'brrip', 'cam', 'custom', 'dc', 'ddp', 'divx', 'divx5',
  'dolbydigital', 'dolbyvision', 'dsr', 'dsrip', 'dts', 'dutch', 'dv', 'dvd', 'dvd5', 'dvd9', 'dvdivx', 'dvdrip', 'dvdscr', 'dvdscreener', 'extended',
  'fragment', 'fs', 'german', 'h264', 'h265', 'hdc', 'hddvd', 'hdr', 'hdr10', 'hdrip', 'hdtv', 'hdtvrip', 'hevc', 'hrhd', 'hrhdtv', 'hsbs', 'htab',
  'internal', 'limited', 'multi', 'multisubs', 'mvc', 'nfofix', 'ntsc', 'ogg', 'ogm', 'pal', 'pdtv', 'proper', 'r3', 'r5', 'remastered', 'remux',
  'repack', 'rerip', 'retail', 'sbs', 'screener', 'se', 'subs', 'svcd', 'swedish', 'tab', 'tc', 'telecine', 'telesync', 'truehd', 'ts', 'uhd',
  'ultrahd', 'unrated', 'webrip', 'ws', 'x264', 'x265', 'xvid', 'xvidvd', 'xxx',
];

/**
 * `/` in a movie's or series' title: "-" ("Face/Off" → "Face-Off"), but joined without a separator
 * when the word after it is a release tag the servers would cut the title at ("AC/DC" → "ACDC";
 * "AC-DC" and "AC_DC" both read as "AC" in Jellyfin and Kodi).
 */
function videoSlashes(name: string): string {
  const joinOrDash = (_slash: string, next: string): string => (RELEASE_TAGS.includes(next.toLowerCase()) ? '' : '-');
  return name.replace(/\/(?=([\p{L}\p{N}]+))/gu, joinOrDash).replace(/\//gu, '-');
}

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

function sanitise(title: string, maxBytes: number, checkReserved: boolean, video = false): string {
  let name = String(title ?? '').normalize('NFC');
  name = name.replace(/[\u0000-\u001f\u007f]/gu, ' ');
  name = name.replace(/\s*:\s*/gu, ' - ');
  name = video ? videoSlashes(name) : name.replace(/\//gu, '-');
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

/** U+00A0 NO-BREAK SPACE: looks like a space, and is no separator to Jellyfin's or Kodi's rules. */
export const NO_BREAK_SPACE = '\u00a0';
/** U+2011 NON-BREAKING HYPHEN: looks like "-", and is no separator to Jellyfin's or Kodi's rules. */
export const NO_BREAK_HYPHEN = '\u2011';

/**
 * Words that make a file an extra, or keep it from being scanned, when they end a name after a separator
 * (Jellyfin's CleanStrings `[-._ ](trailer|sample)$` and extra rules "- trailer", "_sample", …) or stand
 * between separators (Kodi's m_moviesExcludeFromScanRegExps `[!-._ \\/]sample[-._ \\/]`).
 */
export const EXTRA_WORDS: readonly string[] = ['trailer', 'sample'];
/** Words Jellyfin takes for an extra after a hyphen at the end of a name ("-scene", "-clip", …); Kodi skips any path with "-trailer". */
export const EXTRA_HYPHEN_WORDS: readonly string[] = [
  'behindthescenes', 'clip', 'deleted', 'deletedscene', 'extra', 'featurette', 'interview', 'other', 'sample', 'scene', 'short', 'trailer',
];
/**
 * Whole names of folders or files that make their videos extras in Jellyfin (its extra folder and file
 * names) or that Kodi does not scan (`[\\/](proof|subs)[\\/]`).
 */
export const EXTRA_NAMES: readonly string[] = [
  'backdrops', 'behind the scenes', 'clips', 'deleted scenes', 'extra', 'extras', 'featurettes', 'interviews', 'other', 'proof', 'sample', 'samples',
  'scenes', 'shorts', 'subs', 'trailer', 'trailers',
];

const wordsGroup = (list: readonly string[]) => list.join('|');
/** The end of the title part of a name: the end, or the year suffix. */
const TITLE_END = String.raw`(?=$| \(\d{4}\)$)`;
const BEFORE_EXTRA_WORD = new RegExp(`[ ._](?=(?:${wordsGroup(EXTRA_WORDS)})${TITLE_END})`, 'giu');
const AFTER_SAMPLE = /(?<=(?<![\p{L}\p{N}])sample)[-._ ]/giu;
const HYPHEN_EXTRA_WORD = new RegExp(`-(?=trailer|(?:${wordsGroup(EXTRA_HYPHEN_WORDS)})${TITLE_END})`, 'giu');
const ENDS_IN_EXTRA_WORD = new RegExp(`(?<![\\p{L}\\p{N}])(?:${wordsGroup(EXTRA_WORDS)})$`, 'iu');

/**
 * A movie's or series' name as a main item, not an extra, for Jellyfin and Kodi (issue 39). Where the
 * title part (before the year suffix) ends in "trailer" or "sample" after a separator, that separator
 * becomes a no-break space (Jellyfin cuts `[-._ ](trailer|sample)$`); a separator after the word "sample"
 * anywhere becomes one too (Kodi skips `sample` between separators); a hyphen before "trailer" anywhere
 * (Kodi skips "-trailer") or before an extra word ending the title part becomes a non-breaking hyphen;
 * a name that ends in such a word or is an extras folder's name ("Shorts", "Proof") gets a trailing
 * no-break space. "Free Sample (2018)" keeps its look with U+00A0 before and after "Sample"; every
 * other name stays as it is.
 */
export function asMainTitle(name: string): string {
  let out = name
    .replace(HYPHEN_EXTRA_WORD, NO_BREAK_HYPHEN)
    .replace(BEFORE_EXTRA_WORD, NO_BREAK_SPACE)
    .replace(AFTER_SAMPLE, (sep) => (sep === '-' ? NO_BREAK_HYPHEN : NO_BREAK_SPACE));
  if (ENDS_IN_EXTRA_WORD.test(out) || EXTRA_NAMES.includes(out.toLowerCase())) out += NO_BREAK_SPACE;
  return out;
}

function titleWithYear(title: string, year: number | string | null | undefined, video: boolean): string {
  const yearText = normaliseYear(year);
  if (yearText === null) return sanitise(title, MAX_NAME_BYTES, true, video);
  const suffix = ` (${yearText})`;
  let base = String(title ?? '').normalize('NFC').trim();
  const bracketed = /\s*\(\d{4}\)$/u.exec(base);
  if (bracketed) base = base.slice(0, bracketed.index);
  // The year suffix already makes a Windows device name harmless ("Con (1999)"), so no "_" is added.
  return `${sanitise(base, MAX_NAME_BYTES - byteLength(suffix), false, video)}${suffix}`;
}

/**
 * A folder name `Title (Year)` (an album's); without a usable four-digit year just the safe title.
 *
 * The title is the metadata's and is kept whole: a number at its end stays even when it equals the year
 * ("Godzilla 2000" + 2000 → "Godzilla 2000 (2000)"; the servers read the title and the year in brackets).
 * Only a year in brackets at the end is taken for an appended one: without a year given it is kept, with
 * one given that year replaces it ("Movie (1999)" + 1999 → "Movie (1999)").
 */
export function folderName(title: string, year?: number | string | null): string {
  return titleWithYear(title, year, false);
}

/**
 * A movie's folder name `Title (Year)`, the base of its file names too: folderName, with a `/` before a
 * release tag joined (videoSlashes) and the name read as a main item, not an extra (asMainTitle).
 */
export function movieFolderName(title: string, year?: number | string | null): string {
  return asMainTitle(titleWithYear(title, year, true));
}

/** The folder of a series: its safe name, with a `/` before a release tag joined (videoSlashes), read as a main item (asMainTitle). */
export function seriesFolderName(series: string): string {
  return asMainTitle(sanitise(series, MAX_NAME_BYTES, true, true));
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

/** The characters Jellyfin's SeasonPathParser removes from a season folder's name and its series folder's name before comparing them. */
const SEASON_PARSER_CLEAN = /[ ._\-[\]]/gu;

/**
 * Season folder of a series, two digits at least: 1 → "Season 01", 0 (specials) → "Season 00".
 *
 * With the series folder's name given: Jellyfin's SeasonPathParser removes the series folder's name
 * (without spaces, dots, underscores, hyphens and brackets, ignoring case) from the season folder's name
 * before it looks for the number, so a series named "On", "S", "Son" or "Sea" loses the season of
 * "Season 01" and a series named "1" gets season 0. Such a series gets "S01", which Jellyfin reads first.
 */
export function seasonFolder(season: number, series?: string): string {
  if (!Number.isInteger(season) || season < 0) throw new RangeError(`season must be a whole number of 0 or more, got ${season}`);
  const number = String(season).padStart(2, '0');
  const name = `Season ${number}`;
  if (series === undefined) return name;
  const parent = series.replace(SEASON_PARSER_CLEAN, '').toLowerCase();
  return parent !== '' && !name.replace(SEASON_PARSER_CLEAN, '').toLowerCase().includes(parent) ? name : `S${number}`;
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

/** The highest episode number of a season among file names ("Show - S02E04.mkv", "S02E03E04" counts 4). */
export function highestEpisode(names: string[], season: number): number {
  let highest = 0;
  const re = /S(\d{1,3})((?:E\d{1,4})+)/gi;
  for (const name of names) {
    for (const m of name.matchAll(re)) {
      if (Number(m[1]) !== season) continue;
      for (const e of m[2].matchAll(/E(\d{1,4})/gi)) highest = Math.max(highest, Number(e[1]));
    }
  }
  return highest;
}
