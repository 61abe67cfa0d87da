import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { api, dvdImage, fileTree, insertDisc, job, startAgent, startCoordinator, stopAll, waitForDisc, waitForStatus, world, type Job } from './harness.js';

interface LogLine { level: string; message: string }

/** Video frames of a file's first video stream (demuxed). */
function videoFrames(file: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim().replace(/,$/, ''));
}

function seconds(file: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim());
}

describe('one title on two agents (issue 41, real HandBrakeCLI)', () => {
  after(stopAll);

  it('splits a long title into chunks, both agents encode some, and the joined film has every frame of the title', async () => {
    const w = world();
    const c = await startCoordinator(w);
    // 1 minute: a 185 s title is cut into three chunks of at least 60 s (CHUNK_MIN_SECONDS).
    const set = await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30', chunkMinMinutes: 1 });
    assert.equal(set.status, 200, set.text);
    const keller = await startAgent(w, c.mqttUrl, 'keller');
    const wohnzimmer = await startAgent(w, c.mqttUrl, 'wohnzimmer', { drive: false });
    insertDisc(keller.driveDir, dvdImage('LANGER_FILM', [185]));
    const device = await waitForDisc(c.url, keller);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    // The raw title's frames, read while it is there (the transcode removes it).
    let rawFrames = 0;
    const rawFile = path.join(w.raw, created.body.id, 'title_t01.mkv');
    for (let i = 0; i < 600 && !rawFrames; i++) {
      const j = await job(c.url, created.body.id);
      if (j.status === 'transcoding' && fs.existsSync(rawFile)) rawFrames = videoFrames(rawFile);
      else if (j.status === 'completed' || j.status === 'failed') break;
      else await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(rawFrames > 4000, `the raw title has ${rawFrames} frames`);
    const done = await waitForStatus(c.url, created.body.id, ['completed', 'failed'], 240_000);
    const logs = (await api<{ logs: LogLine[] }>(c.url, 'GET', `/jobs/${done.id}/detail`)).body.logs;
    assert.equal(done.status, 'completed', `${done.error ?? ''}\n${logs.map((l) => l.message).join('\n')}`);
    assert.ok(logs.some((l) => /^title 1 \(\d+ frames\) split into 3 chunks for the free workers, led by keller@/.test(l.message)), 'the title was split');
    assert.ok(logs.some((l) => l.message === 'all 3 chunks of title 1 are encoded: ' + keller.node + ' joins them'));
    const byNode = done.meta?.chunk_frames ?? {};
    assert.deepEqual(Object.keys(byNode).sort(), [keller.node, wohnzimmer.node].sort(), 'both agents encoded chunks');
    assert.equal(Object.values(byNode).reduce((a, b) => a + b, 0), rawFrames, 'every frame encoded once');
    const film = path.join(done.output_path ?? '', 'Langer Film.mkv');
    assert.ok(fs.existsSync(film), JSON.stringify(fileTree(w.media)));
    assert.equal(videoFrames(film), rawFrames, 'the joined film has every frame of the title');
    assert.ok(Math.abs(seconds(film) - 185) < 1, `length ${seconds(film)} s`);
    assert.ok(execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'a', '-show_entries', 'stream=index', '-of', 'csv=p=0', film], { encoding: 'utf8' }).trim().length > 0, 'it has the audio');
    assert.deepEqual(fileTree(w.raw).filter((f) => f.includes('.ripwerk-chunks')), [], 'no chunk file is left');
  });
});
