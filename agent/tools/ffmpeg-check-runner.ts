/**
 * ffmpeg runs of the output proof (agent/output/output-proof.ts) and of its second attempt: the real
 * length of a file, decode samples spread over it, and a remux that makes new timestamps.
 */
import { errorLines, lastProgressBlock, progressFrames, progressSeconds, sampleStarts } from './ffmpeg-check-parser.js';
import type { DecodeSample } from '../output/output-proof.js';
import { describeExit, runTool, ToolError } from '../../shared/process.js';

export interface CheckOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  nice?: number;
}

/**
 * `ffmpeg -i FILE -map 0:v? -map 0:a? -map 0:s? -c copy -f null -`: every packet read, nothing decoded (disk speed): the
 * length the file's packets reach, which a header written at the start of the encode does not tell,
 * and the error lines of the read (a damaged container ends the read early with exit 0 and says why).
 */
export async function ffmpegRealSeconds(bin: string, file: string, opts: CheckOptions = {}): Promise<{ seconds: number; errors: string[] }> {
  const result = await runTool(bin, ['-nostdin', '-v', 'error', '-i', file, '-map', '0:v?', '-map', '0:a?', '-map', '0:s?', '-c', 'copy', '-f', 'null', '-', '-progress', 'pipe:1', '-nostats'], { ...opts, captureStdout: true });
  if (result.exitCode !== 0) {
    const why = errorLines(result.stderr)[0];
    throw new ToolError('ffmpeg', `ffmpeg could not read ${file} (${why ?? describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  }
  return { seconds: progressSeconds(lastProgressBlock(result.stdout)), errors: errorLines(result.stderr) };
}

/**
 * `samples` decode samples of `length` seconds spread over a file of `seconds` (sampleStarts), each
 * `ffmpeg -ss AT -i FILE -t LENGTH -map 0:v? -map 0:a? -xerror -v error -f null -`: its frames and
 * error lines (an exit other than 0 with no line is one too).
 */
export async function ffmpegDecodeSamples(bin: string, file: string, seconds: number, samples: number, length: number, opts: CheckOptions = {}): Promise<DecodeSample[]> {
  const out: DecodeSample[] = [];
  for (const at of sampleStarts(seconds, samples, length)) {
    const args = ['-nostdin', '-v', 'error', '-xerror', '-ss', String(at), '-i', file, '-t', String(length), '-map', '0:v?', '-map', '0:a?', '-f', 'null', '-', '-progress', 'pipe:1', '-nostats'];
    const result = await runTool(bin, args, { ...opts, captureStdout: true });
    const errors = errorLines(result.stderr);
    if (result.exitCode !== 0 && errors.length === 0) errors.push(`ffmpeg ${describeExit(result)}`);
    out.push({ at, frames: progressFrames(lastProgressBlock(result.stdout)), errors });
  }
  return out;
}

/**
 * `ffmpeg -fflags +genpts+igndts -i IN -map 0 -c copy -avoid_negative_ts make_zero -f matroska OUT`:
 * the same streams untouched in a new Matroska file whose timestamps ffmpeg made anew (the second
 * attempt of an encode whose output failed the proof). Throws a ToolError with ffmpeg's reason.
 */
export async function ffmpegRemux(bin: string, input: string, output: string, opts: CheckOptions = {}): Promise<void> {
  const args = ['-nostdin', '-v', 'error', '-y', '-fflags', '+genpts+igndts', '-i', input, '-map', '0', '-c', 'copy', '-avoid_negative_ts', 'make_zero', '-f', 'matroska', output];
  const result = await runTool(bin, args, opts);
  if (result.exitCode !== 0) {
    const why = errorLines(result.stderr)[0];
    throw new ToolError('ffmpeg', `the remux of ${input} failed (${why ?? describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  }
}
