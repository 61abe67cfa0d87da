/**
 * npm run bench -- chunks: one title encoded in chunks by two encoders against one encoder (issue 41),
 * through the agent's chunk modules (agent/tasks/chunk-plan.ts, chunk-encode.ts) with the real
 * HandBrakeCLI, mkvmerge and ffprobe. The coordinator does not hand chunks to agents yet
 * (docs/scaling.md, "One title on several agents"), so the two "agents" are two work loops of this
 * process, each starting its tools on a core of its own (taskset), taking the next chunk as it frees:
 * what two one-core agents on the same storage would run. The reference, in the same run: the whole
 * title encoded once by the same preset on one core, as one agent does it today.
 *
 * The title: BENCH_CHUNK_SECONDS (600) of 720p video (1280x720 MPEG-2 with open GOPs, AC-3 audio,
 * a chapter every two minutes). Figures: the wall time of plan + chunk encodes + streams pass + join
 * against the whole encode's (target 0.60), and the exactness of the joined file against the whole
 * encode: frame count, the worst distance of a frame's time (every seam included) against one audio
 * frame, SSIM of the whole file and of the frames around each seam.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHUNKS_PER_AGENT, planChunks, type Chunk } from '../agent/tasks/chunk-plan.js';
import { DEFAULT_CHUNK_BINS, encodeChunk, encodeStreams, joinChunks, probeVideoPackets, type ChunkBins } from '../agent/tasks/chunk-encode.js';
import { benchScript, measures, newWorld, timedRun } from './bench-kit.js';

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

export async function chunks(): Promise<void> {
  if (os.cpus().length < AGENTS) throw new Error(`the chunks measure needs ${AGENTS} CPUs (one per encoder), this host has ${os.cpus().length}`);
  const w = newWorld();
  const dir = w.root;
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
  // One core per encoder: HandBrakeCLI behind taskset.
  const pinned = (core: number): ChunkBins => ({
    ...DEFAULT_CHUNK_BINS,
    handbrake: benchScript('ripwerk-bench-chunk-', 'HandBrakeCLI', () => ['#!/bin/bash', `exec taskset -c ${core} HandBrakeCLI "$@"`]).file,
  });

  const whole = path.join(dir, 'whole.mkv');
  const wholeMs = await timedRun('taskset', ['-c', '0', 'HandBrakeCLI', '-i', source, '-o', whole, '-Z', PRESET]);

  const t0 = performance.now();
  const plan = planChunks(await probeVideoPackets('ffprobe', source), CHUNKS_PER_AGENT * AGENTS);
  const chunkFile = (c: Chunk): string => path.join(dir, `chunk-${c.index}.mkv`);
  const streams = path.join(dir, 'streams.mkv');
  // As the lead does it (agent/tasks/chunk-lead.ts): the streams pass at once, the chunks, longest first, to whichever encoder frees up.
  const work: (() => (bins: ChunkBins) => Promise<void>)[] = [
    () => (bins: ChunkBins) => encodeStreams(bins, source, streams, PRESET, []),
    ...plan.chunks.map((c) => () => (bins: ChunkBins) => encodeChunk(bins, source, chunkFile(c), PRESET, c)),
  ];
  const taken: number[][] = Array.from({ length: AGENTS }, () => []);
  let next = 0;
  await Promise.all(
    Array.from({ length: AGENTS }, async (_, agent) => {
      const bins = pinned(agent);
      while (next < work.length) {
        const i = next++;
        const s = performance.now();
        await work[i]()(bins);
        taken[agent].push(performance.now() - s);
      }
    }),
  );
  const joined = path.join(dir, 'joined.mkv');
  await joinChunks(DEFAULT_CHUNK_BINS, plan.chunks.map(chunkFile), streams, joined);
  const chunkedMs = performance.now() - t0;

  const a = videoTimes(joined);
  const b = videoTimes(whole);
  if (a.length !== plan.frames || b.length !== plan.frames) throw new Error(`frames: joined ${a.length}, whole ${b.length}, source ${plan.frames}`);
  const worst = Math.max(...a.map((t, i) => Math.abs(t - b[i])));
  const ssim = ssimPerFrame(joined, whole, path.join(dir, 'ssim.txt'));
  const all = mean(ssim);
  const seams = plan.chunks.slice(1).map((c) => mean(ssim.slice(c.firstFrame - 2, c.firstFrame + 3)));
  const exact = worst <= AUDIO_FRAME_SECONDS && all >= 0.99 && seams.every((s) => s >= all - 0.01);
  if (!exact) throw new Error(`the joined file is not the whole encode: worst frame ${worst.toFixed(4)} s off, SSIM ${all.toFixed(4)}, seams ${seams.map((s) => s.toFixed(4)).join(' ')}`);
  measures.push({
    key: 'chunks',
    name: `one title on ${AGENTS} one-core encoders in ${plan.chunks.length} chunks / on one (${SECONDS} s 1280x720 MPEG-2 title, "${PRESET}")`,
    figure: chunkedMs,
    reference: wholeMs,
    referenceName: 'whole encode, one core',
    unit: 'ms',
    ratio: chunkedMs / wholeMs,
    target: CHUNKS_TARGET,
    detail:
      `chunked ${(chunkedMs / 1000).toFixed(1)} s (plan, ${plan.chunks.length} chunks and the streams pass on ${AGENTS} cores, join) against ${(wholeMs / 1000).toFixed(1)} s whole; ` +
      `runs per encoder ${taken.map((t) => `${t.length} (${(t.reduce((s, x) => s + x, 0) / 1000).toFixed(1)} s)`).join(', ')}; ` +
      `${plan.frames} frames on both sides, worst frame time ${(worst * 1000).toFixed(1)} ms off (one audio frame ${(AUDIO_FRAME_SECONDS * 1000).toFixed(1)} ms), ` +
      `SSIM against the whole encode ${all.toFixed(4)}, around the seams ${Math.min(...seams).toFixed(4)} at worst`,
    samples: { chunked_ms: [chunkedMs], whole_ms: [wholeMs], ssim_seams: seams },
  });
}
