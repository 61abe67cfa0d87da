import { parseFfprobePacketCounts, parseFfprobeStreams, type ProbedFile } from './ffprobe-parser.js';
import { ProbeShellPool } from '../../shared/probe-shell.js';
import { describeExit, runTool, ToolError } from '../../shared/process.js';

const ENTRIES = 'stream=index,codec_type,codec_name,profile,channels:stream_disposition=default,forced,comment,hearing_impaired,visual_impaired:stream_tags=language:format=duration';

/**
 * The probe shells' script: runs the request's fields as a command (ffprobe and its arguments, never
 * parsed by a shell) and answers "rc<TAB><exit code>", then each line of its stdout behind an "o", so
 * no line of it can be taken for the end of the answer. Its stderr is not kept (the reason given is the
 * exit code, as with a process of its own), and it does not get the shell's request descriptors.
 */
const SCRIPT = [
  'answer() {',
  '  local out rc',
  '  out=$("$@" 2>/dev/null 3<&- 4<&-); rc=$?',
  '  printf "rc\\t%s\\n" "$rc"',
  `  [ -n "$out" ] && printf "%s\\n" "o\${out//$'\\n'/$'\\n'o}"`,
  '  return 0',
  '}',
].join('\n');

/**
 * Long-lived shells that start ffprobe for the agent: a tool started by the agent itself holds its event
 * loop until the child has exec'd (15 ms at the median and up to 250 ms in the scale bench), and two
 * scans per transcode held it while other slots' encoders ended. `max`: the agent's slots. Not on
 * Windows (no bash): there `ffprobeStreams` starts ffprobe itself.
 */
export function ffprobeShells(max: number): ProbeShellPool | null {
  if (process.platform === 'win32') return null;
  return new ProbeShellPool({ script: SCRIPT, max, lowPriority: false, idleMs: 60_000 });
}

/** The exit code and stdout of a shell's answer; null when it is no answer of SCRIPT. */
export function parseShellAnswer(answer: string): { exitCode: number; stdout: string } | null {
  const lines = answer.split('\n');
  const rc = /^rc\t(\d+)$/.exec(lines[0] ?? '');
  if (!rc) return null;
  const stdout = lines.slice(1).filter((l) => l.startsWith('o')).map((l) => `${l.slice(1)}\n`).join('');
  return { exitCode: Number(rc[1]), stdout };
}

interface FfprobeOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  shells?: ProbeShellPool | null;
}

/** ffprobe with these arguments, in one of `shells` when given: its stdout; throws a ToolError naming the file when it fails. */
async function runFfprobe(bin: string, args: string[], file: string, opts: FfprobeOptions): Promise<string> {
  let result: { exitCode: number | null; signal?: string | null; stdout: string };
  if (opts.shells) {
    const timeoutMs = opts.timeoutMs ?? 120_000;
    const answer = await opts.shells.run([bin, ...args], timeoutMs, opts.signal);
    if (opts.signal?.aborted) throw new ToolError('ffprobe', 'canceled', { canceled: true });
    const parsed = answer === null ? null : parseShellAnswer(answer);
    if (!parsed) throw new ToolError('ffprobe', `ffprobe gave no answer: it ran into its time limit (${Math.round(timeoutMs / 1000)} s) and was stopped, or its shell could not run`, { timedOut: true });
    if (parsed.exitCode === 127) throw new ToolError('ffprobe', `ffprobe is not installed (looked for ${bin})`, { exitCode: 127 });
    result = parsed;
  } else {
    result = await runTool(bin, args, { signal: opts.signal, timeoutMs: opts.timeoutMs, captureStdout: true });
  }
  if (result.exitCode !== 0) throw new ToolError('ffprobe', `ffprobe could not read ${file} (${describeExit({ exitCode: result.exitCode, signal: result.signal ?? null })})`, { exitCode: result.exitCode ?? undefined });
  return result.stdout;
}

/**
 * `ffprobe … -of json FILE`: length and streams of a file (a tenth of HandBrake's scan start-up), run
 * in one of `shells` when given.
 */
export async function ffprobeStreams(bin: string, file: string, opts: FfprobeOptions = {}): Promise<ProbedFile> {
  return parseFfprobeStreams(await runFfprobe(bin, ['-v', 'error', '-show_entries', ENTRIES, '-of', 'json', file], file, opts));
}

/**
 * `ffprobe -count_packets -select_streams s … FILE`: the events of each subtitle stream, in file order
 * (parseFfprobePacketCounts). It reads the whole file (demuxing only), so it is asked only where a
 * forced track may hide among a language's tracks.
 */
export async function ffprobeSubtitleEvents(bin: string, file: string, opts: FfprobeOptions = {}): Promise<(number | null)[]> {
  const args = ['-v', 'error', '-count_packets', '-select_streams', 's', '-show_entries', 'stream=index,nb_read_packets', '-of', 'json', file];
  return parseFfprobePacketCounts(await runFfprobe(bin, args, file, opts));
}
