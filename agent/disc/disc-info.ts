import { createHash } from 'node:crypto';
import type { DiscInfo, DiscType } from '../../shared/protocol.js';
import type { DiscIdentity } from './identify.js';

/** 55 GiB or more is a 4K UHD disc; less stays Blu-ray. */
export const UHD_MIN_BYTES = 55 * 1024 ** 3;

/** Disc type from the layout; a Blu-ray is UHD when it is 55 GiB or more, or its index.bdmv is version 0300. */
export function classifyDisc(layout: 'dvd' | 'bluray' | 'cd' | 'unknown', sizeBytes: number, uhdMarker = false): DiscType {
  if (layout === 'bluray') return uhdMarker || sizeBytes >= UHD_MIN_BYTES ? 'uhd' : 'bluray';
  return layout;
}

/** Fingerprint of a disc: its raw label and size, hashed to a short stable id. */
export function discFingerprint(label: string, sizeBytes: number): string {
  return createHash('sha256').update(`${label}\n${sizeBytes}`).digest('hex').slice(0, 16);
}

/** The disc record of an identified disc; the fingerprint comes from the raw label. */
export function makeDiscInfo(
  identity: Pick<DiscIdentity, 'label' | 'title' | 'year' | 'uhdMarker'> & { layout: DiscIdentity['layout'] | 'cd' },
  sizeBytes: number,
  source: string,
): DiscInfo {
  return {
    label: identity.label,
    title: identity.title,
    year: identity.year,
    type: classifyDisc(identity.layout, sizeBytes, identity.uhdMarker),
    size_bytes: sizeBytes,
    fingerprint: discFingerprint(identity.label, sizeBytes),
    source,
    audio_tracks: null,
  };
}
