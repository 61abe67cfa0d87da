/**
 * abcde's progress lines (audio-cd.md §5): "Grabbing track 01: …", "Encoding track 01 of 03: …",
 * "Tagging …", "Finished.". Reading counts for the first half of a rip, encoding for the second.
 */
export interface AbcdeProgress {
  total: number;
  grabbed: Set<number>;
  encoded: Set<number>;
  finished: boolean;
}

export function createAbcdeProgress(total: number): AbcdeProgress {
  return { total, grabbed: new Set(), encoded: new Set(), finished: false };
}

/** Applies one line; returns true when the line is worth a job log entry. */
export function applyAbcdeLine(p: AbcdeProgress, line: string): boolean {
  const grab = /^Grabbing track (\d+)/.exec(line);
  if (grab) {
    p.grabbed.add(Number(grab[1]));
    return true;
  }
  const enc = /^Encoding track (\d+) of (\d+)/.exec(line);
  if (enc) {
    p.encoded.add(Number(enc[1]));
    return true;
  }
  if (/^Finished\.$/.test(line.trim())) {
    p.finished = true;
    return true;
  }
  return /^(\[ERROR\]|\[WARNING\]|Grabbing entire CD|---- .* ----$)/.test(line);
}

/** Percent done: a track read is half its share, encoded is the whole. */
export function abcdePercent(p: AbcdeProgress): number {
  if (p.finished) return 100;
  if (p.total <= 0) return 0;
  return Math.min(99, ((p.grabbed.size + p.encoded.size) / (2 * p.total)) * 100);
}

/** A plain reason for a failed abcde run from its output. */
export function abcdeFailure(output: string, device: string): string {
  if (/CDROM device cannot be found|cannot open|Unable to open cdrom/i.test(output)) return `the drive ${device} cannot be opened: is an audio CD inside?`;
  const error = output.split('\n').find((l) => l.startsWith('[ERROR]'));
  return error ? `abcde failed: ${error.replace(/^\[ERROR\]\s*(abcde:\s*)?/, '')}` : 'abcde failed without a reason; see the job log';
}
