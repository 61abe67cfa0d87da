/**
 * Issue 40: box-set sessions in SQLite: which session a disc joins, the episode numbers its rip gets,
 * the next-disc notice, a disc out of order waiting for its place, the end by hand naming the missing
 * disc, and all of it surviving a restart (a new SessionBook on the same database file).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { JobsStore, type JobRow } from '../../../../coordinator/jobs/jobs-store.js';
import type { DiscIdentity } from '../../../../coordinator/metadata/disc-identity.js';
import { SessionBook, type SessionDiscFacts, type SessionNotice } from '../../../../coordinator/sessions/session-book.js';
import { SessionStore } from '../../../../coordinator/sessions/session-store.js';
import { Logger } from '../../../../shared/log.js';
import type { AlbumInfo } from '../../../../shared/protocol.js';
import { openDatabase } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-sessions-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;

function setup(file = path.join(root, `s-${++n}.sqlite`)) {
  const db = openDatabase(file, coordinatorMigrations);
  const jobs = new JobsStore(db, Date.now, new Logger('t', true));
  const book = new SessionBook(new SessionStore(db), jobs, new Logger('t', true));
  const notices: SessionNotice[] = [];
  const queued: string[] = [];
  book.onNotice = (x) => notices.push(x);
  book.enqueue = (jobId) => queued.push(jobId);
  return { db, jobs, book, notices, queued, file };
}

const label = (series: string, season: number, disc: number | null): DiscIdentity => ({ title: series, year: null, confidence: 0, poster: null, kind: 'series', season, source: 'label', disc_number: disc });
const facts = (over: Partial<SessionDiscFacts>): SessionDiscFacts => ({ device: 'nas-sr0', disc_type: 'dvd', identity: undefined, label: '', album: null, series: null, season: null, ...over });

/** Makes the job of a disc that matched, joins it, and moves it to transcoding with its raw files (what rip_done does before the session is asked). */
function ripJob(t: ReturnType<typeof setup>, f: SessionDiscFacts, files: number): JobRow {
  const match = t.book.match(f);
  assert.ok(match, 'the disc joins a session');
  const id = `job-${++n}`;
  const row = t.jobs.create({ id, title: 'Show', target_dir: '/media/Serien', device: f.device, node: 'nas', meta: {} });
  t.jobs.update(id, {}, { session_id: t.book.join(match, row) });
  const raw = Array.from({ length: files }, (_, i) => `/raw/${id}/t0${i}.mkv`);
  t.jobs.move(id, 'transcoding', { raw_path: `/raw/${id}` }, { raw_files: raw });
  return t.jobs.get(id) as JobRow;
}
const ripped = (t: ReturnType<typeof setup>, job: JobRow): boolean => t.book.ripDone(job, job.meta?.raw_files ?? [], undefined);

describe('a three-disc series session', () => {
  it('started in the dialog: discs in order get E01-E09, each asks for the next, the last ends the session', () => {
    const t = setup();
    const s = t.book.start({ kind: 'series', series: 'Show', season: 1, disc_total: 3, drive: 'nas-sr0' });
    const d1 = ripJob(t, facts({}), 3);
    assert.equal(ripped(t, d1), true);
    assert.equal(t.jobs.get(d1.id)?.meta?.first_episode, 1);
    assert.equal(t.notices.at(-1)?.text, 'insert disc 2 of 3 of "Show", season 1');
    const d2 = ripJob(t, facts({}), 3);
    assert.equal(ripped(t, d2), true);
    assert.equal(t.jobs.get(d2.id)?.meta?.first_episode, 4);
    assert.equal(t.notices.at(-1)?.text, 'insert disc 3 of 3 of "Show", season 1');
    const d3 = ripJob(t, facts({}), 3);
    assert.equal(ripped(t, d3), true);
    assert.equal(t.jobs.get(d3.id)?.meta?.first_episode, 7);
    const view = t.book.get(s.id);
    assert.equal(view?.state, 'ended');
    assert.deepEqual(view?.discs.map((d) => [d.episode_first, d.episode_last]), [[1, 3], [4, 6], [7, 9]]);
    assert.equal(t.notices.at(-1)?.event, 'session_ended');
    assert.equal(t.notices.at(-1)?.text, 'session "Show", season 1 ended: 3 of 3 disc(s) done');
  });

  it('recognised from the label SHOW_S1_D<n>: disc 3 before disc 2 waits, and is numbered and queued when disc 2 is ripped', () => {
    const t = setup();
    const d1 = ripJob(t, facts({ identity: label('Show', 1, 1) }), 3);
    assert.equal(ripped(t, d1), true);
    const d3 = ripJob(t, facts({ identity: label('Show', 1, 3), device: 'nas-sr1' }), 3);
    assert.equal(ripped(t, d3), false, 'disc 3 waits for disc 2');
    assert.deepEqual(t.queued, []);
    assert.match(t.jobs.logs(d3.id).map((l) => l.message).join('\n'), /waits until the discs before it/);
    assert.equal(t.notices.at(-1)?.text, 'insert disc 2 of "Show", season 1');
    const d2 = ripJob(t, facts({ identity: label('Show', 1, 2) }), 3);
    assert.equal(ripped(t, d2), true);
    assert.equal(t.jobs.get(d2.id)?.meta?.first_episode, 4);
    assert.equal(t.jobs.get(d3.id)?.meta?.first_episode, 7);
    assert.deepEqual(t.queued, [d3.id], 'the waiting disc goes into the queue');
    const view = t.book.list()[0];
    assert.equal(view.origin, 'label');
    assert.deepEqual(view.done, [1, 2, 3]);
  });

  it('survives a restart and, ended by hand, names the skipped disc and releases the waiting one', () => {
    const t = setup();
    const s = t.book.start({ kind: 'series', series: 'Show', season: 2, disc_total: 3, drive: null });
    const d1 = ripJob(t, facts({ series: 'Show', season: 2 }), 3);
    ripped(t, d1);
    const d3 = ripJob(t, facts({ identity: label('Show', 2, 3) }), 3);
    assert.equal(ripped(t, d3), false);
    t.db.close();
    const again = setup(t.file);
    const view = again.book.get(s.id);
    assert.equal(view?.state, 'open');
    assert.deepEqual(view?.missing, [2]);
    assert.deepEqual(view?.discs.find((d) => d.disc_number === 3)?.waiting, true);
    const ended = again.book.end(s.id);
    assert.equal(ended?.state, 'ended');
    assert.deepEqual(ended?.missing, [2]);
    assert.equal(again.notices.at(-1)?.text, 'session "Show", season 2 ended: 2 of 3 disc(s) done; missing: disc 2');
    assert.deepEqual(again.queued, [d3.id]);
    assert.equal(again.jobs.get(d3.id)?.meta?.first_episode, undefined, 'behind a gap no number is made up');
  });

  it('reads the disc number from the volume label when the identity has none (the display title "Hof S01" drops "_D3")', () => {
    const t = setup();
    const none: DiscIdentity = { title: 'Hof', year: null, confidence: 0.3, poster: null, kind: 'unknown', season: 1, source: 'none' };
    const m = t.book.match(facts({ identity: none, label: 'HOF_S01_D3' }));
    assert.equal(m?.disc_number, 3);
    assert.equal(m?.start?.origin, 'label');
    assert.equal(m?.series, 'Hof');
    assert.equal(t.book.match(facts({ identity: none, label: 'HOF_S01' })), null, 'a season without a disc number starts no session');
  });

  it('a disc naming another series does not join the session of its drive; a failed disc is named as failed', () => {
    const t = setup();
    t.book.start({ kind: 'series', series: 'Show', season: 1, disc_total: 2, drive: 'nas-sr0' });
    assert.equal(t.book.match(facts({ identity: label('Other', 1, null) })), null);
    const d1 = ripJob(t, facts({}), 2);
    t.jobs.move(d1.id, 'failed', { error: 'read error' });
    t.book.jobEnded(t.jobs.get(d1.id) as JobRow);
    assert.deepEqual(t.book.list()[0].failed, [1]);
    assert.equal(t.book.match(facts({}))?.disc_number, 1, 'the failed disc’s place is free for a new try');
  });
});

describe('an album of two CDs', () => {
  const album = (disc: number): AlbumInfo => ({ artist: 'Band', album: 'Double', year: 2001, disc_number: disc, release_id: 'rel-1', tracks: [], disc_total: 2, cover_url: null, source: 'musicbrainz' });
  it('is a session by its MusicBrainz release: both discs join it, the first asks for disc 2, the second ends it', () => {
    const t = setup();
    const cd = (disc: number): JobRow => {
      const match = t.book.match(facts({ disc_type: 'cd', album: album(disc) }));
      assert.ok(match);
      const row = t.jobs.create({ id: `cd-${disc}-${++n}`, title: 'Band - Double', target_dir: '/media/Musik', device: 'nas-sr0', node: 'nas', meta: {} });
      t.book.join(match, row);
      t.jobs.move(row.id, 'completed', {});
      return t.jobs.get(row.id) as JobRow;
    };
    t.book.jobEnded(cd(1));
    assert.equal(t.notices.at(-1)?.text, 'insert disc 2 of 2 of "Band - Double"');
    t.book.jobEnded(cd(2));
    const [view] = t.book.list();
    assert.equal(view.kind, 'album');
    assert.equal(view.release, 'rel-1');
    assert.deepEqual(view.done, [1, 2]);
    assert.equal(view.state, 'ended');
    assert.equal(t.book.match(facts({ disc_type: 'cd', album: { ...album(1), disc_total: 1, release_id: 'single' } })), null, 'a single CD is no session');
  });
});
