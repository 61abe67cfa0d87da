import { parseFfprobeStreams, type ProbedFile } from './ffprobe-parser.js';
import { describeExit, runTool, ToolError } from '../../shared/process.js';

const ENTRIES = 'stream=index,codec_type,codec_name,profile,channels:stream_disposition=default,forced:stream_tags=language:format=duration';

/** `ffprobe … -of json FILE`: length and streams of a file (a tenth of HandBrake's scan start-up). */
export async function ffprobeStreams(bin: string, file: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ProbedFile> {
  const result = await runTool(bin, ['-v', 'error', '-show_entries', ENTRIES, '-of', 'json', file], { ...opts, captureStdout: true });
  if (result.exitCode !== 0) throw new ToolError('ffprobe', `ffprobe could not read ${file} (${describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  return parseFfprobeStreams(result.stdout);
}
