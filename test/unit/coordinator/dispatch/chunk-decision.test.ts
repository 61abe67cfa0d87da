import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkingFor } from '../../../../coordinator/dispatch/chunk-decision.js';
import { TASKS, type TranscodeArgs } from '../../../../shared/protocol.js';
import { dispatchParts, onlineStatus } from '../../../fixtures/dispatch-parts.js';

describe('chunkingFor (issue 41)', () => {
  const facts = { chunkMinMinutes: 20, chosenNode: null, leadNode: 'keller@nas', encoderNodes: ['keller@nas', 'wohnzimmer@pc'] };

  it('lets the lead chunk titles longer than the setting when another agent with an encoder is online', () => {
    assert.deepEqual(chunkingFor(facts), { min_seconds: 1200, agents: 2 });
    assert.deepEqual(chunkingFor({ ...facts, chunkMinMinutes: 0.5, encoderNodes: ['keller@nas', 'a@1', 'b@1'] }), { min_seconds: 30, agents: 3 });
  });

  it('counts the lead once, listed or not', () => {
    assert.deepEqual(chunkingFor({ ...facts, encoderNodes: ['wohnzimmer@pc'] }), { min_seconds: 1200, agents: 2 });
  });

  it('keeps every title whole with the setting 0, a chosen node, or no other encoder online', () => {
    assert.equal(chunkingFor({ ...facts, chunkMinMinutes: 0 }), null);
    assert.equal(chunkingFor({ ...facts, chosenNode: 'keller@nas' }), null);
    assert.equal(chunkingFor({ ...facts, encoderNodes: ['keller@nas'] }), null);
    assert.equal(chunkingFor({ ...facts, encoderNodes: [] }), null);
  });
});

describe('TranscodeQueue sends the chunking with the transcode (issue 41)', () => {
  const sentArgs = (p: ReturnType<typeof dispatchParts>, jobId: string): TranscodeArgs => {
    const sent = p.link.sent.find((s) => s.cmd.task === TASKS.transcodeFiles && s.cmd.job_id === jobId);
    assert.ok(sent, 'the transcode was sent');
    return (sent.cmd as { args: TranscodeArgs }).args;
  };

  it('allows chunking for the encoders online when the job chose no node', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('a@1'));
    p.fleet.applyStatus(onlineStatus('b@1'));
    p.settings.set({ chunkMinMinutes: 0.5 });
    const job = p.transcodingJob();
    assert.deepEqual(sentArgs(p, job.id).chunking, { min_seconds: 30, agents: 2 });
  });

  it('keeps the title whole on a chosen node, with one encoder online, and with the setting 0', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('a@1'));
    const alone = p.transcodingJob();
    assert.equal(sentArgs(p, alone.id).chunking, undefined, 'no other encoder online');
    p.fleet.applyStatus(onlineStatus('b@1', { slots: 4 }));
    const chosen = p.transcodingJob('a@1');
    assert.equal(sentArgs(p, chosen.id).chunking, undefined, 'a chosen node keeps the whole title');
    p.settings.set({ chunkMinMinutes: 0 });
    const never = p.transcodingJob();
    assert.equal(sentArgs(p, never.id).chunking, undefined, 'setting 0: never split');
  });

  it('is refused by the command schema when the limit is not positive or fewer than two agents are named', async () => {
    const { commandSchema } = await import('../../../../shared/protocol-schemas.js');
    const base = { id: 'c1', task: TASKS.transcodeFiles, job_id: 'j1', args: { raw_dir: '/r', files: ['/r/a.mkv'], target_dir: '/m', title: 'T', year: null, series: null, season: null, preset: 'Fast 1080p30', keep_original: false } };
    assert.equal(commandSchema.safeParse({ ...base, args: { ...base.args, chunking: { min_seconds: 1200, agents: 2 } } }).success, true);
    assert.equal(commandSchema.safeParse({ ...base, args: { ...base.args, chunking: null } }).success, true);
    assert.equal(commandSchema.safeParse({ ...base, args: { ...base.args, chunking: { min_seconds: 0, agents: 2 } } }).success, false);
    assert.equal(commandSchema.safeParse({ ...base, args: { ...base.args, chunking: { min_seconds: 60, agents: 1 } } }).success, false);
  });
});
