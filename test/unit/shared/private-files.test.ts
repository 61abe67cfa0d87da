import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { coordinatorMigrations } from '../../../coordinator/db/migrations.js';
import { ensurePrivateFile, makePrivateTree } from '../../../shared/private-files.js';
import { openDatabase } from '../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-private-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const mode = (p: string): number => fs.statSync(p).mode & 0o777;

describe('private files', () => {
  it('makes a data folder 0700 and Ripwerk\'s entries in it 0700/0600, leaving symlink targets alone', () => {
    const data = path.join(root, 'data');
    const outside = path.join(root, 'outside.txt');
    fs.writeFileSync(outside, 'x', { mode: 0o644 });
    fs.mkdirSync(path.join(data, 'keystore'), { recursive: true, mode: 0o755 });
    fs.chmodSync(data, 0o755);
    fs.writeFileSync(path.join(data, 'coordinator.sqlite-wal'), 'wal', { mode: 0o644 });
    fs.writeFileSync(path.join(data, 'keystore', 'hkd_1.bin'), 'k', { mode: 0o666 });
    fs.chmodSync(path.join(data, 'keystore', 'hkd_1.bin'), 0o666);
    fs.symlinkSync(outside, path.join(data, 'keystore.old'));
    assert.deepEqual(makePrivateTree(data), { refused: [], foreign: null });
    assert.equal(mode(data), 0o700);
    assert.equal(mode(path.join(data, 'keystore')), 0o700);
    assert.equal(mode(path.join(data, 'coordinator.sqlite-wal')), 0o600);
    assert.equal(mode(path.join(data, 'keystore', 'hkd_1.bin')), 0o600);
    assert.equal(mode(outside), 0o644, 'the target of a link is not ours');
  });

  it('leaves a data folder open that holds other things (the media tree), and still closes its own files', () => {
    const data = path.join(root, 'shared');
    fs.mkdirSync(path.join(data, 'media'), { recursive: true, mode: 0o755 });
    fs.chmodSync(data, 0o755);
    fs.writeFileSync(path.join(data, 'broker-secret'), 's', { mode: 0o644 });
    fs.chmodSync(path.join(data, 'broker-secret'), 0o644);
    fs.writeFileSync(path.join(data, 'notes.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.chmodSync(path.join(data, 'notes.sh'), 0o755);
    const result = makePrivateTree(data);
    assert.deepEqual(result.refused, []);
    assert.ok(result.foreign === 'media' || result.foreign === 'notes.sh');
    assert.equal(mode(data), 0o755, 'the media server must still reach the media');
    assert.equal(mode(path.join(data, 'media')), 0o755);
    assert.equal(mode(path.join(data, 'notes.sh')), 0o755, 'what is not Ripwerk\'s keeps its mode');
    assert.equal(mode(path.join(data, 'broker-secret')), 0o600);
  });

  it('creates a missing folder private whatever the umask', () => {
    const old = process.umask(0o000);
    try {
      makePrivateTree(path.join(root, 'new', 'data'));
      ensurePrivateFile(path.join(root, 'new', 'data', 'coordinator.sqlite'));
    } finally {
      process.umask(old);
    }
    assert.equal(mode(path.join(root, 'new', 'data')), 0o700);
    assert.equal(mode(path.join(root, 'new', 'data', 'coordinator.sqlite')), 0o600);
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
