import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HEARTBEAT_MS } from '../../../../agent/features/status-beacon.js';

describe('status beacon', () => {
  it('sends the heartbeat (last_seen) once per minute', () => {
    assert.equal(HEARTBEAT_MS, 60_000);
  });
});
