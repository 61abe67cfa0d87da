import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { JobsStore, phaseStart } from '../../../../coordinator/jobs/jobs-store.js';
import { JOB_STATUSES, TRANSITIONS, type JobStatus } from '../../../../coordinator/jobs/job-status.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { Logger, type LogEntry } from '../../../../shared/log.js';
import { memoryDatabase, type Db } from '../../../../shared/sqlite.js';
import type { AgentEvent } from '../../../../shared/protocol.js';
import { dispatchParts, encoderCaps, onlineStatus } from '../../../fixtures/dispatch-parts.js';

/** Every UPDATE of a job row, as a trigger sees it: one entry per row written by one statement, with the row before and after. */
function recordUpdates(db: Db): () => { id: string; from: string; to: string; meta_before: string | null; meta_after: string | null }[] {
  db.exec(`CREATE TEMP TABLE job_writes (id TEXT, from_status TEXT, to_status TEXT, meta_before TEXT, meta_after TEXT);
    CREATE TEMP TRIGGER job_write AFTER UPDATE ON jobs BEGIN
      INSERT INTO job_writes VALUES (new.id, old.status, new.status, old.meta, new.meta);
    END;`);
  return () =>
    db
      .prepare<[], { id: string; from: string; to: string; meta_before: string | null; meta_after: string | null }>('SELECT id, from_status AS "from", to_status AS "to", meta_before, meta_after FROM job_writes ORDER BY rowid')
      .all();
}

function setup() {
  const db = memoryDatabase(coordinatorMigrations);
  const log = new Logger('jobs', true);
  const lines: LogEntry[] = [];
  log.addSink((e) => lines.push(e));
  const jobs = new JobsStore(db, Date.now, log);
  const writes = recordUpdates(db);
  const create = (id: string) => jobs.create({ id, title: 'Heat', target_dir: '/media/Filme', device: 'flur-sr0', node: 'flur@host', meta: { fingerprint: 'HEAT:1', year: 1995 } });
  return { db, jobs, lines, writes, create };
}

describe('JobsStore.move: the one writer of a job status', () => {
  it('refuses a move the state table does not allow: nothing is written, one line names the job, from and to', () => {
    const { jobs, lines, writes, create } = setup();
    create('a');
    jobs.move('a', 'completed', { output_path: '/media/Filme/Heat (1995)' });
    const before = jobs.get('a');
    const refused = jobs.move('a', 'running', { progress: 50, error: 'x' }, { rip_fertig: false });
    assert.equal(refused, undefined);
    assert.deepEqual(jobs.get('a'), before, 'the row is as it was: no status, no column, no meta');
    assert.deepEqual(
      writes().map((w) => [w.from, w.to]),
      [['pending', 'completed']],
      'only the permitted move reached the table',
    );
    const refusals = lines.filter((l) => /refused/.test(l.message));
    assert.equal(refusals.length, 1);
    assert.equal(refusals[0].job_id, 'a');
    assert.equal(refusals[0].level, 'warn');
    assert.match(refusals[0].message, /completed → running/);
  });

  it('refuses every move the table lacks, and takes every move it has', () => {
    for (const from of JOB_STATUSES) {
      for (const to of JOB_STATUSES) {
        const { db, jobs, lines, create } = setup();
        create('a');
        db.prepare('UPDATE jobs SET status = ? WHERE id = ?').run(from, 'a');
        const moved = jobs.move('a', to);
        const allowed = TRANSITIONS[from].includes(to);
        assert.equal(moved?.status, allowed ? to : undefined, `${from} → ${to}`);
        assert.equal(jobs.get('a')?.status, allowed ? to : from, `${from} → ${to}`);
        assert.equal(lines.length, allowed ? 0 : 1, `${from} → ${to}`);
      }
    }
  });

  it('writes the status, the other columns and the meta patch in one UPDATE', () => {
    const { jobs, writes, create } = setup();
    create('a');
    jobs.move('a', 'running', { ...phaseStart('rip'), node: 'flur@host' }, { rip_fertig: false });
    const row = jobs.move('a', 'transcoding', { ...phaseStart('transcode'), raw_path: '/raw/a', raw_state: 'present' }, { rip_fertig: true, raw_files: ['/raw/a/t00.mkv'] });
    assert.equal(row?.status, 'transcoding');
    assert.equal(row?.raw_path, '/raw/a');
    assert.deepEqual(row?.meta, { fingerprint: 'HEAT:1', year: 1995, rip_fertig: true, raw_files: ['/raw/a/t00.mkv'] });
    const w = writes();
    assert.equal(w.length, 2, 'one UPDATE per move');
    // The second UPDATE changed status and meta together: no moment with one without the other.
    assert.deepEqual([w[1].from, w[1].to], ['running', 'transcoding']);
    assert.equal(JSON.parse(w[1].meta_before ?? '{}').rip_fertig, false);
    assert.equal(JSON.parse(w[1].meta_after ?? '{}').rip_fertig, true);
  });

  it('keeps the status out of update(): columns and meta in one UPDATE, the status as it was', () => {
    const { jobs, writes, create } = setup();
    create('a');
    const row = jobs.update('a', { title: 'Heat (Director’s Cut)' }, { title_source: 'lookup' });
    assert.equal(row?.status, 'pending');
    assert.equal(row?.meta?.title_source, 'lookup');
    assert.equal(writes().length, 1);
  });

  it('keeps keys it does not know through a write, and drops a value of the wrong type', () => {
    const { db, jobs, create } = setup();
    create('a');
    db.prepare(`UPDATE jobs SET meta = '{"from_a_newer_version":{"x":1},"year":"1995","fingerprint":"HEAT:1"}' WHERE id = 'a'`).run();
    const row = jobs.move('a', 'running', {}, { rip_fertig: false });
    assert.deepEqual(row?.meta, { from_a_newer_version: { x: 1 }, fingerprint: 'HEAT:1', rip_fertig: false });
    const stored = db.prepare<[], { meta: string }>(`SELECT meta FROM jobs WHERE id = 'a'`).get();
    assert.deepEqual(JSON.parse(stored?.meta ?? ''), { from_a_newer_version: { x: 1 }, fingerprint: 'HEAT:1', rip_fertig: false });
  });

  it('gives a row with corrupt meta a fresh meta on its next write instead of failing', () => {
    const { db, jobs, create } = setup();
    create('a');
    db.prepare(`UPDATE jobs SET meta = '{broken' WHERE id = 'a'`).run();
    assert.equal(jobs.get('a')?.meta, null);
    assert.deepEqual(jobs.move('a', 'failed', { error: 'x' }, { rip_fertig: false })?.meta, { rip_fertig: false });
  });
});

type Body<T extends AgentEvent['type']> = Omit<Extract<AgentEvent, { type: T }>, 'event_id' | 'node' | 'ts' | 'type'>;
function event<T extends AgentEvent['type']>(node: string, type: T, body: Body<T>): AgentEvent {
  return { event_id: randomUUID(), node, ts: new Date().toISOString(), type, ...body } as unknown as AgentEvent;
}

describe('an event writes its job once', () => {
  for (const canceling of [false, true]) {
    it(`rip_done of a ${canceling ? 'canceling' : 'running'} job: raw data, rip_fertig, files and status in one UPDATE`, () => {
      const p = dispatchParts();
      // A ripper without an encoder: the queued transcode is not handed out at once (a hand-out writes the job's transcode_node, a step of its own).
      p.presence.onStatus(onlineStatus('ripper@1', { capabilities: { ...encoderCaps, encoders: [] } }));
      const { job, commandId } = p.rippingJob('ripper@1');
      if (canceling) p.jobs.move(job.id, 'canceling');
      const writes = recordUpdates(p.db);
      const raw = `/raw/${job.id}`;
      p.intake.onEvent('ripper@1', event('ripper@1', 'rip_done', { command_id: commandId, job_id: job.id, raw_dir: raw, files: [`${raw}/title_t00.mkv`] }));
      const mine = writes().filter((w) => w.id === job.id);
      const to: JobStatus = canceling ? 'canceled' : 'transcoding';
      assert.deepEqual(
        mine.map((w) => [w.from, w.to]),
        [[canceling ? 'canceling' : 'running', to]],
      );
      const after = p.jobs.get(job.id);
      assert.equal(after?.status, to);
      assert.deepEqual([after?.raw_path, after?.raw_state, after?.meta?.rip_fertig, after?.meta?.raw_files], [raw, 'present', true, [`${raw}/title_t00.mkv`]]);
      assert.deepEqual(
        p.queueRows(job.id).map((r) => r.state),
        canceling ? [] : ['queued'],
      );
    });
  }

  it('rip_started moves a pending job to running with its raw folder and rip_fertig false in one UPDATE', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1');
    p.db.prepare(`UPDATE jobs SET status = 'pending' WHERE id = ?`).run(job.id);
    const writes = recordUpdates(p.db);
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_started', { command_id: commandId, job_id: job.id, raw_dir: `/raw/${job.id}` }));
    assert.deepEqual(
      writes()
        .filter((w) => w.id === job.id)
        .map((w) => [w.from, w.to]),
      [['pending', 'running']],
    );
    const after = p.jobs.get(job.id);
    assert.deepEqual([after?.status, after?.phase, after?.raw_path, after?.meta?.rip_fertig], ['running', 'rip', `/raw/${job.id}`, false]);
  });
});
