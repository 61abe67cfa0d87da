import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, audioCdImage, startAgent, startCoordinator, stopAll, waitFor, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type JobJson, type World } from './harness.js';

interface Device { name: string; disc: { title: string; type: string; audio_tracks: number | null; already_ripped: boolean } | null }

const metaflac = (file: string, ...args: string[]): string => execFileSync('metaflac', [...args, file]).toString().trim();

describe('audio CD image (cue sheet and raw CD-DA) to FLAC', () => {
  let w: World;
  let c: CoordinatorHandle;
  let musik: AgentHandle;
  const device = 'musik-drive-musik';

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    musik = await startAgent(w, c.mqttUrl, 'musik');
  });
  after(stopAll);

  it('shows the CD with its track count and scans its tracks from the cue sheet', async () => {
    audioCdImage(musik.driveDir);
    const d = await waitFor('the CD', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device && x.disc), 30_000);
    assert.deepEqual([d.disc?.type, d.disc?.title, d.disc?.audio_tracks, d.disc?.already_ripped], ['cd', 'Ripwerk Test Tones - Sine Sampler', 3, false]);
    assert.equal((await api(c.url, 'POST', `/devices/${device}/scan-tracks`)).status, 202);
    const tracks = await waitFor('tracks', async () => {
      const r = await api<{ scanning: boolean; tracks: { number: number; seconds: number; chapters: number }[] }>(c.url, 'GET', `/devices/${device}/tracks`);
      return r.body.tracks.length ? r.body.tracks : undefined;
    });
    assert.deepEqual(tracks.map((t) => [t.number, t.seconds, t.chapters]), [[1, 5, 0], [2, 7.53, 0], [3, 3.13, 0]]);
  });

  it('rips every track to tagged FLAC in the music folder, sample-exact, without a transcode stage', async () => {
    const created = await api<JobJson>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.target_dir, path.join(w.media, 'Musik'));
    const done = await waitForStatus(c.url, created.body.id, ['completed']);
    const dir = path.join(w.media, 'Musik', 'Ripwerk Test Tones - Sine Sampler');
    assert.equal(done.output_path, dir);
    const files = fs.readdirSync(dir);
    assert.deepEqual(files, ['01 - A 440.flac', '02 - E 660.flac', '03 - C 523.flac']);
    const samples = files.map((f) => Number(metaflac(path.join(dir, f), '--show-total-samples')));
    assert.deepEqual(samples, [220500, 332220, 138180]);
    assert.equal(samples.reduce((a, b) => a + b, 0), fs.statSync(path.join(musik.driveDir, 'ejected', 'disc', 'disc.bin')).size / 4, 'every sample of the image is in the files');
    assert.equal(metaflac(path.join(dir, files[1]), '--show-tag=TITLE', '--show-tag=TRACKNUMBER', '--show-tag=ALBUM'), 'TITLE=E 660\nTRACKNUMBER=2\nALBUM=Sine Sampler');
    assert.deepEqual(fs.readdirSync(path.join(musik.driveDir, 'ejected', 'disc')).sort(), ['disc.bin', 'disc.cue'], 'the auto-eject moved sheet and audio together');
    assert.equal(done.transcode_node, null);
  });

  it('skips the same CD when it comes back with autoRipStart on', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { autoRipStart: true })).status, 200);
    for (const f of ['disc.bin', 'disc.cue']) fs.renameSync(path.join(musik.driveDir, 'ejected', 'disc', f), path.join(musik.driveDir, f));
    const d = await waitFor('the CD back', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device && x.disc), 30_000);
    assert.equal(d.disc?.already_ripped, true);
    await waitFor('the skip', async () => (await api<{ message: string }[]>(c.url, 'GET', '/logs?limit=200')).body.find((l) => /automatic rip skipped: "Ripwerk Test Tones - Sine Sampler" was ripped before/.test(l.message)));
    assert.equal((await api<JobJson[]>(c.url, 'GET', '/jobs')).body.length, 1);
  });
});
