/**
 * Pure parsing for the output proof's ffmpeg runs (ffmpeg-check-runner.ts): the last `-progress`
 * block of a run (frames and time reached), the error lines of its stderr at `-v error`, and where
 * the decode samples of a file go.
 */

/** The fields of the last complete `-progress pipe:1` block of a run (key=value lines closed by progress=…). */
export function lastProgressBlock(stdout: string): Map<string, string> {
  let fields = new Map<string, string>();
  let last = new Map<string, string>();
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1);
    fields.set(key, value);
    if (key === 'progress') {
      last = fields;
      fields = new Map();
    }
  }
  return last;
}

const count = (v: string | undefined): number | null => {
  if (v === undefined || !/^\d+$/.test(v.trim())) return null;
  return Number(v.trim());
};

/** Seconds reached by a run (out_time_us, or out_time_ms which is microseconds too); 0 when it printed none. */
export function progressSeconds(block: Map<string, string>): number {
  const us = count(block.get('out_time_us')) ?? count(block.get('out_time_ms'));
  return us === null ? 0 : us / 1e6;
}

/** Video frames a run decoded (the `frame` field); 0 when it printed none. */
export function progressFrames(block: Map<string, string>): number {
  return count(block.get('frame')) ?? 0;
}

/**
 * The error lines of a run's stderr at `-v error`: every non-empty line, with the "[h264 @ 0x…]"
 * address taken out (it differs on each run and says nothing to the household).
 */
export function errorLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .map((l) => l.replace(/\s@\s0x[0-9a-f]+\]/i, ']').trim())
    .filter((l) => l !== '');
}

/**
 * Where `samples` decode samples of `length` seconds go in a file of `seconds`: spread evenly over
 * the whole file, the first one a sample length in (past a start that a seek may not reach exactly)
 * and the last one ending a sample length before the end. A file shorter than the samples together
 * gets one sample from its start.
 */
export function sampleStarts(seconds: number, samples: number, length: number): number[] {
  if (!(seconds > 0) || samples < 1) return [];
  const first = length;
  const last = seconds - 2 * length;
  if (samples === 1 || last <= first) return [0];
  const step = (last - first) / (samples - 1);
  return Array.from({ length: samples }, (_, i) => Math.round((first + i * step) * 1000) / 1000);
}
