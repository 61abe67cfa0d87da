import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkBoard, type ChunkedTitle } from '../../../../coordinator/dispatch/chunk-board.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { chunkFolder } from '../../../../shared/chunking.js';
import type { ChunkCut } from '../../../../shared/protocol.js';
import { memoryDatabase } from '../../../../shared/sqlite.js';

/** A board over the real migrations, with a clock that moves one second per call. */
function board() {
  let t = Date.parse('2026-11-28T12:00:00Z');
  return new ChunkBoard(memoryDatabase(coordinatorMigrations), () => new Date((t += 1000)).toISOString());
}

/** A title of `n` chunks of 100 frames each. */
function title(jobId: string, n: number, index = 0): { title: ChunkedTitle; cuts: ChunkCut[] } {
  const cuts: ChunkCut[] = Array.from({ length: n }, (_, i) => ({ index: i, first_frame: i * 100, frames: 100, start_ticks: i === 0 ? null : i * 360_000 - 1800, duration_ticks: i === n - 1 ? null : 358_200 }));
  return { title: { job_id: jobId, title: index, lead_node: 'keller@nas', input: `/raw/${jobId}/title_t00.mkv`, folder: chunkFolder(`/raw/${jobId}`, jobId, index), preset: 'Fast 1080p30' }, cuts };
}

const free = (entries: [string, number][]) => new Map(entries);

describe('ChunkBoard (issue 41)', () => {
  it('hands the chunks out in order to the freest nodes, each once, one at a time per node: a node takes the next when its last is done', () => {
    const b = board();
    const t = title('job1', 5);
    b.plan(t.title, t.cuts);
    const slots = free([['keller@nas', 1], ['wohnzimmer@pc', 2], ['dachboden@pi', 0]]);
    const first = b.handOut(slots);
    assert.deepEqual(first.map((h) => [h.cut.index, h.node]), [[0, 'wohnzimmer@pc'], [1, 'keller@nas']], 'one chunk per node, and only where a slot is free');
    assert.deepEqual([...slots.values()], [0, 1, 0], 'a slot each is taken');
    assert.equal(first[0]!.output, `/raw/job1/.ripwerk-chunks/job1/0/c00-${first[0]!.command_id.slice(0, 8)}.mkv`, 'each hand-out writes its own file');
    assert.equal(first[1]!.input, '/raw/job1/title_t00.mkv');
    assert.deepEqual(first[1]!.cut, t.cuts[1]);
    assert.notEqual(first[0]!.command_id, first[1]!.command_id, 'each hand-out has its own command id');
    assert.deepEqual(b.handOut(free([['keller@nas', 0]])), [], 'no free slot: nothing handed out');
    assert.deepEqual(b.handOut(free([['keller@nas', 4], ['wohnzimmer@pc', 4]])), [], 'free slots, but each node has its chunk');
    assert.deepEqual(Object.fromEntries(b.runningByNode()), { 'keller@nas': 1, 'wohnzimmer@pc': 1 });
    // keller is the faster: each time it is done first, it takes the next.
    for (const [i, c] of [[2, first[1]!], [3, undefined], [4, undefined]] as const) {
      const mine = c ?? b.ofJob('job1').find((r) => r.node === 'keller@nas' && r.state === 'running')!;
      assert.ok(b.done('keller@nas', 'command_id' in mine ? mine.command_id! : '').ok);
      assert.deepEqual(b.handOut(free([['keller@nas', 4], ['wohnzimmer@pc', 4]])).map((h) => [h.cut.index, h.node]), [[i, 'keller@nas']]);
    }
    assert.deepEqual(b.tally('job1').by_node, { 'keller@nas': 300, 'wohnzimmer@pc': 0 }, 'a fast node takes more of the title');
  });

  it('says when the last chunk of a title is encoded, and counts frames over all chunks and by node', () => {
    const b = board();
    const t = title('job1', 3);
    b.plan(t.title, t.cuts);
    const [c0, c1, c2] = [...b.handOut(free([['keller@nas', 2], ['wohnzimmer@pc', 1]])), ...b.handOut(free([['x@1', 1]]))];
    assert.deepEqual([c0, c1, c2].map((c) => c!.node), ['keller@nas', 'wohnzimmer@pc', 'x@1']);
    assert.ok(b.progress(c0!.node, c0!.command_id, 40).ok);
    assert.ok(b.progress(c1!.node, c1!.command_id, 250).ok, 'more frames than the chunk has are taken as all');
    assert.deepEqual(b.tally('job1'), { frames: 300, done: 140, by_node: { 'keller@nas': 40, 'wohnzimmer@pc': 100, 'x@1': 0 } });
    const r0 = b.done(c0!.node, c0!.command_id);
    assert.ok(r0.ok && !r0.value.titleDone);
    const r1 = b.done(c1!.node, c1!.command_id);
    assert.ok(r1.ok && !r1.value.titleDone);
    const r2 = b.done(c2!.node, c2!.command_id);
    assert.ok(r2.ok && r2.value.titleDone, 'all three encoded: the lead may join');
    assert.deepEqual(b.tally('job1'), { frames: 300, done: 300, by_node: { 'keller@nas': 100, 'wohnzimmer@pc': 100, 'x@1': 100 } });
    assert.equal(b.hasOpen('job1'), false);
  });

  it('never lets progress go back', () => {
    const b = board();
    const t = title('job1', 1);
    b.plan(t.title, t.cuts);
    const [c] = b.handOut(free([['a@1', 1]]));
    b.progress('a@1', c!.command_id, 60);
    const r = b.progress('a@1', c!.command_id, 20);
    assert.ok(r.ok && r.value.frames_done === 60);
  });

  it('refuses reports from an agent about a chunk it was not handed, or no longer holds', () => {
    const b = board();
    const t = title('job1', 2);
    b.plan(t.title, t.cuts);
    const [c0] = b.handOut(free([['a@1', 1]]));
    const other = b.progress('b@1', c0!.command_id, 10);
    assert.ok(!other.ok && other.refusal === `chunk report from b@1 for chunk 0 of job job1, which was handed to a@1`);
    const unknown = b.done('a@1', 'no-such-command');
    assert.ok(!unknown.ok && unknown.refusal === 'chunk report from a@1 for command no-such-command, which is no chunk handed out');
    assert.ok(b.done('a@1', c0!.command_id).ok);
    const again = b.done('a@1', c0!.command_id);
    assert.ok(!again.ok && again.refusal === 'chunk report from a@1 for chunk 0 of job job1, which is done');
    assert.deepEqual(b.tally('job1').done, 100, 'the refused reports changed nothing');
  });

  it('gives a lost agent\'s chunk to another agent, without counting it as a failure or crediting the lost agent', () => {
    const b = board();
    const t = title('job1', 2);
    b.plan(t.title, t.cuts);
    const [c0, c1] = b.handOut(free([['a@1', 1], ['b@1', 1]]));
    assert.equal(c0!.node, 'a@1');
    b.progress('a@1', c0!.command_id, 70);
    assert.deepEqual(b.nodeLost('a@1').map((r) => r.idx), [0]);
    assert.deepEqual(b.tally('job1').by_node, { 'b@1': 0 }, 'the lost agent\'s frames are encoded again by another');
    const late = b.done('a@1', c0!.command_id);
    assert.ok(!late.ok, 'the lost agent\'s late report is refused');
    assert.ok(b.done('b@1', c1!.command_id).ok);
    const [again] = b.handOut(free([['b@1', 1]]));
    assert.deepEqual([again!.cut.index, again!.node], [0, 'b@1']);
    assert.notEqual(again!.command_id, c0!.command_id, 'a new hand-out, a new command id');
    assert.notEqual(again!.output, c0!.output, 'and a new file: the lost agent\'s encoder may still write the old one');
    const done = b.done('b@1', again!.command_id);
    assert.ok(done.ok && done.value.titleDone);
    assert.equal(b.ofJob('job1')[0]!.attempts, 0);
    assert.deepEqual(b.tally('job1').by_node, { 'b@1': 200 });
  });

  it('hands a failed chunk out once more, and fails the job with both reasons at its second failure', () => {
    const b = board();
    const t = title('job1', 2);
    b.plan(t.title, t.cuts);
    const [c0] = b.handOut(free([['a@1', 1]]));
    const first = b.failed('a@1', c0!.command_id, 'HandBrakeCLI exited with code 3');
    assert.ok(first.ok && first.value.verdict === 'requeued');
    const [retry] = b.handOut(free([['b@1', 1]]));
    assert.deepEqual([retry!.cut.index, retry!.node], [0, 'b@1'], 'the failed chunk goes first again');
    const second = b.failed('b@1', retry!.command_id, 'out of disk space');
    assert.ok(second.ok && second.value.verdict === 'job_failed');
    assert.equal(second.value.reason, 'chunk 1 of the title failed 2 times: chunk 1 on b@1: out of disk space; before that chunk 1 on a@1: HandBrakeCLI exited with code 3');
    assert.deepEqual(b.handOut(free([['a@1', 1]])).map((h) => h.cut.index), [1], 'the job is the caller\'s to end; only its other chunk is still queued');
  });

  it('gives no more chunks of a job to a node that cannot read its raw file, without counting a failure; other jobs and the lead are not affected', () => {
    const b = board();
    const one = title('job1', 4);
    const two = title('job2', 2);
    b.plan(one.title, one.cuts);
    const [c0, c1] = b.handOut(free([['keller@nas', 1], ['wohnzimmer@pc', 1]]));
    assert.deepEqual([c0!.node, c1!.node], ['keller@nas', 'wohnzimmer@pc']);
    const r = b.failed('wohnzimmer@pc', c1!.command_id, 'the raw file /raw/job1/title_t00.mkv is not readable on wohnzimmer', true);
    assert.ok(r.ok && r.value.verdict === 'unreadable' && r.value.first);
    assert.equal(r.ok && r.value.row.reason, 'chunk 2 on wohnzimmer@pc: the raw file /raw/job1/title_t00.mkv is not readable on wohnzimmer');
    assert.deepEqual(b.ofJob('job1').map((c) => [c.idx, c.state, c.attempts]), [[0, 'running', 0], [1, 'queued', 0], [2, 'queued', 0], [3, 'queued', 0]], 'back in the queue, no attempt counted');
    assert.deepEqual(b.handOut(free([['wohnzimmer@pc', 3]])), [], 'wohnzimmer gets none of job1 again');
    b.plan(two.title, two.cuts);
    assert.deepEqual(b.handOut(free([['wohnzimmer@pc', 3]])).map((h) => [h.job_id, h.cut.index]), [['job2', 0]], 'but it takes another job\'s chunk');
    assert.ok(b.done('keller@nas', c0!.command_id).ok);
    assert.deepEqual(b.handOut(free([['keller@nas', 2], ['wohnzimmer@pc', 2]])).map((h) => [h.job_id, h.cut.index, h.node]), [['job1', 1, 'keller@nas']], 'the lead takes job1\'s next chunk as it is done with its last');
    // The lead holds the raw file: a lead saying otherwise is a failure of the chunk like any other.
    const lead = b.ofJob('job1').find((c) => c.idx === 1)!;
    const f = b.failed('keller@nas', lead.command_id!, 'not readable', true);
    assert.ok(f.ok && f.value.verdict === 'requeued');
    assert.equal(b.ofJob('job1').find((c) => c.idx === 1)!.attempts, 1);
  });

  it('ends a job: nothing more is handed out, and the running chunks are named for their cancel', () => {
    const b = board();
    const one = title('job1', 4);
    const two = title('job2', 1);
    b.plan(one.title, one.cuts);
    b.plan(two.title, two.cuts);
    const given = b.handOut(free([['a@1', 1], ['b@1', 1]]));
    assert.deepEqual(given.map((h) => [h.job_id, h.cut.index]), [['job1', 0], ['job1', 1]]);
    const running = b.endJob('job1');
    assert.deepEqual(running.map((r) => [r.node, r.command_id]), given.map((h) => [h.node, h.command_id]));
    assert.equal(b.hasOpen('job1'), false);
    assert.deepEqual(Object.fromEntries(b.runningByNode()), {}, 'their slots are free again');
    assert.deepEqual(b.handOut(free([['a@1', 4]])).map((h) => h.job_id), ['job2'], 'only the other job\'s chunk is left');
    assert.ok(!b.done('a@1', given[0]!.command_id).ok, 'a canceled chunk\'s late result counts for nothing');
    b.forget('job1');
    assert.deepEqual(b.ofJob('job1'), []);
  });

  it('takes back the chunks a node no longer lists in its status, but not those handed out since', () => {
    const b = board();
    const t = title('job1', 3);
    b.plan(t.title, t.cuts);
    const [c0] = b.handOut(free([['a@1', 2]]));
    const cutoff = new Date(Date.parse(b.ofJob('job1')[0]!.handed_at!) + 500).toISOString();
    const gone = b.notHeld('a@1', [], cutoff);
    assert.deepEqual(gone.map((r) => r.idx), [0], 'chunk 0, handed out before the cutoff, is not listed');
    assert.deepEqual(b.ofJob('job1').map((r) => [r.idx, r.state]), [[0, 'queued'], [1, 'queued'], [2, 'queued']]);
    assert.ok(!b.progress('a@1', c0!.command_id, 5).ok, 'the lost hand-out reports no more');
    const [again] = b.handOut(free([['a@1', 2]]));
    assert.equal(again!.cut.index, 0);
    assert.deepEqual(b.notHeld('a@1', [], cutoff), [], 'handed out after the cutoff: it may not have arrived yet');
    assert.ok(b.progress('a@1', again!.command_id, 5).ok);
  });

  it('replaces an earlier plan of the same title, naming its running chunks to be stopped', () => {
    const b = board();
    const t = title('job1', 3);
    b.plan(t.title, t.cuts);
    const [running] = b.handOut(free([['a@1', 1]]));
    const replaced = b.plan(t.title, title('job1', 2).cuts);
    assert.deepEqual(replaced.map((r) => [r.idx, r.node, r.command_id]), [[0, 'a@1', running!.command_id]]);
    assert.ok(!b.done('a@1', running!.command_id).ok, 'the old plan\'s chunk reports nothing any more');
    assert.deepEqual(b.ofJob('job1').map((r) => [r.idx, r.state]), [[0, 'queued'], [1, 'queued']]);
    const other = title('job1', 2, 1);
    b.plan(other.title, other.cuts);
    assert.deepEqual(b.ofJob('job1').map((r) => [r.title, r.idx]), [[0, 0], [0, 1], [1, 0], [1, 1]], 'another title of the job is planned beside it');
  });
});
