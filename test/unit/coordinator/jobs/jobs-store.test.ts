import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { JobsStore, liveRenderer, outputTarget, phaseStart, toView, type JobRow } from '../../../../coordinator/jobs/jobs-store.js';
import { parseJobMeta } from '../../../../coordinator/jobs/job-meta.js';
import type { JobStatus } from '../../../../coordinator/jobs/job-status.js';
import type { Job } from '../../../../shared/api-types.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { openDatabase, type Db } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-jobs-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const T0 = Date.UTC(2024, 0, 1, 12, 0, 0);
let n = 0;

function setup(): { jobs: JobsStore; db: Db; clock: { now: number } } {
  const db = openDatabase(path.join(root, `c-${++n}.sqlite`), coordinatorMigrations);
  const clock = { now: T0 };
  return { jobs: new JobsStore(db, () => clock.now), db, clock };
}

/** A row as the store reads it; its meta given as the stored text, read through the meta check. */
function row({ meta = JSON.stringify({ year: 1995 }), ...overrides }: Partial<Omit<JobRow, 'meta'>> & { meta?: string | null } = {}): JobRow {
  return {
    id: 'job-1',
    title: 'Heat',
    status: 'completed',
    progress: 100,
    output_path: '/media/Filme/Heat (1995)',
    target_dir: '/media/Filme',
    meta: parseJobMeta(meta),
    device: 'kitchen-sr0',
    node: 'kitchen@host',
    transcode_node: null,
    error: null,
    phase: 'transcode',
    eta_points: null,
    raw_state: null,
    raw_path: null,
    raw_size: null,
    raw_checked_at: null,
    created_at: new Date(T0).toISOString(),
    updated_at: new Date(T0).toISOString(),
    finished_at: null,
    ...overrides,
  };
}

/**
 * A status written around the state table (as an old row or another version may hold it), then a
 * write through the store so the list body sees the row: the list body must stay right for any row.
 */
function forceStatus(jobs: JobsStore, db: Db, id: string, status: JobStatus, fields: Parameters<JobsStore['update']>[1] = {}): void {
  db.prepare('UPDATE jobs SET status = ? WHERE id = ?').run(status, id);
  jobs.update(id, fields);
}

function list(jobs: JobsStore): Job[] {
  return JSON.parse(Buffer.concat(jobs.listParts()).toString('utf8')) as Job[];
}

/** What fn returns, and how many rows it read through the store meanwhile. */
function countingReads<T>(jobs: JobsStore, fn: () => T): { value: T; reads: number } {
  let reads = 0;
  const get = jobs.get.bind(jobs);
  jobs.get = (id: string) => {
    reads++;
    return get(id);
  };
  try {
    return { value: fn(), reads };
  } finally {
    jobs.get = get;
  }
}

const newJob = (id: string, title = 'T') => ({ id, title, target_dir: '/media/Filme', device: 'kitchen-sr0', node: 'kitchen@host', meta: { year: 2001 } });

describe('toView', () => {
  it('shows running as processing and keeps other statuses', () => {
    assert.equal(toView(row({ status: 'running' }), T0).status, 'processing');
    for (const status of ['pending', 'transcoding', 'canceling', 'failed', 'completed', 'canceled'] as const) {
      assert.equal(toView(row({ status }), T0).status, status);
    }
  });

  it('offers a retry only when the raw data is present', () => {
    assert.equal(toView(row({ status: 'failed', raw_state: 'present' }), T0).can_retry, true);
    assert.equal(toView(row({ status: 'failed', raw_state: 'absent' }), T0).can_retry, false);
    assert.equal(toView(row({ status: 'failed', raw_state: 'unclear' }), T0).can_retry, false);
    assert.equal(toView(row({ status: 'failed', raw_state: null }), T0).can_retry, false);
  });

  it('shows corrupt or non-object meta as null', () => {
    assert.equal(toView(row({ meta: '{not json' }), T0).meta, null);
    assert.equal(toView(row({ meta: '[1,2]' }), T0).meta, null);
    assert.equal(toView(row({ meta: '"text"' }), T0).meta, null);
    assert.equal(toView(row({ meta: null }), T0).meta, null);
    assert.deepEqual(toView(row({ meta: '{"year":1995,"series":null}' }), T0).meta, { year: 1995, series: null });
  });

  it('has no ETA below two points, and one from two points a minute apart', () => {
    const one = JSON.stringify([{ t: T0, p: 10 }]);
    assert.equal(toView(row({ status: 'running', eta_points: one }), T0 + 120_000).eta_sekunden, null);
    assert.equal(toView(row({ status: 'running', eta_points: '[]' }), T0).eta_sekunden, null);
    assert.equal(toView(row({ status: 'running', eta_points: 'garbage' }), T0).eta_sekunden, null);
    const two = JSON.stringify([
      { t: T0, p: 0 },
      { t: T0 + 60_000, p: 10 },
    ]);
    const view = toView(row({ status: 'transcoding', eta_points: two }), T0 + 60_000);
    assert.equal(view.eta_sekunden, 540);
    assert.equal(view.eta_text, 'noch etwa 9 Minuten');
  });

  it('has no ETA for jobs that are not processing or transcoding', () => {
    const two = JSON.stringify([
      { t: T0, p: 0 },
      { t: T0 + 60_000, p: 10 },
    ]);
    for (const status of ['pending', 'canceling', 'failed', 'completed'] as const) {
      const view = toView(row({ status, eta_points: two }), T0 + 60_000);
      assert.equal(view.eta_sekunden, null, status);
      assert.equal(view.eta_text, null, status);
    }
  });

  it('keeps the columns of the API and leaves internal ones out', () => {
    const view = toView(row({ raw_path: '/raw/job-1', eta_points: '[]' }), T0) as unknown as Record<string, unknown>;
    assert.equal(view.device, 'kitchen-sr0');
    assert.equal(view.output_path, '/media/Filme/Heat (1995)');
    assert.equal('raw_path' in view, false);
    assert.equal('eta_points' in view, false);
  });
});

describe('liveRenderer', () => {
  it('gives the same JSON as the view at every moment, with and without an estimate', () => {
    const points = JSON.stringify([{ t: T0, p: 5 }, { t: T0 + 30_000, p: 9 }, { t: T0 + 90_000, p: 20 }]);
    const rows = [
      row({ status: 'running', phase: 'rip', progress: 20, eta_points: points }),
      row({ status: 'transcoding', eta_points: points, error: null, title: 'Quote "eta_sekunden":null,"eta_text":null' }),
      // meta with the same keys before the view's own: the view's are the ones that move.
      row({ status: 'running', eta_points: points, meta: JSON.stringify({ eta_sekunden: null, eta_text: null, year: 1999 }) }),
      row({ status: 'transcoding', eta_points: JSON.stringify([{ t: T0, p: 5 }]) }),
      row({ status: 'transcoding', eta_points: JSON.stringify([{ t: T0, p: 5 }, { t: T0 + 10_000, p: 9 }]) }),
      row({ status: 'transcoding', eta_points: 'not json' }),
      row({ status: 'completed', eta_points: points }),
    ];
    const at = (r: JobRow, now: number): string => {
      const json = liveRenderer(r);
      return typeof json === 'string' ? json : json(now);
    };
    for (const r of rows) {
      for (const now of [T0 + 90_000, T0 + 91_234, T0 + 3_600_000, T0 + 86_400_000]) {
        assert.equal(at(r, now), JSON.stringify(toView(r, now)), `${r.title} at ${now - T0}`);
      }
    }
    assert.notEqual(at(rows[0], T0 + 90_000), at(rows[0], T0 + 3_600_000), 'the estimate moves');
    // Only rows with an estimate move: the one-point, too-short, unreadable and finished ones are fixed strings.
    assert.deepEqual(rows.map((r) => typeof liveRenderer(r)), ['function', 'function', 'function', 'string', 'string', 'string', 'string']);
  });
});

describe('outputTarget', () => {
  it('reads year, series and season only with the right types', () => {
    assert.deepEqual(outputTarget({ title: 'Heat', meta: parseJobMeta('{"year":1995}') }), { title: 'Heat', year: 1995, series: null, season: null });
    assert.deepEqual(outputTarget({ title: 'D1', meta: parseJobMeta('{"year":"1995","series":"Show","season":"2"}') }), { title: 'D1', year: null, series: 'Show', season: null });
    assert.deepEqual(outputTarget({ title: 'D1', meta: parseJobMeta('broken') }), { title: 'D1', year: null, series: null, season: null });
  });
});

describe('JobsStore', () => {
  it('creates a pending job with meta and times from its clock', () => {
    const { jobs } = setup();
    const job = jobs.create(newJob('a'));
    assert.equal(job.status, 'pending');
    assert.equal(job.progress, 0);
    assert.equal(job.created_at, new Date(T0).toISOString());
    assert.deepEqual(job.meta, { year: 2001 });
    assert.deepEqual(
      jobs.active().map((j) => j.id),
      ['a'],
    );
  });

  it('moves the status, updates columns and updated_at, and merges meta patches', () => {
    const { jobs, clock } = setup();
    jobs.create(newJob('a'));
    clock.now += 5000;
    const updated = jobs.move('a', 'failed', { error: 'no disc' });
    assert.equal(updated?.status, 'failed');
    assert.equal(updated?.error, 'no disc');
    assert.equal(updated?.updated_at, new Date(T0 + 5000).toISOString());
    assert.deepEqual(jobs.active(), []);
    jobs.update('a', {}, { titles: [1, 2] });
    assert.deepEqual(jobs.get('a')?.meta, { year: 2001, titles: [1, 2] });
    assert.equal(jobs.update('missing', {}, { titles: [] }), undefined);
    assert.equal(jobs.move('missing', 'failed'), undefined);
  });

  it('records progress: the same phase extends the series, a new phase starts a new one', () => {
    const { jobs, clock } = setup();
    jobs.create(newJob('a'));
    jobs.move('a', 'running');
    jobs.recordProgress('a', 'rip', 10);
    clock.now += 30_000;
    jobs.recordProgress('a', 'rip', 20);
    clock.now += 30_000;
    const r = jobs.recordProgress('a', 'rip', 30);
    assert.equal(r?.progress, 30);
    assert.equal(r?.phase, 'rip');
    assert.equal((JSON.parse(r?.eta_points ?? '[]') as unknown[]).length, 3);

    clock.now += 1000;
    const t = jobs.recordProgress('a', 'transcode', 5);
    assert.equal(t?.phase, 'transcode');
    assert.equal(t?.progress, 5);
    assert.deepEqual(JSON.parse(t?.eta_points ?? '[]'), [{ t: clock.now, p: 5 }]);
  });

  it('keeps the progress when a value jumps back (jitter) and clamps above 100', () => {
    const { jobs, clock } = setup();
    jobs.create(newJob('a'));
    jobs.recordProgress('a', 'rip', 40);
    clock.now += 1000;
    assert.equal(jobs.recordProgress('a', 'rip', 35)?.progress, 40);
    clock.now += 1000;
    assert.equal(jobs.recordProgress('a', 'rip', 140)?.progress, 100);
    assert.equal(jobs.recordProgress('missing', 'rip', 1), undefined);
  });

  it('a phase start resets progress and the ETA series', () => {
    const { jobs, clock } = setup();
    jobs.create(newJob('a'));
    jobs.recordProgress('a', 'rip', 70);
    clock.now += 1000;
    const r = jobs.move('a', 'transcoding', phaseStart('transcode'));
    assert.equal(r?.progress, 0);
    assert.equal(r?.status, 'transcoding');
    assert.equal(r?.eta_points, '[]');
  });

  it('removes a job with its logs', () => {
    const { jobs } = setup();
    jobs.create(newJob('a'));
    jobs.addLog('a', 'info', 'one');
    jobs.addLog('a', 'warn', 'two');
    assert.deepEqual(
      jobs.logs('a').map((l) => [l.level, l.message]),
      [
        ['info', 'one'],
        ['warn', 'two'],
      ],
    );
    jobs.remove('a');
    assert.equal(jobs.get('a'), undefined);
    assert.deepEqual(jobs.logs('a'), []);
  });
});

describe('JobsStore list body', () => {
  it('lists newest first, ties by id, and puts a job created later in front', () => {
    const { jobs, clock } = setup();
    jobs.create(newJob('b'));
    jobs.create(newJob('a'));
    clock.now += 1000;
    jobs.create(newJob('c'));
    assert.deepEqual(
      list(jobs).map((j) => j.id),
      ['c', 'a', 'b'],
    );
    clock.now += 1000;
    jobs.create(newJob('d'));
    jobs.create(newJob('0'));
    assert.deepEqual(
      list(jobs).map((j) => j.id),
      ['0', 'd', 'c', 'a', 'b'],
    );
    assert.deepEqual(
      list(jobs).map((j) => j.id),
      jobs.all().map((j) => j.id),
      'the same order as the table',
    );
  });

  it('serves finished rows from its cache and refreshes a row written through the store', () => {
    const { jobs, db } = setup();
    jobs.create(newJob('a', 'Old Title'));
    jobs.move('a', 'failed');
    jobs.create(newJob('b', 'Other'));
    assert.equal(list(jobs).find((j) => j.id === 'a')?.title, 'Old Title');

    // a write around the store is not seen: the body comes from memory
    db.prepare('UPDATE jobs SET title = ? WHERE id = ?').run('Sneaky', 'a');
    assert.equal(list(jobs).find((j) => j.id === 'a')?.title, 'Old Title');

    jobs.update('a', { raw_state: 'present' });
    const a = list(jobs).find((j) => j.id === 'a');
    assert.equal(a?.title, 'Sneaky', 'the row is read again after a write through the store');
    assert.equal(a?.can_retry, true);
    assert.equal(list(jobs).find((j) => j.id === 'b')?.title, 'Other');
  });

  it('renders processing rows anew: progress and ETA follow writes and the clock', () => {
    const { jobs, clock } = setup();
    jobs.create(newJob('done'));
    jobs.move('done', 'completed');
    jobs.create(newJob('live'));
    jobs.move('live', 'running');
    jobs.recordProgress('live', 'rip', 0);
    assert.equal(list(jobs).find((j) => j.id === 'live')?.eta_sekunden, null, 'one point: no ETA');

    clock.now += 60_000;
    jobs.recordProgress('live', 'rip', 10);
    let live = list(jobs).find((j) => j.id === 'live');
    assert.equal(live?.status, 'processing');
    assert.equal(live?.progress, 10);
    assert.equal(live?.eta_sekunden, 540);

    clock.now += 60_000; // no write, only time passes
    live = list(jobs).find((j) => j.id === 'live');
    assert.equal(live?.eta_sekunden, 1080, 'the rate runs up to now');

    jobs.move('live', 'completed', { progress: 100 });
    live = list(jobs).find((j) => j.id === 'live');
    assert.equal(live?.status, 'completed');
    assert.equal(live?.eta_sekunden, null);
    assert.equal(list(jobs).find((j) => j.id === 'done')?.status, 'completed');
  });

  it('renders a live row from its last write, with only the ETA following the clock', () => {
    const { jobs, db, clock } = setup();
    jobs.create(newJob('queued'));
    jobs.move('queued', 'transcoding', phaseStart('transcode'));
    jobs.create(newJob('moving'));
    jobs.move('moving', 'transcoding');
    jobs.recordProgress('moving', 'transcode', 0);
    clock.now += 60_000;
    jobs.recordProgress('moving', 'transcode', 10);
    assert.equal(list(jobs).find((j) => j.id === 'queued')?.title, 'T');

    // A write around the store is not seen: neither row is read again per request, with an ETA or without.
    db.prepare('UPDATE jobs SET title = ?').run('Around');
    assert.equal(list(jobs).find((j) => j.id === 'queued')?.title, 'T');
    assert.equal(list(jobs).find((j) => j.id === 'moving')?.title, 'T');
    clock.now += 60_000;
    assert.equal(list(jobs).find((j) => j.id === 'moving')?.eta_sekunden, 1080, 'the ETA follows the clock');

    // Written through the store: read again, and once it has an ETA it is no longer kept.
    jobs.recordProgress('queued', 'transcode', 0);
    let queued = list(jobs).find((j) => j.id === 'queued');
    assert.equal(queued?.title, 'Around');
    assert.equal(queued?.progress, 0);
    clock.now += 60_000;
    jobs.recordProgress('queued', 'transcode', 50);
    queued = list(jobs).find((j) => j.id === 'queued');
    assert.equal(queued?.eta_sekunden, 60);
    clock.now += 30_000;
    assert.equal(list(jobs).find((j) => j.id === 'queued')?.eta_sekunden, 90);
    jobs.move('queued', 'completed', { progress: 100 });
    queued = list(jobs).find((j) => j.id === 'queued');
    assert.equal(queued?.status, 'completed');
    assert.equal(queued?.eta_sekunden, null);
  });

  it('drops removed jobs and stays valid JSON when empty', () => {
    const { jobs } = setup();
    assert.deepEqual(list(jobs), []);
    jobs.create(newJob('a'));
    jobs.create(newJob('b'));
    assert.equal(list(jobs).length, 2);
    jobs.remove('a');
    assert.deepEqual(
      list(jobs).map((j) => j.id),
      ['b'],
    );
    jobs.remove('b');
    assert.deepEqual(list(jobs), []);
  });

  it('moves a job between finished and live without losing its neighbours', () => {
    const { jobs, clock } = setup();
    for (const id of ['a', 'b', 'c']) {
      jobs.create(newJob(id));
      jobs.move(id, id === 'b' ? 'canceled' : 'completed');
      clock.now += 1000;
    }
    assert.deepEqual(
      list(jobs).map((j) => j.id),
      ['c', 'b', 'a'],
    );
    // A retry of the transcode: the ended row becomes a live one.
    jobs.move('b', 'transcoding');
    assert.deepEqual(
      list(jobs).map((j) => [j.id, j.status]),
      [
        ['c', 'completed'],
        ['b', 'transcoding'],
        ['a', 'completed'],
      ],
    );
    jobs.recordProgress('b', 'transcode', 50);
    jobs.update('c', { title: 'C2' });
    jobs.move('b', 'failed');
    assert.deepEqual(
      list(jobs).map((j) => [j.id, j.status, j.title]),
      [
        ['c', 'completed', 'C2'],
        ['b', 'failed', 'T'],
        ['a', 'completed', 'T'],
      ],
    );
  });
});

describe('JobsStore list body over several chunks', () => {
  /** The body as the table has it now. */
  const expected = (jobs: JobsStore, now: number): Job[] => jobs.all().map((r) => toView(r, now));

  it('stays equal to the table through scattered writes, live rows and rows written many times', () => {
    const { jobs, db, clock } = setup();
    // 700 jobs: three chunks of 250 rows. Titles with multi-byte characters, so byte and character offsets differ.
    for (let i = 0; i < 700; i++) {
      jobs.create(newJob(`j${String(i).padStart(4, '0')}`, i % 3 === 0 ? `Amélie ${i} – 千と千尋` : `Title ${i}`));
      jobs.move(`j${String(i).padStart(4, '0')}`, i % 50 === 7 ? 'transcoding' : 'completed');
      if (i % 10 === 0) clock.now += 1000;
    }
    assert.deepEqual(list(jobs), expected(jobs, clock.now));
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const statuses = ['completed', 'failed', 'transcoding', 'running', 'canceled'] as const;
    for (let round = 0; round < 40; round++) {
      // A round writes up to 30 rows anywhere in the list (some several times), then the body is read.
      for (let w = 0; w < 1 + random(30); w++) {
        const id = `j${String(random(700)).padStart(4, '0')}`;
        if (random(2) === 0) forceStatus(jobs, db, id, statuses[random(statuses.length)]);
        else jobs.update(id, { title: `T${round}-${w} ${'ü'.repeat(random(40))}`, raw_state: random(2) ? 'present' : 'absent' });
      }
      assert.deepEqual(list(jobs), expected(jobs, clock.now), `round ${round}`);
    }
    // The first and the last row: no comma before the first, none after the last.
    forceStatus(jobs, db, 'j0699', 'running');
    forceStatus(jobs, db, 'j0000', 'running');
    assert.deepEqual(list(jobs), expected(jobs, clock.now));
    jobs.move('j0699', 'failed', { title: 'Ende' });
    jobs.move('j0000', 'failed', { title: 'Anfang' });
    assert.deepEqual(list(jobs), expected(jobs, clock.now));
  });

  it('builds only the chunks of written rows anew, and sends the body in about one piece per 100 rows', () => {
    const { jobs, clock } = setup();
    for (let i = 0; i < 750; i++) {
      jobs.create(newJob(`k${String(i).padStart(4, '0')}`, `Title ${i}`));
      jobs.move(`k${String(i).padStart(4, '0')}`, 'completed', { raw_state: 'present' });
      if (i % 10 === 0) clock.now += 1000;
    }
    const before = jobs.listParts();
    const known = new Set(before.map((p) => p.buffer));
    assert.ok(before.length <= 2 + 8, `${before.length} pieces for 750 rows`);
    // One row in each of three chunks, as a raw-data sweep writes them.
    for (const id of ['k0010', 'k0300', 'k0600']) jobs.update(id, { raw_state: 'absent' });
    const after = jobs.listParts();
    const total = after.reduce((n, p) => n + p.length, 0);
    const fresh = after.filter((p) => !known.has(p.buffer));
    const freshBytes = fresh.reduce((n, p) => n + p.length, 0);
    assert.ok(total > 250_000, `body of ${total} bytes`);
    assert.equal(fresh.length, 3, 'three chunks were built anew');
    assert.ok(freshBytes < (total * 3.5) / 7.5, `${freshBytes} of ${total} bytes were copied for three written rows`);
    assert.equal(after.length, before.length);
    assert.deepEqual(JSON.parse(Buffer.concat(after).toString('utf8')), expected(jobs, clock.now));
    // A sweep writing a row in every chunk: still one piece per chunk, not one per written row.
    for (let i = 0; i < 750; i += 3) jobs.update(`k${String(i).padStart(4, '0')}`, { raw_state: 'present' });
    assert.equal(jobs.listParts().length, before.length);
    assert.deepEqual(list(jobs), expected(jobs, clock.now));
  });

  it('keeps queued transcodes in the buffers and renders per request only the rows with an estimate', () => {
    const { jobs, clock } = setup();
    for (let i = 0; i < 1000; i++) {
      const id = `w${String(i).padStart(4, '0')}`;
      jobs.create(newJob(id, `Queued ${i}`));
      jobs.move(id, 'transcoding', phaseStart('transcode'));
      if (i % 10 === 0) clock.now += 1000;
    }
    const queued = jobs.listParts();
    assert.ok(queued.length <= 12, `${queued.length} pieces for 1,000 queued transcodes`);
    assert.deepEqual(list(jobs), expected(jobs, clock.now));
    // Twenty start and report progress: they leave the buffers and are rendered per request.
    const running = Array.from({ length: 20 }, (_, k) => `w${String(k * 50).padStart(4, '0')}`);
    for (const id of running) jobs.recordProgress(id, 'transcode', 1);
    clock.now += 60_000;
    for (const id of running) jobs.recordProgress(id, 'transcode', 20);
    const moving = jobs.listParts();
    assert.ok(moving.length <= 12 + 3 * 20, `${moving.length} pieces with 20 rows moving`);
    const first = list(jobs);
    assert.equal(first.filter((j) => j.eta_sekunden !== null).length, 20);
    assert.deepEqual(first, expected(jobs, clock.now));
    // Their progress builds no chunk anew: the buffers are the same ones.
    const known = new Set(moving.filter((p) => p.length > 1000).map((p) => p.buffer));
    clock.now += 30_000;
    for (const id of running) jobs.recordProgress(id, 'transcode', 40);
    const later = jobs.listParts();
    assert.ok(later.filter((p) => p.length > 1000).every((p) => known.has(p.buffer)), 'no chunk was built anew');
    assert.deepEqual(JSON.parse(Buffer.concat(later).toString('utf8')), expected(jobs, clock.now));
    // A queued one handed out (its row written) and one ended: right at once.
    jobs.update('w0001', { transcode_node: 'keller@nas' });
    jobs.move('w0050', 'completed', { progress: 100 });
    assert.deepEqual(list(jobs), expected(jobs, clock.now));
  });

  it('reads no live row per request once it was written through the store', () => {
    const { jobs, clock } = setup();
    for (let i = 0; i < 120; i++) {
      const id = `q${String(i).padStart(3, '0')}`;
      jobs.create(newJob(id, `Queued ${i}`));
      jobs.move(id, 'transcoding', phaseStart('transcode'));
      if (i % 3 === 0) jobs.recordProgress(id, 'transcode', 1);
    }
    clock.now += 120_000;
    for (let i = 0; i < 120; i += 3) jobs.recordProgress(`q${String(i).padStart(3, '0')}`, 'transcode', 30);
    const { value: [first, second], reads } = countingReads(jobs, () => {
      const one = list(jobs);
      clock.now += 60_000;
      return [one, list(jobs)];
    });
    assert.equal(reads, 0, 'no request read a row');
    assert.equal(first.filter((j) => j.eta_sekunden !== null).length, 40);
    assert.ok((second.find((j) => j.id === 'q000')?.eta_sekunden ?? 0) > (first.find((j) => j.id === 'q000')?.eta_sekunden ?? 0), 'the estimate follows the clock');
    assert.deepEqual(second, expected(jobs, clock.now));
  });

  it('renders a finished row when it is written, so the next request reads and renders no rows', () => {
    const { jobs, clock } = setup();
    for (let i = 0; i < 300; i++) {
      jobs.create(newJob(`r${String(i).padStart(3, '0')}`, `Title ${i}`));
      jobs.move(`r${String(i).padStart(3, '0')}`, 'failed');
    }
    jobs.listParts();
    for (let i = 0; i < 300; i += 7) jobs.update(`r${String(i).padStart(3, '0')}`, { raw_state: 'absent', title: `Swept ${i}` });
    const { value: body, reads } = countingReads(jobs, () => list(jobs));
    assert.equal(reads, 0, 'the request read no row');
    assert.equal(body.find((j) => j.id === 'r007')?.title, 'Swept 7');
    assert.deepEqual(body, expected(jobs, clock.now));
  });
});
