import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uiModules } from '../../fixtures/ui-modules.js';

describe('UI polling rhythm', () => {
  it('polls jobs and drives every 4 s, hardware, workers and storage every 12 s', async () => {
    const { FAST_MS, SLOW_MS } = await uiModules();
    assert.equal(FAST_MS, 4_000);
    assert.equal(SLOW_MS, 12_000);
  });
});
