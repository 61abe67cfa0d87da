import type { Device, Disc } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURES_DIR } from '../fixtures/tools-samples.js';
import {
  api, dvdImage, insertDisc, sleep, startAgent, startCoordinator, stopAll, tempDir, waitFor, waitForStatus, world,
  type CoordinatorHandle, type Job, type World,
} from './harness.js';

interface LogEntry { level: string; message: string; job_id: string | null }

async function devices(c: CoordinatorHandle): Promise<Device[]> {
  return (await api<Device[]>(c.url, 'GET', '/devices')).body;
}

async function logs(c: CoordinatorHandle): Promise<LogEntry[]> {
  return (await api<LogEntry[]>(c.url, 'GET', '/logs?limit=500')).body;
}

async function jobs(c: CoordinatorHandle): Promise<Job[]> {
  return (await api<Job[]>(c.url, 'GET', '/jobs')).body;
}

async function discIn(c: CoordinatorHandle, device: string, fingerprint?: string): Promise<Disc> {
  return waitFor(`a disc in ${device}`, async () => {
    const d = (await devices(c)).find((x) => x.name === device);
    return d?.disc && (!fingerprint || d.disc.fingerprint === fingerprint) ? d.disc : undefined;
  }, 30_000);
}

describe('discs: pre-scan, automatic rips, one disc one job, retry-rip and scan rules', () => {
  let w: World;
  let c: CoordinatorHandle;
  let driveA: string;
  let driveB: string;

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    driveA = path.join(w.root, 'a');
    driveB = path.join(w.root, 'b');
    fs.mkdirSync(driveA);
    fs.mkdirSync(driveB);
    await startAgent(w, c.mqttUrl, 'flur', { extra: { DRIVES: `image:${driveA},image:${driveB}` } });
    const r = await api(c.url, 'PUT', '/settings', { transcodeEnabled: false, autoRipStart: true, autoEject: true });
    assert.equal(r.status, 200, r.text);
  });
  after(stopAll);

  it('rips an inserted disc into the movie folder by itself, and skips it when it comes back', async () => {
    insertDisc(driveA, dvdImage('AUTO_MOVIE_2019', [6]));
    const started = await waitFor('an automatic job on flur-a', async () => (await jobs(c)).find((j) => j.device === 'flur-a'));
    assert.equal(started.title, 'Auto Movie');
    assert.equal(started.meta?.year, 2019);
    assert.equal(started.target_dir, path.join(w.media, 'Filme'));
    const done = await waitForStatus(c.url, started.id, ['completed']);
    assert.equal(done.output_path, path.join(w.media, 'Filme', 'Auto Movie (2019)'));
    const lines = (await logs(c)).map((l) => l.message);
    assert.ok(lines.some((m) => /device flur-a: pre-scan: "Auto Movie" \(2019\), unknown, confidence 0\.30 from none, dvd/.test(m)), lines.join('\n'));
    assert.ok(lines.some((m) => m.includes(`automatic rip started as job ${started.id}`)));

    // Auto-eject moved the image aside; putting it back is the same disc again.
    const ejected = path.join(driveA, 'ejected', 'AUTO_MOVIE_2019.iso');
    await waitFor('the image ejected', async () => fs.existsSync(ejected));
    await waitFor('flur-a empty', async () => (await devices(c)).find((d) => d.name === 'flur-a' && !d.disc));
    fs.renameSync(ejected, path.join(driveA, 'AUTO_MOVIE_2019.iso'));
    const disc = await discIn(c, 'flur-a');
    assert.equal(disc.already_ripped, true);
    assert.equal(disc.year, 2019);
    assert.equal(disc.confidence, 0.3, 'no database knows it: unknown, 0.3');
    await waitFor('the skip in the log', async () => (await logs(c)).find((l) => /flur-a: automatic rip skipped: "Auto Movie" was ripped before/.test(l.message)));
    await sleep(3500); // one more drive poll: still no second job
    assert.equal((await jobs(c)).filter((j) => j.device === 'flur-a').length, 1);
    fs.rmSync(path.join(driveA, 'AUTO_MOVIE_2019.iso'));
    await waitFor('flur-a empty', async () => (await devices(c)).find((d) => d.name === 'flur-a' && !d.disc));
  });

  it('starts one job when the same disc appears in two drives at the same moment', async () => {
    const iso = dvdImage('TWIN_DISC', [6]);
    insertDisc(driveA, iso);
    insertDisc(driveB, iso);
    const first = await waitFor('an automatic job for the twin disc', async () => (await jobs(c)).find((j) => j.title === 'Twin Disc'));
    await waitForStatus(c.url, first.id, ['completed']);
    await waitFor('the other drive refused or skipped', async () =>
      (await logs(c)).find((l) => /automatic rip (not started: this disc is already being ripped|skipped: "Twin Disc" was ripped before)/.test(l.message)),
    );
    assert.equal((await jobs(c)).filter((j) => j.title === 'Twin Disc').length, 1);
    for (const dir of [driveA, driveB]) fs.rmSync(path.join(dir, 'TWIN_DISC.iso'), { force: true });
    await waitFor('both drives empty', async () => (await devices(c)).every((d) => !d.disc) || undefined);
  });

  it('sends a disc whose label names a season to the series folder', async () => {
    insertDisc(driveB, dvdImage('GARDEN_SHOW_S02D01', [6]));
    const started = await waitFor('an automatic series job', async () => (await jobs(c)).find((j) => j.device === 'flur-b' && j.meta?.series === 'Garden Show'));
    assert.equal(started.meta?.season, 2);
    assert.equal(started.target_dir, path.join(w.media, 'Serien'));
    const done = await waitForStatus(c.url, started.id, ['completed']);
    assert.equal(done.output_path, path.join(w.media, 'Serien', 'Garden Show', 'Season 02'));
    await waitFor('flur-b empty after the auto-eject', async () => (await devices(c)).find((d) => d.name === 'flur-b' && !d.disc));
  });

  it('retries a rip only with the disc of the job in the drive', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { autoRipStart: false })).status, 200);
    insertDisc(driveA, dvdImage('RETRY_ME', [6]));
    await discIn(c, 'flur-a');
    const created = await api<Job>(c.url, 'POST', '/jobs', { device: 'flur-a', titles: [9] });
    assert.equal(created.status, 201, created.text);
    const failed = await waitForStatus(c.url, created.body.id, ['failed']);
    assert.match(failed.error ?? '', /the disc has no title 9/);

    fs.rmSync(path.join(driveA, 'RETRY_ME.iso'));
    await waitFor('flur-a empty', async () => (await devices(c)).find((d) => d.name === 'flur-a' && !d.disc));
    const none = await api(c.url, 'POST', `/jobs/${created.body.id}/retry-rip`);
    assert.equal(none.status, 409);
    assert.match(none.text, /there is no disc in flur-a: insert the disc of this job/);

    insertDisc(driveA, dvdImage('OTHER_DISC', [6]));
    await discIn(c, 'flur-a');
    const other = await api(c.url, 'POST', `/jobs/${created.body.id}/retry-rip`);
    assert.equal(other.status, 409);
    assert.match(other.text, /the disc in flur-a \("Other Disc"\) is not the disc of this job/);
    fs.rmSync(path.join(driveA, 'OTHER_DISC.iso'));
    await waitFor('flur-a empty', async () => (await devices(c)).find((d) => d.name === 'flur-a' && !d.disc));

    insertDisc(driveA, dvdImage('RETRY_ME', [6]));
    await discIn(c, 'flur-a');
    const retried = await api<Job>(c.url, 'POST', `/jobs/${created.body.id}/retry-rip`);
    assert.equal(retried.status, 201, retried.text);
    assert.equal(retried.body.meta?.retry_of, created.body.id);
    // The same title selection fails the same honest way: nothing was guessed.
    assert.match((await waitForStatus(c.url, retried.body.id, ['failed'])).error ?? '', /no title 9/);
  });

  it('stores the title scan, and a scan on an offline worker is refused with the reason', async () => {
    const scan = await api<{ scanning: boolean }>(c.url, 'POST', '/devices/flur-a/scan-tracks');
    assert.equal(scan.status, 202, scan.text);
    const stored = await waitFor('the scan result', async () => {
      const r = await api<{ scanning: boolean; error: string | null; tracks: { number: number; seconds: number; chapters: number }[] }>(c.url, 'GET', '/devices/flur-a/tracks');
      return r.body.scanning ? undefined : r.body;
    });
    assert.equal(stored.error, null);
    assert.deepEqual(stored.tracks.map((t) => [t.number, t.seconds]), [[1, 6]]);

    const dach = await startAgent(w, c.mqttUrl, 'dach');
    insertDisc(dach.driveDir, dvdImage('ROOF_DISC', [6]));
    const device = 'dach-drive-dach';
    await discIn(c, device);
    await dach.proc.kill('SIGKILL');
    await waitFor('dach offline', async () => {
      const r = await api(c.url, 'POST', `/devices/${device}/scan-tracks`);
      return r.status === 503 ? r : undefined;
    }, 30_000).then((r) => assert.match(r.text, /the worker dach@\S+ is offline/));
  });

  it('fails a rip at once with the reason when the worker cannot rip (no ripper on the host)', async () => {
    const bare = await startAgent(w, c.mqttUrl, 'bare', { extra: { PATH: tempDir('ripwerk-empty-path-') } });
    insertDisc(bare.driveDir, dvdImage('BARE_DISC', [6]));
    const device = 'bare-drive-bare';
    await discIn(c, device);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    const failed = await waitForStatus(c.url, created.body.id, ['failed'], 20_000);
    assert.equal(failed.error, 'the worker bare has no ripper (a transcode-only or native worker cannot rip): install MakeMKV, or lsdvd, dvdbackup and ffmpeg for unencrypted DVDs');
    assert.ok((await logs(c)).some((l) => l.job_id === created.body.id && /worker bare@\S+ refused:/.test(l.message)));
    await bare.proc.kill('SIGTERM');
  });

  it('shows a Blu-ray image with the clear-text title of its bdmt_eng.xml', async () => {
    const tree = path.join(tempDir('ripwerk-bd-'), 'tree');
    fs.mkdirSync(path.join(tree, 'BDMV', 'META', 'DL'), { recursive: true });
    fs.mkdirSync(path.join(tree, 'BDMV', 'PLAYLIST'));
    fs.writeFileSync(path.join(tree, 'BDMV', 'index.bdmv'), Buffer.concat([Buffer.from('INDX0200'), Buffer.alloc(32)]));
    fs.copyFileSync(path.join(FIXTURES_DIR, 'samples', 'disc-bdmt_eng.xml'), path.join(tree, 'BDMV', 'META', 'DL', 'bdmt_eng.xml'));
    const hidden = path.join(driveB, '.MY_MOVIE_2003_D1.iso');
    execFileSync('genisoimage', ['-quiet', '-udf', '-V', 'MY_MOVIE_2003_D1', '-o', hidden, tree]);
    fs.renameSync(hidden, path.join(driveB, 'MY_MOVIE_2003_D1.iso'));
    const disc = await discIn(c, 'flur-b');
    assert.equal(disc.type, 'bluray');
    assert.equal(disc.label, 'MY_MOVIE_2003_D1');
    assert.equal(disc.title, 'My Movie (2003) - Disc 1');
    assert.equal(disc.year, 2003);
    fs.rmSync(path.join(driveB, 'MY_MOVIE_2003_D1.iso'));
    await waitFor('flur-b empty', async () => (await devices(c)).find((d) => d.name === 'flur-b' && !d.disc));
  });

  it('shows the drives again after a restart of the coordinator with its embedded broker', async () => {
    const prescans = async (): Promise<number> => (await logs(c)).filter((l) => /device flur-a: pre-scan: "Retry Me"/.test(l.message)).length;
    const before = await prescans();
    await c.proc.kill('SIGTERM');
    // A title scan that was running when the coordinator stopped (its answer can never arrive).
    const db = new Database(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'));
    db.prepare(`INSERT OR REPLACE INTO settings (key, value) VALUES ('tracks:flur-a', ?)`).run(JSON.stringify({ device: 'flur-a', scanned_at: null, tracks: [], scanning: true, error: null }));
    db.close();
    c = await startCoordinator(w, {}, { port: c.port, mqttPort: c.mqttPort });
    const back = await waitFor('flur drives listed again', async () => {
      const list = await devices(c);
      return list.some((d) => d.name === 'flur-a' && d.disc) && list.some((d) => d.name === 'flur-b') ? list : undefined;
    }, 30_000);
    const a = back.find((d) => d.name === 'flur-a');
    const tracks = await api<{ scanning: boolean; error: string | null }>(c.url, 'GET', '/devices/flur-a/tracks');
    assert.equal(tracks.body.scanning, false);
    assert.equal(tracks.body.error, 'the coordinator restarted during the scan: start it again');
    assert.equal(a?.disc?.title, 'Retry Me');
    // Not a new insert: no automatic rip even if it were on, and the pre-scan ran again.
    await waitFor('the pre-scan after the restart', async () => (await prescans()) > before);
    assert.equal((await jobs(c)).filter((j) => j.title === 'Retry Me').length, 2);
  });
});
