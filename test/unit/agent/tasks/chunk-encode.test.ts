import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { planChunks, type ChunkPlan } from '../../../../agent/tasks/chunk-plan.js';
import { DEFAULT_CHUNK_BINS as BINS, encodeChunk, encodeStreams, joinArgs, joinChunks, probeVideoPackets } from '../../../../agent/tasks/chunk-encode.js';

const PRESET = 'Very Fast 480p30';
/** One AAC frame at 48 kHz: the most a seam may move the video against the audio (issue 41). */
const AUDIO_FRAME_SECONDS = 1024 / 48_000;

const CHAPTERS = [';FFMETADATA1', ...[[0, 10_000, 'One'], [10_000, 25_000, 'Two'], [25_000, 40_000, 'Three']].flatMap(([s, e, t]) => ['[CHAPTER]', 'TIMEBASE=1/1000', `START=${s}`, `END=${e}`, `title=${t}`])].join('\n');

function probe(args: string[]): string {
  return execFileSync('ffprobe', ['-v', 'error', ...args], { encoding: 'utf8' });
}

/** Display times of the video frames of a file. */
function videoTimes(file: string): number[] {
  return probe(['-select_streams', 'v:0', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', file]).split('\n').filter(Boolean).map(Number).sort((a, b) => a - b);
}

/** Per-frame SSIM (All) of two files' video, frame by frame in order. */
function ssimPerFrame(a: string, b: string, dir: string): number[] {
  const stats = path.join(dir, 'ssim.txt');
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-i', a, '-i', b, '-lavfi', `[0:v]settb=AVTB,setpts=N/FRAME_RATE/TB[a];[1:v]settb=AVTB,setpts=N/FRAME_RATE/TB[b];[a][b]ssim=stats_file=${stats}`, '-f', 'null', '-']);
  return fs.readFileSync(stats, 'utf8').split('\n').filter(Boolean).map((l) => Number(/All:([\d.]+)/.exec(l)?.[1]));
}

describe('a title encoded in chunks and joined is the whole encode (real HandBrakeCLI, mkvmerge, ffprobe, ffmpeg; issue 41)', () => {
  let dir: string;
  let source: string;
  let whole: string;
  let joined: string;
  let plan: ChunkPlan;
  let chunkFiles: string[];
  let streams: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-chunks-'));
    fs.writeFileSync(path.join(dir, 'chapters.txt'), `${CHAPTERS}\n`);
    source = path.join(dir, 'title.mkv');
    // Like a DVD title: MPEG-2 with open GOPs (B-frames shown before their keyframe), AC-3, chapters.
    execFileSync('ffmpeg', [
      '-v', 'error', '-nostdin',
      '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=24000/1001', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-i', path.join(dir, 'chapters.txt'),
      '-map', '0:v', '-map', '1:a', '-map_metadata', '2', '-map_chapters', '2', '-t', '40',
      '-c:v', 'mpeg2video', '-g', '12', '-bf', '2', '-q:v', '4', '-c:a', 'ac3', '-y', source,
    ]);
    whole = path.join(dir, 'whole.mkv');
    execFileSync('HandBrakeCLI', ['-i', source, '-o', whole, '-Z', PRESET], { stdio: 'ignore' });
    plan = planChunks(await probeVideoPackets(BINS.ffprobe, source), 4, 5);
    chunkFiles = plan.chunks.map((c) => path.join(dir, `chunk-${c.index}.mkv`));
    // Two at a time, as two agents would.
    for (let i = 0; i < plan.chunks.length; i += 2) {
      await Promise.all(plan.chunks.slice(i, i + 2).map((c) => encodeChunk(BINS, source, chunkFiles[c.index], PRESET, c)));
    }
    streams = path.join(dir, 'streams.mkv');
    await encodeStreams(BINS, source, streams, PRESET, []);
    joined = path.join(dir, 'joined.mkv');
    await joinChunks(BINS, chunkFiles, streams, joined);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('cuts the title into four chunks, each encoded with exactly its frames', () => {
    assert.equal(plan.chunks.length, 4);
    for (const c of plan.chunks) assert.equal(videoTimes(chunkFiles[c.index]).length, c.frames, `chunk ${c.index}`);
  });

  it('has the frames, streams, length and chapters of the whole encode', () => {
    assert.equal(videoTimes(joined).length, plan.frames);
    assert.equal(videoTimes(whole).length, plan.frames);
    const streamList = (f: string): string => probe(['-show_entries', 'stream=codec_type,codec_name,width,height,channels,sample_rate', '-of', 'compact', f]);
    assert.equal(streamList(joined), streamList(whole));
    const chapters = (f: string): string[] => probe(['-show_entries', 'chapter=start_time:chapter_tags=title', '-of', 'csv=p=0', f]).split('\n').filter(Boolean);
    assert.deepEqual(chapters(joined), chapters(whole));
    const duration = (f: string): number => Number(probe(['-show_entries', 'format=duration', '-of', 'csv=p=0', f]));
    assert.ok(Math.abs(duration(joined) - duration(whole)) <= AUDIO_FRAME_SECONDS, `${duration(joined)} against ${duration(whole)}`);
  });

  it('keeps every frame, the seams included, within one audio frame of its time in the whole encode', () => {
    const a = videoTimes(joined);
    const b = videoTimes(whole);
    const worst = Math.max(...a.map((t, i) => Math.abs(t - b[i])));
    assert.ok(worst <= AUDIO_FRAME_SECONDS, `a frame is ${worst} s off`);
  });

  it('looks like the whole encode (SSIM at least 0.99), and no worse around the seams', () => {
    const ssim = ssimPerFrame(joined, whole, dir);
    assert.equal(ssim.length, plan.frames);
    const mean = ssim.reduce((s, v) => s + v, 0) / ssim.length;
    assert.ok(mean >= 0.99, `SSIM ${mean}`);
    for (const c of plan.chunks.slice(1)) {
      const around = ssim.slice(c.firstFrame - 2, c.firstFrame + 3);
      const seam = around.reduce((s, v) => s + v, 0) / around.length;
      assert.ok(seam >= mean - 0.01, `seam of chunk ${c.index}: SSIM ${seam} against ${mean}`);
    }
  });

  it('refuses a join that misses a chunk, naming both frame counts, and leaves no output', async () => {
    const short = path.join(dir, 'short.mkv');
    await assert.rejects(joinChunks(BINS, [chunkFiles[0], chunkFiles[1], chunkFiles[3]], streams, short), new RegExp(`has ${plan.frames - plan.chunks[2].frames} frames where the title has ${plan.frames}`));
    assert.equal(fs.existsSync(short), false);
  });

  it('stops a chunk of a long title before the next keyframe (HandBrake counts the duration from the chunk first frame)', async () => {
    // A 600 s title in six chunks: with equal parts its third chunk (200.205 to 299.805 s) got the frame
    // at 299.805 s as well when the duration was counted from the asked start (2389 frames for 2388).
    // Tapered (7:6:5:4:3:2), the third chunk runs from 288.794 to 399.905 s.
    const long = path.join(dir, 'long.mkv');
    execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=24000/1001', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '600', '-c:v', 'mpeg2video', '-g', '12', '-bf', '2', '-b:v', '300k', '-c:a', 'ac3', '-y', long]);
    const longPlan = planChunks(await probeVideoPackets(BINS.ffprobe, long), 6);
    const third = longPlan.chunks[2];
    assert.deepEqual([third.startSeconds, third.endSeconds, third.frames], [288.794, 399.905, 2664]);
    const out = path.join(dir, 'long-chunk-2.mkv');
    await encodeChunk(BINS, long, out, PRESET, third);
    assert.equal(videoTimes(out).length, 2664);
  });

  it('appends the chunks in order and takes all but the video from the streams file', () => {
    assert.deepEqual(joinArgs(['/w/c0.mkv', '/w/c1.mkv'], '/w/s.mkv', '/w/out.mkv', 21), ['-o', '/w/out.mkv', '--no-audio', '--no-subtitles', '--no-chapters', '--no-global-tags', '--sync', '0:21', '/w/c0.mkv', '+/w/c1.mkv', '--no-video', '/w/s.mkv']);
  });
});
