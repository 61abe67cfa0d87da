import fs from 'node:fs/promises';
import {
  handbrakeFailureReason,
  handbrakeFps,
  HandbrakeJsonCollector,
  handbrakeProgress,
  parseHandbrakeScan,
  parseHandbrakeVersion,
  parsePresetList,
  parseVideoEncoders,
  workDone,
} from './handbrake-parser.js';
import type { HandbrakeScan, PresetCategory } from './handbrake-parser.js';
import { describeExit, runTool, ToolError } from '../../shared/process.js';

const TOOL = 'HandBrakeCLI';

export interface HandbrakeHooks {
  signal?: AbortSignal;
  onSpawn?: (pid: number) => void;
  /** `fps`: the encoder's speed in frames per second, when HandBrake has measured it. */
  onProgress?: (pct: number, fps?: number) => void;
  timeoutMs?: number;
  /** Arguments after the preset: the stream selection (-a, -E, -s …) overrides the preset's. */
  streamArgs?: string[];
  /** The encoder's nice value (ENCODER_NICE); 0 or none: the agent's own priority. */
  nice?: number;
  /** The encoder ended well (exit code 0, no error in its last block), before its output is checked. */
  onExit?: () => void;
  /** Fork the encoder now, start it once this resolves (its slot is free): runTool's startWhen. */
  startWhen?: Promise<unknown>;
}

export interface HandbrakeOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

async function nonEmptyFile(file: string): Promise<boolean> {
  const st = await fs.stat(file).catch(() => null);
  return Boolean(st?.isFile() && st.size > 0);
}

/**
 * `HandBrakeCLI -i IN -o OUT -Z PRESET [stream args] --json`: the container follows OUT's extension. Progress is the
 * overall encode percent of WORKING blocks (100 at the end). On failure or cancel the partial output
 * is removed and a ToolError with a plain reason (naming an unknown preset) is thrown.
 */
export async function handbrakeTranscode(bin: string, input: string, output: string, preset: string, hooks: HandbrakeHooks = {}): Promise<void> {
  const collector = new HandbrakeJsonCollector();
  const seen = { doneError: 0, lastPct: -1, fps: undefined as number | undefined };
  try {
    const result = await runTool(bin, ['-i', input, '-o', output, '-Z', preset, ...(hooks.streamArgs ?? []), '--json'], {
      signal: hooks.signal,
      onSpawn: hooks.onSpawn,
      timeoutMs: hooks.timeoutMs,
      nice: hooks.nice,
      startWhen: hooks.startWhen,
      onStdoutLine: (line) => {
        const block = collector.push(line);
        if (!block) return;
        seen.doneError = workDone(block)?.error ?? seen.doneError;
        seen.fps = handbrakeFps(block) ?? seen.fps;
        const pct = handbrakeProgress(block);
        if (pct !== null && pct > seen.lastPct) {
          seen.lastPct = pct;
          hooks.onProgress?.(pct, seen.fps);
        }
      },
    });
    const failed = result.exitCode !== 0 || seen.doneError !== 0;
    if (failed) throw new ToolError(TOOL, handbrakeFailureReason(result.stderr, result.exitCode, preset), { exitCode: result.exitCode ?? undefined });
    hooks.onExit?.();
    if (!(await nonEmptyFile(output))) throw new ToolError(TOOL, `The transcoder finished but wrote no output to ${output}`, { exitCode: 0 });
    hooks.onProgress?.(100);
  } catch (err) {
    await fs.rm(output, { force: true });
    throw err;
  }
}

/** `HandBrakeCLI -i X --scan -t 0 --json`: the titles of a file, folder or disc with their durations. */
export async function handbrakeScan(bin: string, input: string, opts: HandbrakeOptions = {}): Promise<HandbrakeScan> {
  const result = await runTool(bin, ['-i', input, '--scan', '-t', '0', '--json'], { ...opts, captureStdout: true });
  const scan = parseHandbrakeScan(result.stdout);
  if (scan.titles.length === 0) {
    throw new ToolError(TOOL, handbrakeFailureReason(result.stderr, result.exitCode, ''), { exitCode: result.exitCode ?? undefined });
  }
  return scan;
}

/** `HandBrakeCLI --preset-list` (printed on stderr): the presets of this build by category. */
export async function handbrakePresetList(bin: string, opts: HandbrakeOptions = {}): Promise<PresetCategory[]> {
  const result = await runTool(bin, ['--preset-list'], opts);
  const categories = parsePresetList(result.stderr);
  if (categories.length === 0) throw new ToolError(TOOL, `The transcoder printed no preset list (${describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  return categories;
}

/** `HandBrakeCLI --version` → "1.6.1". */
export async function handbrakeVersion(bin: string, opts: HandbrakeOptions = {}): Promise<string> {
  const result = await runTool(bin, ['--version'], { ...opts, captureStdout: true });
  const version = parseHandbrakeVersion(result.stdout);
  if (!version) throw new ToolError(TOOL, `The transcoder did not report its version (${describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  return version;
}

/** `HandBrakeCLI --help`: the video encoders this build has (stdout). */
export async function handbrakeEncoders(bin: string, opts: HandbrakeOptions = {}): Promise<string[]> {
  const result = await runTool(bin, ['--help'], { ...opts, captureStdout: true });
  const encoders = parseVideoEncoders(result.stdout);
  if (encoders.length === 0) throw new ToolError(TOOL, `The transcoder listed no video encoders (${describeExit(result)})`, { exitCode: result.exitCode ?? undefined });
  return encoders;
}
