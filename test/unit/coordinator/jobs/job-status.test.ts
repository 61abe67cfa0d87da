import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACTIVE_STATUSES,
  apiStatus,
  canMove,
  DRIVE_BUSY_STATUSES,
  EVENT_STATUSES,
  isActive,
  isDriveBusy,
  isLive,
  isRetryable,
  isTerminal,
  JOB_STATUSES,
  sqlList,
  TERMINAL_STATUSES,
  TRANSITIONS,
  type JobStatus,
} from '../../../../coordinator/jobs/job-status.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { memoryDatabase } from '../../../../shared/sqlite.js';

describe('job status rules', () => {
  it('splits every status into active or ended, never both', () => {
    for (const s of JOB_STATUSES) assert.notEqual(isActive(s), isTerminal(s), s);
    assert.deepEqual([...ACTIVE_STATUSES, ...TERMINAL_STATUSES].sort(), [...JOB_STATUSES].sort());
    assert.deepEqual([...ACTIVE_STATUSES], ['pending', 'running', 'transcoding', 'canceling']);
  });

  it('keeps a drive busy only in the rip stage', () => {
    assert.deepEqual(JOB_STATUSES.filter(isDriveBusy), ['pending', 'running']);
    for (const s of DRIVE_BUSY_STATUSES) assert.ok(isActive(s));
    assert.equal(isDriveBusy('transcoding'), false);
    assert.equal(isDriveBusy('canceling'), false);
  });

  it('shows running as processing and every other status as it is', () => {
    assert.equal(apiStatus('running'), 'processing');
    for (const s of JOB_STATUSES.filter((s) => s !== 'running')) assert.equal(apiStatus(s), s);
  });

  it('counts running and transcoding jobs as live, and only failed or canceled ones as retryable', () => {
    assert.deepEqual(JOB_STATUSES.filter(isLive), ['running', 'transcoding']);
    assert.deepEqual(JOB_STATUSES.filter(isRetryable), ['failed', 'canceled']);
  });

  it('allows the spec table moves and no move out of completed', () => {
    assert.ok(canMove('pending', 'running'));
    assert.ok(canMove('running', 'transcoding'));
    for (const s of ['pending', 'running', 'transcoding'] as const) assert.ok(canMove(s, 'canceling'), `${s} → canceling`);
    for (const s of ACTIVE_STATUSES) assert.ok(canMove(s, 'failed'), `${s} → failed`);
    assert.ok(canMove('failed', 'transcoding'), 'retry-transcode');
    assert.deepEqual(TRANSITIONS.completed, []);
    assert.equal(canMove('canceling', 'running'), false);
    assert.equal(canMove('transcoding', 'running'), false);
    for (const s of JOB_STATUSES) assert.equal(canMove(s, s), false, `${s} → itself`);
  });

  it('lets a job event act only in an active status of its own stage', () => {
    for (const [type, stages] of Object.entries(EVENT_STATUSES)) {
      for (const s of [...stages.rip, ...stages.transcode]) assert.ok(isActive(s), `${type} in ${s}`);
    }
    assert.deepEqual(EVENT_STATUSES.rip_started?.transcode, []);
    assert.deepEqual(EVENT_STATUSES.transcode_started?.rip, []);
    assert.ok(EVENT_STATUSES.progress?.transcode.includes('transcoding'));
    assert.equal(EVENT_STATUSES.progress?.rip.includes('transcoding'), false);
  });

  it('builds an SQL IN-list that selects exactly the active jobs', () => {
    assert.equal(sqlList(ACTIVE_STATUSES), `'pending','running','transcoding','canceling'`);
    const db = memoryDatabase(coordinatorMigrations);
    const now = new Date().toISOString();
    const insert = db.prepare(`INSERT INTO jobs (id, title, status, progress, created_at, updated_at) VALUES (?, 't', ?, 0, ?, ?)`);
    for (const s of JOB_STATUSES) insert.run(s, s, now, now);
    const rows = db.prepare<[], { status: JobStatus }>(`SELECT status FROM jobs WHERE status IN (${sqlList(ACTIVE_STATUSES)}) ORDER BY status`).all();
    assert.deepEqual(rows.map((r) => r.status), [...ACTIVE_STATUSES].sort());
    db.close();
  });
});
