import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { labelIdentity } from '../../../coordinator/metadata/disc-identity.js';
import { ripsAsSeries } from '../../../shared/rip-as-series.js';
import type { DiscInfo } from '../../../shared/protocol.js';

const disc = (title: string): DiscInfo => ({ label: title, title, year: null, type: 'dvd', size_bytes: 1, fingerprint: 'f', source: '/dev/sr0', audio_tracks: null });

describe('ripsAsSeries', () => {
  it('rips a disc with a season in its label as a series, also when no database knew it', () => {
    const label = labelIdentity(disc('Show S02 D1'));
    assert.equal(ripsAsSeries(label), true);
    // What the metadata chain answers without a match: kind "unknown", the label's season kept.
    assert.equal(ripsAsSeries({ ...label, kind: 'unknown' }), true);
  });

  it('rips a movie, a disc without season and a disc not scanned yet as a movie', () => {
    assert.equal(ripsAsSeries({ kind: 'movie', season: 2 }), false);
    assert.equal(ripsAsSeries(labelIdentity(disc('Heat 1995'))), false);
    assert.equal(ripsAsSeries({ kind: 'series', season: null }), false);
    assert.equal(ripsAsSeries({ kind: null, season: null }), false);
  });
});
