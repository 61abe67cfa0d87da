/**
 * The setting that decides which titles are encoded in chunks by several agents (issue 41;
 * docs/scaling.md, "One title on several agents"): a title longer than `chunkMinMinutes` minutes.
 * Minutes with decimals (0.5 is 30 s), so a short test title can be chunked too; 0 keeps every title whole.
 */

/** The setting's default: a film is chunked, an episode of a series is not. */
export const DEFAULT_CHUNK_MIN_MINUTES = 20;

/** The largest value taken: a day. Longer than any disc title. */
export const CHUNK_MIN_MINUTES_MAX = 1440;
