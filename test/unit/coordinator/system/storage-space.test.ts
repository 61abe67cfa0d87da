import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOW_SPACE_BYTES, lowSpaceWarning } from '../../../../coordinator/system/storage-space.js';

describe('low disk warning', () => {
  it('warns below 60 GB free (decimal gigabytes), not at 60 GB', () => {
    assert.equal(LOW_SPACE_BYTES, 60_000_000_000);
    assert.equal(lowSpaceWarning('/app/media', 60_000_000_000), null);
    assert.equal(lowSpaceWarning('/app/media', 59_999_999_999), 'less than 60 GB free on /app/media');
  });
});
