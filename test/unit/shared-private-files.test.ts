import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { coordinatorMigrations } from '../../coordinator/migrations.js';
import { ensurePrivateFile, makePrivateTree } from '../../shared/private-files.js';
import { openDatabase } from '../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-private-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const mode = (p: string): number => fs.statSync(p).mode & 0o777;

describe('private files', () => {
  it('makes a data folder 0700 and everything in it 0700/0600, leaving symlink targets alone', () => {
    const data = path.join(root, 'data');
    const outside = path.join(root, 'outside.txt');
    fs.writeFileSync(outside, 'x', { mode: 0o644 });
    fs.mkdirSync(path.join(data, 'keystore'), { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(data, 'coordinator.sqlite-wal'), 'wal', { mode: 0o644 });
    fs.writeFileSync(path.join(data, 'keystore', 'hkd_1.bin'), 'k', { mode: 0o666 });
    fs.chmodSync(path.join(data, 'keystore', 'hkd_1.bin'), 0o666);
    fs.symlinkSync(outside, path.join(data, 'link'));
    makePrivateTree(data);
    assert.equal(mode(data), 0o700);
    assert.equal(mode(path.join(data, 'keystore')), 0o700);
    assert.equal(mode(path.join(data, 'coordinator.sqlite-wal')), 0o600);
    assert.equal(mode(path.join(data, 'keystore', 'hkd_1.bin')), 0o600);
    assert.equal(mode(outside), 0o644, 'the target of a link is not ours');
  });

  it('creates a missing folder private whatever the umask', () => {
    const old = process.umask(0o000);
    try {
      makePrivateTree(path.join(root, 'new', 'data'));
      ensurePrivateFile(path.join(root, 'new', 'data', 'f'));
    } finally {
      process.umask(old);
    }
    assert.equal(mode(path.join(root, 'new', 'data')), 0o700);
    assert.equal(mode(path.join(root, 'new', 'data', 'f')), 0o600);
  });

  it('opens SQLite 0600 with its -wal and -shm files 0600 under umask 000', () => {
    const old = process.umask(0o000);
    const file = path.join(root, 'db', 'c.sqlite');
    try {
      const db = openDatabase(file, coordinatorMigrations);
      db.prepare("INSERT INTO settings (key, value) VALUES ('webhookUrl', '\"https://hook.example/token\"')").run();
      for (const f of [file, `${file}-wal`, `${file}-shm`]) assert.equal(mode(f), 0o600, f);
      db.close();
    } finally {
      process.umask(old);
    }
  });
});
