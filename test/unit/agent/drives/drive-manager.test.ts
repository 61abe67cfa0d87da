import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DRIVE_POLL_MS } from '../../../../agent/drives/drive-manager.js';

describe('drive watcher', () => {
  it('polls the drives every 3 s', () => {
    assert.equal(DRIVE_POLL_MS, 3_000);
  });
});
