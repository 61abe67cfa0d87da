import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger, redact, type LogEntry } from '../../shared/log.js';

describe('logger', () => {
  it('keeps logging when a sink throws (a full disk under the log table)', () => {
    const log = new Logger('test', true);
    const seen: LogEntry[] = [];
    log.addSink(() => {
      throw new Error('database or disk is full');
    });
    log.addSink((e) => seen.push(e));
    assert.doesNotThrow(() => log.error('handling a status failed'));
    log.child('child').info('second line', 'job-1');
    assert.deepEqual(seen.map((e) => [e.source, e.level, e.message, e.job_id]), [
      ['test', 'error', 'handling a status failed', undefined],
      ['child', 'info', 'second line', 'job-1'],
    ]);
  });

  it('keeps one line per event and hides secrets', () => {
    const log = new Logger('test', true);
    const seen: LogEntry[] = [];
    log.addSink((e) => seen.push(e));
    log.warn('GET https://api.example/search?api_key=abc123&q=x\nfailed');
    assert.equal(seen[0].message, 'GET https://api.example/search?api_key=***&q=x failed');
    assert.equal(redact('Authorization: Bearer eyJhbGci'), 'Authorization: Bearer ***');
    assert.equal(redact('smb://user:hunter2@nas/share'), 'smb://user:***@nas/share');
  });
});
