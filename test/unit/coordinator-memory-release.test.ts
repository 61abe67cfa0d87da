import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startMemoryRelease } from '../../coordinator/memory-release.js';
import { Logger, type LogEntry } from '../../shared/log.js';
import { memoryDatabase } from '../../shared/sqlite.js';

describe('memory release of the coordinator', () => {
  it('after a burst of row changes and 30 s of quiet: releases once (SQLite page cache, full GC) and logs what it gave back', () => {
    const db = memoryDatabase([{ version: 1, name: 't', up: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)' }]);
    const log = new Logger('memory', true);
    const lines: LogEntry[] = [];
    log.addSink((e) => lines.push(e));
    let now = 0;
    const release = startMemoryRelease(db, log, () => now);
    try {
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
      const tick = (): boolean => {
        now += 10_000;
        return release.check();
      };
      // A burst: 1,500 rows over two checks.
      db.transaction(() => {
        for (let i = 0; i < 750; i++) insert.run('x'.repeat(200));
      })();
      assert.equal(tick(), false);
      db.transaction(() => {
        for (let i = 0; i < 750; i++) insert.run('y'.repeat(200));
      })();
      assert.equal(tick(), false, 'still busy');
      assert.equal(tick(), false, '10 s quiet');
      insert.run('one worker status'); // a trickle counts as quiet
      assert.equal(tick(), false, '20 s quiet');
      assert.equal(tick(), true, '30 s quiet: released');
      for (let i = 0; i < 10; i++) assert.equal(tick(), false, 'nothing new: no second release');
      assert.equal(lines.length, 1);
      assert.match(lines[0].message, /^idle after a burst of work: memory given back, RSS [\d.]+ MB → [\d.]+ MB \(SQLite page cache\) → [\d.]+ MB \(full GC, \d+ ms\)$/);
      // The connection works on after its cache was released.
      assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), 1501);
    } finally {
      release.stop();
      db.close();
    }
  });
});
