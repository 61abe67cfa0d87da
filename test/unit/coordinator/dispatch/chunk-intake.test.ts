import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { TASKS, type AgentEvent, type ChunkCut, type Command } from '../../../../shared/protocol.js';
import { chunkFolder } from '../../../../shared/chunking.js';
import { dispatchParts, onlineStatus, sleep } from '../../../fixtures/dispatch-parts.js';

type Body<T extends AgentEvent['type']> = Omit<Extract<AgentEvent, { type: T }>, 'event_id' | 'node' | 'ts' | 'type'>;

function event<T extends AgentEvent['type']>(node: string, type: T, body: Body<T>): AgentEvent {
  return { event_id: randomUUID(), node, ts: new Date().toISOString(), type, ...body } as unknown as AgentEvent;
}

const cuts = (n: number): ChunkCut[] => Array.from({ length: n }, (_, i) => ({ index: i, first_frame: i * 100, frames: 100, start_ticks: i === 0 ? null : i * 360_000 - 1800, duration_ticks: i === n - 1 ? null : 358_200 }));

/** Two agents, the lead keller@nas (2 slots, one taken by its transcode) and wohnzimmer@pc (2 slots); the lead has sent a plan of `n` chunks. */
function chunkedTitle(n = 4, opts: { graceMs?: number } = {}) {
  const p = dispatchParts({ graceMs: opts.graceMs ?? 60_000 });
  p.settings.set({ chunkMinMinutes: 0.5 });
  p.presence.onStatus(onlineStatus('keller@nas', { slots: 2 }));
  p.presence.onStatus(onlineStatus('wohnzimmer@pc', { slots: 2 }));
  const job = p.transcodingJob();
  const lead = p.link.of(TASKS.transcodeFiles)[0]!;
  assert.equal(lead.node, 'keller@nas', 'the names decide between equally free nodes');
  p.intake.onEvent('keller@nas', event('keller@nas', 'accepted', { command_id: lead.id, job_id: job.id }));
  const raw = `/raw/${job.id}`;
  p.intake.onEvent('keller@nas', event('keller@nas', 'chunk_plan', { command_id: lead.id, job_id: job.id, title: 0, input: `${raw}/title_t00.mkv`, folder: chunkFolder(raw, job.id, 0), preset: 'Fast 1080p30', cuts: cuts(n) }));
  /** The encode_chunk commands sent so far: node, command id, chunk index. */
  const handed = () =>
    p.link.sent
      .filter((s) => s.cmd.task === TASKS.encodeChunk)
      .map((s) => {
        const cmd = s.cmd as Extract<Command, { task: typeof TASKS.encodeChunk }>;
        return { node: s.node, id: cmd.id, index: cmd.args.cut.index, output: cmd.args.output };
      });
  const cancels = () => p.link.sent.filter((s) => s.cmd.task === TASKS.cancel).map((s) => [s.node, (s.cmd.args as { command_id: string }).command_id]);
  const drops = () => p.logs.filter((l) => l.message.startsWith('dropped a message')).map((l) => l.message);
  return { p, job, lead, handed, cancels, drops };
}

describe('Chunks of a long title through the coordinator (issue 41)', () => {
  it('hands the lead\'s chunks to every free worker, the lead included, one at a time each, and tells the lead to join once all are encoded', () => {
    const { p, job, lead, handed } = chunkedTitle(4);
    assert.deepEqual(handed().map((h) => [h.index, h.node]), [[0, 'wohnzimmer@pc'], [1, 'keller@nas']], 'a chunk each: the others wait for the first one done');
    assert.equal(handed()[0]!.output, `/raw/${job.id}/.ripwerk-chunks/${job.id}/0/c00-${handed()[0]!.id.slice(0, 8)}.mkv`);
    assert.ok(p.jobs.logs(job.id).some((l) => l.message === 'title 1 (400 frames) split into 4 chunks for the free workers, led by keller@nas'));
    const [c0, c1] = handed();
    p.intake.onEvent('wohnzimmer@pc', event('wohnzimmer@pc', 'chunk_progress', { command_id: c0!.id, job_id: job.id, frames_done: 50 }));
    p.intake.onEvent('keller@nas', event('keller@nas', 'chunk_progress', { command_id: c1!.id, job_id: job.id, frames_done: 30 }));
    assert.equal(p.jobs.get(job.id)?.progress, 20, '80 of 400 frames');
    assert.deepEqual(p.jobs.get(job.id)?.meta?.chunk_frames, { 'wohnzimmer@pc': 50, 'keller@nas': 30 });
    p.intake.onEvent('wohnzimmer@pc', event('wohnzimmer@pc', 'chunk_done', { command_id: c0!.id, job_id: job.id }));
    const c2 = handed()[2]!;
    assert.deepEqual([c2.index, c2.node], [2, 'wohnzimmer@pc'], 'the worker done first takes the next chunk');
    p.intake.onEvent('wohnzimmer@pc', event('wohnzimmer@pc', 'chunk_done', { command_id: c2.id, job_id: job.id }));
    const c3 = handed()[3]!;
    assert.deepEqual([c3.index, c3.node], [3, 'wohnzimmer@pc'], 'and the last: the faster worker takes more of the title');
    for (const [node, c] of [['keller@nas', c1], ['wohnzimmer@pc', c3]] as const) {
      assert.deepEqual(p.link.of(TASKS.joinChunks), [], 'no join while a chunk is still open');
      p.intake.onEvent(node, event(node, 'chunk_done', { command_id: c!.id, job_id: job.id }));
    }
    const join = p.link.sent.filter((s) => s.cmd.task === TASKS.joinChunks);
    assert.equal(join.length, 1);
    assert.equal(join[0]!.node, 'keller@nas');
    assert.deepEqual(join[0]!.cmd.args, { command_id: lead.id, title: 0, files: [c0, c1, c2, c3].map((c) => c!.output) }, 'the files in chunk order');
    assert.equal(p.jobs.get(job.id)?.progress, 100);
    assert.deepEqual(p.jobs.get(job.id)?.meta?.chunk_frames, { 'wohnzimmer@pc': 300, 'keller@nas': 100 }, 'the job says who encoded how much');
  });

  it('refuses a plan from an agent that does not lead the transcode, and chunk reports from an agent not holding the chunk', () => {
    const { p, job, lead, handed, drops } = chunkedTitle(2);
    p.intake.onEvent('wohnzimmer@pc', event('wohnzimmer@pc', 'chunk_plan', { command_id: lead.id, job_id: job.id, title: 0, input: '/etc/passwd', folder: '/tmp/x', preset: 'Fast 1080p30', cuts: cuts(2) }));
    const [c0] = handed();
    p.intake.onEvent('keller@nas', event('keller@nas', 'chunk_done', { command_id: c0!.id, job_id: job.id }));
    assert.deepEqual(drops(), [
      `dropped a message on ripwerk/event/wohnzimmer@pc: chunk_plan from wohnzimmer@pc for command ${lead.id}, which is no transcode it holds`,
      `dropped a message on ripwerk/event/keller@nas: chunk report from keller@nas for chunk 0 of job ${job.id}, which was handed to wohnzimmer@pc`,
    ]);
    assert.equal(handed().length, 2, 'the refused plan handed nothing out');
    assert.deepEqual(p.link.of(TASKS.joinChunks), []);
  });

  it('stops the running chunks of a plan its lead replaces (the lead ran the transcode anew)', () => {
    const { p, job, lead, handed, cancels } = chunkedTitle(2);
    const old = handed();
    assert.equal(old.length, 2);
    p.intake.onEvent('keller@nas', event('keller@nas', 'chunk_plan', { command_id: lead.id, job_id: job.id, title: 0, input: `/raw/${job.id}/title_t00.mkv`, folder: chunkFolder(`/raw/${job.id}`, job.id, 0), preset: 'Fast 1080p30', cuts: cuts(2) }));
    assert.deepEqual(cancels().sort(), old.map((h) => [h.node, h.id]).sort(), 'each old chunk is told to stop');
    const fresh = handed().slice(2);
    assert.deepEqual(fresh.map((h) => h.index), [0, 1], 'the new plan is handed out in the freed slots');
  });

  it('refuses a plan whose chunks are not numbered in order', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('a@1'));
    p.presence.onStatus(onlineStatus('b@1'));
    const job = p.transcodingJob();
    const lead = p.link.of(TASKS.transcodeFiles)[0]!;
    p.intake.onEvent(lead.node, event(lead.node, 'chunk_plan', { command_id: lead.id, job_id: job.id, title: 0, input: '/raw/x.mkv', folder: '/raw/.ripwerk-chunks', preset: 'P', cuts: [cuts(3)[0]!, cuts(3)[2]!] }));
    assert.ok(p.logs.some((l) => l.message.endsWith(`chunk_plan from ${lead.node} for job ${job.id}: the chunks are not numbered 0 to 1 in order`)));
    assert.deepEqual(p.board.ofJob(job.id), []);
  });

  it('gives the chunk of an agent lost mid-chunk to another agent', async () => {
    const { p, job, handed } = chunkedTitle(2, { graceMs: 30 });
    const [c0, c1] = handed();
    assert.equal(c0!.node, 'wohnzimmer@pc');
    p.intake.onEvent('wohnzimmer@pc', event('wohnzimmer@pc', 'chunk_progress', { command_id: c0!.id, job_id: job.id, frames_done: 60 }));
    p.presence.onStatus({ node: 'wohnzimmer@pc', state: 'offline' });
    await sleep(80);
    assert.deepEqual(p.board.ofJob(job.id).map((r) => [r.idx, r.state]), [[0, 'queued'], [1, 'running']], 'back in the queue; the lead\'s slots are both taken');
    p.intake.onEvent('keller@nas', event('keller@nas', 'chunk_done', { command_id: c1!.id, job_id: job.id }));
    const again = handed()[2];
    assert.ok(again, 'the lost agent\'s chunk was handed out again');
    assert.deepEqual([again.index, again.node], [0, 'keller@nas']);
    assert.ok(p.jobs.logs(job.id).some((l) => l.message === 'worker wohnzimmer@pc went offline while encoding chunk 1 of title 1; the chunk goes to another worker'));
    assert.deepEqual(p.jobs.get(job.id)?.meta?.chunk_frames, { 'keller@nas': 100 }, 'the lost agent\'s frames are encoded again');
    p.intake.onEvent('keller@nas', event('keller@nas', 'chunk_done', { command_id: again.id, job_id: job.id }));
    assert.equal(p.link.of(TASKS.joinChunks).length, 1, 'nothing stuck: the title is joined');
    assert.equal(p.jobs.get(job.id)?.status, 'transcoding');
  });

  it('hands out again a chunk an agent that restarted within its grace period no longer lists', () => {
    const { p, job, handed } = chunkedTitle(2);
    const [c0, c1] = handed();
    assert.equal(c0!.node, 'wohnzimmer@pc');
    const longAgo = new Date(Date.now() - 60_000).toISOString();
    p.db.prepare('UPDATE transcode_chunks SET handed_at = ?').run(longAgo);
    p.presence.onStatus(onlineStatus('wohnzimmer@pc', { slots: 2, tasks: [] }));
    assert.ok(p.jobs.logs(job.id).some((l) => l.message === 'worker wohnzimmer@pc no longer holds chunk 1 of title 1 (it restarted); the chunk goes to another worker'));
    const again = handed()[2];
    assert.deepEqual([again?.index, again?.node], [0, 'wohnzimmer@pc'], 'handed out anew, under a new command id');
    p.presence.onStatus(onlineStatus('keller@nas', { slots: 2, tasks: [p.link.of(TASKS.transcodeFiles)[0]!.id, c1!.id] }));
    assert.equal(handed().length, 3, 'a node listing its chunk keeps it');
  });

  it('fails the job with the reason when a chunk fails twice, and stops the lead and every running chunk', () => {
    const { p, job, lead, handed, cancels } = chunkedTitle(3);
    const [c0, c1] = handed();
    p.intake.onEvent('wohnzimmer@pc', event('wohnzimmer@pc', 'chunk_failed', { command_id: c0!.id, job_id: job.id, reason: 'HandBrakeCLI exited with code 3' }));
    const retry = handed().find((h) => h.index === 0 && h.id !== c0!.id);
    assert.ok(retry, 'handed out once more');
    assert.ok(p.jobs.logs(job.id).some((l) => l.level === 'warn' && l.message === 'chunk 1 on wohnzimmer@pc: HandBrakeCLI exited with code 3: it is handed out once more'));
    p.intake.onEvent(retry.node, event(retry.node, 'chunk_failed', { command_id: retry.id, job_id: job.id, reason: 'no space left on device' }));
    const row = p.jobs.get(job.id);
    assert.equal(row?.status, 'failed');
    assert.equal(row?.error, `chunk 1 of the title failed 2 times: chunk 1 on ${retry.node}: no space left on device; before that chunk 1 on wohnzimmer@pc: HandBrakeCLI exited with code 3`);
    const stopped = cancels();
    assert.ok(stopped.some(([n, id]) => n === 'keller@nas' && id === lead.id), 'the lead\'s transcode is canceled');
    for (const c of handed().filter((h) => h.id !== c0!.id && h.id !== retry.id)) assert.ok(stopped.some(([n, id]) => n === c.node && id === c.id), `running chunk ${c.index} is canceled`);
    assert.ok(stopped.some(([, id]) => id === c1!.id));
    assert.deepEqual(p.board.ofJob(job.id), [], 'nothing left to hand out');
  });

  it('takes a chunk refused by an agent (one without chunk encoding) as a failed attempt', () => {
    const { p, job, handed } = chunkedTitle(1);
    const [c0] = handed();
    p.intake.onEvent(c0!.node, event(c0!.node, 'rejected', { command_id: c0!.id, job_id: job.id, reason: 'the worker does not encode chunks' }));
    assert.equal(p.jobs.get(job.id)?.status, 'transcoding', 'a refused chunk does not fail the job by itself');
    assert.equal(handed().length, 2, 'handed out once more');
    assert.equal(p.commandState(p.link.of(TASKS.transcodeFiles)[0]!.id), 'accepted', 'the lead\'s transcode is untouched');
  });

  it('gives the chunks an agent cannot read (the raw file on the lead\'s own disk) to the lead, says so once for that agent, and the job goes on', () => {
    const { p, job, handed } = chunkedTitle(4);
    const first = handed();
    const theirs = first.filter((h) => h.node === 'wohnzimmer@pc');
    assert.equal(theirs.length, 1, 'wohnzimmer was handed a chunk');
    for (const c of theirs) p.intake.onEvent('wohnzimmer@pc', event('wohnzimmer@pc', 'chunk_failed', { command_id: c.id, job_id: job.id, reason: `the raw file /raw/${job.id}/title_t00.mkv is not readable on wohnzimmer`, unreadable: true }));
    assert.equal(p.jobs.get(job.id)?.status, 'transcoding');
    const notes = p.jobs.logs(job.id).filter((l) => l.level === 'warn' && l.message.endsWith(': the chunks of this job go to the other workers'));
    assert.equal(notes.length, 1, 'said once for the worker');
    assert.match(notes[0]!.message, /^chunk \d on wohnzimmer@pc: the raw file \/raw\/.*\/title_t00\.mkv is not readable on wohnzimmer: the chunks/);
    // keller finishes its chunks; everything left goes to keller, none to wohnzimmer again.
    for (let round = 0; round < 8 && p.board.hasOpen(job.id); round++) {
      for (const c of handed().filter((h) => h.node === 'keller@nas' && p.board.byCommand(h.id)?.state === 'running')) p.intake.onEvent('keller@nas', event('keller@nas', 'chunk_done', { command_id: c.id, job_id: job.id }));
    }
    assert.equal(p.board.hasOpen(job.id), false, 'every chunk encoded');
    assert.deepEqual(handed().slice(first.length).map((h) => h.node).filter((n) => n !== 'keller@nas'), [], 'no chunk went to wohnzimmer again');
    assert.ok(p.board.ofJob(job.id).every((c) => c.attempts === 0), 'no failure counted');
    assert.ok(p.link.sent.some((s) => s.cmd.task === TASKS.joinChunks), 'the lead is told to join');
  });

  it('stops every running chunk on cancel and hands nothing out afterwards', () => {
    const { p, job, lead, handed, cancels } = chunkedTitle(6);
    const running = handed();
    assert.equal(running.length, 2, 'one on each agent');
    p.queue.stopChunks(job.id);
    assert.deepEqual(cancels().sort(), running.map((h) => [h.node, h.id]).sort(), 'a cancel to each agent running a chunk');
    p.intake.onEvent('keller@nas', event('keller@nas', 'job_canceled', { command_id: lead.id, job_id: job.id, phase: 'transcode' }));
    p.queue.pump();
    assert.equal(handed().length, 2, 'no chunk handed out after the cancel');
    p.intake.onEvent(running[0]!.node, event(running[0]!.node, 'chunk_done', { command_id: running[0]!.id, job_id: job.id }));
    assert.deepEqual(p.link.of(TASKS.joinChunks), [], 'a late result of a stopped chunk counts for nothing');
  });

  it('re-queues the whole title when the lead is lost, stopping the chunks on the other agents', async () => {
    const { p, job, handed, cancels } = chunkedTitle(4, { graceMs: 30 });
    const helpers = handed().filter((h) => h.node === 'wohnzimmer@pc');
    assert.equal(helpers.length, 1);
    p.presence.onStatus({ node: 'keller@nas', state: 'offline' });
    await sleep(80);
    for (const h of helpers) assert.ok(cancels().some(([n, id]) => n === 'wohnzimmer@pc' && id === h.id), `chunk ${h.index} on the other agent is stopped`);
    const whole = p.link.of(TASKS.transcodeFiles);
    assert.deepEqual(whole.map((s) => s.node), ['keller@nas', 'wohnzimmer@pc'], 'the transcode went whole to the other agent');
    assert.equal(p.jobs.get(job.id)?.status, 'transcoding');
    assert.equal(handed().length, 2, 'no chunk of the old plan handed out again');
  });
});
