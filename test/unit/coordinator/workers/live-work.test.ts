import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkEtaSeconds, mayTake, queueView, workerJobs, type QueueCandidate } from '../../../../coordinator/workers/live-work.js';
import { EncoderSpeeds } from '../../../../coordinator/jobs/encoder-speeds.js';
import { TASKS } from '../../../../shared/protocol.js';
import type { JobRow } from '../../../../coordinator/jobs/jobs-store.js';
import type { OpenWork } from '../../../../coordinator/dispatch/commands.js';
import { ChunkBoard } from '../../../../coordinator/dispatch/chunk-board.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { chunkFolder } from '../../../../shared/chunking.js';
import type { ChunkCut } from '../../../../shared/protocol.js';
import { memoryDatabase } from '../../../../shared/sqlite.js';

const T0 = Date.parse('2026-11-28T10:00:00.000Z');

function row(id: string, over: Partial<JobRow> = {}): JobRow {
  return {
    id, title: `Film ${id}`, status: 'transcoding', progress: 0, output_path: null, target_dir: null, meta: null, device: null, node: 'keller@nas', transcode_node: null,
    error: null, phase: 'transcode', eta_points: null, raw_state: null, raw_path: null, raw_size: null, raw_checked_at: null,
    created_at: '2026-11-28T09:00:00.000Z', updated_at: '2026-11-28T09:00:00.000Z', finished_at: null, ...over,
  };
}

const workers: QueueCandidate[] = [
  { name: 'keller', node: 'keller@nas', online: true, encoders: 1 },
  { name: 'buero', node: 'buero@pc', online: true, encoders: 2 },
  { name: 'laufwerk', node: 'laufwerk@pi', online: true, encoders: 0 },
  { name: 'weg', node: 'weg@nb', online: false, encoders: 1 },
];

describe('live worker view', () => {
  it('lists a node\'s open work with progress, fps, elapsed and remaining time; a command sent ahead of its phase shows no progress yet', () => {
    const points = JSON.stringify([{ t: T0 - 120_000, p: 10 }, { t: T0, p: 50 }]);
    const jobs = new Map([
      ['a', row('a', { progress: 50, eta_points: points })],
      ['b', row('b', { status: 'running', phase: 'rip', progress: 70 })],
    ]);
    const running: OpenWork[] = [
      { node: 'keller@nas', task: TASKS.transcodeFiles, job_id: 'a', created_at: new Date(T0 - 125_000).toISOString(), encoded: 0 },
      { node: 'buero@pc', task: TASKS.transcodeFiles, job_id: 'b', created_at: new Date(T0 - 5_000).toISOString(), encoded: 0 },
      { node: 'keller@nas', task: TASKS.ripDisc, job_id: 'gone', created_at: new Date(T0).toISOString(), encoded: 0 },
    ];
    const speeds = new EncoderSpeeds();
    speeds.record('a', 'transcode', 87.5, T0);
    const keller = workerJobs('keller@nas', running, [], (id) => jobs.get(id), speeds, T0);
    assert.deepEqual(keller, [
      { id: 'a', title: 'Film a', phase: 'transcode', status: 'transcoding', progress: 50, fps: 87.5, started_at: new Date(T0 - 125_000).toISOString(), elapsed_seconds: 125, eta_seconds: 150, encoded: false },
    ]);
    const buero = workerJobs('buero@pc', running, [], (id) => jobs.get(id), speeds, T0);
    assert.equal(buero.length, 1);
    assert.deepEqual({ progress: buero[0].progress, eta: buero[0].eta_seconds, fps: buero[0].fps, status: buero[0].status }, { progress: 0, eta: null, fps: null, status: 'processing' });
  });

  it('shows no speed for a transcode whose encoder has finished', () => {
    const speeds = new EncoderSpeeds();
    speeds.record('a', 'transcode', 60, T0);
    const running: OpenWork[] = [{ node: 'keller@nas', task: TASKS.transcodeFiles, job_id: 'a', created_at: new Date(T0).toISOString(), encoded: 1 }];
    const [job] = workerJobs('keller@nas', running, [], () => row('a', { progress: 100 }), speeds, T0);
    assert.deepEqual({ fps: job.fps, encoded: job.encoded }, { fps: null, encoded: true });
  });

  it('lists the chunks a node encodes of another node\'s job: which of how many, its frames, percent, rate and estimate; each takes a slot (issue 41)', () => {
    // The board hands out at T0 - 90 s; the lead keller@nas holds the job's transcode since T0 - 100 s.
    const handedAt = T0 - 90_000;
    const b = new ChunkBoard(memoryDatabase(coordinatorMigrations), () => new Date(handedAt).toISOString());
    const cuts: ChunkCut[] = Array.from({ length: 6 }, (_, i) => ({ index: i, first_frame: i * 1000, frames: 1000, start_ticks: null, duration_ticks: null }));
    b.plan({ job_id: 'a', title: 0, lead_node: 'keller@nas', input: '/raw/a/t00.mkv', folder: chunkFolder('/raw/a', 'a', 0), preset: 'Fast 1080p30' }, cuts);
    const handed = b.handOut(new Map([['keller@nas', 1], ['buero@pc', 2]]));
    assert.deepEqual(handed.map((h) => [h.cut.index, h.node]), [[0, 'buero@pc'], [1, 'keller@nas']], 'a chunk each, the freest first');
    const jobs = new Map([['a', row('a', { title: 'Langer Film', progress: 7 })]]);
    const running: OpenWork[] = [{ node: 'keller@nas', task: TASKS.transcodeFiles, job_id: 'a', created_at: new Date(T0 - 100_000).toISOString(), encoded: 0 }];
    const speeds = new EncoderSpeeds();

    const fresh = workerJobs('buero@pc', running, b.running(), (id) => jobs.get(id), speeds, T0);
    assert.deepEqual(fresh[0]!.chunk, { number: 1, of: 6, title_index: 0, frames: 1000, frames_done: 0 });
    assert.deepEqual([fresh[0]!.progress, fresh[0]!.fps, fresh[0]!.eta_seconds], [0, null, null], 'no frames yet: no rate and no estimate');
    assert.ok(b.progress('buero@pc', handed[0]!.command_id, 450).ok);
    const buero = workerJobs('buero@pc', running, b.running(), (id) => jobs.get(id), speeds, T0);
    assert.equal(buero.length, 1, 'a worker encoding a chunk of another agent\'s job is not idle');
    assert.deepEqual(buero[0], {
      id: 'a', title: 'Langer Film', phase: 'transcode', status: 'transcoding', progress: 45, fps: 5, started_at: new Date(handedAt).toISOString(), elapsed_seconds: 90,
      // 550 frames left at 450 frames in 90 s.
      eta_seconds: 110, encoded: false, chunk: { number: 1, of: 6, title_index: 0, frames: 1000, frames_done: 450 },
    });
    assert.equal(buero.filter((j) => !j.encoded).length, b.runningByNode().get('buero@pc'), 'slots_used counts the chunks as the hand-out does');

    const keller = workerJobs('keller@nas', running, b.running(), (id) => jobs.get(id), speeds, T0);
    assert.deepEqual(keller.map((j) => [j.chunk?.number ?? null, j.progress]), [[null, 7], [2, 0]], 'the lead shows the job\'s transcode first, then its own chunk');
    assert.deepEqual(workerJobs('buero@pc', running, b.running(), () => undefined, speeds, T0), [], 'a chunk whose job row is gone is left out');
  });

  it('estimates a chunk only from its first frames and 60 s of running, and lets a standstill lengthen the estimate', () => {
    assert.equal(chunkEtaSeconds(1000, 0, 120_000), null);
    assert.equal(chunkEtaSeconds(1000, 500, 59_999), null);
    assert.equal(chunkEtaSeconds(1000, 500, 60_000), 60);
    assert.equal(chunkEtaSeconds(1000, 500, 120_000), 120, 'no new frames for a minute: the rate halves');
    assert.equal(chunkEtaSeconds(1000, 1000, 60_000), 0);
  });

  it('says who may take a waiting transcode as the queue hands it out: its chosen worker while online, else every online worker with an encoder', () => {
    assert.deepEqual(mayTake('buero@pc', workers), ['buero']);
    assert.deepEqual(mayTake('weg@nb', workers), ['keller', 'buero']);
    assert.deepEqual(mayTake('laufwerk@pi', workers), ['keller', 'buero']);
    assert.deepEqual(mayTake(null, workers), ['keller', 'buero']);
    assert.deepEqual(mayTake(null, []), []);
  });

  it('numbers the queue in its order, with titles and waiting time', () => {
    const view = queueView(
      [
        { job_id: 'a', preferred_node: null, created_at: new Date(T0 - 60_000).toISOString() },
        { job_id: 'x', preferred_node: 'buero@pc', created_at: new Date(T0 - 1_000).toISOString() },
      ],
      (id) => (id === 'a' ? row('a') : undefined),
      workers,
      T0,
    );
    assert.deepEqual(
      view.map((q) => [q.position, q.job_id, q.title, q.waiting_seconds, q.may_take]),
      [
        [1, 'a', 'Film a', 60, ['keller', 'buero']],
        [2, 'x', 'x', 1, ['buero']],
      ],
    );
  });
});
