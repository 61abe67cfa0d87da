/**
 * The setting that decides which titles are encoded in chunks by several agents (issue 41;
 * docs/scaling.md, "One title on several agents"): a title longer than `chunkMinMinutes` minutes.
 * Minutes with decimals (0.5 is 30 s), so a short test title can be chunked too; 0 keeps every title whole.
 */

/** The setting's default: a film is chunked, an episode of a series is not. */
export const DEFAULT_CHUNK_MIN_MINUTES = 20;

/** The largest value taken: a day. Longer than any disc title. */
export const CHUNK_MIN_MINUTES_MAX = 1440;

/**
 * Chunks an agent encodes at once: one. HandBrakeCLI alone uses every core of its host, and an agent
 * that takes the next chunk only when its last one is done takes more of a title the faster it is.
 * With a chunk per free slot (4), the bench's two one-core agents took 0.64 of one agent's time: the
 * title was split between them the moment it was planned, and three encoders shared each core.
 */
export const CHUNKS_AT_ONCE_PER_AGENT = 1;

/** A failed chunk encode is handed out again once; the second failure fails the job with its reason. */
export const CHUNK_MAX_ATTEMPTS = 2;

/**
 * Where the chunks of a title are written, beside its raw data (container paths; every agent maps
 * them through its path map): `<raw folder>/.ripwerk-chunks/<job id>/<title index>`. Removed after
 * the join, and on cancel.
 */
export function chunkFolder(rawDir: string, jobId: string, title: number): string {
  // Plain text, no node:path: the web UI's bundle imports this module for the setting's bounds.
  return `${rawDir.replace(/\/+$/, '')}/.ripwerk-chunks/${jobId}/${title}`;
}

/**
 * The file of one chunk in its folder: c00.mkv, c01.mkv, … (in join order); a hand-out's file adds
 * the first 8 characters of its command id (c01-1f0e2a9b.mkv), so a chunk handed out again never
 * shares its file with the encoder of a lost agent that may still be writing.
 */
export function chunkFileName(index: number, commandId?: string): string {
  const n = String(index).padStart(2, '0');
  return commandId ? `c${n}-${commandId.slice(0, 8)}.mkv` : `c${n}.mkv`;
}

/**
 * Whether a path is a chunk's file as chunkFolder and chunkFileName make it: the only files an agent
 * writes or removes for chunks. `windows`: a native worker's local path, with either separator.
 */
export function isChunkFile(p: string, windows = false): boolean {
  return /\/\.ripwerk-chunks\/(?:[^/]+\/)*c\d{2,}(?:-[0-9a-f]{8})?\.mkv$/.test(windows ? p.replace(/\\/g, '/') : p);
}
