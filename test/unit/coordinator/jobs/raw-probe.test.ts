import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Logger } from '../../../../shared/log.js';
import { openDatabase } from '../../../../shared/sqlite.js';
import { JobsStore } from '../../../../coordinator/jobs/jobs-store.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { PROBE_TIMEOUT_MS, RawDataFinder } from '../../../../coordinator/jobs/raw-data.js';
import { SettingsStore } from '../../../../coordinator/system/settings-store.js';

function setup(): { finder: RawDataFinder; jobs: JobsStore; settings: SettingsStore; rawDir: string; root: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-raw-'));
  const db = openDatabase(path.join(root, 'c.sqlite'), coordinatorMigrations);
  const jobs = new JobsStore(db);
  const rawDir = path.join(root, 'raw');
  fs.mkdirSync(rawDir);
  const settings = new SettingsStore(db);
  const finder = new RawDataFinder(jobs, settings, rawDir, new Logger('test', true));
  return { finder, jobs, settings, rawDir, root };
}

describe('raw-data probe (rohdaten)', () => {
  it('finds a folder named like the job id with its size, and reports absence', async () => {
    const { finder, jobs, rawDir } = setup();
    const job = jobs.create({ id: 'job-1', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    assert.equal((await finder.refresh(job)).state, 'absent');
    fs.mkdirSync(path.join(rawDir, 'job-1'));
    fs.writeFileSync(path.join(rawDir, 'job-1', 'title_t01.mkv'), Buffer.alloc(100_000));
    const found = await finder.refresh(jobs.get('job-1')!);
    assert.equal(found.state, 'present');
    assert.equal(found.path, path.join(rawDir, 'job-1'));
    assert.ok((found.size_bytes ?? 0) >= 100_000);
    assert.equal(jobs.get('job-1')?.raw_state, 'present');
  });

  it('answers unclear within the hard limit when the probe hangs, keeping the last answer', async () => {
    const { finder, jobs, settings, rawDir, root } = setup();
    const job = jobs.create({ id: 'job-2', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    fs.mkdirSync(path.join(rawDir, 'job-2'));
    fs.writeFileSync(path.join(rawDir, 'job-2', 'title_t00.mkv'), 'v');
    assert.equal((await finder.refresh(job)).state, 'present');
    // a du that hangs like one on a dead network mount
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'du'), '#!/bin/sh\nsleep 30\n', { mode: 0o755 });
    const oldPath = process.env.PATH;
    process.env.PATH = `${bin}:${oldPath}`;
    try {
      // A new finder: its probe shell starts now, with the hanging du first on its PATH.
      const hanging = new RawDataFinder(jobs, settings, rawDir, new Logger('test', true));
      const started = Date.now();
      const finding = await hanging.refresh(jobs.get('job-2')!);
      const took = Date.now() - started;
      assert.equal(finding.state, 'present', 'unclear keeps the last known answer');
      assert.ok(took >= PROBE_TIMEOUT_MS - 50, `the probe answered after ${took} ms: the du did not hang`);
      // the limit, then the shell's process group is stopped (far below the 30 s of the hanging du)
      assert.ok(took < PROBE_TIMEOUT_MS + 1500, `the probe was stopped after ${took} ms`);
      assert.equal(jobs.get('job-2')?.raw_state, 'present');
      hanging.stop();
    } finally {
      process.env.PATH = oldPath;
    }
  });
});
