import fs from 'node:fs/promises';
import path from 'node:path';
import type { TranscodeArgs } from '../shared/protocol.js';
import { matchEpisodes } from './episode-match.js';
import { describeOutput } from './library-files.js';
import { claimFileName, outputFileName, planOutput, releaseFileName, removeIfEmpty, type OutputPlan } from './output-folder.js';
import { ProgressThrottle } from './progress-throttle.js';
import type { TaskContext } from './rip-task.js';
import { TaskFailure } from './rip-task.js';

export interface Transcoder {
  transcode(input: string, output: string, preset: string, hooks: { signal: AbortSignal; onProgress(pct: number): void; onSpawn(pid: number): void }): Promise<void>;
  /** The length of a file in seconds from the transcoder's own scan. */
  duration(input: string, signal: AbortSignal): Promise<number>;
}

/**
 * The output names of a series rip: SxxEyy when the files' durations match the season's episodes
 * unambiguously; otherwise null, with a log line that says why.
 */
async function episodeNames(args: TranscodeArgs, plan: OutputPlan, transcoder: Transcoder, ctx: TaskContext): Promise<string[] | null> {
  if (!args.series || !args.episodes?.length) return null;
  const durations: number[] = [];
  for (const file of args.files) {
    try {
      durations.push(await transcoder.duration(file, ctx.signal));
    } catch (err) {
      ctx.log('warn', `episode names skipped: the transcoder could not scan ${path.basename(file)}: ${(err as Error).message}`);
      return null;
    }
  }
  const match = matchEpisodes(durations, args.episodes, args.disc_number ?? null);
  if (!match.ok) {
    ctx.log('warn', `files not renamed to episodes: ${match.reason}`);
    return null;
  }
  ctx.log('info', `episodes matched by ${match.stage === 'runtimes' ? 'runtime' : 'sequence'}: ${match.episodes.map((e) => `E${String(e).padStart(2, '0')}`).join(', ')}`);
  return match.episodes.map((e) => `${plan.fileBase}E${String(e).padStart(2, '0')}.mkv`);
}

export interface TranscodeResult {
  output_path: string;
  files: string[];
  raw_removed: boolean;
}

/**
 * worker.tasks.transcode_files: one encoder run per raw file into the output folder; progress is the
 * encoder's own percentage, shared across the files (task N of M). The raw dir is removed only after
 * every file succeeded, unless keepOriginal.
 */
export async function runTranscode(args: TranscodeArgs, transcoder: Transcoder, ctx: TaskContext): Promise<TranscodeResult> {
  for (const file of args.files) {
    const st = await fs.stat(file).catch(() => null);
    if (!st?.isFile()) throw new TaskFailure(`the raw file ${file} is missing: retry the rip`);
  }
  const plan = await planOutput({ ...args });
  const episodes = await episodeNames(args, plan, transcoder, ctx);
  const throttle = new ProgressThrottle(ctx.progress);
  const written: string[] = [];
  /** Every output this run picked (names that were free), the one being encoded included: removed again on failure. */
  const claimed: string[] = [];
  try {
    for (const [i, file] of args.files.entries()) {
      const name = await claimFileName(plan.dir, episodes?.[i] ?? outputFileName(plan, i, args.files.length, '.mkv', Boolean(args.series)));
      const dest = path.join(plan.dir, name);
      claimed.push(dest);
      ctx.log('info', `transcoding ${path.basename(file)} (${i + 1} of ${args.files.length}) with preset "${args.preset}" to ${dest}`);
      try {
        await transcoder.transcode(file, dest, args.preset, {
          signal: ctx.signal,
          onSpawn: ctx.onSpawn,
          onProgress: (pct) => throttle.update(((i + pct / 100) / args.files.length) * 100),
        });
      } finally {
        releaseFileName(plan.dir, name);
      }
      written.push(dest);
    }
  } catch (err) {
    await Promise.all(claimed.map((f) => fs.rm(f, { force: true })));
    await removeIfEmpty(plan.dir);
    throw err;
  }
  throttle.update(100);
  throttle.flush();
  let rawRemoved = false;
  if (!args.keep_original) {
    await fs.rm(args.raw_dir, { recursive: true, force: true });
    rawRemoved = true;
  }
  if (args.library) await describeOutput(plan.dir, args.library, ctx);
  return { output_path: plan.dir, files: written, raw_removed: rawRemoved };
}
