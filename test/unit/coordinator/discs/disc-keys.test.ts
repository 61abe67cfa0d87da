/**
 * Issue 36: what the coordinator remembers of a disc hangs on its content identity. Two discs of a
 * box set share label and size (so their label fingerprint) but not their ids: a record of one is
 * never one of the other, except records written before content ids (keys without a colon), which
 * are found through the label fingerprint. DiscInfo objects are built here directly, as new agents
 * send them (fingerprint `dvd:…`, label_fingerprint, ids) and as older agents do (fingerprint only).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import type { DiscIdentity, DiscLookup } from '../../../../coordinator/metadata/disc-identity.js';
import { Prescan } from '../../../../coordinator/discs/prescan.js';
import { DiscWatch } from '../../../../coordinator/discs/disc-watch.js';
import { applyIdentityToJobs } from '../../../../coordinator/discs/identity-jobs.js';
import { createRipJob, type RipJobDeps, type RipRequest } from '../../../../coordinator/discs/rip-jobs.js';
import { JobsStore, type JobRow } from '../../../../coordinator/jobs/jobs-store.js';
import { SettingsStore } from '../../../../coordinator/system/settings-store.js';
import { PosterCache } from '../../../../coordinator/library/poster-cache.js';
import { Fleet, type DeviceEntry } from '../../../../coordinator/workers/fleet.js';
import type { JobMeta } from '../../../../shared/api-types.js';
import type { CoordinatorConfig } from '../../../../shared/config.js';
import { Logger } from '../../../../shared/log.js';
import type { AgentStatus, DiscIds, DiscInfo, DriveState, RipArgs } from '../../../../shared/protocol.js';
import { commandSchema } from '../../../../shared/protocol-schemas.js';
import { HttpError } from '../../../../coordinator/http/errors.js';
import { applyMigrations, openDatabase, type Db } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-disc-keys-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const dbFile = () => path.join(root, `k-${++n}.sqlite`);
const db = () => openDatabase(dbFile(), coordinatorMigrations);
const quiet = () => new Logger('t', true);

/** label+size of both box-set discs: what their fingerprint was before content ids. */
const LABEL_FP = 'd94b641ab4b8f509';

function ids(dvd: string): DiscIds {
  return { dvd_disc_id: dvd, aacs_disc_id: null, content_hash: `${dvd}HASH`, file_fingerprint: null };
}

/** A box-set disc as a new agent reports it: identity from its DVD disc id, same label and size as its twin. */
function boxDisc(dvdId: string, extra: Partial<DiscInfo> = {}): DiscInfo {
  return { label: 'BOX_SET', title: 'Box Set', year: null, type: 'dvd', size_bytes: 8_000_000_000, fingerprint: `dvd:${dvdId}`, label_fingerprint: LABEL_FP, ids: ids(dvdId), source: '/dev/sr0', audio_tracks: null, ...extra };
}

/** The same disc as an older agent reports it: fingerprint = label+size, no ids, no label_fingerprint. */
function olderAgentDisc(): DiscInfo {
  return { label: 'BOX_SET', title: 'Box Set', year: null, type: 'dvd', size_bytes: 8_000_000_000, fingerprint: LABEL_FP, source: '/dev/sr0', audio_tracks: null };
}

const disc1 = boxDisc('AAA');
const disc2 = boxDisc('BBB');

/** A chain that names each disc by its identity, confidently (so its answer is cached), counting its calls. */
function chain(): DiscLookup & { calls: number } {
  return {
    calls: 0,
    async identify(d: DiscInfo, label: DiscIdentity) {
      this.calls++;
      return { ...label, title: `Box Set (${d.fingerprint})`, confidence: 0.95, source: 'tmdb' };
    },
  };
}

const override = (title: string): DiscIdentity => ({ title, year: 2001, confidence: 1, poster: null, kind: 'movie', season: null, source: 'override' });

function watch(d: Db, startRip: (req: RipRequest) => Promise<JobRow> = () => Promise.reject(new Error('no rip here'))): DiscWatch {
  const posters = new PosterCache(path.join(root, 'posters'), 1_000_000, 'https://img.invalid/t/p/w500', quiet());
  return new DiscWatch(d, new SettingsStore(d), new Prescan(d, chain(), quiet()), startRip, quiet(), posters);
}

function ripped(d: Db, key: string, jobId = `job-${key}`): void {
  d.prepare('INSERT INTO history (fingerprint, title, job_id, finished_at) VALUES (?, ?, ?, ?)').run(key, 'Box Set', jobId, new Date().toISOString());
}

function drive(disc: DiscInfo | null, driveName = 'sr0'): DeviceEntry {
  const state: DriveState = { node: 'keller@nas', drive: driveName, kind: 'device', path: `/dev/${driveName}`, vendor: null, model: null, status: disc ? 'disc_present' : 'no_disc', disc };
  return { name: `keller-${driveName}`, state };
}

describe('already ripped: the history by identity', () => {
  it('does not mark the second disc of a same-label pair as ripped when the first was ripped under its identity', () => {
    const d = db();
    const w = watch(d);
    ripped(d, disc1.fingerprint);
    assert.equal(w.alreadyRipped(disc1), true);
    assert.equal(w.alreadyRipped(disc2), false);
    assert.equal(w.view(disc1).already_ripped, true);
    assert.equal(w.view(disc2).already_ripped, false);
    // An older agent's sighting of either disc (label+size only) does not find an identity record.
    assert.equal(w.alreadyRipped(olderAgentDisc()), false);
  });

  it('still finds a legacy record (key without a colon) through the label fingerprint, for either twin (the documented compromise)', () => {
    const d = db();
    const w = watch(d);
    ripped(d, LABEL_FP);
    assert.equal(w.alreadyRipped(disc1), true);
    assert.equal(w.alreadyRipped(disc2), true);
    assert.equal(w.alreadyRipped(olderAgentDisc()), true);
    assert.equal(w.alreadyRipped(boxDisc('CCC', { label_fingerprint: '0123456789abcdef' })), false);
  });

  it('shows the ids and the label fingerprint on the disc object, and works for an older agent without them', () => {
    const d = db();
    const w = watch(d);
    const view = w.view(disc1);
    assert.equal(view.fingerprint, 'dvd:AAA');
    assert.equal(view.label_fingerprint, LABEL_FP);
    assert.deepEqual(view.ids, ids('AAA'));
    const old = w.view(olderAgentDisc());
    assert.equal(old.fingerprint, LABEL_FP);
    assert.equal(old.label_fingerprint, LABEL_FP);
    assert.equal(old.ids, null);
  });

  it('auto-rips the twin of a ripped disc, skips the ripped one, and takes a disc seen again after an agent update for no insert', async () => {
    const d = db();
    new SettingsStore(d).set({ autoRipStart: true });
    const started: RipRequest[] = [];
    const w = watch(d, async (req) => {
      started.push(req);
      return { id: `job-${started.length}` } as JobRow;
    });
    ripped(d, disc1.fingerprint);

    await w.onDrive(drive(disc1));
    assert.equal(started.length, 0, 'disc 1 was ripped: skipped');
    await w.onDrive(drive(null));
    await w.onDrive(drive(disc2));
    assert.equal(started.length, 1, 'disc 2 is another disc: ripped');
    assert.equal(started[0].device, 'keller-sr0');

    // A disc that sat in a drive while its agent was updated: seen first by label+size, then by identity.
    await w.onDrive(drive(olderAgentDisc(), 'sr1'));
    assert.equal(started.length, 2, 'an unripped disc inserted (older agent): ripped');
    await w.onDrive(drive(boxDisc('DDD'), 'sr1'));
    assert.equal(started.length, 2, 'the same disc now with its identity is no new insert');
    const row = d.prepare<[string], { fingerprint: string; label_fingerprint: string }>('SELECT fingerprint, label_fingerprint FROM device_discs WHERE device = ?').get('keller-sr1');
    assert.deepEqual({ ...row }, { fingerprint: 'dvd:DDD', label_fingerprint: LABEL_FP });
    // ...and back (ids not read this time): still the same disc.
    await w.onDrive(drive({ ...boxDisc('DDD'), fingerprint: LABEL_FP, ids: null }, 'sr1'));
    assert.equal(started.length, 2);
  });
});

describe('pre-scan cache and corrections by identity', () => {
  it('gives the second disc of a same-label pair neither the cached pre-scan nor the correction of the first', async () => {
    const d = db();
    const lookup = chain();
    const p = new Prescan(d, lookup, quiet());
    assert.equal((await p.run(disc1)).title, 'Box Set (dvd:AAA)');
    assert.equal((await p.run(disc2)).title, 'Box Set (dvd:BBB)');
    assert.equal(lookup.calls, 2, 'disc 2 was looked up itself, not answered from disc 1 cache');
    const keys = d.prepare<[], { fingerprint: string }>('SELECT fingerprint FROM prescan_cache ORDER BY fingerprint').all().map((r) => r.fingerprint);
    assert.deepEqual(keys, ['dvd:AAA', 'dvd:BBB']);

    p.override(disc1.fingerprint, override('Disc One'));
    // A fresh coordinator (nothing in memory): the correction is found again under the identity only.
    const fresh = new Prescan(d, chain(), quiet());
    assert.equal((await fresh.run(disc1)).title, 'Disc One');
    assert.equal(fresh.overridden(disc1)?.title, 'Disc One');
    assert.equal(fresh.overridden(disc2), null);
    assert.equal((await fresh.run(disc2)).title, 'Box Set (dvd:BBB)');
    assert.equal(fresh.overridden(olderAgentDisc()), null, 'a new record is not found through the label fingerprint');
  });

  it('finds legacy cache rows and corrections (keys without a colon) through the label fingerprint until they expire', async () => {
    let now = Date.parse('2026-11-27T10:00:00Z');
    const d = db();
    const legacy: DiscIdentity = { title: 'Legacy Cached', year: 2001, confidence: 0.95, poster: null, kind: 'movie', season: null, source: 'tmdb' };
    d.prepare('INSERT INTO prescan_cache (fingerprint, identity, confidence, expires_at) VALUES (?, ?, ?, ?)').run(LABEL_FP, JSON.stringify(legacy), 0.95, new Date(now + 3600_000).toISOString());
    const lookup = chain();
    const p = new Prescan(d, lookup, quiet(), () => now);
    assert.equal((await p.run(disc2)).title, 'Legacy Cached');
    assert.equal(lookup.calls, 0);
    now += 2 * 3600_000;
    assert.equal((await p.run(disc2)).title, 'Box Set (dvd:BBB)', 'expired: looked up, and cached under the identity');
    assert.equal(lookup.calls, 1);

    d.prepare('INSERT INTO metadata_overrides (fingerprint, identity, expires_at) VALUES (?, ?, ?)').run(LABEL_FP, JSON.stringify(override('Legacy Fix')), new Date(now + 3600_000).toISOString());
    assert.equal(p.overridden(disc1)?.title, 'Legacy Fix');
    assert.equal((await p.run(disc1)).title, 'Legacy Fix');
    // Once the disc has a correction under its identity, that one counts.
    p.override(disc1.fingerprint, override('Disc One'));
    assert.equal(p.overridden(disc1)?.title, 'Disc One');
    assert.equal(p.overridden(disc2)?.title, 'Legacy Fix', 'the twin still matches the legacy correction until it expires');
  });
});

describe('the jobs of a disc (corrections and late lookups)', () => {
  function job(jobs: JobsStore, id: string, meta: JobMeta): void {
    jobs.create({ id, title: 'Box Set', target_dir: '/media/Filme', device: 'keller-sr0', node: 'keller@nas', meta });
    jobs.move(id, 'running');
    jobs.move(id, 'completed');
  }

  it('reaches the jobs under the identity, a twin never, legacy jobs only when the identity has none', () => {
    const d = db();
    const jobs = new JobsStore(d, Date.now, quiet());
    job(jobs, 'legacy', { fingerprint: LABEL_FP });
    job(jobs, 'one', { fingerprint: 'dvd:AAA', label_fingerprint: LABEL_FP });
    assert.deepEqual(applyIdentityToJobs({ jobs }, disc1, override('Disc One'), 'override'), ['one']);
    assert.equal(jobs.get('legacy')?.meta?.metadata_source, undefined);
    assert.deepEqual(applyIdentityToJobs({ jobs }, disc2, override('Disc Two'), 'override'), ['legacy']);
    assert.deepEqual(applyIdentityToJobs({ jobs }, 'dvd:AAA', override('Disc One again'), 'override'), ['one']);
    assert.deepEqual(applyIdentityToJobs({ jobs }, boxDisc('EEE', { label_fingerprint: '0123456789abcdef' }), override('Other'), 'override'), []);
  });
});

describe('an old database upgrades and its records are still found', () => {
  it('applies migration 11 over a version-10 database with label+size records, which the new keys still find', async () => {
    const file = dbFile();
    const old = new Database(file);
    applyMigrations(old, coordinatorMigrations.filter((m) => m.version <= 10));
    assert.equal(old.pragma('user_version', { simple: true }), 10);
    const later = new Date(Date.now() + 24 * 3600_000).toISOString();
    old.prepare('INSERT INTO history (fingerprint, title, job_id, finished_at) VALUES (?, ?, ?, ?)').run(LABEL_FP, 'Box Set', 'old-job', '2026-01-01T00:00:00.000Z');
    old.prepare('INSERT INTO metadata_overrides (fingerprint, identity, expires_at) VALUES (?, ?, ?)').run(LABEL_FP, JSON.stringify(override('Old Fix')), later);
    old.prepare('INSERT INTO device_discs (device, fingerprint, seen_at) VALUES (?, ?, ?)').run('keller-sr0', LABEL_FP, '2026-01-01T00:00:00.000Z');
    old.close();

    const d = openDatabase(file, coordinatorMigrations);
    assert.equal(d.pragma('user_version', { simple: true }), Math.max(...coordinatorMigrations.map((m) => m.version)));
    const columns = d.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('device_discs')").all().map((c) => c.name);
    assert.ok(columns.includes('label_fingerprint'));

    new SettingsStore(d).set({ autoRipStart: true });
    const started: RipRequest[] = [];
    const w = watch(d, async (req) => {
      started.push(req);
      return { id: 'x' } as JobRow;
    });
    assert.equal(w.alreadyRipped(disc1), true);
    assert.equal(w.prescan.overridden(disc1)?.title, 'Old Fix');
    // The disc in the drive before the update, now seen by a new agent: no insert, and its correction shows.
    await w.onDrive(drive(disc1));
    assert.equal(started.length, 0);
    assert.equal(w.view(disc1).title, 'Old Fix');
    d.close();
  });
});

describe('a rip job keeps the identity of its disc', () => {
  const node = 'keller@nas';
  const status: AgentStatus = { node, state: 'online', host: 'nas', ip: '10.0.0.9', slots: 2, tasks: [], capabilities: { encoders: [], tools: {}, key_source: 'makemkv', schluessel: 0, rip_backend: 'makemkv', transcode_only: false, native: false } };

  function deps(d: Db): { ctx: RipJobDeps; fleet: Fleet; jobs: JobsStore } {
    const media = fs.mkdtempSync(path.join(root, 'media-'));
    const fleet = new Fleet(d);
    fleet.applyStatus(status);
    const jobs = new JobsStore(d, Date.now, quiet());
    const ctx = {
      config: { mediaRoot: media, rawDir: path.join(media, 'raw'), tmdbImageBaseUrl: 'https://img.invalid/t/p/w500' } as CoordinatorConfig,
      fleet,
      jobs,
      settings: new SettingsStore(d),
      dispatcher: { startRip: () => undefined } as unknown as RipJobDeps['dispatcher'],
      metadata: { tmdb: { configured: () => false } } as unknown as RipJobDeps['metadata'],
      discs: { identity: () => undefined, knownTitles: () => null, libraryFolder: () => null },
    } satisfies RipJobDeps;
    return { ctx, fleet, jobs };
  }

  it('writes fingerprint, label_fingerprint and disc_ids, and rips a twin in another drive while the first runs', async () => {
    const d = db();
    const { ctx, fleet } = deps(d);
    fleet.applyDrive(drive(disc1, 'sr0').state);
    fleet.applyDrive(drive(disc2, 'sr1').state);
    const first = await createRipJob(ctx, { device: 'keller-sr0', origin: 'test' });
    assert.equal(first.meta?.fingerprint, 'dvd:AAA');
    assert.equal(first.meta?.label_fingerprint, LABEL_FP);
    assert.deepEqual(first.meta?.disc_ids, ids('AAA'));
    const second = await createRipJob(ctx, { device: 'keller-sr1', origin: 'test' });
    assert.equal(second.meta?.fingerprint, 'dvd:BBB');
    // The same disc (by identity) in a third drive is refused.
    fleet.applyDrive(drive(disc1, 'sr2').state);
    await assert.rejects(createRipJob(ctx, { device: 'keller-sr2', origin: 'test' }), /already being ripped by job/);
  });

  it('refuses with 400 a rip whose command the worker would drop (a title over 1000 characters, a raw folder over 4096), making no job (issue 42)', async () => {
    const d = db();
    const { ctx, fleet, jobs } = deps(d);
    const sent: RipArgs[] = [];
    ctx.dispatcher = { startRip: (_row: JobRow, args: RipArgs) => void sent.push(args) } as unknown as RipJobDeps['dispatcher'];
    fleet.applyDrive(drive(disc1, 'sr0').state);
    const media = ctx.config.mediaRoot;
    /** A folder path under MEDIA_ROOT of exactly `length` characters. */
    const deepTo = (length: number): string => {
      let p = media;
      while (p.length + 201 < length) p += `/${'d'.repeat(200)}`;
      return `${p}/${'e'.repeat(length - p.length - 1)}`;
    };
    for (const [req, reason] of [
      [{ title: 'x'.repeat(1001) }, 'title is longer than 1000 characters, more than a worker takes'],
      [{ series: 's'.repeat(1001), season: 1 }, 'series is longer than 1000 characters, more than a worker takes'],
      [{ workDir: deepTo(4090) }, 'the job\'s raw folder (the work folder and the job id) would be longer than 4096 characters, more than a worker takes'],
      [{ targetDir: deepTo(4097) }, 'target_dir is longer than 4096 characters, more than a worker takes'],
    ] as const) {
      const err = await createRipJob(ctx, { device: 'keller-sr0', origin: 'test', ...req }).catch((e: unknown) => e);
      assert.ok(err instanceof HttpError, `${JSON.stringify(req).slice(0, 60)}: ${String(err)}`);
      assert.deepEqual([err.status, err.message], [400, reason]);
    }
    assert.deepEqual([jobs.all().length, sent.length], [0, 0], 'no job stays pending with the drive busy');
    const fits = await createRipJob(ctx, { device: 'keller-sr0', origin: 'test', title: 'x'.repeat(1000) });
    assert.equal(fits.title.length, 1000);
    const cmd = commandSchema.safeParse({ id: 'c1', task: 'worker.tasks.rip_disc', job_id: fits.id, args: sent[0] });
    assert.ok(cmd.success, 'what the coordinator sends, the worker takes');
  });

  it('keeps working for an older agent: its fingerprint is the label fingerprint, no ids', async () => {
    const d = db();
    const { ctx, fleet } = deps(d);
    fleet.applyDrive(drive(olderAgentDisc(), 'sr0').state);
    const job = await createRipJob(ctx, { device: 'keller-sr0', origin: 'test' });
    assert.equal(job.meta?.fingerprint, LABEL_FP);
    assert.equal(job.meta?.label_fingerprint, LABEL_FP);
    assert.equal(job.meta?.disc_ids, null);
  });
});

describe('a disc ripped before: when and as what (issue 38)', () => {
  it('names the latest rip of the disc as its job is named now, a twin never, a deleted job by the history', () => {
    const d = db();
    const w = watch(d);
    const jobs = new JobsStore(d, Date.now, quiet());
    assert.equal(w.view(disc1).previous_rip, null, 'never ripped');
    jobs.create({ id: 'first', title: 'Die Hard', target_dir: '/media/Filme', device: 'keller-sr0', node: 'keller@nas', meta: { fingerprint: 'dvd:AAA', year: 1988 } });
    d.prepare('INSERT INTO history (fingerprint, title, job_id, finished_at) VALUES (?, ?, ?, ?)').run('dvd:AAA', 'DIE_HARD', 'first', '2026-11-01T10:00:00.000Z');
    jobs.create({ id: 'series', title: 'Box Set', target_dir: '/media/Serien', device: 'keller-sr0', node: 'keller@nas', meta: { fingerprint: 'dvd:AAA', series: 'Box Set', season: 2 } });
    d.prepare('INSERT INTO history (fingerprint, title, job_id, finished_at) VALUES (?, ?, ?, ?)').run('dvd:AAA', 'Box Set', 'series', '2026-11-02T10:00:00.000Z');
    assert.deepEqual(w.view(disc1).previous_rip, { job_id: 'series', ripped_at: '2026-11-02T10:00:00.000Z', title: 'Box Set', year: null, series: 'Box Set', season: 2, target_dir: '/media/Serien', output_path: null });
    d.prepare('DELETE FROM history WHERE job_id = ?').run('series');
    const first = w.previousRip(disc1);
    assert.equal(first?.title, 'Die Hard', 'the job as named now, not the history title of then');
    assert.equal(first?.year, 1988);
    assert.equal(first?.series, null);
    assert.equal(w.previousRip(disc2), null, 'the twin of the same label and size');
    d.prepare('DELETE FROM jobs WHERE id = ?').run('first');
    assert.deepEqual(w.previousRip(disc1), { job_id: null, ripped_at: '2026-11-01T10:00:00.000Z', title: 'DIE_HARD', year: null, series: null, season: null, target_dir: null, output_path: null });
  });

  it('says when the disc went into the drive, for the disc in it only', async () => {
    const d = db();
    const w = watch(d);
    assert.equal(w.view(disc1, 'keller-sr0').inserted_at, null, 'not seen yet');
    const before = Date.now();
    await w.onDrive(drive(disc1));
    const at = w.view(disc1, 'keller-sr0').inserted_at;
    assert.ok(at && Date.parse(at) >= before - 1000, 'the insert time');
    assert.equal(w.view(disc2, 'keller-sr0').inserted_at, null, 'another disc than the one recorded');
    assert.equal(w.view(disc1, 'keller-sr1').inserted_at, null, 'another drive');
  });
});
