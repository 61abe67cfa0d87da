import { unknownFailure } from './device-errors.js';

export type MediaKind = 'cd' | 'dvd' | 'bluray';

/** What the udev database says about the disc in a drive (set by cdrom_id and blkid on insert). */
export interface MediaSummary {
  /** ID_CDROM_MEDIA=1: a disc is in and readable enough to report its profile. */
  mediaPresent: boolean;
  /** From ID_CDROM_MEDIA_CD* / _DVD* / _BD*; null without media or for other profiles. */
  mediaKind: MediaKind | null;
  /** ID_CDROM_MEDIA_TRACK_COUNT_AUDIO (udev leaves it out when 0). */
  audioTracks: number;
  /** ID_CDROM_MEDIA_TRACK_COUNT_DATA (udev leaves it out when 0). */
  dataTracks: number;
  /** ID_FS_LABEL as udev stores it (spaces already turned into "_"); often missing on real discs. */
  fsLabel: string | null;
  /** ID_FS_TYPE, e.g. "udf" or "iso9660". */
  fsType: string | null;
}

export const NO_MEDIA: MediaSummary = {
  mediaPresent: false,
  mediaKind: null,
  audioTracks: 0,
  dataTracks: 0,
  fsLabel: null,
  fsType: null,
};

/**
 * The KEY=VALUE lines of `udevadm info --query=property` as a map. Lines of plain `udevadm info`
 * are accepted too: "E: " is stripped, "P:", "N:", "S:" and other lines without "=" are skipped.
 */
export function parseUdevProperties(text: string): Map<string, string> {
  const props = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '').replace(/^E: /, '');
    const eq = line.indexOf('=');
    if (eq <= 0 || !/^[A-Z0-9_]+$/.test(line.slice(0, eq))) continue;
    props.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return props;
}

const KIND_KEYS: Array<[RegExp, MediaKind]> = [
  [/^ID_CDROM_MEDIA_BD(_|$)/, 'bluray'],
  [/^ID_CDROM_MEDIA_DVD(_|$)/, 'dvd'],
  [/^ID_CDROM_MEDIA_CD(_|$)/, 'cd'],
];

function count(value: string | undefined): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** The disc facts in a drive's udev properties. The disc type comes from the media profile keys, never from ID_FS_TYPE. */
export function summarizeMedia(props: Map<string, string>): MediaSummary {
  if (props.get('ID_CDROM_MEDIA') !== '1') return { ...NO_MEDIA };
  let mediaKind: MediaKind | null = null;
  for (const [pattern, kind] of KIND_KEYS) {
    if ([...props].some(([key, value]) => value === '1' && pattern.test(key))) {
      mediaKind = kind;
      break;
    }
  }
  return {
    mediaPresent: true,
    mediaKind,
    audioTracks: count(props.get('ID_CDROM_MEDIA_TRACK_COUNT_AUDIO')),
    dataTracks: count(props.get('ID_CDROM_MEDIA_TRACK_COUNT_DATA')),
    fsLabel: props.get('ID_FS_LABEL') || null,
    fsType: props.get('ID_FS_TYPE') || null,
  };
}

/** True when udev's cdrom rules have seen the device (ID_CDROM=1); false without udevd or for other devices. */
export function isUdevCdrom(props: Map<string, string>): boolean {
  return props.get('ID_CDROM') === '1';
}

/** The plain reason for a failed udevadm run ('Unknown device "/dev/sr0": No such device', exit 1). */
export function udevadmError(stderr: string, exitCode: number | null): string {
  const unknown = /Unknown device "([^"]+)"/.exec(stderr);
  if (unknown) return `there is no device ${unknown[1]}`;
  return unknownFailure('udevadm', stderr, exitCode);
}
