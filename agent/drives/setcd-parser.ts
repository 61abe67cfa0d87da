import type { CdromDriveStatus } from './cdrom-status-parser.js';
import { deviceErrorReason, unknownFailure } from './device-errors.js';

export interface SetcdReport {
  status: CdromDriveStatus;
  /** What CDROM_DISC_STATUS said about a disc that is in: audio, data (also XA) or mixed. */
  discType: 'audio' | 'data' | 'mixed' | null;
  /** "Volume name:" of a data disc. */
  volumeName: string | null;
}

const STATUS_TEXTS: Array<[string, CdromDriveStatus]> = [
  ['No disc is inserted', 'no_disc'],
  ['CD tray is open', 'tray_open'],
  ['Drive is not ready', 'not_ready'],
  ['Disc found in drive', 'disc_present'],
  ['No information on drive status is available', 'no_info'],
];

function discType(text: string): SetcdReport['discType'] {
  if (/mixed type CD/.test(text)) return 'mixed';
  if (/data disc type/.test(text)) return 'data';
  if (/audio disc/.test(text)) return 'audio';
  return null;
}

/** The drive status in the text of `setcd -i /dev/srN`; null when the text holds none. */
export function parseSetcdInfo(text: string): SetcdReport | null {
  const found = STATUS_TEXTS.find(([phrase]) => text.includes(phrase));
  if (!found) return null;
  const status = found[1];
  const volume = /Volume name:\s*(.*\S)/.exec(text);
  return {
    status,
    discType: status === 'disc_present' ? discType(text) : null,
    volumeName: status === 'disc_present' && volume ? volume[1] : null,
  };
}

/**
 * The plain reason for a failed setcd run: "Can't open device: No such file or directory" (exit 254)
 * or "can't read drive status: Invalid argument" (exit 248).
 */
export function setcdError(stderr: string, exitCode: number | null, device: string): string {
  const m = /(?:Can't open device|can't read drive status): (.+)/.exec(stderr);
  if (m) return deviceErrorReason(device, m[1]) ?? `setcd could not read the status of ${device}: ${m[1].trim()}`;
  return unknownFailure('setcd', stderr, exitCode);
}
