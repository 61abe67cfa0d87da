import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { WAL_SIZE_LIMIT_BYTES, WalCheckpointer } from '../../../../coordinator/db/wal-checkpointer.js';
import { Logger } from '../../../../shared/log.js';
import { openDatabase } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-wal-'));

/** Writes about 3,000 pages in commits of one row each, as the coordinator commits its events. */
function writePages(db: ReturnType<typeof openDatabase>): void {
  db.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body TEXT)');
  const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
  for (let i = 0; i < 3000; i++) insert.run('x'.repeat(3500));
}

describe('WalCheckpointer', () => {
  // The thread does not keep a process alive (the coordinator's server does): the test's timer does.
  const alive = setInterval(() => undefined, 1000);
  after(() => clearInterval(alive));

  it('keeps commits from checkpointing: the log grows past 1,000 pages and the database file stays as it was', async () => {
    const file = path.join(root, 'a.sqlite');
    const db = openDatabase(file, []);
    // Its thread checkpoints only after a minute: whatever reaches the file before came from a commit.
    const checkpointer = new WalCheckpointer(db, file, new Logger('t', true), 60_000);
    assert.equal(await checkpointer.started, true);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
    const before = fs.statSync(file).size;
    writePages(db);
    assert.equal(fs.statSync(file).size, before, 'no commit checkpointed');
    assert.ok(fs.statSync(`${file}-wal`).size > 10_000_000);
    await checkpointer.close();
    db.close();
  });

  it('its thread copies the log into the database file, and the close leaves nothing behind', async () => {
    const file = path.join(root, 'b.sqlite');
    const db = openDatabase(file, []);
    const checkpointer = new WalCheckpointer(db, file, new Logger('t', true), 100);
    assert.equal(await checkpointer.started, true);
    const before = fs.statSync(file).size;
    writePages(db);
    for (let i = 0; i < 200 && fs.statSync(file).size < before + 10_000_000; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(fs.statSync(file).size >= before + 10_000_000, 'the thread checkpointed the rows into the file');
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM filler').get() as { n: number }).n, 3000);
    await checkpointer.close();
    db.close();
    assert.equal(fs.existsSync(`${file}-wal`), false, 'the last close checkpointed and removed the log');
  });

  it('caps the log at 4 MiB: after many writes and a checkpoint the next commit cuts the -wal file back', async () => {
    assert.equal(WAL_SIZE_LIMIT_BYTES, 4 * 1024 * 1024);
    const file = path.join(root, 'd.sqlite');
    const db = openDatabase(file, []);
    const checkpointer = new WalCheckpointer(db, file, new Logger('t', true), 100);
    assert.equal(await checkpointer.started, true);
    assert.equal(db.pragma('journal_size_limit', { simple: true }), WAL_SIZE_LIMIT_BYTES);
    writePages(db);
    assert.ok(fs.statSync(`${file}-wal`).size > 10_000_000, 'the burst grew the log past the cap');
    // SQLite cuts the log when a commit starts it over, which it may once a checkpoint copied all of it.
    const tick = db.prepare('INSERT INTO filler (body) VALUES (?)');
    let size = Infinity;
    for (let i = 0; i < 200 && size > WAL_SIZE_LIMIT_BYTES; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      tick.run('y');
      size = fs.statSync(`${file}-wal`).size;
    }
    assert.ok(size <= WAL_SIZE_LIMIT_BYTES, `the -wal file has ${size} bytes, more than ${WAL_SIZE_LIMIT_BYTES}`);
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM filler').get() as { n: number }).n >= 3001, true);
    await checkpointer.close();
    db.close();
  });

  it('when the thread cannot open the database, the main connection checkpoints again and says so', async () => {
    const file = path.join(root, 'c.sqlite');
    const db = openDatabase(file, []);
    const warnings: string[] = [];
    const log = new Logger('t', true);
    log.addSink((e) => void (e.level === 'warn' && warnings.push(e.message)));
    const checkpointer = new WalCheckpointer(db, path.join(root, 'missing.sqlite'), log);
    assert.equal(await checkpointer.started, false);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
    assert.match(warnings.join('\n'), /the database checkpoint thread stopped \(.*\): the coordinator checkpoints itself again/);
    await checkpointer.close();
    db.close();
  });
});
