import fs from 'node:fs/promises';
import path from 'node:path';
import {
  applyMkvLine,
  createMkvRunState,
  makemkvFatalReason,
  mkvOutcome,
  parseMakemkvInfo,
  ripperMessageText,
  tokenizeMakemkvLine,
  toMessage,
} from './makemkv-parser.js';
import type { MakemkvInfo, MkvRunState } from './makemkv-parser.js';
import { describeExit, runTool, ToolError } from '../../shared/process.js';
import type { ToolResult } from '../../shared/process.js';

const TOOL = 'makemkvcon';

export interface MakemkvInfoOptions {
  /** The HOME makemkvcon runs with: it reads its settings, keys and KEYDB.cfg from $HOME/.MakeMKV. */
  home?: string;
  signal?: AbortSignal;
  onSpawn?: (pid: number) => void;
  onMessage?: (text: string) => void;
  timeoutMs?: number;
}

export interface MakemkvRipHooks extends MakemkvInfoOptions {
  onProgress?: (pct: number) => void;
  /** TINFO 27 of the title from the `info` run, used when the `mkv` run does not print it. */
  expectedFileName?: string | null;
}

/** A failed makemkvcon run, with the MSG codes it printed (for the UHD reasons of rippers.ts). */
export class MakemkvError extends ToolError {
  constructor(reason: string, readonly codes: number[], exitCode: number | null) {
    super(TOOL, reason, exitCode === null ? {} : { exitCode });
  }
}

export interface RipResult {
  /** Absolute paths of the MKV files produced. */
  files: string[];
}

/** Options shared by `info` and `mkv`: identical so that title indices stay valid (makemkv.md §6). */
function baseArgs(): string[] {
  return ['-r', '--noscan', '--messages=-stdout', '--progress=-same', '--minlength=0'];
}

/** Calls onMessage with the text of each MSG line that is not a debug trace. */
function messageForwarder(onMessage: ((text: string) => void) | undefined): (line: string) => void {
  return (line) => {
    if (!onMessage) return;
    const record = tokenizeMakemkvLine(line);
    const msg = record ? toMessage(record) : null;
    const text = msg ? ripperMessageText(msg) : null;
    if (text !== null) onMessage(text);
  };
}

function infoFailureReason(info: MakemkvInfo, result: ToolResult): string {
  const fatal = info.messages.find((m) => m.code === 5021) ?? info.messages.find((m) => info.fatalCodes.includes(m.code));
  if (fatal) return makemkvFatalReason(fatal);
  if (result.exitCode === 1 && info.messages.length === 0) return 'MakeMKV did not accept the command line (exit code 1)';
  if (info.titleCount === 0) return 'MakeMKV opened the disc but found no titles on it';
  return `MakeMKV could not read the disc (${describeExit(result)})`;
}

/**
 * `makemkvcon … info <source>`: the disc's titles. Sources: `iso:/path/file.iso`, `file:/path/folder`,
 * `dev:/dev/sr0`, `disc:N`. Throws a ToolError unless the info outcome rule holds.
 */
export async function makemkvInfo(bin: string, source: string, opts: MakemkvInfoOptions = {}): Promise<MakemkvInfo> {
  const lines: string[] = [];
  const forward = messageForwarder(opts.onMessage);
  const result = await runTool(bin, [...baseArgs(), 'info', source], {
    ...(opts.home ? { env: { HOME: opts.home } } : {}),
    signal: opts.signal,
    onSpawn: opts.onSpawn,
    timeoutMs: opts.timeoutMs,
    onStdoutLine: (line) => {
      lines.push(line);
      forward(line);
    },
  });
  const info = parseMakemkvInfo(lines);
  if (!info.opened) throw new MakemkvError(infoFailureReason(info, result), info.messages.map((m) => m.code), result.exitCode);
  return info;
}

async function nonEmptyFile(file: string): Promise<boolean> {
  const st = await fs.stat(file).catch(() => null);
  return Boolean(st?.isFile() && st.size > 0);
}

/** The newest .mkv in `dir` written since `sinceMs`, or null. */
async function newestMkv(dir: string, sinceMs: number): Promise<string | null> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  let best: { file: string; mtime: number } | null = null;
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.toLowerCase().endsWith('.mkv')) continue;
    const file = path.join(dir, entry.name);
    const st = await fs.stat(file).catch(() => null);
    if (!st || st.mtimeMs < sinceMs) continue;
    if (!best || st.mtimeMs > best.mtime) best = { file, mtime: st.mtimeMs };
  }
  return best?.file ?? null;
}

async function producedFile(state: MkvRunState, titleNumber: number, outDir: string, expected: string | null | undefined, startedMs: number): Promise<string> {
  const name = state.outputFiles[titleNumber] ?? expected ?? null;
  const file = name ? path.join(outDir, name) : await newestMkv(outDir, startedMs);
  if (file && (await nonEmptyFile(file))) return file;
  const shown = file ?? `a new .mkv file in ${outDir}`;
  throw new ToolError(TOOL, `MakeMKV reported the title as saved, but ${shown} is missing or empty`);
}

function ripFailureReason(state: MkvRunState, reason: string | null, result: ToolResult): string {
  if (result.exitCode === 1 && state.messages.length === 0) return 'MakeMKV did not accept the command line (exit code 1)';
  if (state.fatal.length > 0 || state.failed > 0) return reason ?? `MakeMKV failed (${describeExit(result)})`;
  return `${reason ?? 'MakeMKV failed'} (${describeExit(result)})`;
}

/**
 * `makemkvcon … mkv <source> <title> <outDir>`: rips one title. Progress is the "Saving to MKV file"
 * bar; messages go through ripperMessageText (the rip's budget drops repeats and caps them). Success needs the outcome rule AND a non-empty MKV
 * (TINFO 27 of the title, else the newest .mkv written into outDir during the run).
 */
export async function makemkvRip(bin: string, source: string, titleNumber: number, outDir: string, hooks: MakemkvRipHooks = {}): Promise<RipResult> {
  const dir = path.resolve(outDir);
  await fs.mkdir(dir, { recursive: true });
  const startedMs = Date.now() - 2000;
  const forward = messageForwarder(hooks.onMessage);
  let state = createMkvRunState();
  const result = await runTool(bin, [...baseArgs(), 'mkv', source, String(titleNumber), dir], {
    ...(hooks.home ? { env: { HOME: hooks.home } } : {}),
    signal: hooks.signal,
    onSpawn: hooks.onSpawn,
    timeoutMs: hooks.timeoutMs,
    onStdoutLine: (line) => {
      const before = state.ripPercent;
      state = applyMkvLine(state, line);
      forward(line);
      if (state.ripPercent !== before) hooks.onProgress?.(state.ripPercent);
    },
  });
  const outcome = mkvOutcome(state);
  if (!outcome.ok) throw new MakemkvError(ripFailureReason(state, outcome.reason, result), state.messages.map((m) => m.code), result.exitCode);
  const file = await producedFile(state, titleNumber, dir, hooks.expectedFileName, startedMs);
  return { files: [file] };
}
