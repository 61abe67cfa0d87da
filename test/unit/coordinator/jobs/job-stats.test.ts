import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import express from 'express';
import { computeStats, failureKind, isoWeek, median, statsFrom, STATS_WEEKS_DEFAULT, STATS_WEEKS_MAX, type StatsRow } from '../../../../coordinator/jobs/job-stats.js';
import { filesBytes, recordFilesBytes } from '../../../../coordinator/jobs/job-sizes.js';
import { JobsStore } from '../../../../coordinator/jobs/jobs-store.js';
import { parseJobMeta } from '../../../../coordinator/jobs/job-meta.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { errorHandler } from '../../../../coordinator/http/errors.js';
import { statsRouter } from '../../../../coordinator/routes/stats.js';
import type { AppContext } from '../../../../coordinator/context.js';
import { Logger } from '../../../../shared/log.js';
import { openDatabase } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-stats-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
function row(finished: string, over: Partial<StatsRow> = {}): StatsRow {
  return { id: `job-${++n}`, status: 'completed', error: null, finished_at: finished, disc_type: 'dvd', rip_seconds: null, transcode_seconds: null, raw_bytes: null, output_bytes: null, ...over };
}

describe('statistics: ISO weeks', () => {
  it('names weeks as ISO 8601 does, across the turn of the year', () => {
    // 2026-12-31 is a Thursday: week 53 of 2026; 2027-01-03 (Sunday) still belongs to it.
    assert.equal(isoWeek(Date.UTC(2026, 11, 31, 12)), '2026-W53');
    assert.equal(isoWeek(Date.UTC(2027, 0, 3, 23, 59)), '2026-W53');
    assert.equal(isoWeek(Date.UTC(2027, 0, 4, 0, 0)), '2027-W01');
    // 2024-12-30 (Monday) is week 1 of 2025.
    assert.equal(isoWeek(Date.UTC(2024, 11, 30, 8)), '2025-W01');
    assert.equal(isoWeek(Date.UTC(2024, 11, 29, 8)), '2024-W52');
  });

  it('counts jobs per week by outcome over a year boundary, every week listed, older and later jobs left out', () => {
    const now = Date.UTC(2027, 0, 6, 10); // Wednesday of 2027-W01
    const rows = [
      row('2027-01-05T09:00:00.000Z'),
      row('2027-01-04T00:00:00.000Z', { status: 'failed', error: 'Encode failed: x' }),
      row('2027-01-03T23:59:00.000Z'),
      row('2026-12-28T08:00:00.000Z', { status: 'canceled' }),
      row('2026-12-20T08:00:00.000Z'), // 2026-W51: before the three weeks
      row('2027-01-07T08:00:00.000Z'), // after now
      row('2027-01-05T09:00:00.000Z', { status: 'transcoding' }),
    ];
    const s = computeStats(rows, 3, now);
    assert.equal(s.from, '2026-12-21');
    assert.deepEqual(s.per_week, [
      { week: '2026-W52', starts: '2026-12-21', completed: 0, failed: 0, canceled: 0 },
      { week: '2026-W53', starts: '2026-12-28', completed: 1, failed: 0, canceled: 1 },
      { week: '2027-W01', starts: '2027-01-04', completed: 1, failed: 1, canceled: 0 },
    ]);
    assert.equal(new Date(statsFrom(3, now)).toISOString(), '2026-12-21T00:00:00.000Z');
  });
});

describe('statistics: times, space and reasons', () => {
  const now = Date.UTC(2026, 10, 28, 12);
  it('gives median and total of rip and transcode times per disc kind, counting only jobs whose time is known', () => {
    const s = computeStats(
      [
        row('2026-11-27T10:00:00.000Z', { disc_type: 'bluray', rip_seconds: 1200, transcode_seconds: 3000 }),
        row('2026-11-26T10:00:00.000Z', { disc_type: 'bluray', rip_seconds: 1800, transcode_seconds: 5000 }),
        row('2026-11-25T10:00:00.000Z', { disc_type: 'bluray', rip_seconds: 600 }),
        row('2026-11-25T10:00:00.000Z', { disc_type: 'dvd', rip_seconds: 'long', transcode_seconds: -5 }),
        row('2026-11-25T10:00:00.000Z', { disc_type: 'hddvd', rip_seconds: 60 }),
        row('2026-11-25T10:00:00.000Z', { disc_type: 'uhd', status: 'failed', rip_seconds: 60, error: 'x' }),
      ],
      4,
      now,
    );
    assert.deepEqual(s.per_kind, [
      { kind: 'dvd', jobs: 1, rip: { jobs: 0, median_seconds: null, total_seconds: 0 }, transcode: { jobs: 0, median_seconds: null, total_seconds: 0 } },
      { kind: 'bluray', jobs: 3, rip: { jobs: 3, median_seconds: 1200, total_seconds: 3600 }, transcode: { jobs: 2, median_seconds: 4000, total_seconds: 8000 } },
      { kind: 'unknown', jobs: 1, rip: { jobs: 1, median_seconds: 60, total_seconds: 60 }, transcode: { jobs: 0, median_seconds: null, total_seconds: 0 } },
    ]);
    assert.equal(median([]), null);
    assert.equal(median([5, 1, 3]), 3);
  });

  it('adds up space saved only over completed jobs with both sizes, and counts the jobs without', () => {
    const s = computeStats(
      [
        row('2026-11-27T10:00:00.000Z', { raw_bytes: 8_000_000_000, output_bytes: 2_000_000_000 }),
        row('2026-11-27T11:00:00.000Z', { raw_bytes: 30_000_000_000, output_bytes: 6_800_000_000 }),
        row('2026-11-27T12:00:00.000Z', { raw_bytes: 5_000_000_000 }), // a job from before the sizes were recorded, or raw not visible
        row('2026-11-27T13:00:00.000Z'),
        row('2026-11-27T14:00:00.000Z', { status: 'failed', raw_bytes: 9, output_bytes: 1, error: 'x' }),
      ],
      1,
      now,
    );
    assert.deepEqual(s.space, { jobs: 2, raw_bytes: 38_000_000_000, output_bytes: 8_800_000_000, saved_bytes: 29_200_000_000, without_sizes: 2 });
    const none = computeStats([], 1, now);
    assert.deepEqual(none.space, { jobs: 0, raw_bytes: 0, output_bytes: 0, saved_bytes: 0, without_sizes: 0 });
    assert.deepEqual(none.failures, []);
  });

  it('groups failure reasons into kinds, keeps unknown ones as other with the latest example', () => {
    const cases: [string, string | null, string][] = [
      ['failed', 'Heat.mkv: the output is 3 minutes shorter than the title (1:42:00 of 1:45:00); the raw data is kept', 'output_proof'],
      ['failed', 'Heat.mkv: audio track 2 (deu) is missing from the output; the raw data is kept', 'output_proof'],
      ['failed', 'the ripper reported 12 read error(s): the raw files may have gaps where the disc could not be read', 'read_error'],
      ['failed', 'the disc has no titles the ripper could read', 'read_error'],
      ['failed', 'Encode failed: the transcoder gave no reason', 'encoder'],
      ['failed', 'The transcoder does not know the preset "H.265 MKV 1080x"', 'encoder'],
      ['failed', 'The transcoder could not read the input file: it holds no video it can open', 'encoder'],
      ['failed', 'not enough free space in /media/raw: the rip needs about 40 GB, 3 GB are free', 'no_space'],
      ['failed', 'the volume key of this 4K UHD disc is unknown: install a key store (POST /api/system/keystore)', 'disc_key'],
      ['failed', 'the worker kitchen@nas went offline during the rip (no contact for 90 s): retry the rip', 'worker_lost'],
      ['failed', 'the worker kitchen@nas no longer runs this transcode (it restarted without it): retry the transcode', 'worker_lost'],
      ['canceled', null, 'canceled'],
      ['canceled', 'canceled after the rip', 'canceled'],
      ['failed', 'something nobody foresaw', 'other'],
      ['failed', null, 'other'],
    ];
    for (const [status, error, kind] of cases) assert.equal(failureKind(status, error), kind, String(error));

    const s = computeStats(
      [
        row('2026-11-27T10:00:00.000Z', { id: 'old', status: 'failed', error: 'the drive caught fire' }),
        row('2026-11-27T12:00:00.000Z', { id: 'new', status: 'failed', error: `strange ${'x'.repeat(300)}` }),
        row('2026-11-26T12:00:00.000Z', { status: 'failed', error: 'Encode failed: the transcoder gave no reason' }),
        row('2026-11-26T13:00:00.000Z', { status: 'canceled', error: null }),
        row('2026-11-26T14:00:00.000Z', { status: 'failed', error: 'the drive smoked' }),
      ],
      1,
      now,
    );
    assert.deepEqual(s.failures.map((f) => [f.kind, f.count]), [['other', 3], ['canceled', 1], ['encoder', 1]]);
    const other = s.failures[0];
    assert.equal(other.job_id, 'new');
    assert.equal(other.example?.length, 200);
    assert.ok(other.example?.startsWith('strange xxx') && other.example.endsWith('…'));
    assert.equal(s.failures[1].example, null);
  });
});

describe('statistics: what the store reads and records', () => {
  it('reads the ended jobs with the meta keys of the figures; a corrupt meta gives none, active jobs are left out', () => {
    const db = openDatabase(path.join(root, 'store.sqlite'), coordinatorMigrations);
    const jobs = new JobsStore(db, () => Date.UTC(2026, 10, 28));
    const make = (id: string, meta: object) => jobs.create({ id, title: id, target_dir: '/m', device: 'd', node: 'n', meta });
    make('a', { disc_type: 'bluray', rip_seconds: 100 });
    jobs.move('a', 'completed', { finished_at: '2026-11-27T10:00:00.000Z' }, { transcode_seconds: 50, raw_bytes: 10, output_bytes: 4 });
    make('b', {});
    db.prepare(`UPDATE jobs SET meta = '{broken', status = 'failed', error = 'x', finished_at = '2026-11-27T11:00:00.000Z' WHERE id = 'b'`).run();
    make('c', { disc_type: 'dvd' });
    jobs.move('c', 'running');
    make('d', { disc_type: 'dvd' });
    jobs.move('d', 'completed', { finished_at: '2026-10-01T10:00:00.000Z' });
    const got = jobs.endedSince('2026-11-23T00:00:00.000Z').sort((x, y) => x.id.localeCompare(y.id));
    assert.deepEqual(got, [
      { id: 'a', status: 'completed', error: null, finished_at: '2026-11-27T10:00:00.000Z', disc_type: 'bluray', rip_seconds: 100, transcode_seconds: 50, raw_bytes: 10, output_bytes: 4 },
      { id: 'b', status: 'failed', error: 'x', finished_at: '2026-11-27T11:00:00.000Z', disc_type: null, rip_seconds: null, transcode_seconds: null, raw_bytes: null, output_bytes: null },
    ]);
    db.close();
  });

  it('records the bytes of files it sees, and nothing when one of them is not there', async () => {
    const db = openDatabase(path.join(root, 'sizes.sqlite'), coordinatorMigrations);
    const jobs = new JobsStore(db);
    jobs.create({ id: 'j', title: 'j', target_dir: '/m', device: 'd', node: 'n', meta: {} });
    const a = path.join(root, 'a.mkv');
    const b = path.join(root, 'b.mkv');
    fs.writeFileSync(a, Buffer.alloc(1500));
    fs.writeFileSync(b, Buffer.alloc(500));
    assert.equal(await filesBytes([a, b]), 2000);
    assert.equal(await filesBytes([a, path.join(root, 'gone.mkv')]), null);
    assert.equal(await filesBytes([root]), null, 'a folder is no file');
    assert.equal(await filesBytes([]), null);
    const log = new Logger('test', true);
    await recordFilesBytes(jobs, 'j', 'raw_bytes', [a, b], log);
    await recordFilesBytes(jobs, 'j', 'output_bytes', [a, path.join(root, 'gone.mkv')], log);
    assert.equal(jobs.get('j')?.meta?.raw_bytes, 2000);
    assert.equal(jobs.get('j')?.meta?.output_bytes, undefined);
    assert.equal(jobs.get('j')?.status, 'pending');
    db.close();
  });

  it('checks the recorded times and sizes like every meta key: a wrong type or a negative amount reads as absent', () => {
    const meta = parseJobMeta(JSON.stringify({ rip_started_at: '2026-11-27T10:00:00.000Z', rip_seconds: 90, transcode_started_at: 'yesterday', transcode_seconds: -1, raw_bytes: '5 GB', output_bytes: 7 }));
    assert.deepEqual(meta, { rip_started_at: '2026-11-27T10:00:00.000Z', rip_seconds: 90, output_bytes: 7 });
  });
});

describe('GET /stats', () => {
  const db = openDatabase(path.join(root, 'route.sqlite'), coordinatorMigrations);
  const app = express();
  app.use(statsRouter({ jobs: new JobsStore(db) } as unknown as AppContext));
  app.use(errorHandler(new Logger('test', true)));
  const server = app.listen(0);
  after(() => {
    server.close();
    db.close();
  });
  const get = async (query: string) => {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/stats${query}`);
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
  };

  it('refuses a bad weeks value, a repeated one and an unknown parameter with a plain-text 400', async () => {
    for (const [query, words] of [
      ['?weeks=0', `from 1 to ${STATS_WEEKS_MAX}`],
      [`?weeks=${STATS_WEEKS_MAX + 1}`, `from 1 to ${STATS_WEEKS_MAX}`],
      ['?weeks=abc', 'whole number'],
      ['?weeks=2.5', 'whole number'],
      ['?weeks=-3', 'whole number'],
      ['?weeks=', 'whole number'],
      ['?weeks=2&weeks=3', 'given once'],
      ['?week=2', 'unknown parameter "week"'],
    ]) {
      const res = await get(query);
      assert.equal(res.status, 400, query);
      assert.match(res.type, /^text\/plain/, query);
      assert.ok(res.body.includes(words), `${query}: ${res.body}`);
    }
  });

  it(`answers ${STATS_WEEKS_DEFAULT} weeks without a query and the weeks asked for`, async () => {
    const plain = await get('');
    assert.equal(plain.status, 200);
    assert.equal(JSON.parse(plain.body).per_week.length, STATS_WEEKS_DEFAULT);
    const two = JSON.parse((await get('?weeks=2')).body);
    assert.equal(two.weeks, 2);
    assert.equal(two.per_week.length, 2);
  });
});
