/**
 * What counts as raw data: a raw folder holds a job's rip only when at least one video file (or, for
 * an audio CD, audio file) is in it. A rip that failed before writing leaves an empty folder (or one
 * with only a config or log file), which is no raw data: nothing there can be compressed again.
 */
export const RAW_MEDIA_EXTENSIONS = ['mkv', 'm2ts', 'vob', 'mpg', 'mp4', 'ts', 'flac', 'wav'] as const;

function hasExtension(name: string, extensions: readonly string[]): boolean {
  const dot = name.lastIndexOf('.');
  return dot > 0 && extensions.includes(name.slice(dot + 1).toLowerCase());
}

/** Whether a file name ends in one of the raw media extensions (case-insensitive). */
export function isRawMediaFile(name: string): boolean {
  return hasExtension(name, RAW_MEDIA_EXTENSIONS);
}

/**
 * What "transcode again" takes from a raw folder: the video files directly in it (not in subfolders,
 * not hidden), by extension (case-insensitive).
 */
export const TRANSCODE_INPUT_EXTENSIONS = ['mkv', 'mp4', 'm4v', 'ts', 'mpg', 'vob'] as const;

/** Whether a raw folder's file name is one "transcode again" takes. */
export function isTranscodeInput(name: string): boolean {
  return hasExtension(name, TRANSCODE_INPUT_EXTENSIONS);
}
