import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { Logger, redact, type LogEntry } from '../../../shared/log.js';

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

describe('printed lines', () => {
  it('go out in one write per tick, in the order logged across stdout and stderr, and the rest at exit', () => {
    const logModule = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'log.js');
    const script = `
      import { Logger } from ${JSON.stringify(pathToFileURL(logModule).href)};
      let writes = 0;
      const write = process.stdout.write.bind(process.stdout);
      process.stdout.write = (chunk, ...rest) => { writes++; return write(chunk, ...rest); };
      const log = new Logger('t');
      for (let i = 0; i < 100; i++) log.info('line ' + i);
      log.warn('a warning');
      log.info('after the warning');
      process.on('exit', () => process.stderr.write('stdout writes: ' + writes + '\\n'));
      process.exit(3);
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 3, r.stderr);
    const out = r.stdout.trimEnd().split('\n').map((l) => l.replace(/^\S+ INFO \[t\] /, ''));
    assert.deepEqual(out, [...Array.from({ length: 100 }, (_, i) => `line ${i}`), 'after the warning']);
    const err = r.stderr.trimEnd().split('\n');
    assert.match(err[0], / WARN \[t\] a warning$/);
    assert.equal(err[1], 'stdout writes: 2', 'the hundred lines in one write, the last one at exit');
  });
});
