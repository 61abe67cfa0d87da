import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EncoderSpeeds, SPEED_STALE_MS } from '../../../../coordinator/jobs/encoder-speeds.js';

describe('EncoderSpeeds', () => {
  it('gives the last fps of the phase asked for, and none for the other phase', () => {
    const s = new EncoderSpeeds();
    s.record('j1', 'transcode', 41.5, 1000);
    s.record('j1', 'transcode', 43, 2000);
    assert.equal(s.of('j1', 'transcode', 2500), 43);
    assert.equal(s.of('j1', 'rip', 2500), null);
    assert.equal(s.of('j2', 'transcode', 2500), null);
  });

  it('forgets a speed that no progress has renewed within SPEED_STALE_MS, and one a progress without fps follows', () => {
    const s = new EncoderSpeeds();
    s.record('j1', 'transcode', 30, 0);
    assert.equal(s.of('j1', 'transcode', SPEED_STALE_MS), 30);
    assert.equal(s.of('j1', 'transcode', SPEED_STALE_MS + 1), null);
    s.record('j2', 'transcode', 30, 0);
    s.record('j2', 'transcode', undefined, 10);
    assert.equal(s.of('j2', 'transcode', 20), null);
    s.record('j3', 'transcode', Number.NaN, 0);
    assert.equal(s.of('j3', 'transcode', 0), null);
  });
});
