import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { mainFileOf, rolesOf } from '../../../../coordinator/dispatch/transcode-queue.js';
import type { TitleRole } from '../../../../shared/disc-titles.js';
import { TASKS, type RippedTitle } from '../../../../shared/protocol.js';
import { dispatchParts, onlineStatus } from '../../../fixtures/dispatch-parts.js';

describe('TranscodeQueue', () => {
  it('waits while no worker can transcode, then hands the job to the first that comes online', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('ripper@1', { capabilities: { ...onlineStatus('x').capabilities!, encoders: [] } }));
    const job = p.transcodingJob();
    assert.deepEqual(p.link.of(TASKS.transcodeFiles), []);
    assert.deepEqual(p.queueRows(job.id).map((r) => r.state), ['queued']);
    p.fleet.applyStatus(onlineStatus('encoder@1'));
    p.queue.pump();
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => [s.node, s.job_id]), [['encoder@1', job.id]]);
    assert.deepEqual(p.queueRows(job.id), [{ state: 'assigned', assigned_node: 'encoder@1', preferred_node: null }]);
    assert.equal(p.jobs.get(job.id)?.transcode_node, 'encoder@1');
    const sent = p.link.of(TASKS.transcodeFiles)[0]!;
    assert.equal(p.commandState(sent.id), 'sent');
  });

  it('gives each transcode to the worker with the most free slots, oldest first', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('a@1', { slots: 1 }));
    p.fleet.applyStatus(onlineStatus('b@1', { slots: 3 }));
    const first = p.transcodingJob();
    const second = p.transcodingJob();
    const third = p.transcodingJob();
    const fourth = p.transcodingJob();
    const fifth = p.transcodingJob();
    const given = new Map(p.link.of(TASKS.transcodeFiles).map((s) => [s.job_id, s.node]));
    assert.equal(given.get(first.id), 'b@1'); // b 3 free, a 1 free
    assert.equal(given.get(second.id), 'b@1'); // b 2, a 1
    assert.equal(given.get(third.id), 'a@1'); // a 1, b 1: the names decide
    assert.equal(given.get(fourth.id), 'b@1');
    assert.equal(given.has(fifth.id), false, 'no slot is left: the fifth waits');
    assert.deepEqual(p.queueRows(fifth.id).map((r) => r.state), ['queued']);
  });

  it('waits for the chosen node while it is online and busy, and takes it once a slot frees', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('chosen@1', { slots: 1 }));
    p.fleet.applyStatus(onlineStatus('other@1', { slots: 4 }));
    const busy = p.rippingJob('chosen@1');
    const job = p.transcodingJob('chosen@1');
    assert.deepEqual(p.link.of(TASKS.transcodeFiles), [], 'the chosen node has no free slot; the other is not used');
    p.commands.setState(busy.commandId, 'done');
    p.queue.pump();
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => [s.node, s.job_id]), [['chosen@1', job.id]]);
  });

  it('sends the transcode elsewhere when the chosen node is offline, and says so in the job log', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('other@1'));
    const job = p.transcodingJob('away@1');
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => [s.node, s.job_id]), [['other@1', job.id]]);
    assert.ok(p.jobs.logs(job.id).some((l) => l.level === 'warn' && l.message === 'worker away@1 is offline; the transcode goes to other@1'));
  });

  it('keeps one queue row per job: queuing again ends the earlier one', () => {
    const p = dispatchParts();
    const job = p.transcodingJob();
    p.queue.enqueue(job.id, `/raw/${job.id}`, ['/raw/x/title_t01.mkv']);
    assert.deepEqual(p.queueRows(job.id).map((r) => r.state), ['done', 'queued']);
    assert.equal(p.queue.isQueued(job.id), true);
    p.queue.close(job.id);
    assert.equal(p.queue.isQueued(job.id), false);
    p.fleet.applyStatus(onlineStatus('encoder@1'));
    p.queue.pump();
    assert.deepEqual(p.link.of(TASKS.transcodeFiles), [], 'a closed transcode is never handed out');
  });

  it('finds a job\'s queue rows by its index, not by reading the whole queue', () => {
    const p = dispatchParts();
    // The statements that look rows up by job: ending the open ones before queueing, the check, the requeue.
    for (const sql of [
      `UPDATE transcode_queue SET state = 'done' WHERE job_id = ? AND state != 'done'`,
      `SELECT id FROM transcode_queue WHERE job_id = ? AND state = 'queued'`,
      `UPDATE transcode_queue SET state = 'queued', assigned_node = NULL, preferred_node = NULL WHERE job_id = ? AND state = 'assigned'`,
    ]) {
      const plan = p.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('job') as { detail: string }[];
      assert.ok(plan.some((row) => /USING (COVERING )?INDEX transcode_queue_job/.test(row.detail)), `${sql}: ${plan.map((row) => row.detail).join('; ')}`);
    }
  });

  it('counts the taken slots from the open commands\' index, however many finished ones the week kept', () => {
    const p = dispatchParts();
    const source = (p.commands['stmts'] as { slotsByNode: { source: string } }).slotsByNode.source;
    const plan = p.db.prepare(`EXPLAIN QUERY PLAN ${source}`).all() as { detail: string }[];
    assert.ok(plan.some((row) => /USING (COVERING )?INDEX commands_open/.test(row.detail)), `${source}: ${plan.map((row) => row.detail).join('; ')}`);
    // And it counts right: a finished command and an encoded one hold no slot, an ending one is counted as ending.
    p.fleet.applyStatus(onlineStatus('encoder@1', { slots: 4 }));
    const [a, b, c] = [p.transcodingJob(), p.transcodingJob(), p.transcodingJob()];
    const ids = p.link.of(TASKS.transcodeFiles).map((s) => ({ job: s.job_id, id: s.id }));
    const idOf = (job: string): string => ids.find((x) => x.job === job)!.id;
    p.commands.setState(idOf(a.id), 'done');
    p.commands.setEncoded(idOf(b.id), true);
    p.commands.setEnding(idOf(c.id));
    assert.deepEqual(p.commands.slotCountsByNode(), [{ node: 'encoder@1', n: 1, ending: 1 }]);
  });

  it('puts a transcode of a lost worker back into the shared queue without its preference', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('chosen@1'));
    const job = p.transcodingJob('chosen@1');
    assert.equal(p.jobs.get(job.id)?.transcode_node, 'chosen@1');
    p.fleet.markOffline('chosen@1');
    p.queue.requeue(job.id);
    assert.deepEqual(p.queueRows(job.id), [{ state: 'queued', assigned_node: null, preferred_node: null }]);
    assert.equal(p.jobs.get(job.id)?.transcode_node, null);
    p.fleet.applyStatus(onlineStatus('spare@1'));
    p.queue.pump();
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => s.node), ['chosen@1', 'spare@1']);
    const [first, redo] = p.link.sent.filter((s) => s.cmd.task === TASKS.transcodeFiles).map((s) => (s.cmd.args as { redone?: boolean }).redone);
    assert.deepEqual([first, redo], [undefined, true], 'the redone transcode never joins the title\'s folder, where the lost worker\'s output may be');
  });

  it('reads the queue past a page of transcodes waiting for a busy chosen node, and keeps the order of rows of one millisecond', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('chosen@1', { slots: 1 }));
    p.rippingJob('chosen@1');
    const waiting = Array.from({ length: 150 }, () => p.transcodingJob('chosen@1'));
    assert.deepEqual(p.link.of(TASKS.transcodeFiles), [], 'the chosen node is busy');
    const free = Array.from({ length: 3 }, () => p.transcodingJob());
    // All queued rows get the same created_at: the rowid keeps them in the order they came.
    p.db.prepare(`UPDATE transcode_queue SET created_at = '2024-01-01T00:00:00.000Z'`).run();
    p.fleet.applyStatus(onlineStatus('spare@1', { slots: 2 }));
    p.queue.pump();
    assert.deepEqual(
      p.link.of(TASKS.transcodeFiles).map((s) => [s.node, s.job_id]),
      [
        ['spare@1', free[0].id],
        ['spare@1', free[1].id],
      ],
      'the free worker takes the oldest two not bound to the busy node, behind 150 that wait',
    );
    assert.equal(p.queue.isQueued(free[2].id), true);
    assert.ok(waiting.every((j) => p.queue.isQueued(j.id)));
  });

  it('counts each worker on its own: one holding more than its slots does not hide another one\'s free slot', () => {
    const p = dispatchParts();
    p.fleet.applyStatus(onlineStatus('over@1', { slots: 1 }));
    p.rippingJob('over@1');
    p.rippingJob('over@1');
    p.fleet.applyStatus(onlineStatus('free@1', { slots: 1 }));
    const job = p.transcodingJob();
    assert.deepEqual(p.link.of(TASKS.transcodeFiles).map((s) => [s.node, s.job_id]), [['free@1', job.id]]);
  });

  it('builds the transcode arguments from the job and the settings', () => {
    const p = dispatchParts();
    p.settings.set({ keepOriginal: true, audioLanguages: ['deu'] });
    p.fleet.applyStatus(onlineStatus('encoder@1'));
    const job = p.transcodingJob();
    const cmd = p.link.sent.find((s) => s.cmd.task === TASKS.transcodeFiles)?.cmd;
    assert.ok(cmd && cmd.task === TASKS.transcodeFiles);
    assert.equal(cmd.job_id, job.id);
    assert.equal('job_id' in cmd.args, false, 'the job id travels once, beside the args');
    assert.equal(cmd.args.raw_dir, `/raw/${job.id}`);
    assert.deepEqual(cmd.args.files, [`/raw/${job.id}/title_t00.mkv`]);
    assert.equal(cmd.args.target_dir, '/media/movies');
    assert.equal(cmd.args.title, job.title);
    assert.equal(cmd.args.keep_original, true);
    assert.deepEqual(cmd.args.audio_languages, ['deu']);
  });
});

describe('rolesOf: the role of each file to transcode, from the titles the rip reported', () => {
  const main: TitleRole = { role: 'main_movie', name: '2001: A Space Odyssey' };
  const trailer: TitleRole = { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null };
  const ripped = (file: string, role: TitleRole | null, number = 0): RippedTitle => ({ number, file, source_file: null, segment_map: null, seconds: 60, size_bytes: 1, role });

  it('gives each file the role of its title, by file, in the order of the files', () => {
    const titles = [ripped('/raw/j/a_t00.mkv', main, 0), ripped('/raw/j/a_t07.mkv', trailer, 7)];
    assert.deepEqual(rolesOf(titles, ['/raw/j/a_t07.mkv', '/raw/j/a_t00.mkv']), [trailer, main]);
  });

  it('gives null to a file without a role or without a title', () => {
    const titles = [ripped('/raw/j/a_t00.mkv', main), ripped('/raw/j/a_t03.mkv', null, 3)];
    assert.deepEqual(rolesOf(titles, ['/raw/j/a_t00.mkv', '/raw/j/a_t03.mkv', '/raw/j/other.mkv']), [main, null, null]);
  });

  it('is null when the rip reported no titles, or none of these files has a role', () => {
    assert.equal(rolesOf(undefined, ['/raw/j/a.mkv']), null);
    assert.equal(rolesOf([], ['/raw/j/a.mkv']), null);
    assert.equal(rolesOf([ripped('/raw/j/a.mkv', null)], ['/raw/j/a.mkv']), null);
    assert.equal(rolesOf([ripped('/raw/j/a.mkv', main)], ['/raw/j/b.mkv']), null);
  });
});

describe('TranscodeQueue: the roles of a recognised disc in the transcode arguments', () => {
  const main: TitleRole = { role: 'main_movie', name: '2001: A Space Odyssey' };
  const trailer: TitleRole = { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null };

  function queuedWith(mediaServerType: string, rippedTitles: RippedTitle[] | undefined, files: string[]) {
    const p = dispatchParts();
    p.settings.set({ mediaServerType });
    p.fleet.applyStatus(onlineStatus('encoder@1'));
    const id = randomUUID();
    p.jobs.create({ id, title: '2001: A Space Odyssey', target_dir: '/media/movies', device: 'dev', node: 'ripper@1', meta: rippedTitles ? { ripped_titles: rippedTitles } : {} });
    p.jobs.move(id, 'transcoding');
    p.queue.enqueue(id, `/raw/${id}`, files);
    const cmd = p.link.sent.find((s) => s.cmd.task === TASKS.transcodeFiles)?.cmd;
    assert.ok(cmd && cmd.task === TASKS.transcodeFiles);
    return cmd.args;
  }

  it('sends each file\'s role, and extras by kind for Jellyfin and Plex but not for Kodi', () => {
    const files = ['/raw/j/a_t00.mkv', '/raw/j/a_t07.mkv'];
    const titles: RippedTitle[] = [
      { number: 0, file: files[0], source_file: '01', segment_map: '1-19,20-35', seconds: 8904, size_bytes: 6858530816, role: main },
      { number: 7, file: files[1], source_file: '08', segment_map: '1', seconds: 111, size_bytes: 73377792, role: trailer },
    ];
    const jellyfin = queuedWith('jellyfin', titles, files);
    assert.deepEqual(jellyfin.titles, [main, trailer]);
    assert.deepEqual([jellyfin.extras_folder, jellyfin.extras_by_kind], ['Extras', true]);
    const plex = queuedWith('plex', titles, files);
    assert.deepEqual([plex.extras_folder, plex.extras_by_kind], ['Other', true]);
    const kodi = queuedWith('kodi', titles, files);
    assert.deepEqual([kodi.extras_folder, kodi.extras_by_kind], ['Extras', false]);
    assert.deepEqual(kodi.titles, [main, trailer]);
  });

  it('sends no roles for a disc nobody recognised', () => {
    assert.equal(queuedWith('jellyfin', undefined, ['/raw/j/a_t00.mkv']).titles, null);
  });
});

describe('mainFileOf: the file of the main feature the rip chose by evidence', () => {
  const ripped = (file: string, number: number, main?: boolean): RippedTitle => ({ number, file, source_file: null, segment_map: null, seconds: 60, size_bytes: 1, role: null, ...(main ? { main_feature: true } : {}) });

  it('finds its place among the files to transcode, and is null without one', () => {
    const titles = [ripped('/raw/j/a_t02.mkv', 2), ripped('/raw/j/a_t07.mkv', 7, true)];
    assert.equal(mainFileOf(titles, ['/raw/j/a_t02.mkv', '/raw/j/a_t07.mkv']), 1);
    assert.equal(mainFileOf(titles, ['/raw/j/a_t02.mkv']), null, 'its file is not among them');
    assert.equal(mainFileOf([ripped('/raw/j/a.mkv', 0)], ['/raw/j/a.mkv']), null);
    assert.equal(mainFileOf(undefined, ['/raw/j/a.mkv']), null);
  });
});

describe('TranscodeQueue: the household policy for commentary and audio description', () => {
  function queued(settings: { keepCommentary?: boolean; keepAudioDescription?: boolean }) {
    const p = dispatchParts();
    p.settings.set(settings);
    p.fleet.applyStatus(onlineStatus('encoder@1'));
    const id = randomUUID();
    p.jobs.create({ id, title: 'Nordlicht', target_dir: '/media/movies', device: 'dev', node: 'ripper@1', meta: {} });
    p.jobs.move(id, 'transcoding');
    p.queue.enqueue(id, `/raw/${id}`, ['/raw/j/title_t00.mkv']);
    const cmd = p.link.sent.find((s) => s.cmd.task === TASKS.transcodeFiles)?.cmd;
    assert.ok(cmd && cmd.task === TASKS.transcodeFiles);
    return cmd.args.audio;
  }

  it('leaves commentary and audio description out by default and keeps them when the settings say so', () => {
    const plain = queued({});
    assert.equal(plain?.keep_commentary, false);
    assert.equal(plain?.keep_audio_description, false);
    const both = queued({ keepCommentary: true, keepAudioDescription: true });
    assert.equal(both?.keep_commentary, true);
    assert.equal(both?.keep_audio_description, true);
  });
});
