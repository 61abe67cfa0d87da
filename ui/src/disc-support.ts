/**
 * Which disc kinds a worker can rip (GET /system/info `workers[i].disc_kinds`) in words: the rows of
 * the System page and the drive card's warning before a rip that would fail. A worker that does not
 * report the field yet is unknown: no rows, no warning.
 */
import { t, tKnown } from './i18n/index.js';

export const DISC_KINDS = ['audio_cd', 'dvd', 'dvd_protected', 'bluray', 'uhd'] as const;
export type DiscKind = (typeof DISC_KINDS)[number];
export interface KindSupport {
  can: boolean;
  /** What is missing: abcde, cdparanoia, lsdvd, dvdbackup, ffmpeg, libdvdcss, makemkvcon, keystore, native. */
  missing: string | null;
}
export type DiscKinds = Partial<Record<DiscKind, KindSupport>>;

/**
 * The kind a disc of GET /devices needs. The disc object does not say whether a DVD is protected, so a
 * DVD is taken as unprotected: the warning comes only when the worker cannot rip DVDs at all.
 */
export function kindOfDisc(type: string): DiscKind | null {
  switch (type) {
    case 'cd':
      return 'audio_cd';
    case 'dvd':
      return 'dvd';
    case 'bluray':
      return 'bluray';
    case 'uhd':
      return 'uhd';
    default:
      return null;
  }
}

/** The command that adds a missing piece (language-neutral); pieces fixed otherwise have none. */
const FIX_COMMAND: Record<string, string> = {
  abcde: 'sudo apt-get install abcde',
  cdparanoia: 'sudo apt-get install cdparanoia',
  lsdvd: 'sudo apt-get install lsdvd',
  dvdbackup: 'sudo apt-get install dvdbackup',
  ffmpeg: 'sudo apt-get install ffmpeg',
  libdvdcss: 'sudo bash scripts/install.sh --with-libdvdcss',
  makemkvcon: 'sudo bash scripts/install.sh --with-makemkv --accept-makemkv-eula',
};

export interface Missing {
  /** What is missing, in the chosen language. */
  text: string;
  /** The command that adds it, or null. */
  command: string | null;
}

export function missingOf(code: string | null): Missing {
  if (!code) return { text: '', command: null };
  return { text: tKnown(`missing.${code}`) ?? t('missing.other', { code }), command: FIX_COMMAND[code] ?? null };
}

export interface KindRow {
  kind: DiscKind;
  label: string;
  can: boolean;
  /** Why not and the fix; null when it can. */
  missing: Missing | null;
}

/** One row per disc kind the worker reports, in a fixed order; null when the worker reports none. */
export function kindRows(kinds: DiscKinds | null | undefined): KindRow[] | null {
  if (!kinds || typeof kinds !== 'object') return null;
  const rows: KindRow[] = [];
  for (const kind of DISC_KINDS) {
    const s = kinds[kind];
    if (!s || typeof s.can !== 'boolean') continue;
    rows.push({ kind, label: t(`kind.${kind}`), can: s.can, missing: s.can ? null : missingOf(s.missing) });
  }
  return rows.length ? rows : null;
}

/** The warning for a drive whose worker cannot rip the inserted disc, or null (it can, or unknown). */
export function ripWarning(worker: string, kinds: DiscKinds | null | undefined, discType: string): Missing | null {
  const kind = kindOfDisc(discType);
  const s = kind ? kinds?.[kind] : undefined;
  if (!kind || !s || s.can !== false) return null;
  const missing = missingOf(s.missing);
  return { text: t('drive.cannotRip', { worker, kind: t(`kind.${kind}`), missing: missing.text || t('disc.unknown') }), command: missing.command };
}
