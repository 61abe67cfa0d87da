/**
 * What counts as raw data: a raw folder holds a job's rip only when at least one video file (or, for
 * an audio CD, audio file) is in it. A rip that failed before writing leaves an empty folder (or one
 * with only a config or log file), which is no raw data: nothing there can be compressed again.
 */
export const RAW_MEDIA_EXTENSIONS = ['mkv', 'm2ts', 'vob', 'mpg', 'mp4', 'ts', 'flac', 'wav'] as const;

/** Whether a file name ends in one of the raw media extensions (case-insensitive). */
export function isRawMediaFile(name: string): boolean {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return false;
  return (RAW_MEDIA_EXTENSIONS as readonly string[]).includes(name.slice(dot + 1).toLowerCase());
}

