import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TASKS } from '../../../../shared/protocol.js';
import { dispatchParts, onlineStatus, sleep } from '../../../fixtures/dispatch-parts.js';

describe('Presence', () => {
  it('fails the rip of a worker that stays away past the grace period', async () => {
    const p = dispatchParts({ graceMs: 30 });
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1');
    p.presence.onStatus({ node: 'ripper@1', state: 'offline' });
    assert.equal(p.presence.inGrace('ripper@1'), true);
    assert.equal(p.jobs.get(job.id)?.status, 'running', 'the work waits during the grace period');
    await sleep(80);
    const row = p.jobs.get(job.id);
    assert.equal(row?.status, 'failed');
    assert.match(row?.error ?? '', /^the worker ripper@1 went offline during the rip \(no contact for 0 s\): retry the rip$/);
    assert.equal(p.commandState(commandId), 'superseded');
    assert.deepEqual(p.ended.map((j) => j.id), [job.id]);
    assert.equal(p.presence.inGrace('ripper@1'), false);
  });

  it('hands the transcode of a lost worker to another one', async () => {
    const p = dispatchParts({ graceMs: 30 });
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    const first = p.link.of(TASKS.transcodeFiles)[0]!;
    assert.equal(first.node, 'enc@1');
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    p.presence.onStatus(onlineStatus('spare@1'));
    assert.equal(p.link.of(TASKS.transcodeFiles).length, 1, 'during the grace period the transcode stays with enc@1');
    await sleep(80);
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => s.node), ['enc@1', 'spare@1']);
    assert.equal(p.commandState(first.id), 'superseded');
    const cancels = p.link.sent.filter((s) => s.cmd.task === TASKS.cancel);
    assert.deepEqual(
      cancels.map((s) => [s.node, s.qos, s.cmd.args]),
      [['enc@1', 1, { command_id: first.id }]],
      'a cancel waits in the lost worker\'s session behind any copy of the transcode the broker still holds for it',
    );
    const row = p.jobs.get(job.id);
    assert.equal(row?.status, 'transcoding');
    assert.equal(row?.transcode_node, 'spare@1');
    assert.deepEqual(p.ended, []);
  });

  it('ends a canceling job of a lost worker as canceled', async () => {
    const p = dispatchParts({ graceMs: 30 });
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job } = p.rippingJob('ripper@1');
    p.jobs.move(job.id, 'canceling');
    p.presence.onStatus({ node: 'ripper@1', state: 'offline' });
    await sleep(80);
    assert.equal(p.jobs.get(job.id)?.status, 'canceled');
  });

  it('ends the work of a removed worker at once: a canceling job canceled, a rip failed, a transcode back to the queue, each with the reason', () => {
    const p = dispatchParts({ graceMs: 60_000 });
    p.presence.onStatus(onlineStatus('gone@1', { slots: 4 }));
    const canceling = p.rippingJob('gone@1');
    p.jobs.move(canceling.job.id, 'canceling');
    const ripping = p.rippingJob('gone@1');
    const transcoding = p.transcodingJob('gone@1');
    const transcode = p.link.of(TASKS.transcodeFiles)[0]!;
    assert.equal(transcode.node, 'gone@1');
    p.fleet.remove('gone@1');
    p.presence.removed('gone@1');
    assert.equal(p.jobs.get(canceling.job.id)?.status, 'canceled');
    assert.ok(p.jobs.logs(canceling.job.id).some((l) => l.message === 'canceled (worker gone@1 was removed)'));
    const failed = p.jobs.get(ripping.job.id);
    assert.equal(failed?.status, 'failed');
    assert.equal(failed?.error, 'the worker gone@1 was removed during the rip: retry the rip');
    assert.equal(p.jobs.get(transcoding.id)?.status, 'transcoding');
    assert.deepEqual(p.queueRows(transcoding.id).map((r) => [r.state, r.assigned_node]), [['queued', null]]);
    for (const id of [canceling.commandId, ripping.commandId, transcode.id]) assert.equal(p.commandState(id), 'superseded');
    assert.equal(p.presence.inGrace('gone@1'), false);
  });

  it('keeps the work of a worker that comes back within the grace period, and resends what it did not get', async () => {
    const p = dispatchParts({ graceMs: 1000 });
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1', 'sent');
    p.presence.onStatus({ node: 'ripper@1', state: 'offline' });
    await sleep(10);
    p.presence.onStatus(onlineStatus('ripper@1', { tasks: [] }));
    assert.equal(p.presence.inGrace('ripper@1'), false);
    await sleep(100);
    assert.equal(p.jobs.get(job.id)?.status, 'running');
    assert.equal(p.commandState(commandId), 'sent');
    assert.deepEqual(p.link.of(TASKS.ripDisc).map((s) => s.id), [commandId, commandId], 'the rip went out again on the handshake');
  });

  it('cancels on the handshake what was taken away from the returning worker', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1');
    p.commands.setState(commandId, 'superseded');
    p.presence.onStatus({ node: 'ripper@1', state: 'offline' });
    p.presence.onStatus(onlineStatus('ripper@1', { tasks: [commandId] }));
    const cancels = p.link.sent.filter((s) => s.cmd.task === TASKS.cancel);
    assert.equal(cancels.length, 1);
    assert.deepEqual(cancels[0]?.cmd, { id: cancels[0]?.cmd.id, task: TASKS.cancel, job_id: job.id, args: { command_id: commandId } });
  });

  it('answers the tasks a restarted worker recovered: resume for what is still its work, cancel for what went to another worker', async () => {
    const p = dispatchParts({ graceMs: 30 });
    p.presence.onStatus(onlineStatus('enc@1'));
    const kept = p.transcodingJob('enc@1');
    const given = p.transcodingJob('enc@1');
    const [keptCmd, givenCmd] = p.link.of(TASKS.transcodeFiles);
    p.commands.setState(keptCmd!.id, 'accepted');
    p.commands.setState(givenCmd!.id, 'superseded');
    const startedAt = '2026-11-26T02:30:00.000Z';
    const recovered = [
      { command_id: keptCmd!.id, job_id: kept.id },
      { command_id: givenCmd!.id, job_id: given.id },
      { command_id: 'c-unknown', job_id: 'j-unknown' },
    ];
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    p.presence.onStatus(onlineStatus('enc@1', { tasks: recovered.map((r) => r.command_id), recovered, started_at: startedAt }));
    const answers = () => p.link.sent.filter((s) => s.cmd.task === TASKS.resume || s.cmd.task === TASKS.cancel).map((s) => [s.node, s.cmd.task, 'job_id' in s.cmd ? s.cmd.job_id : null, s.cmd.args]);
    const once = [
      ['enc@1', TASKS.resume, kept.id, { command_id: keptCmd!.id, started_at: startedAt }],
      ['enc@1', TASKS.cancel, given.id, { command_id: givenCmd!.id }],
      ['enc@1', TASKS.cancel, 'j-unknown', { command_id: 'c-unknown' }],
    ];
    // The handshake's own cancel for the superseded one comes first; every recovered task gets its answer.
    assert.deepEqual(answers().slice(1), once);
    // Asked again at once (the answer is still on its way): not answered twice.
    p.presence.onStatus(onlineStatus('enc@1', { tasks: [keptCmd!.id], recovered: recovered.slice(0, 1), started_at: startedAt }));
    assert.equal(answers().length, 4);
    assert.equal(p.commandState(keptCmd!.id), 'accepted');
    assert.equal(p.jobs.get(kept.id)?.status, 'transcoding');
    await sleep(60);
    assert.equal(p.commandState(keptCmd!.id), 'accepted', 'the grace period was cleared: the resumed work stays');
    p.presence.stop();
  });

  it('answers a recovered task once per ask, logs it once, and answers again quietly when the answer may have been lost', async () => {
    const p = dispatchParts({ graceMs: 30, reanswerMs: 50 });
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    const first = p.link.of(TASKS.transcodeFiles)[0]!;
    p.commands.setState(first.id, 'superseded');
    const startedAt = '2026-11-26T03:00:00.000Z';
    const asking = (at = startedAt) => onlineStatus('enc@1', { tasks: [first.id], recovered: [{ command_id: first.id, job_id: job.id }], started_at: at });
    const cancels = () => p.link.sent.filter((s) => s.node === 'enc@1' && s.cmd.task === TASKS.cancel && s.cmd.args.command_id === first.id).length;
    const lines = () => p.jobs.logs(job.id).filter((l) => /restarted holding command .*: canceled there/.test(l.message)).length;
    p.presence.onStatus(asking());
    assert.deepEqual([cancels(), lines()], [1, 1]);
    // The agent asks again before the cancel arrived: neither a second cancel nor a second line.
    p.presence.onStatus(asking());
    p.presence.onStatus(asking());
    assert.deepEqual([cancels(), lines()], [1, 1]);
    // Still asking after a while: the cancel may have been lost, so it goes again, without a new line.
    await sleep(70);
    p.presence.onStatus(asking());
    assert.deepEqual([cancels(), lines()], [2, 1]);
    // Back online after a gap: answered at once (what was sent meanwhile may be lost), still one line.
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    const before = cancels();
    p.presence.onStatus(asking());
    assert.equal(cancels(), before + 2, 'the handshake\'s cancel of what it holds, and the answer');
    assert.equal(lines(), 1);
    // The answer arrived (the task is no longer listed); a later run of the agent that asks is a new ask.
    p.presence.onStatus(onlineStatus('enc@1', { tasks: [], recovered: [], started_at: startedAt }));
    p.presence.onStatus(asking('2026-11-26T03:05:00.000Z'));
    assert.equal(lines(), 2);
    p.presence.stop();
  });

  it('keeps a transcode whose encode had ended for its lost worker longer than the grace period, then moves it; the other work moves at once', async () => {
    const p = dispatchParts({ graceMs: 30, encodedWaitMs: 150 });
    p.presence.onStatus(onlineStatus('enc@1', { slots: 2 }));
    const encoded = p.transcodingJob('enc@1');
    const running = p.transcodingJob('enc@1');
    const [encodedCmd, runningCmd] = p.link.of(TASKS.transcodeFiles);
    assert.deepEqual([encodedCmd?.node, runningCmd?.node], ['enc@1', 'enc@1']);
    for (const c of [encodedCmd!, runningCmd!]) p.commands.setState(c.id, 'accepted');
    p.commands.setEncoded(encodedCmd!.id, true);
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    p.presence.onStatus(onlineStatus('spare@1'));
    await sleep(80);
    assert.equal(p.commandState(runningCmd!.id), 'superseded', 'the transcode still encoding goes to another worker after the grace period');
    assert.equal(p.jobs.get(running.id)?.transcode_node, 'spare@1');
    assert.equal(p.commandState(encodedCmd!.id), 'accepted', 'the encoded one waits for its worker');
    assert.equal(p.presence.inGrace('enc@1'), true);
    assert.ok(p.jobs.logs(encoded.id).some((l) => /^worker enc@1 went offline after the encode had ended; the transcode waits up to 0 s for it to come back and finish, then goes back to the shared queue$/.test(l.message)));
    await sleep(200);
    assert.equal(p.commandState(encodedCmd!.id), 'superseded', 'past the longer wait it is encoded again elsewhere');
    assert.equal(p.jobs.get(encoded.id)?.transcode_node, 'spare@1');
    assert.equal(p.presence.inGrace('enc@1'), false);
    p.presence.stop();
  });

  it('resumes the encoded transcode of a worker back within the longer wait, telling the job log it only finishes', async () => {
    const p = dispatchParts({ graceMs: 30, encodedWaitMs: 5000 });
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    const cmd = p.link.of(TASKS.transcodeFiles)[0]!;
    p.commands.setState(cmd.id, 'accepted');
    p.commands.setEncoded(cmd.id, true);
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    await sleep(80);
    assert.equal(p.presence.inGrace('enc@1'), true);
    const startedAt = '2026-11-27T08:00:00.000Z';
    p.presence.onStatus(onlineStatus('enc@1', { tasks: [cmd.id], recovered: [{ command_id: cmd.id, job_id: job.id }], started_at: startedAt }));
    assert.equal(p.presence.inGrace('enc@1'), false, 'the longer wait ends with its worker back');
    assert.deepEqual(p.link.sent.filter((s) => s.cmd.task === TASKS.resume).map((s) => s.cmd.args), [{ command_id: cmd.id, started_at: startedAt }]);
    assert.ok(p.jobs.logs(job.id).some((l) => l.message === 'worker enc@1 restarted and finishes the transcode, whose encode had ended'));
    assert.equal(p.commandState(cmd.id), 'accepted');
    p.presence.stop();
  });

  it('ends a canceling job at the grace period even when its encode had ended', async () => {
    const p = dispatchParts({ graceMs: 30, encodedWaitMs: 5000 });
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    const cmd = p.link.of(TASKS.transcodeFiles)[0]!;
    p.commands.setEncoded(cmd.id, true);
    p.jobs.move(job.id, 'canceling');
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    await sleep(80);
    assert.equal(p.jobs.get(job.id)?.status, 'canceled');
    assert.equal(p.presence.inGrace('enc@1'), false);
    p.presence.stop();
  });

  it('cancels, never resumes, a recovered transcode that went to the shared queue while its worker was away', async () => {
    const p = dispatchParts({ graceMs: 30 });
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    const first = p.link.of(TASKS.transcodeFiles)[0]!;
    p.commands.setState(first.id, 'accepted');
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    p.presence.onStatus(onlineStatus('spare@1'));
    await sleep(80);
    assert.equal(p.commandState(first.id), 'superseded');
    p.presence.onStatus(onlineStatus('enc@1', { tasks: [first.id], recovered: [{ command_id: first.id, job_id: job.id }], started_at: '2026-11-26T02:31:00.000Z' }));
    assert.deepEqual(p.link.of(TASKS.resume), [], 'the work is spare@1\'s now');
    assert.ok(p.link.sent.filter((s) => s.node === 'enc@1' && s.cmd.task === TASKS.cancel).length >= 1);
    p.presence.stop();
  });

  it('fails accepted work the returning worker no longer holds, after the reconnect check', async () => {
    const p = dispatchParts({ graceMs: 1000, reconcileMs: 20 });
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1', 'accepted');
    p.presence.onStatus({ node: 'ripper@1', state: 'offline' });
    p.presence.onStatus(onlineStatus('ripper@1', { tasks: [] }));
    assert.equal(p.jobs.get(job.id)?.status, 'running', 'its outcome may still be on the way');
    await sleep(60);
    assert.equal(p.jobs.get(job.id)?.status, 'failed');
    assert.equal(p.jobs.get(job.id)?.error, 'the worker ripper@1 no longer runs this rip (it restarted without it): retry the rip');
    assert.equal(p.commandState(commandId), 'superseded');
    p.presence.stop();
  });

  it('waits on while the broker is out of sight: silence proves nothing then', async () => {
    const p = dispatchParts({ graceMs: 100 });
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job } = p.rippingJob('ripper@1');
    p.link.connectedSince = null;
    p.presence.onStatus({ node: 'ripper@1', state: 'offline' });
    await sleep(250);
    assert.equal(p.jobs.get(job.id)?.status, 'running');
    assert.equal(p.presence.inGrace('ripper@1'), true, 'the grace period started again');
    p.link.connectedSince = Date.now();
    await sleep(20);
    assert.equal(p.jobs.get(job.id)?.status, 'running', 'just reconnected: a full grace period first');
    await sleep(300);
    assert.equal(p.jobs.get(job.id)?.status, 'failed', 'back in sight of the broker for a grace period: the silence counts');
  });

  it('after its own (re)connect gives the workers time to reconnect before a short grace period counts', async () => {
    const p = dispatchParts({ graceMs: 30, settleMs: 250 });
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    const first = p.link.of(TASKS.transcodeFiles)[0]!;
    p.link.connectedSince = Date.now(); // the coordinator restarted: every worker is reconnecting
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    await sleep(120);
    assert.equal(p.commandState(first.id), 'sent', 'a worker still reconnecting is not lost (its transcode would run twice)');
    assert.equal(p.jobs.get(job.id)?.transcode_node, 'enc@1');
    await sleep(300);
    assert.equal(p.commandState(first.id), 'superseded', 'past the settle time the silence counts');
    p.presence.stop();
  });

  it('pings the online workers and takes a silent one offline, starting its grace period', async () => {
    const p = dispatchParts({ graceMs: 10_000, staleMs: 20 });
    p.presence.onStatus(onlineStatus('quiet@1'));
    p.presence.onStatus(onlineStatus('chatty@1'));
    p.rippingJob('quiet@1');
    await sleep(40);
    p.fleet.touch('chatty@1');
    p.presence.pingAndSweep();
    assert.deepEqual(p.link.of(TASKS.pingWorker).map((s) => s.node).sort(), ['chatty@1', 'quiet@1']);
    assert.ok(p.link.sent.filter((s) => s.cmd.task === TASKS.pingWorker).every((s) => s.qos === 0));
    assert.equal(p.fleet.get('quiet@1')?.online, false);
    assert.equal(p.fleet.get('chatty@1')?.online, true);
    assert.equal(p.presence.inGrace('quiet@1'), true);
    assert.equal(p.presence.inGrace('chatty@1'), false, 'no open work: no grace period');
    p.presence.stop();
  });

  it('sends a job command again that an online worker has not answered for a while', async () => {
    const p = dispatchParts({ graceMs: 10_000, unansweredMs: 20 });
    p.presence.onStatus(onlineStatus('ripper@1'));
    p.presence.onStatus(onlineStatus('away@1'));
    const { commandId } = p.rippingJob('ripper@1', 'sent');
    const answered = p.rippingJob('ripper@1', 'accepted');
    p.rippingJob('away@1', 'sent');
    p.presence.onStatus({ node: 'away@1', state: 'offline' });
    p.presence.pingAndSweep();
    assert.equal(p.link.of(TASKS.ripDisc).length, 3, 'not yet: the command is young');
    await sleep(40);
    p.presence.pingAndSweep();
    const rips = p.link.of(TASKS.ripDisc);
    assert.deepEqual(rips.slice(3).map((s) => [s.node, s.id]), [['ripper@1', commandId]], 'only the unanswered one, and only to an online worker');
    assert.notEqual(answered.commandId, commandId);
    p.presence.stop();
  });

  it('sends no ping while the link is down', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('a@1'));
    p.link.connected = false;
    p.presence.pingAndSweep();
    assert.deepEqual(p.link.of(TASKS.pingWorker), []);
  });

  it('ignores the last will of a worker nobody knows', () => {
    const p = dispatchParts();
    p.presence.onStatus({ node: 'ghost@1', state: 'offline' });
    assert.equal(p.fleet.get('ghost@1'), undefined);
  });
});
