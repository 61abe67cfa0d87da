/** One `-progress pipe:1` update of ffmpeg. */
export interface FfmpegProgress {
  /** Output time reached, in microseconds (0 while ffmpeg prints N/A). */
  outTimeUs: number;
  /** True for the last block (`progress=end`). */
  end: boolean;
}

function parseMicroseconds(value: string | undefined): number | null {
  if (value === undefined) return null;
  const n = Number(value.trim());
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/**
 * Line-fed parser for ffmpeg's `-progress` output: `key=value` lines, each block closed by
 * `progress=continue` or `progress=end`. `push` returns the block when its closing line arrives.
 * out_time_us is preferred; out_time_ms is also microseconds despite its name.
 */
export class FfmpegProgressParser {
  private fields = new Map<string, string>();

  push(line: string): FfmpegProgress | null {
    const eq = line.indexOf('=');
    if (eq <= 0) return null;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (key !== 'progress') {
      this.fields.set(key, value);
      return null;
    }
    const outTimeUs = parseMicroseconds(this.fields.get('out_time_us')) ?? parseMicroseconds(this.fields.get('out_time_ms')) ?? 0;
    this.fields = new Map();
    return { outTimeUs, end: value === 'end' };
  }
}

/** Percent 0..100 of a remux of `totalSeconds`, from one progress block. */
export function ffmpegPercent(progress: FfmpegProgress, totalSeconds: number): number {
  if (progress.end) return 100;
  if (!(totalSeconds > 0)) return 0;
  return Math.min(100, Math.max(0, (progress.outTimeUs / (totalSeconds * 1e6)) * 100));
}
