import { createHash } from 'node:crypto';
import type { DiscIds, DiscInfo, DiscType } from '../../shared/protocol.js';
import { identityKey } from './disc-ids.js';
import type { DiscIdentity } from './identify.js';

/** 55 GiB or more is a 4K UHD disc; less stays Blu-ray. */
export const UHD_MIN_BYTES = 55 * 1024 ** 3;

/** Disc type from the layout; a Blu-ray is UHD when it is 55 GiB or more, or its index.bdmv is version 0300. */
export function classifyDisc(layout: 'dvd' | 'bluray' | 'cd' | 'unknown', sizeBytes: number, uhdMarker = false): DiscType {
  if (layout === 'bluray') return uhdMarker || sizeBytes >= UHD_MIN_BYTES ? 'uhd' : 'bluray';
  return layout;
}

/** Label fingerprint of a disc: its raw label and size, hashed to a short stable id (the identity key only where no content id can be read). */
export function discFingerprint(label: string, sizeBytes: number): string {
  return createHash('sha256').update(`${label}\n${sizeBytes}`).digest('hex').slice(0, 16);
}

/**
 * The disc record of an identified disc: the fingerprint is the identity key of its content ids
 * (disc-ids.ts identityKey), the label fingerprint comes from the raw label and size.
 */
export function makeDiscInfo(
  identity: Pick<DiscIdentity, 'label' | 'title' | 'year' | 'uhdMarker'> & { layout: DiscIdentity['layout'] | 'cd'; ids?: DiscIds | null },
  sizeBytes: number,
  source: string,
): DiscInfo {
  const type = classifyDisc(identity.layout, sizeBytes, identity.uhdMarker);
  const labelFingerprint = discFingerprint(identity.label, sizeBytes);
  const ids = identity.ids ?? null;
  return {
    label: identity.label,
    title: identity.title,
    year: identity.year,
    type,
    size_bytes: sizeBytes,
    fingerprint: identityKey(type, ids, labelFingerprint),
    label_fingerprint: labelFingerprint,
    ids,
    source,
    audio_tracks: null,
  };
}

/**
 * The identity fields of an audio CD: `mb:<disc id>` when the TOC was read; the label fingerprint is
 * what the fingerprint was before content ids (`stand-in` is hashed with the size in its place).
 */
export function audioCdFingerprints(musicbrainzDiscId: string | null, standIn: string, sizeBytes: number): Pick<DiscInfo, 'fingerprint' | 'label_fingerprint' | 'ids'> {
  const labelFingerprint = discFingerprint(musicbrainzDiscId ? `musicbrainz:${musicbrainzDiscId}` : standIn, sizeBytes);
  return { fingerprint: identityKey('cd', null, labelFingerprint, musicbrainzDiscId), label_fingerprint: labelFingerprint, ids: null };
}
