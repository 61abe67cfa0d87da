/**
 * npm run bench -- chunks: one title encoded by two one-core agents in chunks against one one-core
 * agent (issue 41), through the real stack: a coordinator and real agent processes (test/e2e/harness.ts),
 * the coordinator's hand-out, the agents' chunk runners and the lead's streams pass and join, with the
 * real HandBrakeCLI, mkvmerge and ffprobe. Each agent's HandBrakeCLI is a wrapper that runs it with
 * `taskset -c N` (agent 1 on core 0, agent 2 on core 1): an agent on a host with one core; all of its
 * slots share that core.
 *
 * The title: BENCH_CHUNK_SECONDS (600) of 720p video (1280x720 MPEG-2 with open GOPs, AC-3 audio, a
 * chapter every two minutes), stored as a job whose transcode failed, with its raw folder (as
 * bench-scale.ts does), twice. The reference: the first copy transcoded with only agent 1 online (one
 * agent: the title stays whole). The figure: the second copy with both agents online (chunked). Each
 * side is the wall time from POST /jobs/{id}/retry-transcode to the job's status completed: the
 * encode, the proof, the naming and filing. Exactness of the two films the pipeline filed: frame
 * count equal to the source, the worst distance of a frame's time (every seam included) against one
 * audio frame, SSIM of the whole film and of the frames around each seam (the cuts the lead makes,
 * planned here the same way).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CHUNK_MIN_SECONDS, CHUNKS_PER_AGENT, planChunks } from '../agent/tasks/chunk-plan.js';
import { probeVideoPackets } from '../agent/tasks/chunk-encode.js';
import type { Job, Worker } from '../shared/api-types.js';
import { api, startAgent, startCoordinator, stopAll, waitFor, type AgentHandle, type CoordinatorHandle, type World } from '../test/e2e/harness.js';
import { benchScript, expectStatus, logTimes, measures, newWorld } from './bench-kit.js';

const PRESET = 'Fast 720p30';
const SECONDS = Number(process.env.BENCH_CHUNK_SECONDS) || 600;
const AGENTS = 2;
/** Issue 41: two one-core agents take at most 0.60 of one one-core agent's time. */
const CHUNKS_TARGET = 0.6;
/** One AAC frame at 48 kHz: the most a seam may move the video against the audio. */
const AUDIO_FRAME_SECONDS = 1024 / 48_000;

function probe(args: string[]): string {
  return execFileSync('ffprobe', ['-v', 'error', ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

function videoTimes(file: string): number[] {
  return probe(['-select_streams', 'v:0', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', file]).split('\n').filter(Boolean).map(Number).sort((a, b) => a - b);
}

function ssimPerFrame(a: string, b: string, stats: string): number[] {
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-i', a, '-i', b, '-lavfi', `[0:v]settb=AVTB,setpts=N/FRAME_RATE/TB[a];[1:v]settb=AVTB,setpts=N/FRAME_RATE/TB[b];[a][b]ssim=stats_file=${stats}`, '-f', 'null', '-']);
  return fs.readFileSync(stats, 'utf8').split('\n').filter(Boolean).map((l) => Number(/All:([\d.]+)/.exec(l)?.[1]));
}

const mean = (v: number[]): number => v.reduce((s, x) => s + x, 0) / v.length;

/** The synthetic title with its chapters. */
function makeTitle(dir: string): string {
  const source = path.join(dir, 'title.mkv');
  const chapters = path.join(dir, 'chapters.txt');
  const marks = Array.from({ length: Math.ceil(SECONDS / 120) }, (_, i) => ['[CHAPTER]', 'TIMEBASE=1/1000', `START=${i * 120_000}`, `END=${Math.min(SECONDS, (i + 1) * 120) * 1000}`, `title=Chapter ${i + 1}`]);
  fs.writeFileSync(chapters, [';FFMETADATA1', ...marks.flat(), ''].join('\n'));
  execFileSync('ffmpeg', [
    '-v', 'error', '-nostdin',
    '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=24000/1001', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-i', chapters,
    '-map', '0:v', '-map', '1:a', '-map_metadata', '2', '-map_chapters', '2', '-t', String(SECONDS),
    '-c:v', 'mpeg2video', '-g', '12', '-bf', '2', '-b:v', '8M', '-c:a', 'ac3', '-y', source,
  ]);
  return source;
}

/** Stores a job as a failed transcode leaves it (status failed, phase transcode), its raw folder holding a copy of the title. */
function storeFailedTranscode(w: World, db: Database.Database, title: string, source: string): string {
  const id = randomUUID();
  const rawDir = path.join(w.raw, id);
  fs.mkdirSync(rawDir);
  const file = path.join(rawDir, 'title_t01.mkv');
  fs.copyFileSync(source, file);
  const at = new Date().toISOString();
  db.prepare(
    `INSERT INTO jobs (id, title, status, progress, output_path, target_dir, meta, device, node, transcode_node, error, phase, eta_points,
                       raw_state, raw_path, raw_size, raw_checked_at, created_at, updated_at, finished_at)
     VALUES (?, ?, 'failed', 0, NULL, ?, ?, NULL, NULL, NULL, 'HandBrake could not encode: exit code 3', 'transcode', '[]', 'present', ?, ?, ?, ?, ?, ?)`,
  ).run(id, title, path.join(w.media, 'Filme'), JSON.stringify({ rip_fertig: true, raw_files: [file], year: 2001, main_feature_only: true, disc_type: 'bluray', disc_label: title.toUpperCase().replace(/\W/g, '_') }), rawDir, fs.statSync(file).size, at, at, at, at);
  return id;
}

/** An agent whose HandBrakeCLI runs on one core only. */
async function oneCoreAgent(w: World, c: CoordinatorHandle, name: string, core: number): Promise<AgentHandle> {
  const handbrake = benchScript(`ripwerk-bench-${name}-`, 'HandBrakeCLI', () => ['#!/bin/bash', `exec taskset -c ${core} HandBrakeCLI "$@"`]).file;
  return startAgent(w, c.mqttUrl, name, { drive: false, extra: { HANDBRAKE_CLI: handbrake } });
}

async function onlineWorkers(c: CoordinatorHandle, n: number): Promise<void> {
  await waitFor(`${n} workers online`, async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.filter((x) => x.online).length === n, 60_000, 200);
}

/** Transcodes the stored job again and answers the wall time to completed, the job and its log. */
async function transcode(c: CoordinatorHandle, id: string): Promise<{ ms: number; job: Job; logs: string[]; steps: string }> {
  const t0 = performance.now();
  const wall0 = Date.now();
  expectStatus(await api(c.url, 'POST', `/jobs/${id}/retry-transcode`), 202, `retry-transcode ${id}`);
  let done: Job | undefined;
  while (!done) {
    const j = (await api<Job>(c.url, 'GET', `/jobs/${id}`)).body;
    if (j.status === 'completed' || j.status === 'failed' || j.status === 'canceled') done = j;
    else await new Promise((r) => setTimeout(r, 250));
  }
  const ms = performance.now() - t0;
  const timed = await logTimes(c.url, id);
  const logs = timed.map((l) => l.message);
  if (done.status !== 'completed') throw new Error(`job ${id} ended ${done.status}: ${done.error ?? ''} | ${logs.slice(-8).join(' | ')}`);
  // Where the time went, from the job log: seconds from the request to each step.
  const at = (re: RegExp): string => {
    const hit = timed.filter((l) => l.ts >= wall0 - 1000).find((l) => re.test(l.message));
    return hit ? `${((hit.ts - wall0) / 1000).toFixed(1)}` : '-';
  };
  const steps = `accepted ${at(/accepted the transcode/)} s, split ${at(/split into \d+ chunks/)} s, chunks encoded ${at(/^all \d+ chunks of title/)} s, proven ${at(/: proven: /)} s, completed ${(ms / 1000).toFixed(1)} s`;
  return { ms, job: done, logs, steps };
}

function filedFilm(job: Job): string {
  const dir = job.output_path ?? '';
  const film = fs.readdirSync(dir).find((f) => f.endsWith('.mkv'));
  if (!film) throw new Error(`no film in ${dir}`);
  return path.join(dir, film);
}

export async function chunks(): Promise<void> {
  if (os.cpus().length < AGENTS) throw new Error(`the chunks measure needs ${AGENTS} CPUs (one per agent), this host has ${os.cpus().length}`);
  const w = newWorld();
  const source = makeTitle(w.root);
  const plan = planChunks(await probeVideoPackets('ffprobe', source), CHUNKS_PER_AGENT * AGENTS, CHUNK_MIN_SECONDS);
  try {
    const first = await startCoordinator(w);
    await first.proc.kill('SIGTERM');
    const db = new Database(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'));
    const wholeId = storeFailedTranscode(w, db, 'Ein Agent', source);
    const chunkedId = storeFailedTranscode(w, db, 'Zwei Agenten', source);
    db.close();
    const c = await startCoordinator(w, {}, { port: first.port, mqttPort: first.mqttPort });
    // Chunked above half the title's length: this title is, a shorter one of the household's would not be.
    expectStatus(await api(c.url, 'PUT', '/settings', { transcodePreset: PRESET, chunkMinMinutes: Math.floor(SECONDS / 2 / 6) / 10 }), 200, 'PUT /settings');

    // The reference: one agent, one core.
    const keller = await oneCoreAgent(w, c, 'keller', 0);
    await onlineWorkers(c, 1);
    const whole = await transcode(c, wholeId);
    if (whole.logs.some((l) => l.includes('split into'))) throw new Error('the one-agent reference was split into chunks');

    // The figure: a second one-core agent joins.
    const wohnzimmer = await oneCoreAgent(w, c, 'wohnzimmer', 1);
    await onlineWorkers(c, 2);
    const chunked = await transcode(c, chunkedId);
    const split = chunked.logs.find((l) => /^title 1 \(\d+ frames\) split into \d+ chunks/.test(l));
    if (!split) throw new Error(`the title was not split: ${chunked.logs.join(' | ')}`);
    const byNode = chunked.job.meta?.chunk_frames ?? {};
    const shares = [keller.node, wohnzimmer.node].map((n) => byNode[n] ?? 0);
    if (shares.some((n) => n === 0) || shares[0] + shares[1] !== plan.frames) throw new Error(`frames by agent ${JSON.stringify(byNode)}, the title has ${plan.frames}`);

    const joined = filedFilm(chunked.job);
    const reference = filedFilm(whole.job);
    const a = videoTimes(joined);
    const b = videoTimes(reference);
    if (a.length !== plan.frames || b.length !== plan.frames) throw new Error(`frames: chunked ${a.length}, whole ${b.length}, source ${plan.frames}`);
    const worst = Math.max(...a.map((t, i) => Math.abs(t - b[i])));
    const ssim = ssimPerFrame(joined, reference, path.join(w.root, 'ssim.txt'));
    const all = mean(ssim);
    const seams = plan.chunks.slice(1).map((ch) => mean(ssim.slice(ch.firstFrame - 2, ch.firstFrame + 3)));
    const exact = worst <= AUDIO_FRAME_SECONDS && all >= 0.99 && seams.every((s) => s >= all - 0.01);
    if (!exact) throw new Error(`the chunked film is not the whole one: worst frame ${worst.toFixed(4)} s off, SSIM ${all.toFixed(4)}, seams ${seams.map((s) => s.toFixed(4)).join(' ')}`);
    measures.push({
      key: 'chunks',
      name: `one title on ${AGENTS} one-core agents in ${plan.chunks.length} chunks / on one, through coordinator and agents (${SECONDS} s 1280x720 MPEG-2 title, "${PRESET}")`,
      figure: chunked.ms,
      reference: whole.ms,
      referenceName: 'one one-core agent, whole',
      unit: 'ms',
      ratio: chunked.ms / whole.ms,
      target: CHUNKS_TARGET,
      detail:
        `retry-transcode to completed: ${(chunked.ms / 1000).toFixed(1)} s on two agents against ${(whole.ms / 1000).toFixed(1)} s on one; ` +
        `steps on two agents: ${chunked.steps}; on one: ${whole.steps}; ` +
        `frames encoded ${keller.node} ${shares[0]}, ${wohnzimmer.node} ${shares[1]} (keller also ran the streams pass and the join); ` +
        `${plan.frames} frames in both films, worst frame time ${(worst * 1000).toFixed(1)} ms off (one audio frame ${(AUDIO_FRAME_SECONDS * 1000).toFixed(1)} ms), ` +
        `SSIM against the one-agent film ${all.toFixed(4)}, around the seams ${Math.min(...seams).toFixed(4)} at worst`,
      samples: { chunked_ms: [chunked.ms], whole_ms: [whole.ms], ssim_seams: seams, frames_by_agent: shares },
    });
  } finally {
    await stopAll();
  }
}
