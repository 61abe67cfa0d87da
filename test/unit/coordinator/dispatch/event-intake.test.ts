import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { TASKS, type AgentEvent, type RippedTitle } from '../../../../shared/protocol.js';
import { LibraryTitles } from '../../../../coordinator/library/library-titles.js';
import { endNoticeDue } from '../../../../coordinator/dispatch/event-rules.js';
import { dispatchParts, onlineStatus } from '../../../fixtures/dispatch-parts.js';

type Body<T extends AgentEvent['type']> = Omit<Extract<AgentEvent, { type: T }>, 'event_id' | 'node' | 'ts' | 'type'>;

function event<T extends AgentEvent['type']>(node: string, type: T, body: Body<T>): AgentEvent {
  return { event_id: randomUUID(), node, ts: new Date().toISOString(), type, ...body } as unknown as AgentEvent;
}

describe('EventIntake', () => {
  it('applies an event once however often it comes, and acknowledges it every time', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1', 'sent');
    const accepted = event('ripper@1', 'accepted', { command_id: commandId, job_id: job.id });
    p.intake.onEvent('ripper@1', accepted);
    p.intake.onEvent('ripper@1', accepted);
    assert.equal(p.commandState(commandId), 'accepted');
    assert.equal(p.jobs.logs(job.id).filter((l) => l.message === 'worker ripper@1 accepted the rip').length, 1);
    assert.deepEqual(p.link.acks, [{ node: 'ripper@1', eventId: accepted.event_id }, { node: 'ripper@1', eventId: accepted.event_id }]);
  });

  it('frees the slot of a transcode whose encoder is done, hands it the next transcode, and takes the slot again when the transcode starts over', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('enc@1', { slots: 1 }));
    const first = p.transcodingJob();
    const second = p.transcodingJob();
    const cmd = p.link.of(TASKS.transcodeFiles)[0]!;
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => s.job_id), [first.id], 'one slot: the second waits');
    p.intake.onEvent('enc@1', event('enc@1', 'accepted', { command_id: cmd.id, job_id: first.id }));
    p.intake.onEvent('enc@1', event('enc@1', 'transcode_started', { command_id: cmd.id, job_id: first.id }));
    p.intake.onEvent('enc@1', event('enc@1', 'transcode_encoded', { command_id: cmd.id, job_id: first.id }));
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => s.job_id), [first.id, second.id], 'the encoder of the first is done: its slot takes the second');
    assert.equal(p.commandState(cmd.id), 'accepted', 'the first is still open until its job_done');
    assert.equal(p.jobs.get(first.id)?.status, 'transcoding');
    // The agent restarted and runs the first again: it takes a slot once more, so nothing more is handed out.
    const third = p.transcodingJob();
    p.intake.onEvent('enc@1', event('enc@1', 'transcode_started', { command_id: cmd.id, job_id: first.id }));
    const next = p.link.of(TASKS.transcodeFiles)[1]!;
    p.intake.onEvent('enc@1', event('enc@1', 'job_done', { command_id: next.id, job_id: second.id, output_path: '/media/movies/B', files: ['/media/movies/B/B.mkv'], raw_removed: true }));
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => s.job_id), [first.id, second.id], 'the rerun holds the only slot: the third waits');
    assert.deepEqual(p.queueRows(third.id).map((r) => r.state), ['queued']);
  });

  it('sends the successor of a transcode whose encoder is about to end ahead, one per ending encoder, and counts it as a slot once it runs', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('enc@1', { slots: 2 }));
    const [a, b, c, d, e] = [p.transcodingJob(), p.transcodingJob(), p.transcodingJob(), p.transcodingJob(), p.transcodingJob()];
    const sentJobs = () => p.link.of(TASKS.transcodeFiles).map((s) => s.job_id);
    assert.deepEqual(sentJobs(), [a.id, b.id], 'two slots');
    const [cmdA, cmdB] = p.link.of(TASKS.transcodeFiles);
    for (const [cmd, job] of [[cmdA, a], [cmdB, b]] as const) {
      p.intake.onEvent('enc@1', event('enc@1', 'accepted', { command_id: cmd!.id, job_id: job.id }));
      p.intake.onEvent('enc@1', event('enc@1', 'transcode_started', { command_id: cmd!.id, job_id: job.id }));
    }
    const ending = event('enc@1', 'transcode_ending', { command_id: cmdA!.id, job_id: a.id });
    p.intake.onEvent('enc@1', ending);
    p.intake.onEvent('enc@1', ending);
    assert.deepEqual(sentJobs(), [a.id, b.id, c.id], 'A ends within seconds: C is sent ahead, once');
    assert.equal(p.commands.get(cmdA!.id)?.ending, 1);
    // A's encoder ends: C takes its slot on the agent, and counts as taking one here; nothing more goes out.
    p.intake.onEvent('enc@1', event('enc@1', 'transcode_encoded', { command_id: cmdA!.id, job_id: a.id }));
    assert.deepEqual(sentJobs(), [a.id, b.id, c.id]);
    // B is about to end: D is sent ahead. B is run again after a restart instead: it is no longer ending.
    p.intake.onEvent('enc@1', event('enc@1', 'transcode_ending', { command_id: cmdB!.id, job_id: b.id }));
    assert.deepEqual(sentJobs(), [a.id, b.id, c.id, d.id]);
    p.intake.onEvent('enc@1', event('enc@1', 'transcode_started', { command_id: cmdB!.id, job_id: b.id }));
    assert.equal(p.commands.get(cmdB!.id)?.ending, 0);
    p.queue.pump();
    assert.deepEqual(sentJobs(), [a.id, b.id, c.id, d.id], 'B, C and D hold the two slots and the one sent ahead: E waits');
    assert.deepEqual(p.queueRows(e.id).map((r) => r.state), ['queued']);
  });

  it('ignores transcode_ending and transcode_encoded of a transcode taken away from its worker', () => {
    for (const type of ['transcode_ending', 'transcode_encoded'] as const) {
      const p = dispatchParts();
      p.presence.onStatus(onlineStatus('enc@1', { slots: 1 }));
      const job = p.transcodingJob();
      const cmd = p.link.of(TASKS.transcodeFiles)[0]!;
      p.commands.setState(cmd.id, 'superseded');
      p.queue.requeue(job.id);
      p.presence.onStatus(onlineStatus('spare@1', { slots: 1 }));
      p.intake.onEvent('enc@1', event('enc@1', type, { command_id: cmd.id, job_id: job.id }));
      assert.deepEqual([p.commands.get(cmd.id)?.ending, p.commands.get(cmd.id)?.encoded], [0, 0], type);
    }
  });

  it('cancels at once a command a returning worker accepts after it was given to another worker', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    const stale = p.link.of(TASKS.transcodeFiles)[0]!;
    p.commands.setState(stale.id, 'superseded');
    p.intake.onEvent('enc@1', event('enc@1', 'accepted', { command_id: stale.id, job_id: job.id }));
    const cancels = p.link.sent.filter((s) => s.cmd.task === TASKS.cancel);
    assert.deepEqual(cancels.map((s) => [s.node, s.cmd.args]), [['enc@1', { command_id: stale.id }]]);
    assert.equal(p.commandState(stale.id), 'superseded');
    assert.equal(p.jobs.logs(job.id).some((l) => /accepted the transcode/.test(l.message)), false, 'the stale acceptance is not the job\'s news');
  });

  it('completes with a late job_done of the first worker a job whose second attempt failed for the raw folder the first one removed', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    p.jobs.update(job.id, { phase: 'transcode' });
    const first = p.link.of(TASKS.transcodeFiles)[0]!;
    // enc@1 went away with it finished, its job_done still in its outbox; the transcode went to spare@1.
    p.presence.onStatus({ node: 'enc@1', state: 'offline' });
    p.commands.setState(first.id, 'superseded');
    p.queue.requeue(job.id);
    p.presence.onStatus(onlineStatus('spare@1'));
    const second = p.link.of(TASKS.transcodeFiles)[1]!;
    assert.equal(second.node, 'spare@1');
    p.intake.onEvent('spare@1', event('spare@1', 'job_failed', { command_id: second.id, job_id: job.id, phase: 'transcode', reason: `the raw file /raw/${job.id}/title_t00.mkv is missing` }));
    assert.equal(p.jobs.get(job.id)?.status, 'failed');
    p.intake.onEvent('enc@1', event('enc@1', 'job_done', { command_id: first.id, job_id: job.id, output_path: '/media/movies/Film', files: ['/media/movies/Film/Film.mkv'], raw_removed: true }));
    const row = p.jobs.get(job.id);
    assert.equal(row?.status, 'completed', 'its files are written: encoding the job again would do it twice');
    assert.equal(row?.error, null);
    assert.equal(row?.output_path, '/media/movies/Film');
    assert.equal(row?.raw_state, 'absent');
    assert.equal(p.commandState(first.id), 'done');
    assert.ok(p.jobs.logs(job.id).some((l) => /the second attempt had failed/.test(l.message)));
    // What the household is told: the failure (it went out when it happened), then the completion once,
    // with the finished row (so the library refresh runs for it); a resent job_done tells nothing more.
    assert.deepEqual(p.ended.map((r) => [r.id, r.status]), [[job.id, 'failed'], [job.id, 'completed']]);
    assert.equal(p.ended[1]?.output_path, '/media/movies/Film');
    // A job that failed in its rip stage (retry-rip after the transcode) is not completed by an old transcode.
    const q = dispatchParts();
    q.presence.onStatus(onlineStatus('enc@1'));
    const other = q.transcodingJob('enc@1');
    const old = q.link.of(TASKS.transcodeFiles)[0]!;
    q.commands.setState(old.id, 'superseded');
    q.jobs.move(other.id, 'failed', { phase: 'rip' });
    q.intake.onEvent('enc@1', event('enc@1', 'job_done', { command_id: old.id, job_id: other.id, output_path: '/media/movies/Old', files: ['/media/movies/Old/Old.mkv'], raw_removed: true }));
    assert.equal(q.jobs.get(other.id)?.status, 'failed');
  });

  it('keepOriginal: the folder the originals went into is the finished job\'s raw data, when it lies under MEDIA_ROOT/Originale and is named like the job (issue 38)', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('enc@1'));
    const finish = (originals: string) => {
      const job = p.transcodingJob('enc@1');
      const cmd = p.link.of(TASKS.transcodeFiles).find((c) => c.job_id === job.id)!;
      p.intake.onEvent('enc@1', event('enc@1', 'job_done', { command_id: cmd.id, job_id: job.id, output_path: '/media/movies/Film', files: ['/media/movies/Film/Film.mkv'], raw_removed: true, originals_dir: originals.replace('<id>', job.id) }));
      const row = p.jobs.get(job.id);
      return [row?.status, row?.raw_state, row?.raw_path === originals.replace('<id>', job.id)];
    };
    assert.deepEqual(finish('/media/Originale/Film/<id>'), ['completed', 'present', true]);
    assert.deepEqual(finish('/media/Originale/Show/Season 02/<id>'), ['completed', 'present', true]);
    // A worker naming another place is not believed: the job completes, its raw data counts as removed.
    assert.deepEqual(finish('/etc/<id>'), ['completed', 'absent', false]);
    assert.deepEqual(finish('/media/Originale/Film/someone-else'), ['completed', 'absent', false]);
    assert.deepEqual(finish('/media/Originale/../raw/<id>'), ['completed', 'absent', false]);
    assert.deepEqual(finish('/media/movies/<id>'), ['completed', 'absent', false]);
  });

  it('tells a job end once per outcome: a failure corrected by a late finish is told, the same outcome twice never', () => {
    assert.equal(endNoticeDue('transcoding', 'completed'), true, 'the first end');
    assert.equal(endNoticeDue('canceling', 'canceled'), true);
    assert.equal(endNoticeDue('running', 'failed'), true);
    assert.equal(endNoticeDue(undefined, 'failed'), true);
    assert.equal(endNoticeDue('failed', 'completed'), true, 'completed after all: the failure notice cannot be taken back, the completion must be told');
    assert.equal(endNoticeDue('failed', 'failed'), false);
    assert.equal(endNoticeDue('completed', 'completed'), false);
    assert.equal(endNoticeDue('canceled', 'canceled'), false);
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('enc@1'));
    const job = p.transcodingJob('enc@1');
    p.journal.finish(job.id, 'failed', { error: 'first' }, 'failed once');
    p.journal.finish(job.id, 'failed', { error: 'again' }, 'failed again');
    p.journal.finish(job.id, 'completed', { error: null }, 'completed after all');
    p.journal.finish(job.id, 'completed', { error: null }, 'completed twice');
    assert.deepEqual(p.ended.map((r) => r.status), ['failed', 'completed']);
    // The same outcome twice is no move of the state table: the store refuses it, nothing is written or told.
    assert.ok(p.logs.some((e) => e.job_id === job.id && /status change refused: failed → failed/.test(e.message)));
    assert.ok(p.logs.some((e) => e.job_id === job.id && /status change refused: completed → completed/.test(e.message)));
    assert.equal(p.jobs.logs(job.id).some((l) => /failed again|completed twice/.test(l.message)), false);
  });

  it('keeps the read error count of a rip\'s closing log line in the job, for a careful re-read', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1');
    p.intake.onEvent('ripper@1', event('ripper@1', 'log', { command_id: commandId, job_id: job.id, level: 'warn', message: 'read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090' }));
    assert.equal(p.jobs.get(job.id)?.meta?.read_errors, undefined, 'a single read error line carries no count');
    p.intake.onEvent('ripper@1', event('ripper@1', 'log', { command_id: commandId, job_id: job.id, level: 'warn', message: 'the ripper reported 7 read error(s) (6 not listed): the raw files may have gaps where the disc could not be read', read_errors: 7 }));
    assert.equal(p.jobs.get(job.id)?.meta?.read_errors, 7);
    assert.ok(p.jobs.logs(job.id).some((l) => l.message.startsWith('the ripper reported 7 read error(s)')));
  });

  it('runs a job through its rip into the transcode queue and on to its end', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1');
    const raw = `/raw/${job.id}`;
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_started', { command_id: commandId, job_id: job.id, raw_dir: raw }));
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_done', { command_id: commandId, job_id: job.id, raw_dir: raw, files: [`${raw}/title_t00.mkv`] }));
    assert.equal(p.commandState(commandId), 'done');
    assert.equal(p.jobs.get(job.id)?.status, 'transcoding');
    const transcode = p.link.of(TASKS.transcodeFiles)[0];
    assert.ok(transcode, 'the transcode went out');
    p.intake.onEvent('ripper@1', event('ripper@1', 'transcode_started', { command_id: transcode.id, job_id: job.id }));
    p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: transcode.id, job_id: job.id, output_path: '/media/movies/Film', files: ['/media/movies/Film/Film.mkv'], raw_removed: true }));
    const row = p.jobs.get(job.id);
    assert.equal(row?.status, 'completed');
    assert.equal(row?.raw_state, 'absent');
    assert.deepEqual(p.ended.map((j) => j.id), [job.id]);
    assert.deepEqual(p.queueRows(job.id).map((r) => r.state), ['done']);
  });

  it('records how long the rip and the transcode took and asks for the raw and finished files to be measured (statistics, issue 38)', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1');
    const raw = `/raw/${job.id}`;
    const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_started', { command_id: commandId, job_id: job.id, raw_dir: raw }));
    assert.ok(Math.abs(Date.parse(p.jobs.get(job.id)?.meta?.rip_started_at ?? '') - Date.now()) < 5000, 'the rip start is recorded');
    p.jobs.update(job.id, {}, { rip_started_at: ago(1500) });
    // A rip the agent resumed keeps its first start.
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_started', { command_id: commandId, job_id: job.id, raw_dir: raw }));
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_done', { command_id: commandId, job_id: job.id, raw_dir: raw, files: [`${raw}/a.mkv`, `${raw}/b.mkv`] }));
    assert.ok(Math.abs((p.jobs.get(job.id)?.meta?.rip_seconds ?? 0) - 1500) <= 2);
    const transcode = p.link.of(TASKS.transcodeFiles)[0]!;
    p.intake.onEvent('ripper@1', event('ripper@1', 'transcode_started', { command_id: transcode.id, job_id: job.id }));
    assert.ok(p.jobs.get(job.id)?.meta?.transcode_started_at);
    p.jobs.update(job.id, {}, { transcode_started_at: ago(3600) });
    // The agent restarted and resumed the transcode: its time still counts from the first start.
    p.intake.onEvent('ripper@1', event('ripper@1', 'transcode_started', { command_id: transcode.id, job_id: job.id }));
    p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: transcode.id, job_id: job.id, output_path: '/media/movies/Film', files: ['/media/movies/Film/Film.mkv'], raw_removed: true }));
    const meta = p.jobs.get(job.id)?.meta;
    assert.ok(Math.abs((meta?.transcode_seconds ?? 0) - 3600) <= 2);
    assert.ok(Math.abs((meta?.rip_seconds ?? 0) - 1500) <= 2, 'the rip time stays');
    assert.deepEqual(p.measured, [
      { jobId: job.id, key: 'raw_bytes', files: [`${raw}/a.mkv`, `${raw}/b.mkv`] },
      { jobId: job.id, key: 'output_bytes', files: ['/media/movies/Film/Film.mkv'] },
    ]);

    // A rip that is the last stage (an audio CD): its job_done ends the rip, whose time it records.
    const cd = p.rippingJob('ripper@1');
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_started', { command_id: cd.commandId, job_id: cd.job.id, raw_dir: `/raw/${cd.job.id}` }));
    p.jobs.update(cd.job.id, {}, { rip_started_at: ago(240) });
    p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: cd.commandId, job_id: cd.job.id, output_path: '/media/movies/Album', files: ['/media/movies/Album/01.flac'], raw_removed: true }));
    const cdMeta = p.jobs.get(cd.job.id)?.meta;
    assert.ok(Math.abs((cdMeta?.rip_seconds ?? 0) - 240) <= 2);
    assert.equal(cdMeta?.transcode_seconds, undefined);
  });

  it('drops a job event that breaks the rules: another node, a wrong stage, a raw folder it was not given', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const { job, commandId } = p.rippingJob('ripper@1');
    p.intake.onEvent('intruder@1', event('intruder@1', 'job_failed', { command_id: commandId, job_id: job.id, phase: 'rip', reason: 'x' }));
    p.intake.onEvent('ripper@1', event('ripper@1', 'transcode_started', { command_id: commandId, job_id: job.id }));
    assert.equal(p.jobs.get(job.id)?.status, 'running');
    assert.equal(p.commandState(commandId), 'accepted');
    const drops = p.logs.filter((l) => l.level === 'warn' && l.message.startsWith('dropped a message on ripwerk/event/')).map((l) => l.message);
    assert.equal(drops.length, 2);
    assert.match(drops[0] ?? '', /^dropped a message on ripwerk\/event\/intruder@1: job_failed for a command of ripper@1 came from intruder@1$/);
    assert.match(drops[1] ?? '', /^dropped a message on ripwerk\/event\/ripper@1: transcode_started of the rip is no valid transition for a job that is running$/);

    const q = dispatchParts();
    q.presence.onStatus(onlineStatus('ripper@1'));
    const other = q.rippingJob('ripper@1');
    q.intake.onEvent('ripper@1', event('ripper@1', 'rip_done', { command_id: other.commandId, job_id: other.job.id, raw_dir: '/etc', files: ['/etc/passwd'] }));
    assert.equal(q.jobs.get(other.job.id)?.status, 'running');
    assert.deepEqual(q.link.of(TASKS.transcodeFiles), []);
    assert.ok(q.logs.some((l) => l.message.includes(`rip_done names the raw folder /etc, the rip was given /raw/${other.job.id}`)));
  });

  it('fails a job whose job_done names outputs outside the job\'s target folder, as rip_done is checked against the raw folder', () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    for (const [output, files] of [['/etc', ['/etc/passwd']], ['/media/movies', ['/media/movies/Film.mkv']], ['/media/movies/../../etc', ['/etc/passwd']], ['/media/movies/Film', ['/etc/passwd']], ['/media/movies-x/Film', ['/media/movies-x/Film/Film.mkv']]] as [string, string[]][]) {
      const job = p.transcodingJob('ripper@1');
      const cmd = p.link.of(TASKS.transcodeFiles).at(-1)!;
      p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: cmd.id, job_id: job.id, output_path: output, files, raw_removed: false }));
      const row = p.jobs.get(job.id);
      assert.equal(row?.status, 'failed', `${output} ${files.join(',')}`);
      assert.match(row?.error ?? '', /^job_done names the (output folder|file) .*: refused$/);
      assert.equal(row?.output_path ?? null, null);
    }
    const drops = p.logs.filter((l) => l.message.startsWith('dropped a message on ripwerk/event/ripper@1: job_done')).map((l) => l.message);
    assert.ok(drops.some((l) => l.endsWith('job_done names the output folder /etc, outside the job\'s target folder /media/movies')), drops.join('\n'));
    const ok = p.transcodingJob('ripper@1');
    const cmd = p.link.of(TASKS.transcodeFiles).at(-1)!;
    p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: cmd.id, job_id: ok.id, output_path: '/media/movies/Film (2001)', files: ['/media/movies/Film (2001)/Film (2001).mkv'], raw_removed: false }));
    assert.equal(p.jobs.get(ok.id)?.status, 'completed');
  });

  it('stores the titles of a scan it asked for, and drops titles nobody asked for', async () => {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    p.intake.onEvent('ripper@1', event('ripper@1', 'tracks', { command_id: randomUUID(), drive: 'sr0', tracks: [] }));
    assert.equal(p.settings.getRaw(`tracks:${p.fleet.deviceName({ node: 'ripper@1', drive: 'sr0' })}`), undefined);
    p.requests.scanTracks('ripper@1', 'sr0');
    const scan = p.link.of(TASKS.scanTracks)[0];
    assert.ok(scan);
    const tracks = [{ index: 0, duration_s: 5400, size_bytes: 1, chapters: 10, title: 'Main' }];
    p.intake.onEvent('ripper@1', event('ripper@1', 'tracks', { command_id: scan.id, drive: 'sr0', tracks } as never));
    const stored = p.settings.getRaw(`tracks:${p.fleet.deviceName({ node: 'ripper@1', drive: 'sr0' })}`) as { scanning: boolean; tracks: unknown[] };
    assert.equal(stored.scanning, false);
    assert.equal(stored.tracks.length, 1);
  });
});

describe('EventIntake: the titles of a recognised disc from the rip to the library', () => {
  const FP = 'dvd:FF49F5E9E708A9EF14691846C438F96B';
  const main = { role: 'main_movie', name: '2001: A Space Odyssey' } as const;
  const trailer = { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null } as const;

  /** A rip of the 2001 DVD under its identity, its command accepted by ripper@1. */
  function recognisedRip() {
    const p = dispatchParts();
    p.presence.onStatus(onlineStatus('ripper@1'));
    const id = randomUUID();
    p.jobs.create({ id, title: '2001: A Space Odyssey', target_dir: '/media/movies', device: 'ripper@1:sr0', node: 'ripper@1', meta: { fingerprint: FP } });
    p.jobs.move(id, 'running');
    const commandId = randomUUID();
    p.commands.send('ripper@1', { id: commandId, task: TASKS.ripDisc, job_id: id, args: { drive: 'sr0', raw_dir: `/raw/${id}` } as never });
    p.commands.setState(commandId, 'accepted');
    const raw = `/raw/${id}`;
    const titles: RippedTitle[] = [
      { number: 0, file: `${raw}/2001 A SPACE ODYSSEY_t00.mkv`, source_file: '01', segment_map: '1-19,20-35', seconds: 8904, size_bytes: 6858530816, role: main },
      { number: 7, file: `${raw}/2001 A SPACE ODYSSEY_t07.mkv`, source_file: '08', segment_map: '1', seconds: 111, size_bytes: 73377792, role: trailer },
    ];
    return { p, id, commandId, raw, titles };
  }

  it('keeps the rip\'s titles, sends their roles with the transcode and remembers them with the output files when the job is done', () => {
    const { p, id, commandId, raw, titles } = recognisedRip();
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_done', { command_id: commandId, job_id: id, raw_dir: raw, files: titles.map((t) => t.file), titles }));
    assert.deepEqual(p.jobs.get(id)?.meta?.ripped_titles, titles);
    const transcode = p.link.sent.find((s) => s.cmd.task === TASKS.transcodeFiles);
    assert.ok(transcode && transcode.cmd.task === TASKS.transcodeFiles);
    assert.deepEqual(transcode.cmd.args.titles, [main, trailer]);
    assert.deepEqual(new LibraryTitles(p.db).forDisc(FP), [], 'nothing is in the library before the job is done');

    const dir = '/media/movies/2001 - A Space Odyssey (1968)';
    const out = [`${dir}/2001 - A Space Odyssey (1968).mkv`, `${dir}/Trailers/Theatrical Trailer.mkv`];
    p.intake.onEvent('ripper@1', event('ripper@1', 'transcode_started', { command_id: transcode.cmd.id, job_id: id }));
    p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: transcode.cmd.id, job_id: id, output_path: dir, files: out, raw_removed: true }));
    assert.equal(p.jobs.get(id)?.status, 'completed');
    assert.deepEqual(
      new LibraryTitles(p.db).forDisc(FP).map((t) => [t.source_file, t.role?.role, t.output_file, t.job_id]),
      [
        ['01', 'main_movie', out[0], id],
        ['08', 'extra', out[1], id],
      ],
    );
  });

  it('drops titles that do not follow the files, and remembers nothing then', () => {
    const { p, id, commandId, raw, titles } = recognisedRip();
    p.intake.onEvent('ripper@1', event('ripper@1', 'rip_done', { command_id: commandId, job_id: id, raw_dir: raw, files: [titles[1].file, titles[0].file], titles }));
    assert.equal(p.jobs.get(id)?.meta?.ripped_titles, undefined);
    const transcode = p.link.sent.find((s) => s.cmd.task === TASKS.transcodeFiles);
    assert.ok(transcode && transcode.cmd.task === TASKS.transcodeFiles);
    assert.equal(transcode.cmd.args.titles, null);
    p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: transcode.cmd.id, job_id: id, output_path: '/media/movies/X', files: ['/media/movies/X/a.mkv', '/media/movies/X/b.mkv'], raw_removed: true }));
    assert.deepEqual(new LibraryTitles(p.db).forDisc(FP), []);
  });

  it('remembers the titles a rip without a transcode stage reports with its output files', () => {
    const { p, id, commandId, titles } = recognisedRip();
    const dir = '/media/movies/2001 - A Space Odyssey (1968)';
    const out = [`${dir}/2001 - A Space Odyssey (1968).mkv`, `${dir}/Trailers/Theatrical Trailer.mkv`];
    p.intake.onEvent('ripper@1', event('ripper@1', 'job_done', { command_id: commandId, job_id: id, output_path: dir, files: out, raw_removed: true, titles: titles.map((t, i) => ({ ...t, file: out[i] })) }));
    assert.equal(p.jobs.get(id)?.status, 'completed');
    assert.deepEqual(
      new LibraryTitles(p.db).forDisc(FP).map((t) => [t.source_file, t.output_file]),
      [
        ['01', out[0]],
        ['08', out[1]],
      ],
    );
  });
});
