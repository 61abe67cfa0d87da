import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { JobsStore } from '../../../../coordinator/jobs/jobs-store.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { folderIn, parseProbeOutput, PROBE_TIMEOUT_MS, RawDataFinder, REFRESH_MS } from '../../../../coordinator/jobs/raw-data.js';
import { SettingsStore } from '../../../../coordinator/system/settings-store.js';
import { AnswersInFlight } from '../../../../coordinator/http/answers-in-flight.js';
import { Logger } from '../../../../shared/log.js';
import { openDatabase } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-rawdata-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
function setup() {
  const dir = path.join(root, `case-${++n}`);
  const rawDir = path.join(dir, 'raw');
  fs.mkdirSync(rawDir, { recursive: true });
  const db = openDatabase(path.join(dir, 'c.sqlite'), coordinatorMigrations);
  const jobs = new JobsStore(db);
  const settings = new SettingsStore(db);
  const finder = new RawDataFinder(jobs, settings, rawDir, new Logger('test', true));
  return { dir, rawDir, db, jobs, settings, finder };
}

/** The start of a fake du: drops the options up to "--", leaving the folders in "$@". */
const FAKE_DU_ARGS = 'while [ "$1" != -- ]; do shift; done; shift;';

/** Runs fn with fake tools (name → shell script) first on PATH. */
async function withFakeTools<T>(dir: string, tools: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const [name, script] of Object.entries(tools)) fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  const oldPath = process.env.PATH;
  process.env.PATH = `${bin}:${oldPath}`;
  try {
    return await fn();
  } finally {
    process.env.PATH = oldPath;
  }
}

describe('RawDataFinder.probeMany (one process for a sweep batch)', () => {
  it('answers each job on its own, in order', async () => {
    const { rawDir, finder } = setup();
    const present = path.join(rawDir, 'job-a');
    fs.mkdirSync(present);
    fs.writeFileSync(path.join(present, 'x.mkv'), Buffer.alloc(100_000));
    const file = path.join(rawDir, 'job-b');
    fs.writeFileSync(file, 'x');
    const odd = path.join(rawDir, 'with\ttab and -- dashes');
    fs.mkdirSync(odd);
    fs.writeFileSync(path.join(odd, 'VTS_01_1.VOB'), 'v');
    const found = await finder.probeMany([[path.join(rawDir, 'nope')], [path.join(rawDir, 'missing'), present], [file], [], ['--', odd]]);
    assert.ok(found);
    assert.deepEqual(found.map((f) => [f.state, f.path]), [['absent', null], ['present', present], ['absent', null], ['absent', null], ['present', odd]]);
    assert.ok((found[1].size ?? 0) >= 100_000);
  });

  it('reads only well-formed answer lines', () => {
    assert.deepEqual(parseProbeOutput('0\tabsent\n1\t512\t/r/j\ngarbage\n7\tabsent\n', 3), [
      { state: 'absent', path: null, size: null },
      { state: 'present', path: '/r/j', size: 512 },
      { state: 'unclear', path: null, size: null },
    ]);
    // The locate mode's answer: a folder without its size.
    assert.deepEqual(parseProbeOutput('0\t-\t/r/j k\n', 1), [{ state: 'present', path: '/r/j k', size: null }]);
  });
});

describe('RawDataFinder.locate (what "transcode again" needs)', () => {
  /** Fake find and du that leave a mark when run: locate must start neither for a folder with videos. */
  const marking = (dir: string) => ({ find: `touch ${JSON.stringify(path.join(dir, 'find-ran'))}; exit 1`, du: `touch ${JSON.stringify(path.join(dir, 'du-ran'))}; exit 1` });

  it('finds the folder with a video file directly in it without starting find or du, and stores it', async () => {
    const { dir, rawDir, jobs, finder } = setup();
    const job = jobs.create({ id: 'job-l1', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    // A glob character and a space in the path must be taken as they are.
    const odd = path.join(dir, 'work [1] *');
    fs.mkdirSync(path.join(odd, 'job-l1'), { recursive: true });
    fs.writeFileSync(path.join(odd, 'job-l1', 'TITLE_T00.MKV'), 'v');
    jobs.update('job-l1', {}, { work_dir: odd });
    fs.mkdirSync(path.join(rawDir, 'job-l1'));
    fs.writeFileSync(path.join(rawDir, 'job-l1', 'abcde.conf'), 'x');
    const found = await withFakeTools(dir, marking(dir), () => finder.locate(jobs.get(job.id) as NonNullable<ReturnType<typeof jobs.get>>));
    assert.deepEqual([found.state, found.path, found.size_bytes], ['present', path.join(odd, 'job-l1'), null]);
    assert.equal(fs.existsSync(path.join(dir, 'find-ran')), false, 'find was started');
    assert.equal(fs.existsSync(path.join(dir, 'du-ran')), false, 'du was started');
    assert.deepEqual([jobs.get(job.id)?.raw_state, jobs.get(job.id)?.raw_path], ['present', path.join(odd, 'job-l1')]);
  });

  it('keeps the size measured before when the folder is the one known', async () => {
    const { rawDir, jobs, finder } = setup();
    jobs.create({ id: 'job-l2', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    fs.mkdirSync(path.join(rawDir, 'job-l2'));
    fs.writeFileSync(path.join(rawDir, 'job-l2', 'a.ts'), Buffer.alloc(4096));
    const measured = await finder.refresh(jobs.get('job-l2') as NonNullable<ReturnType<typeof jobs.get>>);
    assert.ok((measured.size_bytes ?? 0) >= 4096);
    const found = await finder.locate(jobs.get('job-l2') as NonNullable<ReturnType<typeof jobs.get>>);
    assert.deepEqual([found.state, found.path, found.size_bytes], ['present', path.join(rawDir, 'job-l2'), measured.size_bytes]);
    assert.equal(jobs.get('job-l2')?.raw_size, measured.size_bytes);
  });

  it('answers as the full probe when no folder has a video directly in it (audio only, videos in a subfolder, nothing)', async () => {
    const { rawDir, jobs, finder } = setup();
    for (const [id, file] of [['job-a', '01 - Song.flac'], ['job-b', 'BDMV/STREAM/00000.m2ts']] as const) {
      jobs.create({ id, title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
      fs.mkdirSync(path.dirname(path.join(rawDir, id, file)), { recursive: true });
      fs.writeFileSync(path.join(rawDir, id, file), 'a');
      const found = await finder.locate(jobs.get(id) as NonNullable<ReturnType<typeof jobs.get>>);
      assert.deepEqual([found.state, found.path], ['present', path.join(rawDir, id)], id);
      assert.ok(found.size_bytes !== null && found.size_bytes > 0, `${id}: measured by du`);
    }
    jobs.create({ id: 'job-c', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    assert.equal((await finder.locate(jobs.get('job-c') as NonNullable<ReturnType<typeof jobs.get>>)).state, 'absent');
  });

  it('asks one shell for the lookups of one turn of the event loop, each job getting its own answer', async () => {
    const { rawDir, jobs, settings } = setup();
    /** Counts the probe requests and the jobs in each. */
    class Counting extends RawDataFinder {
      requests: number[] = [];
      override probeMany(groups: string[][], background?: boolean, mode?: 'measure' | 'locate') {
        this.requests.push(groups.length);
        return super.probeMany(groups, background, mode);
      }
    }
    const finder = new Counting(jobs, settings, rawDir, new Logger('test', true));
    const ids = Array.from({ length: 10 }, (_, i) => `job-burst-${i}`);
    for (const [i, id] of ids.entries()) {
      jobs.create({ id, title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
      jobs.move(id, 'failed');
      // Every other job still has its raw folder with a video directly in it.
      if (i % 2 === 0) {
        fs.mkdirSync(path.join(rawDir, id));
        fs.writeFileSync(path.join(rawDir, id, 'title_t00.mkv'), 'v');
      }
    }
    try {
      const found = await Promise.all(ids.map((id) => finder.locate(jobs.get(id) as NonNullable<ReturnType<typeof jobs.get>>)));
      ids.forEach((id, i) => assert.deepEqual([found[i].state, found[i].path], i % 2 === 0 ? ['present', path.join(rawDir, id)] : ['absent', null], id));
      // One locate request for all ten, then the full probe for each job without a video (as one job alone).
      assert.deepEqual(finder.requests, [10, 1, 1, 1, 1, 1]);
    } finally {
      finder.stop();
    }
  });

  it('asks each job of a lookup batch again on its own when the batch runs into its time limit', async () => {
    const { rawDir, jobs, settings } = setup();
    /** A dead mount under one job's folder: any request with it in runs into the limit (null). */
    class DeadMount extends RawDataFinder {
      requests: number[] = [];
      override async probeMany(groups: string[][], background?: boolean, mode?: 'measure' | 'locate') {
        this.requests.push(groups.length);
        if (groups.some((dirs) => dirs.some((d) => d.endsWith('job-dead')))) return null;
        return super.probeMany(groups, background, mode);
      }
    }
    const finder = new DeadMount(jobs, settings, rawDir, new Logger('test', true));
    for (const id of ['job-ok-1', 'job-dead', 'job-ok-2']) {
      jobs.create({ id, title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
      jobs.move(id, 'failed', { raw_state: 'present', raw_path: path.join(rawDir, id) });
      fs.mkdirSync(path.join(rawDir, id));
      fs.writeFileSync(path.join(rawDir, id, 'title_t00.mkv'), 'v');
    }
    try {
      const [ok1, dead, ok2] = await Promise.all(['job-ok-1', 'job-dead', 'job-ok-2'].map((id) => finder.locate(jobs.get(id) as NonNullable<ReturnType<typeof jobs.get>>)));
      assert.deepEqual([ok1.state, ok1.path], ['present', path.join(rawDir, 'job-ok-1')]);
      assert.deepEqual([ok2.state, ok2.path], ['present', path.join(rawDir, 'job-ok-2')]);
      // The dead one answers unclear, which keeps its last known answer.
      assert.deepEqual([dead.state, dead.path], ['present', path.join(rawDir, 'job-dead')]);
      assert.deepEqual(finder.requests, [3, 1, 1, 1]);
    } finally {
      finder.stop();
    }
  });
});

describe('RawDataFinder.probe', () => {
  it('finds a present folder with its size in bytes', async () => {
    const { rawDir, finder } = setup();
    const dir = path.join(rawDir, 'job-1');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a.mkv'), Buffer.alloc(250_000));
    fs.writeFileSync(path.join(dir, 'b.mkv'), Buffer.alloc(50_000));
    const found = await finder.probe([dir]);
    assert.equal(found.state, 'present');
    assert.equal(found.path, dir);
    assert.ok(found.size !== null && found.size >= 300_000 && found.size < 400_000, `size ${found.size}`);
  });

  it('answers absent when no candidate is a folder (a plain file does not count)', async () => {
    const { rawDir, finder } = setup();
    const file = path.join(rawDir, 'job-2');
    fs.writeFileSync(file, 'not a folder');
    assert.deepEqual(await finder.probe([path.join(rawDir, 'missing'), file]), { state: 'absent', path: null, size: null });
    assert.deepEqual(await finder.probe([]), { state: 'absent', path: null, size: null });
  });

  it('takes the first candidate that is a folder', async () => {
    const { rawDir, dir, finder } = setup();
    const second = path.join(dir, 'second', 'job-3');
    const third = path.join(dir, 'third', 'job-3');
    fs.mkdirSync(second, { recursive: true });
    fs.mkdirSync(third, { recursive: true });
    for (const d of [second, third]) fs.writeFileSync(path.join(d, 'title_t00.mkv'), 'v');
    const found = await finder.probe([path.join(rawDir, 'job-3'), second, third]);
    assert.equal(found.state, 'present');
    assert.equal(found.path, second);
  });

  it('copes with names holding spaces, quotes and a leading dash', async () => {
    const { rawDir, finder } = setup();
    const odd = path.join(rawDir, `-job "4" $(x) `);
    fs.mkdirSync(odd);
    fs.writeFileSync(path.join(odd, '-t "1".m2ts'), 'v');
    const found = await finder.probe([odd]);
    assert.equal(found.state, 'present');
    assert.equal(found.path, odd);
  });

  it('counts a folder only with a video or audio file in it: an empty or config-only folder is absent', async () => {
    const { dir, rawDir, finder } = setup();
    const empty = path.join(rawDir, 'job-e');
    fs.mkdirSync(empty);
    const configOnly = path.join(dir, 'work', 'job-e');
    fs.mkdirSync(path.join(configOnly, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(configOnly, 'abcde.conf'), 'x');
    fs.writeFileSync(path.join(configOnly, 'sub', 'notes.txt'), 'x');
    assert.deepEqual(await finder.probe([empty, configOnly]), { state: 'absent', path: null, size: null });
    // A later candidate with a video file (even one folder down, any case) wins over the empty one.
    const later = path.join(dir, 'nas', 'job-e');
    fs.mkdirSync(path.join(later, 'VIDEO_TS'), { recursive: true });
    fs.writeFileSync(path.join(later, 'VIDEO_TS', 'VTS_01_1.VOB'), Buffer.alloc(4096));
    const found = await finder.probe([empty, configOnly, later]);
    assert.equal(found.state, 'present');
    assert.equal(found.path, later);
    // Audio of a CD counts too.
    fs.writeFileSync(path.join(configOnly, 'sub', '01 - Track.flac'), 'f');
    assert.equal((await finder.probe([empty, configOnly, later])).path, configOnly);
  });

  it('finds a media file directly in the folder without starting find; a link to one does not count, as with find -type f', async () => {
    const { dir, rawDir, finder } = setup();
    const job = path.join(rawDir, 'job-top');
    fs.mkdirSync(job);
    fs.writeFileSync(path.join(job, 'Title_T00.MKV'), Buffer.alloc(2048));
    const marker = path.join(dir, 'find-ran');
    const found = await withFakeTools(dir, { find: `touch ${JSON.stringify(marker)}; exit 1` }, () => finder.probe([job]));
    assert.equal(found.state, 'present');
    assert.ok((found.size ?? 0) >= 2048, 'du still measures the folder');
    assert.equal(fs.existsSync(marker), false, 'find was started');
    // A new finder: the shell of this one keeps the fake find it was started with.
    const other = setup();
    const linked = path.join(other.rawDir, 'job-link');
    fs.mkdirSync(linked);
    fs.symlinkSync(path.join(job, 'Title_T00.MKV'), path.join(linked, 'a.mkv'));
    assert.equal((await other.finder.probe([linked])).state, 'absent');
  });

  it('answers unclear, not absent, when find cannot look into the folder', async () => {
    const { dir, rawDir, finder } = setup();
    const job = path.join(rawDir, 'job-f');
    fs.mkdirSync(job);
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'find'), '#!/bin/sh\necho "find: Input/output error" >&2\nexit 1\n', { mode: 0o755 });
    const oldPath = process.env.PATH;
    process.env.PATH = `${bin}:${oldPath}`;
    try {
      assert.equal((await finder.probe([job])).state, 'unclear');
    } finally {
      process.env.PATH = oldPath;
    }
  });

  it('answers unclear, never absent, when the folder is there but du fails on it', async () => {
    const { dir, rawDir, finder } = setup();
    const job = path.join(rawDir, 'job-5');
    fs.mkdirSync(job);
    fs.writeFileSync(path.join(job, 'a.mkv'), 'v');
    const found = await withFakeTools(dir, { du: 'echo "du: cannot read directory: Input/output error" >&2; exit 1' }, () => finder.probe([job]));
    assert.equal(found.state, 'unclear');
  });

  it('keeps the size du printed when it could not read everything', async () => {
    const { dir, rawDir, finder } = setup();
    const job = path.join(rawDir, 'job-6');
    fs.mkdirSync(job);
    fs.writeFileSync(path.join(job, 'a.mkv'), 'v');
    const found = await withFakeTools(dir, { du: `${FAKE_DU_ARGS} printf "12345\\t%s\\0" "$1"; echo "du: cannot read x: Permission denied" >&2; exit 1` }, () => finder.probe([job]));
    assert.deepEqual(found, { state: 'present', path: job, size: 12345 });
  });

  it('measures all folders of a request with one du, and answers unclear only for a folder du left out', async () => {
    const { dir, rawDir, finder } = setup();
    const names = ['job-m1', 'job-m2', 'job-m3', 'job-m4'];
    for (const [k, name] of names.entries()) {
      fs.mkdirSync(path.join(rawDir, name));
      fs.writeFileSync(path.join(rawDir, name, 'a.mkv'), Buffer.alloc(1000 * (k + 1)));
    }
    // The real du, noting each start; it cannot measure job-m2 (as for a folder gone in between).
    const runs = path.join(dir, 'du-runs');
    const du = `${FAKE_DU_ARGS} echo run >> '${runs}'; for d; do case "$d" in */job-m2) echo "du: cannot access" >&2 ;; *) /usr/bin/du -sbDl0 -- "$d" ;; esac; done`;
    const found = await withFakeTools(dir, { du }, () => finder.probeMany(names.map((name) => [path.join(rawDir, name)])));
    assert.ok(found);
    assert.deepEqual(found.map((f) => f.state), ['present', 'unclear', 'present', 'present']);
    assert.deepEqual(found.map((f, k) => f.size !== null && f.size >= 1000 * (k + 1) && f.size < 1000 * (k + 2) + 8192), [true, false, true, true]);
    assert.deepEqual(fs.readFileSync(runs, 'utf8').trim().split('\n'), ['run'], 'one du for the request');
  });

  it('counts a file hard-linked into two folders in both, whatever else shares the request', async () => {
    const { rawDir, finder } = setup();
    const a = path.join(rawDir, 'job-h1');
    const b = path.join(rawDir, 'job-h2');
    fs.mkdirSync(a);
    fs.mkdirSync(b);
    fs.writeFileSync(path.join(a, 'a.mkv'), Buffer.alloc(50_000));
    fs.linkSync(path.join(a, 'a.mkv'), path.join(b, 'a.mkv'));
    const found = await finder.probeMany([[a], [b]]);
    assert.ok(found);
    assert.ok((found[1].size ?? 0) >= 50_000, `second folder measured as ${found[1].size}`);
  });
});

describe('RawDataFinder.refresh and candidates', () => {
  it('looks in the raw dir, the workDir setting and the job work dir, after a known raw path', () => {
    const { rawDir, jobs, settings, finder } = setup();
    settings.set({ workDir: '/media/work' });
    const job = jobs.create({ id: 'job-7', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: { work_dir: '/media/own' } });
    assert.deepEqual(finder.candidates(job), [path.join(rawDir, 'job-7'), '/media/work/job-7', '/media/own/job-7']);
    const withPath = jobs.update('job-7', { raw_path: '/media/work/job-7' });
    assert.ok(withPath);
    assert.deepEqual(finder.candidates(withPath), ['/media/work/job-7', path.join(rawDir, 'job-7'), '/media/own/job-7']);
  });

  it('gives the sweep the same folders from the work_dir SQLite takes out of meta as from the whole row', () => {
    const { db, jobs, settings, finder } = setup();
    settings.set({ workDir: '/media/work/' });
    jobs.create({ id: 'job-s1', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: { work_dir: '/media/own' } });
    jobs.create({ id: 'job-s2', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    jobs.create({ id: 'job-s3', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: { work_dir: '/media/work' } });
    jobs.create({ id: 'job-s4', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    for (const id of ['job-s1', 'job-s2', 'job-s3', 'job-s4']) jobs.move(id, 'failed');
    // A row whose meta is not JSON (written by hand) is swept as one without a work_dir, not an error;
    // so is a work_dir that is no text (the meta check of the row drops it too).
    db.prepare(`UPDATE jobs SET meta = '{broken' WHERE id = 'job-s2'`).run();
    db.prepare(`UPDATE jobs SET meta = '{"work_dir":42}' WHERE id = 'job-s4'`).run();
    const page = jobs.rawSweepPage('', 10);
    assert.deepEqual(page.map((r) => [r.id, r.work_dir]), [['job-s1', '/media/own'], ['job-s2', null], ['job-s3', '/media/work'], ['job-s4', null]]);
    for (const row of page) assert.deepEqual(finder.candidates(row), finder.candidates(jobs.get(row.id)!), row.id);
    assert.deepEqual(finder.candidates(page[2]).slice(1), ['/media/work/job-s3'], 'the same folder is searched once');
  });

  it('joins a root and a job id as path.join does', () => {
    const roots = ['/', '/srv/raw', '/srv/raw/', '/srv//raw', '/srv/./raw', '/srv/../raw', '/srv/raw/.', '/srv/raw/..', 'relative/raw', '', '/srv/.hidden', '/srv/raw..x', '/ä ö/raw'];
    const names = ['job-1', '0f3c9a2e-7b1d-4e8a-9c6f-2d5b8e1a7c30', '.', '..', 'a/b', '../x', '.hidden', 'a b', 'x..'];
    for (const r of roots) for (const n of names) assert.equal(folderIn(r, n), path.join(r, n), `${r} + ${n}`);
  });

  it('also looks in every storage target: the media root, the quick-pick folders and the mounted shares', async () => {
    const { dir, rawDir } = setup();
    const db = openDatabase(path.join(dir, 'targets.sqlite'), coordinatorMigrations);
    const store = new JobsStore(db);
    const targets = [path.join(dir, 'media'), path.join(dir, 'media', 'Filme'), path.join(dir, 'nas')];
    const finder = new RawDataFinder(store, new SettingsStore(db), rawDir, new Logger('test', true), () => targets);
    const job = store.create({ id: 'job-t', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    assert.deepEqual(finder.candidates(job), [path.join(rawDir, 'job-t'), ...targets.map((t) => path.join(t, 'job-t'))]);
    fs.mkdirSync(path.join(dir, 'nas', 'job-t'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'nas', 'job-t', 'title_t00.mkv'), 'v');
    const found = await finder.refresh(job);
    assert.deepEqual([found.state, found.path], ['present', path.join(dir, 'nas', 'job-t')]);
    assert.equal(store.get('job-t')?.raw_state, 'present');
  });

  it('stores a changed answer on the job, so can_retry follows it', async () => {
    const { rawDir, jobs, finder } = setup();
    const job = jobs.create({ id: 'job-8', title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    fs.mkdirSync(path.join(rawDir, 'job-8'));
    fs.writeFileSync(path.join(rawDir, 'job-8', 'title_t00.mkv'), 'v');
    const present = await finder.refresh(job);
    assert.equal(present.state, 'present');
    assert.equal(jobs.get('job-8')?.raw_state, 'present');
    assert.equal(jobs.get('job-8')?.raw_path, path.join(rawDir, 'job-8'));
    fs.rmSync(path.join(rawDir, 'job-8'), { recursive: true });
    const absent = await finder.refresh(jobs.get('job-8') as NonNullable<ReturnType<typeof jobs.get>>);
    assert.deepEqual([absent.state, absent.path, absent.size_bytes], ['absent', null, null]);
    assert.equal(jobs.get('job-8')?.raw_state, 'absent');
  });
});

describe('RawDataFinder.sweep', () => {
  it('runs the sweep\'s probes at the lowest CPU priority, but not a probe someone waits for', async () => {
    const { dir, rawDir, jobs, finder } = setup();
    const id = 'job-nice';
    jobs.create({ id, title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    jobs.move(id, 'failed', { raw_state: 'present', raw_path: path.join(rawDir, id) });
    fs.mkdirSync(path.join(rawDir, id));
    fs.writeFileSync(path.join(rawDir, id, 'title_t00.mkv'), 'v');
    // The fake du notes the priority it runs at: what the probe's find and du get.
    const seen = path.join(dir, 'nice');
    const du = `nice >> '${seen}'; ${FAKE_DU_ARGS} for d; do printf "7\\t%s\\0" "$d"; done`;
    await withFakeTools(dir, { du }, () => finder.sweep());
    const row = jobs.get(id);
    assert.ok(row);
    assert.deepEqual([row.raw_state, row.raw_size], ['present', 7]);
    await withFakeTools(dir, { du }, () => finder.refresh(row));
    assert.deepEqual(fs.readFileSync(seen, 'utf8').trim().split('\n'), ['19', String(os.getPriority())]);
  });

  it('probes every failed, canceled and completed-with-raw-data job, page by page, and no other', async () => {
    const { rawDir, jobs, finder } = setup();
    // 450 jobs, 270 of them due: two probe processes (256 jobs each at most) over five pages of 64. Every third failed job still has its raw folder.
    const kinds = ['failed', 'canceled', 'completed-present', 'completed-absent', 'pending'] as const;
    const expected = new Map<string, string | null>();
    for (let i = 0; i < 450; i++) {
      const id = `job-${String(i).padStart(3, '0')}`;
      const kind = kinds[i % kinds.length];
      jobs.create({ id, title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
      const status = kind === 'completed-present' || kind === 'completed-absent' ? 'completed' : kind;
      const fields = { raw_state: kind === 'completed-absent' ? 'absent' : kind === 'pending' ? null : 'present', raw_path: path.join(rawDir, id) } as const;
      if (status === 'pending') jobs.update(id, fields);
      else jobs.move(id, status, fields);
      const keep = kind === 'failed' && i % 3 === 0;
      if (keep) {
        fs.mkdirSync(path.join(rawDir, id));
        fs.writeFileSync(path.join(rawDir, id, 'title_t00.mkv'), 'v');
      }
      expected.set(id, kind === 'pending' ? null : keep ? 'present' : 'absent');
    }
    await finder.sweep();
    for (const [id, state] of expected) assert.equal(jobs.get(id)?.raw_state ?? null, state, id);
    // completed-absent and pending jobs are not probed: 3 of every 5 are.
    assert.equal(finder.lastSweep?.jobs, 270);
    assert.equal(finder.lastSweep?.present, [...expected.values()].filter((s) => s === 'present').length);
    // A second sweep sees only what is still due: the failed and canceled jobs, and no completed one any more.
    await finder.sweep();
    assert.equal(finder.lastSweep?.jobs, 180);
  });

  it('stores nothing while a list answer is being sent, and goes on once it has gone out', async () => {
    const { dir, rawDir } = setup();
    const db = openDatabase(path.join(dir, 'gate.sqlite'), coordinatorMigrations);
    const jobs = new JobsStore(db);
    /** The gate held shut: every step of the sweep waits at it until `open()`. */
    class HeldAnswers extends AnswersInFlight {
      waits = 0;
      private release: (() => void)[] = [];
      shut = true;
      override idle(): Promise<void> {
        this.waits++;
        return this.shut ? new Promise((r) => this.release.push(r)) : Promise.resolve();
      }
      open(): void {
        this.shut = false;
        for (const r of this.release.splice(0)) r();
      }
    }
    const answers = new HeldAnswers();
    const finder = new RawDataFinder(jobs, new SettingsStore(db), rawDir, new Logger('test', true), () => [], answers);
    for (let i = 0; i < 300; i++) {
      const id = `job-${String(i).padStart(3, '0')}`;
      jobs.create({ id, title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
      jobs.move(id, 'failed', { raw_state: 'present', raw_path: path.join(rawDir, id) });
    }
    const changed = (): number => jobs.all().filter((j) => j.raw_state === 'absent').length;
    const sweep = finder.sweep();
    // The sweep reads its first page and then waits at the gate before the next step.
    const deadline = Date.now() + 5000;
    while (answers.waits === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(answers.waits, 1);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(answers.waits, 1, 'no further step while the answer is being sent');
    assert.equal(changed(), 0, 'nothing stored while the answer is being sent');
    answers.open();
    await sweep;
    assert.equal(changed(), 300);
    // Every page, every stored slice and every batch asked first.
    assert.ok(answers.waits >= 300 / 64 + 2, `asked ${answers.waits} times`);
  });

  it('pauses after each slice of stored answers (a timer, not just a turn of the loop) and goes on when it runs out', async () => {
    const { rawDir, jobs, finder } = setup();
    for (let i = 0; i < 200; i++) {
      const id = `job-p${String(i).padStart(3, '0')}`;
      jobs.create({ id, title: 'T', target_dir: '/m', device: 'd', node: 'n', meta: {} });
      jobs.move(id, 'failed', { raw_state: 'present', raw_path: path.join(rawDir, id) });
    }
    const changed = (): number => jobs.all().filter((j) => j.raw_state === 'absent').length;
    const turns = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    // Only setTimeout is mocked: the probe shell answers through real I/O, the sweep's pauses wait for
    // tick(). 200 jobs are one probe request, answered before the first slice, so the ticks never
    // reach a probe's time limit.
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const sweep = finder.sweep();
      const deadline = Date.now() + 10_000;
      while (changed() === 0 && Date.now() < deadline) await turns(1);
      const first = changed();
      assert.ok(first > 0 && first < 200, `a first slice stored (${first})`);
      await turns(200);
      assert.equal(changed(), first, 'no further slice before the pause has run out');
      // Tick the pauses away until the sweep has stored every answer.
      let done = false;
      void sweep.then(() => (done = true));
      while (!done && Date.now() < deadline) {
        mock.timers.tick(50);
        await turns(5);
      }
      assert.equal(done, true);
      assert.equal(changed(), 200);
    } finally {
      mock.timers.reset();
      finder.stop();
    }
  });
});

describe('raw-data store limits', () => {
  it('refreshes the raw-data findings every 30 s and gives one probe 4 s', () => {
    assert.equal(REFRESH_MS, 30_000);
    assert.equal(PROBE_TIMEOUT_MS, 4_000);
  });
});
