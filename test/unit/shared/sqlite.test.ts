import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openDatabase } from '../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-sqlite-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('openDatabase', () => {
  it('caps the page cache at 2 MB (better-sqlite3 would keep 16 MB of pages after a burst)', () => {
    const db = openDatabase(path.join(root, 'a.sqlite'), []);
    try {
      assert.equal(db.pragma('cache_size', { simple: true }), -2000);
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
  });
});
