/**
 * Where a long title is cut so several agents can encode it at once (issue 41): pure, from the list of
 * the source's video packets (`ffprobe -select_streams v:0 -show_entries packet=pts_time,flags`).
 *
 * The cuts are at keyframes, handed to HandBrakeCLI as `--start-at pts:` / `--stop-at pts:` on the
 * whole source (docs/scaling.md, "One title on several agents"). Measured with HandBrakeCLI 1.6.1:
 * its pts clock starts at the source's first video frame (a file whose video starts at 2.000 s cuts
 * like one starting at 0.005 s), a chunk starts at the first frame at or after its start, open GOPs
 * (MPEG-2 B-frames shown before their keyframe) included, and its stop is a duration from that first
 * frame. Each cut lies half a frame before its keyframe, so a rounding of either clock (Matroska keeps
 * milliseconds) cannot move a frame across it.
 * `--start-at frames:` is no alternative: it counts from 1 (each chunk repeats the frame before it)
 * and decodes the title from its start.
 */

/** HandBrake's pts clock: 90 kHz. */
export const HANDBRAKE_PTS_HZ = 90_000;

/** Chunks per agent that can take part: more chunks than agents, so a fast agent takes more of the title. */
export const CHUNKS_PER_AGENT = 3;

/**
 * No chunk shorter than this (seconds): each encoder run pays HandBrake's start-up and the encoder's
 * ramp. Short enough that the tapered plan's last chunks are short.
 */
export const CHUNK_MIN_SECONDS = 30;

/** The video packets of a file: their presentation times in seconds (ascending) and those of the keyframes. */
export interface VideoPackets {
  pts: number[];
  keyframes: number[];
}

/** One chunk of a title: its frames in source order and the encoder's cut. */
export interface Chunk {
  index: number;
  /** Source time of its first frame (seconds); the title's first frame for chunk 0. */
  startSeconds: number;
  /** Source time of the next chunk's first frame; null for the last chunk (to the end). */
  endSeconds: number | null;
  /** Index of its first frame among the title's frames, and how many it has. */
  firstFrame: number;
  frames: number;
  /**
   * HandBrake's cut: where it starts on its clock (90 kHz ticks from the title's first frame; null:
   * from the start) and how long it runs, counted from the chunk's own first frame (null: to the end).
   */
  startTicks: number | null;
  durationTicks: number | null;
}

export interface ChunkPlan {
  /** Frames of the title (video packets). */
  frames: number;
  /** Length of one frame in seconds (the mean gap between frames). */
  frameSeconds: number;
  chunks: Chunk[];
}

/**
 * ffprobe's `-show_entries packet=pts_time,flags -of csv=p=0` output ("0.506000,K_" a line): the
 * presentation times in ascending order and the keyframes among them. Lines without a time (N/A)
 * are left out. Throws when no frame is listed.
 */
export function parseVideoPackets(csv: string): VideoPackets {
  const pts: number[] = [];
  const keyframes: number[] = [];
  for (const line of csv.split('\n')) {
    const [time, flags] = line.trim().split(',');
    if (!time || !/^-?\d+(\.\d+)?$/.test(time)) continue;
    const t = Number(time);
    pts.push(t);
    if (flags?.includes('K')) keyframes.push(t);
  }
  if (pts.length === 0) throw new Error('ffprobe listed no video frame');
  pts.sort((a, b) => a - b);
  keyframes.sort((a, b) => a - b);
  return { pts, keyframes };
}

/**
 * The length of one frame: the mean gap between frames (Matroska's millisecond times make single
 * gaps of a 23.976 fps title alternate between 41 and 42 ms); 1/25 s for a title of one frame.
 */
function frameLength(pts: number[]): number {
  return pts.length > 1 ? (pts[pts.length - 1] - pts[0]) / (pts.length - 1) : 1 / 25;
}

/** How many frames lie before time t (binary search over the ascending times). */
function framesBefore(pts: number[], t: number): number {
  let lo = 0;
  let hi = pts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pts[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The chunks' shares of a title, longest first: `count` chunks of n + 1, n, …, 2 parts (n = count).
 * Handed out in order as agents free up, the long ones keep every agent busy and the short ones at
 * the end fill in, so no agent waits long for the last chunk. Equal parts left one agent idle for up
 * to a chunk's length while the other encoded the last one (with the lead's streams pass, 0.61 of the
 * whole encode on two agents where 0.55 is the work).
 */
function taperedShares(count: number): number[] {
  const weights = Array.from({ length: count }, (_, i) => count + 1 - i);
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}

/**
 * Cuts a title at its keyframes into at most `count` chunks of tapering length (taperedShares), the
 * shortest not shorter than `minSeconds` (fewer chunks then; one chunk when the title is too short or
 * has no keyframe to cut at).
 */
export function planChunks(packets: VideoPackets, count: number, minSeconds: number = CHUNK_MIN_SECONDS): ChunkPlan {
  const { pts, keyframes } = packets;
  const first = pts[0];
  const frameSeconds = frameLength(pts);
  const duration = pts[pts.length - 1] - first + frameSeconds;
  let wanted = Math.max(1, Math.floor(count));
  const shortest = Math.max(minSeconds, frameSeconds);
  while (wanted > 1 && duration * taperedShares(wanted)[wanted - 1] < shortest) wanted--;
  const shares = taperedShares(wanted);
  const cuts: number[] = [];
  let reached = 0;
  for (let i = 1; i < wanted; i++) {
    reached += shares[i - 1];
    const target = first + reached * duration;
    let nearest: number | null = null;
    for (const k of keyframes) {
      if (k <= first || (cuts.length > 0 && k <= cuts[cuts.length - 1])) continue;
      if (nearest === null || Math.abs(k - target) < Math.abs(nearest - target)) nearest = k;
    }
    if (nearest !== null) cuts.push(nearest);
  }
  const half = frameSeconds / 2;
  const ticks = (t: number): number => Math.round((t - first - half) * HANDBRAKE_PTS_HZ);
  const starts = [first, ...cuts];
  const chunks: Chunk[] = starts.map((start, index) => {
    const end = index + 1 < starts.length ? starts[index + 1] : null;
    const firstFrame = framesBefore(pts, start);
    const lastFrame = end === null ? pts.length : framesBefore(pts, end);
    return {
      index,
      startSeconds: start,
      endSeconds: end,
      firstFrame,
      frames: lastFrame - firstFrame,
      startTicks: index === 0 ? null : ticks(start),
      durationTicks: end === null ? null : Math.round((end - start - half) * HANDBRAKE_PTS_HZ),
    };
  });
  return { frames: pts.length, frameSeconds, chunks };
}

/**
 * HandBrakeCLI's arguments for one chunk: `--start-at pts:S` and `--stop-at pts:D`. HandBrake counts
 * the duration from the first frame it keeps, not from the start asked for (measured: a 600 s title
 * cut at 200.205 s and 299.805 s got the frame at 299.805 s too when the duration was taken from the
 * asked start), so D runs from the chunk's first frame to half a frame before the next keyframe.
 */
export function chunkCutArgs(chunk: Chunk): string[] {
  const args: string[] = [];
  if (chunk.startTicks !== null) args.push('--start-at', `pts:${chunk.startTicks}`);
  if (chunk.durationTicks !== null) args.push('--stop-at', `pts:${chunk.durationTicks}`);
  return args;
}
