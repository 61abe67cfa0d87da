import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RATE_LIMIT_WINDOW_MS } from '../../../coordinator/app.js';

describe('rate limit window', () => {
  it('counts requests per minute and logs a hit at most once per client per minute', () => {
    assert.equal(RATE_LIMIT_WINDOW_MS, 60_000);
  });
});
