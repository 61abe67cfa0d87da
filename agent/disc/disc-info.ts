import { createHash } from 'node:crypto';
import type { DiscInfo, DiscType } from '../../shared/protocol.js';
import { normaliseDiscLabel } from '../../shared/output-name.js';

/** 55 GiB or more is a 4K UHD disc; less stays Blu-ray. */
export const UHD_MIN_BYTES = 55 * 1024 ** 3;

export function classifyDisc(layout: 'dvd' | 'bluray' | 'cd' | 'unknown', sizeBytes: number): DiscType {
  if (layout === 'bluray') return sizeBytes >= UHD_MIN_BYTES ? 'uhd' : 'bluray';
  return layout;
}

/** Fingerprint of a disc: its label and size, hashed to a short stable id. */
export function discFingerprint(label: string, sizeBytes: number): string {
  return createHash('sha256').update(`${label}\n${sizeBytes}`).digest('hex').slice(0, 16);
}

export function makeDiscInfo(label: string, layout: 'dvd' | 'bluray' | 'cd' | 'unknown', sizeBytes: number, source: string): DiscInfo {
  return {
    label,
    title: normaliseDiscLabel(label),
    type: classifyDisc(layout, sizeBytes),
    year: null,
    size_bytes: sizeBytes,
    fingerprint: discFingerprint(label, sizeBytes),
    source,
    audio_tracks: null,
  };
}
