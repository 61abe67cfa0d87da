import fs from 'node:fs/promises';
import path from 'node:path';
import type { TranscodeArgs } from '../shared/protocol.js';
import { claimFileName, outputFileName, planOutput, releaseFileName, removeIfEmpty } from './output-folder.js';
import { ProgressThrottle } from './progress-throttle.js';
import type { TaskContext } from './rip-task.js';
import { TaskFailure } from './rip-task.js';

export interface Transcoder {
  transcode(input: string, output: string, preset: string, hooks: { signal: AbortSignal; onProgress(pct: number): void; onSpawn(pid: number): void }): Promise<void>;
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
  const throttle = new ProgressThrottle(ctx.progress);
  const written: string[] = [];
  /** Every output this run picked (names that were free), the one being encoded included: removed again on failure. */
  const claimed: string[] = [];
  try {
    for (const [i, file] of args.files.entries()) {
      const name = await claimFileName(plan.dir, outputFileName(plan, i, args.files.length, '.mkv', Boolean(args.series)));
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
  return { output_path: plan.dir, files: written, raw_removed: rawRemoved };
}
