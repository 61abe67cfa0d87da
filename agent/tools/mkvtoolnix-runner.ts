/**
 * mkvtoolnix (the Debian package mkvtoolnix): `mkvmerge -J` to list a Matroska file's tracks and
 * `mkvextract FILE tracks` to take VobSub tracks out as .idx/.sub pairs. Exit code 1 of either is
 * "finished with warnings" (mkvtoolnix's convention), not a failure.
 */
import { mkvtoolnixError, mkvtoolnixProgress, parseMkvmergeIdentify } from './mkvtoolnix-parser.js';
import type { MkvTrack } from './mkvtoolnix-parser.js';
import { runTool, ToolError } from '../../shared/process.js';
import type { RunToolOptions } from '../../shared/process.js';

export interface MkvtoolnixBins {
  mkvmerge: string;
  mkvextract: string;
}

export interface MkvtoolnixOptions extends Pick<RunToolOptions, 'signal' | 'onSpawn' | 'timeoutMs'> {
  bins?: Partial<MkvtoolnixBins>;
}

function bins(opts: MkvtoolnixOptions): MkvtoolnixBins {
  return { mkvmerge: 'mkvmerge', mkvextract: 'mkvextract', ...opts.bins };
}

function toolOptions(opts: MkvtoolnixOptions): RunToolOptions {
  return { signal: opts.signal, onSpawn: opts.onSpawn, timeoutMs: opts.timeoutMs };
}

const succeeded = (exitCode: number | null): boolean => exitCode === 0 || exitCode === 1;

/** `mkvmerge -J FILE`: the tracks of a Matroska file with mkvextract's ids. */
export async function mkvmergeTracks(file: string, opts: MkvtoolnixOptions = {}): Promise<MkvTrack[]> {
  const result = await runTool(bins(opts).mkvmerge, ['-J', file], { ...toolOptions(opts), captureStdout: true });
  try {
    return parseMkvmergeIdentify(result.stdout);
  } catch (err) {
    // mkvmerge -J reports its errors in the JSON (exit code 2); anything else is in its plain output.
    const reason = result.stdout.trimStart().startsWith('{') ? (err as Error).message : mkvtoolnixError(`${result.stdout}\n${result.stderr}`, result.exitCode);
    throw new ToolError('mkvmerge', `Reading the tracks of ${file} failed: ${reason}`, { exitCode: result.exitCode ?? undefined });
  }
}

/**
 * `mkvextract FILE tracks ID:OUT.idx …`: the VobSub tracks as .idx files (each with its .sub beside
 * it), in one read of the file; onProgress gets mkvextract's percentage.
 */
export async function mkvextractTracks(file: string, outputs: { id: number; file: string }[], opts: MkvtoolnixOptions & { onProgress?: (pct: number) => void } = {}): Promise<void> {
  const args = ['--gui-mode', file, 'tracks', ...outputs.map((o) => `${o.id}:${o.file}`)];
  let output = '';
  const result = await runTool(bins(opts).mkvextract, args, {
    ...toolOptions(opts),
    onStdoutLine: (line) => {
      const pct = mkvtoolnixProgress(line);
      if (pct !== null) opts.onProgress?.(pct);
      else output += `${line}\n`;
    },
  });
  if (!succeeded(result.exitCode)) {
    throw new ToolError('mkvextract', `Taking the subtitle tracks out of ${file} failed: ${mkvtoolnixError(`${output}\n${result.stderr}`, result.exitCode)}`, {
      exitCode: result.exitCode ?? undefined,
    });
  }
}
