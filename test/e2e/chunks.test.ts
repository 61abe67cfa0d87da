import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import type { Worker } from '../../shared/api-types.js';
import { REPO_DIR } from '../fixtures/tools-samples.js';
import { api, dvdImage, fileTree, insertDisc, processesMentioning, job, restartAgent, slowHandbrake, startAgent, startCoordinator, stopAll, waitFor, waitForDisc, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';

interface LogLine { level: string; message: string }

const SHOTS = path.join(REPO_DIR, 'test-output', 'screenshots');

/** Video frames of a file's first video stream (demuxed). */
function videoFrames(file: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim().replace(/,$/, ''));
}

/** Chapter start times of a file, to the hundredth of a second. */
function chapterStarts(file: string): string[] {
  const out = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_chapters', '-of', 'json', file], { encoding: 'utf8' })) as { chapters: { start_time: string }[] };
  return out.chapters.map((ch) => Number(ch.start_time).toFixed(2));
}

/** The stream list as ffprobe names it: type, codec, channels, language. */
function streamList(file: string): string {
  return execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,channels:stream_tags=language', '-of', 'compact', file], { encoding: 'utf8' });
}

/** SSIM of each frame of `a` against the frame of `b` at the same position (ffmpeg's ssim filter). */
function ssimPerFrame(a: string, b: string, stats: string): number[] {
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-i', a, '-i', b, '-lavfi', `[0:v]settb=AVTB,setpts=N/FRAME_RATE/TB[a];[1:v]settb=AVTB,setpts=N/FRAME_RATE/TB[b];[a][b]ssim=stats_file=${stats}`, '-f', 'null', '-']);
  return fs.readFileSync(stats, 'utf8').split('\n').filter(Boolean).map((l) => Number(/All:([\d.]+)/.exec(l)?.[1]));
}

const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;

function seconds(file: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim());
}

describe('one title on two agents (issue 41, real HandBrakeCLI)', () => {
  let w: World;
  let c: CoordinatorHandle;
  let keller: AgentHandle;
  let wohnzimmer: AgentHandle;

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    // 1 minute: a 185 s title is cut into three tapering chunks (82, 62 and 41 s: none below CHUNK_MIN_SECONDS, 30 s).
    const set = await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30', chunkMinMinutes: 1 });
    assert.equal(set.status, 200, set.text);
    keller = await startAgent(w, c.mqttUrl, 'keller');
    wohnzimmer = await startAgent(w, c.mqttUrl, 'wohnzimmer', { drive: false });
  });

  after(stopAll);

  /** Rips a 185 s DVD title on keller (the lead: the names decide between equally free workers) and answers the job with the raw title's frames. */
  async function longTitle(label: string, body: Record<string, unknown> = {}): Promise<{ id: string; rawFrames: number }> {
    insertDisc(keller.driveDir, dvdImage(label, [185]));
    const device = await waitForDisc(c.url, keller);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, ...body });
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
    return { id: created.body.id, rawFrames };
  }

  /** The film test 1 encoded in chunks, compared in test 2 with the whole encode of the same title. */
  let chunkedFilm: string | undefined;

  const jobLogs = async (id: string): Promise<LogLine[]> => (await api<{ logs: LogLine[] }>(c.url, 'GET', `/jobs/${id}/detail`)).body.logs;

  it('splits a long title into chunks, both agents encode some, and the joined film has every frame of the title', async () => {
    const { id, rawFrames } = await longTitle('LANGER_FILM');
    const created = { body: { id } };
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
    chunkedFilm = film;
  });

  it('keeps the whole title on the chosen node; that whole encode and the chunked film have the same chapters and streams, and SSIM at least 0.99, the seams included', async () => {
    const { id, rawFrames } = await longTitle('GEWAEHLT', { transcode_node: wohnzimmer.node });
    const done = await waitForStatus(c.url, id, ['completed', 'failed'], 240_000);
    const logs = await jobLogs(id);
    assert.equal(done.status, 'completed', done.error ?? '');
    assert.equal(done.transcode_node, wohnzimmer.node);
    assert.equal(logs.some((l) => l.message.includes('split into')), false, 'not split');
    assert.equal(done.meta?.chunk_frames, undefined);
    const whole = path.join(done.output_path ?? '', 'Gewaehlt.mkv');
    assert.equal(videoFrames(whole), rawFrames);
    // The same title (the images differ only in their label) and settings as test 1's film, encoded whole:
    // the chunked film has its chapters and streams, and looks like it, the seams included.
    assert.ok(chunkedFilm, 'test 1 made the chunked film');
    assert.ok(chapterStarts(whole).length > 10, `chapters ${chapterStarts(whole).join(' ')}`);
    assert.deepEqual(chapterStarts(chunkedFilm), chapterStarts(whole));
    assert.equal(streamList(chunkedFilm), streamList(whole));
    const ssim = ssimPerFrame(chunkedFilm, whole, path.join(w.root, 'ssim.txt'));
    assert.equal(ssim.length, rawFrames);
    const all = mean(ssim);
    assert.ok(all >= 0.99, `SSIM ${all.toFixed(4)} against the whole encode`);
    // Three tapering chunks (4:3:2) meet near 4/9 and 7/9 of the title, within a GOP of the keyframe there.
    for (const at of [(rawFrames * 4) / 9, (rawFrames * 7) / 9].map(Math.round)) {
      const seam = mean(ssim.slice(at - 15, at + 16));
      assert.ok(seam >= all - 0.01, `SSIM around frame ${at} ${seam.toFixed(4)}, the film's ${all.toFixed(4)}`);
    }
  });

  /**
   * GET /capabilities lists a chunk of the job running on the agent that is not its lead, and the
   * Workers page shows it on a phone, in German (the screenshot goes to test-output/screenshots).
   */
  async function chunkIsListed(browser: Browser, id: string): Promise<void> {
    const seen = await waitFor('a chunk of the job on wohnzimmer in GET /capabilities', async () => {
      const w = (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.node === wohnzimmer.node);
      const chunk = w?.jobs.find((j) => j.id === id && j.chunk);
      return chunk && w ? { w, chunk } : undefined;
    }, 30_000, 100);
    const { w: worker, chunk } = seen;
    assert.equal(chunk.title, 'Abgebrochen');
    assert.equal(chunk.phase, 'transcode');
    assert.equal(chunk.encoded, false);
    const part = chunk.chunk!;
    assert.equal(part.of, 3, 'the title was cut into three chunks');
    assert.ok(part.number >= 1 && part.number <= 3 && part.title_index === 0, JSON.stringify(part));
    assert.ok(part.frames > 1000 && part.frames_done >= 0 && part.frames_done <= part.frames, JSON.stringify(part));
    assert.ok(Math.abs(chunk.progress - (100 * part.frames_done) / part.frames) <= 0.1, `progress ${chunk.progress} of ${JSON.stringify(part)}`);
    assert.ok(chunk.elapsed_seconds >= 0 && Date.parse(chunk.started_at) <= Date.now());
    assert.ok(worker.slots_used >= 1, 'the chunk takes one of its slots');
    assert.equal(worker.jobs.some((j) => j.id === id && !j.chunk), false, 'wohnzimmer does not lead the job');
    fs.mkdirSync(SHOTS, { recursive: true });
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'de-DE' });
    try {
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${c.port}/#/worker`);
      const line = page.getByTestId(`worker-now-${wohnzimmer.name}`).locator(`[data-job="${id}"][data-chunk]`).first();
      await line.waitFor({ timeout: 15_000 });
      const text = await line.innerText();
      assert.match(text, /^Stück [1-3] von 3: Abgebrochen\s+wird komprimiert/);
      assert.match(text, /\d+(,\d)?\u00a0% · [\d.]+ von [\d.]+ Bildern · .*läuft seit \d+:\d\d min/);
      await page.screenshot({ path: path.join(SHOTS, 'de-workers-chunk-phone.png'), fullPage: true });
    } finally {
      await context.close();
    }
  }

  it('cancel with chunks running on both agents stops every chunk and leaves no chunk file', async () => {
    // Chromium starts while the disc is ripped.
    const launching = chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
    const { id } = await longTitle('ABGEBROCHEN').catch(async (e: unknown) => {
      await (await launching.catch(() => null))?.close();
      throw e;
    });
    const browser = await launching;
    try {
      await waitFor('chunks running on both agents', async () => Object.keys((await job(c.url, id)).meta?.chunk_frames ?? {}).length === 2, 120_000, 100);
      await chunkIsListed(browser, id);
    } finally {
      await browser.close();
    }
    assert.equal((await api(c.url, 'POST', `/jobs/${id}/cancel`)).status, 200);
    const canceled = await waitForStatus(c.url, id, ['canceled', 'failed', 'completed'], 60_000);
    assert.equal(canceled.status, 'canceled');
    await waitFor('no chunk encoder running', async () => processesMentioning(`.ripwerk-chunks/${id}`).length === 0, 20_000, 100);
    await waitFor('no chunk file', async () => !fileTree(w.raw).some((f) => f.includes('.ripwerk-chunks')), 20_000, 100);
    assert.ok(fs.existsSync(path.join(w.raw, id, 'title_t01.mkv')), 'the raw data is kept');
  });

  it('gives the chunk of an agent killed mid-chunk to the other agent, and the film still has every frame; started again, that agent stops the encoder it left running', async () => {
    // wohnzimmer's encoder now waits 300 s before it encodes: its chunk's encoder is still running when
    // the agent is killed, and still when the agent is started again after the job.
    await wohnzimmer.proc.kill('SIGTERM');
    wohnzimmer = await startAgent(w, c.mqttUrl, 'wohnzimmer', { drive: false, extra: { HANDBRAKE_CLI: slowHandbrake(300) } });
    const { id, rawFrames } = await longTitle('ABGESTUERZT');
    const ledger = path.join(wohnzimmer.env.DATA_DIR, 'chunk-encoders-wohnzimmer.json');
    const left = await waitFor('wohnzimmer encoding a chunk', async () => fs.existsSync(ledger) && (JSON.parse(fs.readFileSync(ledger, 'utf8')) as { pid: number; output: string }[])[0], 120_000, 100);
    await wohnzimmer.proc.kill('SIGKILL');
    assert.ok(processesMentioning(left.output).includes(left.pid), 'the encoder runs on without its agent');
    const done = await waitForStatus(c.url, id, ['completed', 'failed'], 240_000);
    const logs = await jobLogs(id);
    assert.equal(done.status, 'completed', `${done.error ?? ''}\n${logs.map((l) => l.message).join('\n')}`);
    assert.ok(logs.some((l) => new RegExp(`^worker ${wohnzimmer.node.replace(/[.]/g, '\\.')} went offline while encoding chunk \\d of title 1; the chunk goes to another worker$`).test(l.message)), logs.map((l) => l.message).join('\n'));
    assert.equal(videoFrames(path.join(done.output_path ?? '', 'Abgestuerzt.mkv')), rawFrames, 'every frame, the re-run chunk included');
    assert.equal(done.meta?.chunk_frames?.[keller.node], rawFrames, 'keller encoded them all');
    assert.ok(processesMentioning(left.output).includes(left.pid), 'the leftover encoder still runs');
    // Started again, the agent ends what its killed run left encoding, before it takes work.
    wohnzimmer = await restartAgent(wohnzimmer);
    await waitFor('the leftover encoder stopped', async () => processesMentioning(left.output).length === 0, 15_000, 100);
    await wohnzimmer.proc.waitForLine(new RegExp(`a chunk encoder \\(pid ${left.pid}\\) of a run that did not end was still writing .*\\.ripwerk-chunks/${id}/\\d+/c\\d{2}-[0-9a-f]{8}\\.mkv: stopped`));
    assert.equal(fs.existsSync(ledger), false, 'nothing left to end');
  });
});
