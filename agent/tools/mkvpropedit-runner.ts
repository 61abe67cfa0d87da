/**
 * mkvpropedit (MKVToolNix) sets the Matroska track flags HandBrakeCLI cannot write (languages.md,
 * "Track roles"): in place, in the file's head, in a few milliseconds.
 */
import { mkvpropeditFailureReason, mkvpropeditSucceeded, mkvpropeditWarnings } from './mkvpropedit-parser.js';
import { runTool, ToolError } from '../../shared/process.js';

/** A Matroska track flag, by mkvpropedit's property name without "flag-" (FlagForced, FlagHearingImpaired, …). */
export type TrackFlag = 'default' | 'forced' | 'hearing-impaired' | 'visual-impaired' | 'commentary' | 'original';

/** The flags to set on one track: `a1` is the first audio track, `s2` the second subtitle track (mkvpropedit's `track:` selectors). */
export interface TrackFlagEdit {
  track: `a${number}` | `s${number}`;
  flags: TrackFlag[];
}

/** `FILE --edit track:a1 --set flag-original=1 …`: every flag named is set to 1; the others stay as they are. */
export function mkvpropeditArgs(file: string, edits: TrackFlagEdit[]): string[] {
  return [file, ...edits.filter((e) => e.flags.length > 0).flatMap((e) => ['--edit', `track:${e.track}`, ...e.flags.flatMap((f) => ['--set', `flag-${f}=1`])])];
}

/** The edits as a short text for the job log: "a2 commentary, s1 forced hearing-impaired". */
export function describeTrackFlags(edits: TrackFlagEdit[]): string {
  return edits
    .filter((e) => e.flags.length > 0)
    .map((e) => `${e.track} ${e.flags.join(' ')}`)
    .join(', ');
}

export interface MkvpropeditOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Told each warning of a run that succeeded. */
  onWarning?: (text: string) => void;
}

/**
 * Sets the flags on the file's tracks; nothing runs without a flag to set. Throws a ToolError with a
 * plain reason when mkvpropedit fails (the file is left as it was) or is missing.
 */
export async function setTrackFlags(bin: string, file: string, edits: TrackFlagEdit[], opts: MkvpropeditOptions = {}): Promise<void> {
  if (!edits.some((e) => e.flags.length > 0)) return;
  let result;
  try {
    result = await runTool(bin, mkvpropeditArgs(file, edits), { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 120_000, captureStdout: true });
  } catch (err) {
    if (err instanceof ToolError && !err.canceled && !err.timedOut && /not installed/.test(err.reason)) {
      throw new ToolError('mkvpropedit', `${err.reason}: install MKVToolNix on this worker (it sets the track flags HandBrakeCLI cannot)`, { cause: err });
    }
    throw err;
  }
  const output = `${result.stdout}\n${result.stderr}`;
  if (!mkvpropeditSucceeded(result.exitCode)) throw new ToolError('mkvpropedit', mkvpropeditFailureReason(output, result.exitCode, result.signal), { exitCode: result.exitCode ?? undefined });
  for (const warning of mkvpropeditWarnings(output)) opts.onWarning?.(warning);
}
