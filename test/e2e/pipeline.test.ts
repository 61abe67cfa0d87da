import type { Device, Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CSV_BOM } from '../../coordinator/http/csv.js';
import {
  api, listedPresetHandbrake, rawGet, dvdImage, insertDisc, job, smallMkv, startAgent, startCoordinator, stopAll, waitFor, waitForDisc, waitForStatus, world,
  type AgentHandle, type CoordinatorHandle, type Job, type World,
} from './harness.js';


describe('pipeline: coordinator and two agents, both rip backends, real HandBrakeCLI', () => {
  let w: World;
  let c: CoordinatorHandle;
  let wohnzimmer: AgentHandle; // open-dvd backend (no MakeMKV on this host)
  let keller: AgentHandle; // MakeMKV backend (robot-mode stand-in)
  const iso = (): string => dvdImage('TEST_MOVIE', [12, 6]);

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    // Its HandBrakeCLI lists a preset it cannot run: the settings take it, its transcode fails (the retry test below).
    wohnzimmer = await startAgent(w, c.mqttUrl, 'wohnzimmer', { extra: { HANDBRAKE_CLI: listedPresetHandbrake('Kein Preset 9000') } });
    keller = await startAgent(w, c.mqttUrl, 'keller', { makemkv: true, extra: { FAKE_MAKEMKV_SOURCE_MKV: smallMkv(), FAKE_MAKEMKV_TITLES: '20,75,8' } });
    const r = await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' });
    assert.equal(r.status, 200);
  });
  after(stopAll);

  it('lists both workers with their backends', async () => {
    const workers = await waitFor('both workers online', async () => {
      const r = await api<Worker[]>(c.url, 'GET', '/capabilities');
      return r.body.filter((x) => x.online).length === 2 ? r.body : undefined;
    });
    const byName = Object.fromEntries(workers.map((x) => [x.name, x]));
    assert.equal(byName.wohnzimmer.rip_backend, 'open-dvd');
    assert.equal(byName.keller.rip_backend, 'makemkv');
    assert.deepEqual(byName.keller.encoders, ['software']);
    assert.equal(byName.wohnzimmer.node, wohnzimmer.node);
  });

  it('rips on one host with lsdvd/dvdbackup/ffmpeg and transcodes on the chosen other host', async () => {
    insertDisc(wohnzimmer.driveDir, iso());
    const device = await waitForDisc(c.url, wohnzimmer);
    const devices = await api<Device[]>(c.url, 'GET', '/devices');
    const d = devices.body.find((x) => x.name === device);
    assert.equal(d?.disc?.title, 'Test Movie');
    assert.equal(d?.disc?.type, 'dvd');
    assert.equal(d?.disc?.already_ripped, false);

    const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [1], transcode_node: 'keller', year: 2021 });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, 'pending');
    assert.equal(created.body.title, 'Test Movie');
    assert.deepEqual(created.body.meta?.titles, [1]);
    assert.equal(created.body.meta?.transcode_node, keller.node);
    assert.equal(created.body.meta?.work_dir, w.raw);

    const busy = await api(c.url, 'POST', '/jobs', { device });
    assert.equal(busy.status, 409);
    assert.match(busy.text, /busy with job/);

    const done = await waitForStatus(c.url, created.body.id, ['completed']);
    assert.equal(done.progress, 100);
    assert.equal(done.transcode_node, keller.node);
    assert.equal(done.node, wohnzimmer.node);
    assert.equal(done.meta?.rip_fertig, true);
    assert.equal(done.output_path, path.join(w.media, 'Filme', 'Test Movie (2021)'));
    assert.equal(done.can_retry, false);
    assert.equal(fs.existsSync(path.join(w.raw, done.id)), false, 'raw dir removed after success');
    // auto-eject (default on) moved the image out of the drive
    assert.deepEqual(fs.readdirSync(path.join(wohnzimmer.driveDir, 'ejected')), ['TEST_MOVIE.iso']);

    const files = await api<{ name: string; size: number }[]>(c.url, 'GET', `/jobs/${done.id}/files`);
    assert.equal(files.body.length, 1);
    assert.equal(files.body[0].name, 'Test Movie (2021).mkv');
    const onDisk = fs.readFileSync(path.join(done.output_path as string, files.body[0].name));
    assert.equal(files.body[0].size, onDisk.length);
    const dl = await fetch(`${c.url}/jobs/${done.id}/files/${encodeURIComponent(files.body[0].name)}`);
    assert.equal(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(onDisk), 'download is byte-identical');
    const ranged = await fetch(`${c.url}/jobs/${done.id}/files/${encodeURIComponent(files.body[0].name)}`, { headers: { Range: 'bytes=0-99' } });
    assert.equal(ranged.status, 206);
    assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(onDisk.subarray(0, 100)));

    const probe = await import('node:child_process').then((cp) => cp.execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path.join(done.output_path as string, files.body[0].name)]).toString());
    assert.ok(Math.abs(Number(probe) - 12) < 1.5, `transcoded duration ${probe} is about 12 s`);
  });

  it('rips with MakeMKV (main feature only) and transcodes on any free worker; keepOriginal moves the raw rip into Originale', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { keepOriginal: true })).status, 200);
    insertDisc(keller.driveDir, iso());
    const device = await waitForDisc(c.url, keller);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, main_feature_only: true, series: 'Test Serie', season: 2 });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed']);
    assert.equal(done.output_path, path.join(w.media, 'Serien', 'Test Serie', 'Season 02'));
    const raw = path.join(w.raw, done.id);
    const originals = path.join(w.media, 'Originale', 'Test Serie', 'Season 02', done.id);
    assert.deepEqual(fs.readdirSync(originals), ['TEST_MOVIE_t01.mkv'], 'only the longest title (75 s, number 1) was ripped, and kept under MakeMKV\'s own name in a folder named like the job');
    const kept = fs.statSync(path.join(originals, 'TEST_MOVIE_t01.mkv')).size;
    assert.ok(kept > 0);
    assert.equal(fs.existsSync(raw), false, 'the raw folder is gone once its files moved');
    assert.equal(done.can_retry, true, 'the spec: true when raw data of the job was found, and the originals are');
    // The kept originals are the job's raw data (issue 38): found, measured and removable with the job.
    const roh = await api<{ state: string; path: string | null; size_bytes: number | null }>(c.url, 'GET', `/jobs/${done.id}/rohdaten`);
    assert.deepEqual([roh.body.state, roh.body.path], ['present', originals]);
    assert.ok((roh.body.size_bytes ?? 0) >= kept, `measured ${roh.body.size_bytes} bytes, the file has ${kept}`);
    const files = await api<{ name: string }[]>(c.url, 'GET', `/jobs/${done.id}/files`);
    assert.deepEqual(files.body.map((f) => f.name), ['Test Serie - S02E01.mkv']);
    const detail = await api<{ logs: { message: string }[] }>(c.url, 'GET', `/jobs/${done.id}/detail`);
    assert.ok(detail.body.logs.some((l) => l.message.includes(`originals kept in ${originals}`)), 'the job log says where the originals went');

    const del = await api<{ deleted: string; raw_removed: string | null }>(c.url, 'DELETE', `/jobs/${done.id}?rohdaten=true`);
    assert.equal(del.status, 200, del.text);
    assert.equal(del.body.raw_removed, originals);
    assert.equal(fs.existsSync(originals), false, 'DELETE ?rohdaten=true removes the kept originals with the job');
    assert.ok(fs.existsSync(path.join(done.output_path as string, 'Test Serie - S02E01.mkv')), 'output files always remain');
    assert.equal((await api(c.url, 'GET', `/jobs/${done.id}/detail`)).status, 404);
    await api(c.url, 'PUT', '/settings', { keepOriginal: false });
  });

  it('names an invalid preset, keeps the raw data, and retries the transcode and the rip', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Kein Preset 9000' })).status, 200);
    insertDisc(wohnzimmer.driveDir, iso());
    const device = await waitForDisc(c.url, wohnzimmer);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [2], target_dir: path.join(w.media, 'Kino') });
    assert.equal(created.status, 201, created.text);
    const failed = await waitForStatus(c.url, created.body.id, ['failed']);
    assert.match(failed.error ?? '', /Kein Preset 9000/);
    assert.doesNotMatch(failed.error ?? '', /^exit code 3$/);
    assert.equal(failed.can_retry, true, 'raw data of a failed transcode is found');
    assert.ok(fs.existsSync(path.join(w.raw, failed.id, 'title_t02.mkv')));

    const norip = await api(c.url, 'POST', `/jobs/${failed.id}/retry-rip`);
    assert.equal(norip.status, 409, 'auto-eject took the disc out');
    assert.match(norip.text, /no disc in/);

    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' })).status, 200);
    const retried = await api<Job>(c.url, 'POST', `/jobs/${failed.id}/retry-transcode`);
    assert.equal(retried.status, 202, retried.text);
    assert.equal(retried.body.status, 'transcoding');
    const done = await waitForStatus(c.url, failed.id, ['completed']);
    assert.equal(done.output_path, path.join(w.media, 'Kino', 'Test Movie'));
    assert.equal(done.error, null);
    assert.equal(fs.existsSync(path.join(w.raw, failed.id)), false);
    assert.equal((await api(c.url, 'POST', `/jobs/${failed.id}/retry-transcode`)).status, 409, 'a completed job is not transcoded again');

    // retry-rip takes over title, destination and title choice into a new job
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Kein Preset 9000' })).status, 200);
    insertDisc(wohnzimmer.driveDir, iso());
    await waitForDisc(c.url, wohnzimmer);
    const second = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [2], target_dir: path.join(w.media, 'Kino') });
    const secondFailed = await waitForStatus(c.url, second.body.id, ['failed']);
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' })).status, 200);
    insertDisc(wohnzimmer.driveDir, iso());
    await waitForDisc(c.url, wohnzimmer);
    const again = await api<Job>(c.url, 'POST', `/jobs/${secondFailed.id}/retry-rip`);
    assert.equal(again.status, 201, again.text);
    assert.notEqual(again.body.id, secondFailed.id);
    assert.equal(again.body.title, secondFailed.title);
    assert.equal(again.body.target_dir, path.join(w.media, 'Kino'));
    assert.deepEqual(again.body.meta?.titles, [2]);
    const againDone = await waitForStatus(c.url, again.body.id, ['completed']);
    const movieDir = path.join(w.media, 'Kino', 'Test Movie');
    assert.equal(againDone.output_path, movieDir, 'the same title again joins its folder, nothing to tell it from the first (issue 39)');
    assert.deepEqual(fs.readdirSync(movieDir).sort(), ['Test Movie - Version 2.mkv', 'Test Movie.mkv'], 'as the next version, the first file untouched');
  });

  it('scans titles of a disc and stores them for polling', async () => {
    insertDisc(keller.driveDir, iso());
    const device = await waitForDisc(c.url, keller);
    const start = await api(c.url, 'POST', `/devices/${device}/scan-tracks`);
    assert.equal(start.status, 202);
    const tracks = await waitFor('tracks stored', async () => {
      const r = await api<{ tracks: { number: number; seconds: number; chapters: number; size_bytes: number }[] }>(c.url, 'GET', `/devices/${device}/tracks`);
      return r.body.tracks.length ? r.body.tracks : undefined;
    });
    assert.deepEqual(tracks.map((t) => t.seconds), [20, 75, 8]);
    assert.ok(tracks.every((t) => t.size_bytes > 0));
    const ej = await api(c.url, 'POST', `/devices/${device}/eject`);
    assert.equal(ej.status, 200, ej.text);
    await waitFor('disc gone', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device && d.disc === null));
  });

  it('refuses bad input with plain-text reasons and keeps what is stored', async () => {
    insertDisc(wohnzimmer.driveDir, iso());
    const device = await waitForDisc(c.url, wohnzimmer);
    const before = (await api<Job[]>(c.url, 'GET', '/jobs')).body.length;
    const cases: [unknown, number, RegExp][] = [
      [{ device, target_dir: '/etc' }, 400, /target_dir refused/],
      [{ device, target_dir: `${w.media}-x/Filme` }, 400, /target_dir refused/],
      [{ device, target_dir: `${w.media}/../x` }, 400, /\.\./],
      [{ device, work_dir: `${w.media}/a/../../b` }, 400, /work_dir refused/],
      [{ device, titles: 'all' }, 400, /titles must be an array/],
      [{ device, series: 'X' }, 400, /series and season go together/],
      [{ device, transcode_node: 'nobody' }, 400, /not a known worker/],
      [{ device: 'nope' }, 404, /no device named "nope"/],
      [{}, 400, /device is required/],
      ['[1,2]', 400, /JSON object/],
      ['{broken', 400, /not valid JSON/],
    ];
    fs.symlinkSync('/tmp', path.join(w.media, 'escape'));
    cases.push([{ device, target_dir: `${w.media}/escape/x` }, 403, /symbolic link/]);
    cases.push([{ device, titel: 'Heat' }, 400, /^unknown field "titel": POST \/jobs takes device, title, /]);
    for (const [body, status, pattern] of cases) {
      const r = await api(c.url, 'POST', '/jobs', body);
      assert.equal(r.status, status, `${JSON.stringify(body)} → ${r.status} ${r.text}`);
      assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
      assert.match(r.text, pattern);
    }
    assert.equal((await api<Job[]>(c.url, 'GET', '/jobs')).body.length, before, 'no job was created');

    const some = (await api<Job[]>(c.url, 'GET', '/jobs')).body[0];
    for (const bad of ['..', '%2E%2E', '.hidden', '%2Fetc%2Fpasswd', '..%2F..%2Fetc%2Fpasswd', '..%2F..%2F..%2F..%2Fetc%2Fpasswd']) {
      const r = await rawGet(c.url, `/jobs/${some.id}/files/${bad}`);
      assert.ok(r.status === 400 || r.status === 404, `${bad} → ${r.status}`);
      assert.doesNotMatch(r.text, /root:/);
    }
    assert.equal((await api(c.url, 'GET', '/jobs/unknown-id/detail')).status, 404);
    assert.match((await api(c.url, 'POST', `/jobs/${some.id}/cancel`)).text, /only pending, processing or transcoding/);
    assert.equal((await api(c.url, 'GET', '/nowhere')).status, 404);
    const big = await api(c.url, 'POST', '/jobs', JSON.stringify({ device, pad: 'x'.repeat(2_000_000) }));
    assert.equal(big.status, 413);
  });

  it('cancels a pending or running job and exports the list as CSV', async () => {
    const device = await waitForDisc(c.url, wohnzimmer);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [1] });
    assert.equal(created.status, 201, created.text);
    const canceled = await api<Job>(c.url, 'POST', `/jobs/${created.body.id}/cancel`);
    assert.equal(canceled.status, 200);
    assert.ok(['canceling', 'canceled'].includes(canceled.body.status));
    const final = await waitForStatus(c.url, created.body.id, ['canceled', 'completed']);
    assert.ok(['canceled', 'completed'].includes(final.status));

    const csv = await fetch(`${c.url}/jobs/export`);
    assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
    const bytes = Buffer.from(await csv.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 byte-order mark');
    const text = bytes.toString('utf8');
    assert.ok(text.startsWith(CSV_BOM));
    const lines = text.slice(1).trim().split(/\r?\n/);
    assert.equal(lines[0].split(';')[0], 'id');
    const jobs = (await api<Job[]>(c.url, 'GET', '/jobs')).body;
    assert.equal(lines.length, jobs.length + 1);
    assert.ok(lines.some((l) => l.startsWith(`${created.body.id};`)));
    const j = await job(c.url, created.body.id);
    assert.equal(j.id, created.body.id);
  });
});
