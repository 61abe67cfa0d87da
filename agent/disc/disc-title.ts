import { normaliseDiscLabel } from '../../shared/output-name.js';

/** Labels that name the format or the mastering tool, not the film. */
const GENERIC_LABELS = new Set([
  '',
  'DVD',
  'DVD_VIDEO',
  'DVDVIDEO',
  'DVD_ROM',
  'VIDEO_TS',
  'BDROM',
  'BD_ROM',
  'BDMV',
  'BLURAY',
  'BLU_RAY',
  'LOGICAL_VOLUME_ID',
  'VOLUME_ID',
  'LINUXUDF',
  'CDROM',
  'CD_ROM',
  'NO_NAME',
  'UNTITLED',
  'UNDEFINED',
]);

/** True for labels such as DVD_VIDEO, BDROM or LOGICAL_VOLUME_ID that say nothing about the disc. */
export function isGenericLabel(label: string): boolean {
  return GENERIC_LABELS.has(label.trim().toUpperCase().replace(/[\s-]+/gu, '_'));
}

/** Trailing words that mark a disc of a set (D1, DISC2, DISK_3) or the picture format (WS, FS, 16X9, 4X3). */
const MARKER_WORD = /^(D\d{1,2}|DIS[CK]\d{1,2}|WS|FS|16X9|4X3)$/iu;
const DISC_WORD = /^DIS[CK]$/iu;
const NUMBER_WORD = /^\d{1,2}$/u;
const YEAR_WORD = /^(19|20)\d{2}$/u;

function stripMarkers(words: string[]): void {
  for (;;) {
    const last = words.at(-1) ?? '';
    if (words.length > 1 && MARKER_WORD.test(last)) words.pop();
    else if (words.length > 2 && NUMBER_WORD.test(last) && DISC_WORD.test(words.at(-2) ?? '')) words.splice(-2, 2);
    else return;
  }
}

/**
 * Display title and year from a raw disc label: disc and picture-format markers at the end are dropped,
 * a trailing 19xx/20xx becomes the year, and the rest is normalised (underscores to spaces, each word
 * capitalised): MY_MOVIE_2003_D1 → "My Movie", 2003. A label that is only a year stays the title.
 */
export function titleFromLabel(label: string): { title: string; year: number | null } {
  const words = String(label ?? '')
    .normalize('NFC')
    .split(/[_\s]+/u)
    .filter((w) => w.length > 0);
  stripMarkers(words);
  let year: number | null = null;
  if (words.length > 1 && YEAR_WORD.test(words.at(-1) ?? '')) {
    year = Number(words.pop());
    stripMarkers(words);
  }
  return { title: normaliseDiscLabel(words.join(' ')), year };
}
