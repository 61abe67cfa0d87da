/**
 * One title encoded in chunks and joined without re-encoding (issue 41; docs/scaling.md, "One title on
 * several agents"). Three kinds of tool run, each of which can run on another agent that reads the
 * same raw file:
 *
 * - `encodeChunk`: the job's preset on the frames of one chunk (chunk-plan.ts), video only.
 * - `encodeStreams`: the whole title once with the job's preset and stream choice, so audio, subtitles
 *   and chapters are exactly what a whole encode writes; its video is a tiny stand-in (64x48, x264
 *   ultrafast) whose frame times are those of a whole encode, and it is the measure the join is
 *   checked against.
 * - `joinChunks`: mkvmerge appends the chunks' video and takes every other track and the chapters
 *   from the streams file; then the joined video must have exactly the frames of the stand-in.
 */
import fs from 'node:fs/promises';
import { handbrakeFailureReason, HandbrakeJsonCollector, handbrakeProgress, workDone } from '../tools/handbrake-parser.js';
import { mkvtoolnixError } from '../tools/mkvtoolnix-parser.js';
import { describeExit, runTool, ToolError } from '../../shared/process.js';
import { chunkCutArgs, parseVideoPackets, type Chunk, type VideoPackets } from './chunk-plan.js';

/** A chunk's encode: the preset's video, no audio, subtitles or chapters (those come from the streams pass). */
export const CHUNK_VIDEO_ONLY = ['-a', 'none', '-s', 'none', '--no-markers'];

/**
 * The streams pass's stand-in video: the cheapest HandBrake writes, without the preset's filters that
 * keep every frame's time (comb detection, deinterlacing, denoise, sharpening: 12 of 19 s of a 60 s
 * 720p pass on one core, measured). Detelecine stays: it changes frame times. A preset that
 * deinterlaces in bob mode (one frame per field) gets twice the stand-in's frames, which the join's
 * frame check refuses.
 */
export const STREAMS_PASS_VIDEO = [
  '-e', 'x264', '--encoder-preset', 'ultrafast', '-w', '64', '-l', '48', '--no-two-pass',
  '--no-comb-detect', '--no-decomb', '--no-deinterlace', '--no-bwdif', '--no-nlmeans', '--no-hqdn3d', '--no-deblock',
  '--no-chroma-smooth', '--no-unsharp', '--no-lapsharp', '--no-grayscale',
];

/** How many video frames the streams pass's start is read for its first frame time. */
const FIRST_FRAMES_READ = 16;

export interface ChunkBins {
  handbrake: string;
  ffprobe: string;
  mkvmerge: string;
}

export const DEFAULT_CHUNK_BINS: ChunkBins = { handbrake: 'HandBrakeCLI', ffprobe: 'ffprobe', mkvmerge: 'mkvmerge' };

export interface ChunkRunHooks {
  signal?: AbortSignal;
  onSpawn?: (pid: number) => void;
  onProgress?: (pct: number) => void;
  /** The encoder's nice value (ENCODER_NICE). */
  nice?: number;
}

/** `ffprobe -select_streams v:0 -show_entries packet=pts_time,flags`: the video packets of a file (demuxed, not decoded). */
export async function probeVideoPackets(bin: string, file: string, opts: { signal?: AbortSignal; firstOnly?: boolean } = {}): Promise<VideoPackets> {
  const args = ['-v', 'error', '-select_streams', 'v:0', ...(opts.firstOnly ? ['-read_intervals', `%+#${FIRST_FRAMES_READ}`] : []), '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', file];
  const result = await runTool(bin, args, { signal: opts.signal, captureStdout: true });
  if (result.exitCode !== 0) throw new ToolError('ffprobe', `ffprobe could not list the video frames of ${file} (${describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  try {
    return parseVideoPackets(result.stdout);
  } catch (err) {
    throw new ToolError('ffprobe', `${file}: ${(err as Error).message}`);
  }
}

/** `ffprobe -count_packets`: the frames of a file's first video stream. */
export async function countVideoFrames(bin: string, file: string, signal?: AbortSignal): Promise<number> {
  const args = ['-v', 'error', '-select_streams', 'v:0', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', file];
  const result = await runTool(bin, args, { signal, captureStdout: true });
  const n = Number.parseInt(result.stdout.trim(), 10);
  if (result.exitCode !== 0 || !Number.isFinite(n)) throw new ToolError('ffprobe', `ffprobe could not count the video frames of ${file} (${describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  return n;
}

/** One HandBrakeCLI run with progress from its --json blocks; the output is removed when it fails. */
async function handbrake(bin: string, args: string[], output: string, preset: string, hooks: ChunkRunHooks): Promise<void> {
  const collector = new HandbrakeJsonCollector();
  const seen = { doneError: 0, lastPct: -1 };
  try {
    const result = await runTool(bin, [...args, '--json'], {
      signal: hooks.signal,
      onSpawn: hooks.onSpawn,
      nice: hooks.nice,
      onStdoutLine: (line) => {
        const block = collector.push(line);
        if (!block) return;
        seen.doneError = workDone(block)?.error ?? seen.doneError;
        const pct = handbrakeProgress(block);
        if (pct !== null && pct > seen.lastPct) {
          seen.lastPct = pct;
          hooks.onProgress?.(pct);
        }
      },
    });
    if (result.exitCode !== 0 || seen.doneError !== 0) throw new ToolError('HandBrakeCLI', handbrakeFailureReason(result.stderr, result.exitCode, preset), { exitCode: result.exitCode ?? undefined });
    const st = await fs.stat(output).catch(() => null);
    if (!st?.isFile() || st.size === 0) throw new ToolError('HandBrakeCLI', `The transcoder finished but wrote no output to ${output}`, { exitCode: 0 });
    hooks.onProgress?.(100);
  } catch (err) {
    await fs.rm(output, { force: true });
    throw err;
  }
}

/** The HandBrakeCLI arguments of one chunk's encode. */
export function chunkEncodeArgs(input: string, output: string, preset: string, chunk: Chunk): string[] {
  return ['-i', input, '-o', output, '-Z', preset, ...CHUNK_VIDEO_ONLY, ...chunkCutArgs(chunk)];
}

/** Encodes one chunk of `input` with `preset` into `output` (Matroska, video only). */
export async function encodeChunk(bins: ChunkBins, input: string, output: string, preset: string, chunk: Chunk, hooks: ChunkRunHooks = {}): Promise<void> {
  await handbrake(bins.handbrake, chunkEncodeArgs(input, output, preset, chunk), output, preset, hooks);
}

/** The HandBrakeCLI arguments of the streams pass: the preset, the stand-in video, then the stream choice (as a whole encode gets it). */
export function streamsPassArgs(input: string, output: string, preset: string, streamArgs: string[]): string[] {
  return ['-i', input, '-o', output, '-Z', preset, ...STREAMS_PASS_VIDEO, ...streamArgs];
}

/** The whole title's audio, subtitles and chapters with the stand-in video, into `output` (Matroska). */
export async function encodeStreams(bins: ChunkBins, input: string, output: string, preset: string, streamArgs: string[], hooks: ChunkRunHooks = {}): Promise<void> {
  await handbrake(bins.handbrake, streamsPassArgs(input, output, preset, streamArgs), output, preset, hooks);
}

/**
 * mkvmerge's arguments for the join: the chunks' video appended (`+`), moved by `videoOffsetMs` to where
 * a whole encode puts its first frame (HandBrake starts the video after the audio's priming when the
 * title has audio), and everything but the video of the streams file.
 */
export function joinArgs(chunkFiles: string[], streamsFile: string, output: string, videoOffsetMs: number): string[] {
  if (chunkFiles.length === 0) throw new Error('no chunk to join');
  return [
    '-o', output,
    '--no-audio', '--no-subtitles', '--no-chapters', '--no-global-tags', '--sync', `0:${videoOffsetMs}`,
    chunkFiles[0], ...chunkFiles.slice(1).map((f) => `+${f}`),
    '--no-video', streamsFile,
  ];
}

/**
 * The joined video has other frames than the stand-in: a chunk lost or repeated frames, or the preset
 * makes frames of its own (bob deinterlacing, a frame per field). The lead encodes such a title whole.
 */
export class JoinFrameMismatch extends ToolError {
  constructor(
    readonly frames: number,
    readonly want: number,
  ) {
    super('mkvmerge', `The joined video has ${frames} frames where the title has ${want}: a chunk lost or repeated frames, or the preset makes frames of its own (bob deinterlacing)`);
  }
}

export interface JoinResult {
  /** Video frames of the joined file, equal to the stand-in's. */
  frames: number;
  videoOffsetMs: number;
}

/**
 * Joins the encoded chunks with the streams file into `output` and checks that its video has exactly
 * the stand-in's frames; a missing or extra frame fails the join with the counts (the output is removed).
 */
export async function joinChunks(bins: ChunkBins, chunkFiles: string[], streamsFile: string, output: string, signal?: AbortSignal): Promise<JoinResult> {
  const first = await probeVideoPackets(bins.ffprobe, streamsFile, { signal, firstOnly: true });
  const videoOffsetMs = Math.round(first.pts[0] * 1000);
  const want = await countVideoFrames(bins.ffprobe, streamsFile, signal);
  try {
    const result = await runTool(bins.mkvmerge, joinArgs(chunkFiles, streamsFile, output, videoOffsetMs), { signal, captureStdout: true });
    // mkvmerge: exit 1 is "finished with warnings".
    if (result.exitCode !== 0 && result.exitCode !== 1) throw new ToolError('mkvmerge', `Joining the chunks failed: ${mkvtoolnixError(`${result.stdout}\n${result.stderr}`, result.exitCode)}`, { exitCode: result.exitCode ?? undefined });
    const frames = await countVideoFrames(bins.ffprobe, output, signal);
    if (frames !== want) throw new JoinFrameMismatch(frames, want);
    return { frames, videoOffsetMs };
  } catch (err) {
    await fs.rm(output, { force: true });
    throw err;
  }
}
