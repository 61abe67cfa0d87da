/**
 * Pure reading of mkvpropedit's output (MKVToolNix): its exit codes are 0 (done), 1 (done, with
 * warnings) and 2 (an error, the file untouched); it prints its messages, the "Error: " line too,
 * on stdout.
 */

/** mkvpropedit's exit code for "done, with warnings": the changes were written. */
export const MKVPROPEDIT_WARNINGS = 1;

/** The file was changed: exit code 0, or 1 (warnings). */
export function mkvpropeditSucceeded(exitCode: number | null): boolean {
  return exitCode === 0 || exitCode === MKVPROPEDIT_WARNINGS;
}

/** The warnings of a run ("Warning: …" lines), without their prefix. */
export function mkvpropeditWarnings(output: string): string[] {
  return output
    .split(/\r?\n/)
    .map((l) => /^Warning: (.+)$/.exec(l.trim())?.[1]?.trim())
    .filter((w): w is string => Boolean(w));
}

/**
 * A plain reason for a failed run: its last "Error: " line (for example "The file 'x.mkv' is not a
 * Matroska file or it could not be found."), else how it ended.
 */
export function mkvpropeditFailureReason(output: string, exitCode: number | null, signal: string | null = null): string {
  const errors = output
    .split(/\r?\n/)
    .map((l) => /^Error: (.+)$/.exec(l.trim())?.[1]?.trim())
    .filter((e): e is string => Boolean(e));
  const how = exitCode === null ? `was stopped by signal ${signal ?? 'unknown'}` : `failed with exit code ${exitCode}`;
  const last = errors[errors.length - 1];
  return last ? `mkvpropedit ${how}: ${last}` : `mkvpropedit ${how}`;
}
