/**
 * Pure parsing of HandBrakeCLI output (handbrake.md): `--json` blocks on stdout, scan results,
 * `--preset-list` (stderr) and failure reasons from stderr + exit code.
 */

import type { AudioStream, SubtitleStream } from '../../shared/protocol.js';
import { normaliseLanguage } from '../../shared/languages.js';
import { audioCodec, subtitleCodec, trueRoles } from './stream-codec.js';

/** One `Label: { … }` object from `--json` stdout (`Version`, `Progress`, `JSON Title Set`). */
export interface HandbrakeJsonBlock {
  label: string;
  value: unknown;
}

const BLOCK_START = /^([A-Za-z][A-Za-z ]*): (\{.*)$/;

/**
 * Line-fed collector: a block starts at `Label: {` and ends at the matching `}` in column 0;
 * everything else (libdvdread/libbluray noise) is skipped. `push` returns a block when it closes.
 */
export class HandbrakeJsonCollector {
  private label: string | null = null;
  private buffer: string[] = [];

  push(line: string): HandbrakeJsonBlock | null {
    if (this.label === null) return this.start(line);
    this.buffer.push(line);
    if (!line.startsWith('}')) return null;
    return this.finish();
  }

  private start(line: string): HandbrakeJsonBlock | null {
    const m = BLOCK_START.exec(line);
    if (!m) return null;
    this.label = m[1];
    this.buffer = [m[2]];
    // Only a line that closes its object can be a whole block: parsing every `Label: {` start threw a
    // SyntaxError (with its stack) per progress block.
    if (!m[2].trimEnd().endsWith('}') || tryParse(m[2]) === undefined) return null;
    return this.finish();
  }

  private finish(): HandbrakeJsonBlock | null {
    const label = this.label as string;
    const value = tryParse(this.buffer.join('\n'));
    this.label = null;
    this.buffer = [];
    return value === undefined ? null : { label, value };
  }
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

type Json = Record<string, unknown>;

function asObject(value: unknown): Json | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

function asNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function progressState(block: HandbrakeJsonBlock): { state: string; body: Json } | null {
  if (block.label !== 'Progress') return null;
  const body = asObject(block.value);
  const state = body?.State;
  return body && typeof state === 'string' ? { state, body } : null;
}

/**
 * Overall encode percent 0..100 from a `Progress` block: ((Pass-1)+Progress)/PassCount*100, only for
 * State WORKING (SCANNING, SEARCHING, MUXING, WORKDONE … give null).
 */
export function handbrakeProgress(block: HandbrakeJsonBlock): number | null {
  const p = progressState(block);
  if (!p || p.state !== 'WORKING') return null;
  const working = asObject(p.body.Working);
  const progress = asNumber(working?.Progress);
  if (progress === null) return null;
  const passCount = Math.max(1, asNumber(working?.PassCount) ?? 1);
  const pass = Math.min(passCount, Math.max(1, asNumber(working?.Pass) ?? 1));
  const pct = ((pass - 1 + progress) / passCount) * 100;
  return Math.min(100, Math.max(0, pct));
}

/**
 * Below this a Rate is no measurement: HandBrake 1.6.1 gives 0.0 in the first seconds and values
 * like 2.5e-7 at the end of a short encode (samples/hb-json-progress-1pass.txt); real ones are 1 and up.
 */
export const MIN_MEASURED_FPS = 0.01;

/**
 * The encoder's speed in frames per second from a WORKING `Progress` block: Rate (the current rate),
 * else RateAvg; null while HandBrake has measured neither.
 */
export function handbrakeFps(block: HandbrakeJsonBlock): number | null {
  const p = progressState(block);
  if (!p || p.state !== 'WORKING') return null;
  const working = asObject(p.body.Working);
  for (const value of [asNumber(working?.Rate), asNumber(working?.RateAvg)]) if (value !== null && value >= MIN_MEASURED_FPS) return value;
  return null;
}

/** The WORKDONE block's error (0 = success), or null for any other block. */
export function workDone(block: HandbrakeJsonBlock): { error: number } | null {
  const p = progressState(block);
  if (!p || p.state !== 'WORKDONE') return null;
  const done = asObject(p.body.WorkDone);
  return { error: asNumber(done?.Error) ?? 0 };
}

export interface HandbrakeScan {
  titles: { index: number; seconds: number; audio: AudioStream[]; subtitles: SubtitleStream[] }[];
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function asList(value: unknown): Json[] {
  return Array.isArray(value) ? value.map((v) => asObject(v)).filter((v): v is Json => v !== null) : [];
}

/**
 * AudioList entries: TrackNumber, LanguageCode (ISO 639-2), CodecName, Description, ChannelCount
 * (languages.md), Attributes (Commentary, AltCommentary, VisuallyImpaired: a DVD's content code).
 */
function scanAudio(title: Json | null): AudioStream[] {
  return asList(title?.AudioList).map((a, i) => {
    const description = asText(a.Description);
    // DTS-HD and DTS share CodecName "dca"; the description names the HD kind ("DTS-HD MA").
    const hd = /DTS-HD/i.test(description) ? 'DTS-HD' : null;
    const attrs = asObject(a.Attributes);
    return {
      index: asNumber(a.TrackNumber) ?? i + 1,
      language: normaliseLanguage(asText(a.LanguageCode)),
      codec: audioCodec(hd, asText(a.CodecName)),
      channels: asNumber(a.ChannelCount),
      ...trueRoles({ commentary: attrs?.Commentary === true || attrs?.AltCommentary === true, visual_impaired: attrs?.VisuallyImpaired === true }),
    };
  });
}

/** SubtitleList entries: TrackNumber, LanguageCode, SourceName (VOBSUB, PGS, SRT…), Attributes (Forced, ClosedCaption, Commentary). */
function scanSubtitles(title: Json | null): SubtitleStream[] {
  return asList(title?.SubtitleList).map((sub, i) => {
    const attrs = asObject(sub.Attributes);
    return {
      index: asNumber(sub.TrackNumber) ?? i + 1,
      language: normaliseLanguage(asText(sub.LanguageCode)),
      codec: subtitleCodec(asText(sub.SourceName)),
      forced: attrs?.Forced === true,
      ...trueRoles({ hearing_impaired: attrs?.ClosedCaption === true, commentary: attrs?.Commentary === true }),
    };
  });
}

/** Titles of `HandBrakeCLI -i X --scan -t 0 --json` stdout; seconds = Duration.Ticks / 90000. */
export function parseHandbrakeScan(stdout: string): HandbrakeScan {
  const collector = new HandbrakeJsonCollector();
  const titles: HandbrakeScan['titles'] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const block = collector.push(line);
    if (!block || block.label !== 'JSON Title Set') continue;
    const list = asObject(block.value)?.TitleList;
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const title = asObject(item);
      const index = asNumber(title?.Index);
      const ticks = asNumber(asObject(title?.Duration)?.Ticks);
      if (index !== null) titles.push({ index, seconds: ticks === null ? 0 : ticks / 90000, audio: scanAudio(title), subtitles: scanSubtitles(title) });
    }
  }
  return { titles };
}

export interface PresetCategory {
  category: string;
  presets: string[];
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function isCategoryLine(line: string): boolean {
  const indent = indentOf(line);
  return (indent === 0 || indent === 4) && /^\s*[^\s[].*\/\s*$/.test(line);
}

/**
 * The `--preset-list` listing (stderr): category lines end with `/`, presets are indented 4 more,
 * descriptions 8 more. Also reads the listing HandBrake dumps after "Invalid preset" (indented 4).
 */
export function parsePresetList(stderrText: string): PresetCategory[] {
  const categories: PresetCategory[] = [];
  let base: number | null = null;
  for (const raw of stderrText.split(/\r?\n/)) {
    const line = raw.replace(/\s+$/, '');
    if (line === '') continue;
    const indent = indentOf(line);
    if (base === null && !isCategoryLine(line)) continue;
    if ((base === null || indent === base) && line.endsWith('/')) {
      base = indent;
      categories.push({ category: line.trim().slice(0, -1), presets: [] });
    } else if (base !== null && indent === base + 4) {
      categories[categories.length - 1].presets.push(line.trim());
    } else if (base !== null && indent < base + 4) {
      base = isCategoryLine(line) ? base : null;
    }
  }
  return categories;
}

/** `HandBrake 1.6.1` (from `--version` stdout) → "1.6.1". */
export function parseHandbrakeVersion(stdout: string): string | null {
  return /^HandBrake (\S+)/m.exec(stdout)?.[1] ?? null;
}

function lastMatch(lines: string[], pattern: RegExp): RegExpExecArray | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = pattern.exec(lines[i]);
    if (m) return m;
  }
  return null;
}

function encodeFailureDetail(lines: string[]): string | null {
  const error = lastMatch(lines, /(?:^|\] )ERROR: (.+)$/);
  if (error) return error[1].trim();
  const codec = lastMatch(lines, /^\[([\w-]+) @ [^\]]*\] (.+)$/);
  return codec ? `${codec[1]}: ${codec[2].trim()}` : null;
}

/** The last stderr line that is not a `[hh:mm:ss]` log line or HandBrake's farewell. */
function lastPlainLine(lines: string[]): string | null {
  const m = lastMatch(lines, /^(?!\[\d\d:\d\d:\d\d\])(?!HandBrake has exited)(?!Cannot load lib)(\S.*)$/);
  return m ? m[1].trim() : null;
}

/**
 * A household-readable reason for a failed HandBrakeCLI run (handbrake.md §5): an unknown preset is
 * named, "No title found" means the input is unreadable, exit 3 reports the last ERROR:/[codec @ …]
 * line as the encode failure.
 */
export function handbrakeFailureReason(stderrText: string, exitCode: number | null, preset: string): string {
  const lines = stderrText.split(/\r?\n/);
  const invalid = lastMatch(lines, /^Invalid preset (.+)$/);
  if (invalid) return `The transcoder does not know the preset "${invalid[1].trim() || preset}"`;
  if (lines.some((l) => /No title found/.test(l))) return 'The transcoder could not read the input file: it holds no video it can open';
  const detail = encodeFailureDetail(lines);
  if (exitCode === 3 || detail) return `Encode failed: ${detail ?? 'the transcoder gave no reason'}`;
  const last = lastPlainLine(lines);
  const how = exitCode === null ? 'was stopped by a signal' : `stopped with exit code ${exitCode}`;
  return `The transcoder ${how} while using preset "${preset}"${last ? `: ${last}` : ''}`;
}

/** The video encoders of `HandBrakeCLI --help` (stdout): the names listed under "-e, --encoder". */
export function parseVideoEncoders(helpText: string): string[] {
  const lines = helpText.split(/\r?\n/);
  const start = lines.findIndex((l) => /^\s*-e, --encoder\b/.test(l));
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^\s{20,}(\S+)\s*$/.exec(line);
    if (!m) break;
    out.push(m[1]);
  }
  return out;
}

/**
 * Encoder families of a build: software (x264, x265, SVT-AV1, VP8/9, MPEG, Theora), and the hardware
 * families by their encoder prefixes: nvenc, qsv, vce (AMD; its presets are called VCN), mf (Windows
 * Media Foundation), vt (VideoToolbox), vaapi.
 */
export function encoderFamilies(encoders: string[]): string[] {
  const families = new Set<string>();
  for (const e of encoders.map((x) => x.toLowerCase())) {
    const prefix = /^(nvenc|qsv|vce|mf|vt|vaapi)_/.exec(e)?.[1];
    if (prefix) families.add(prefix);
    else if (/^(x264|x265|svt_av1|vp8|vp9|mpeg2|mpeg4|theora)/.test(e)) families.add('software');
  }
  return [...families].sort((a, b) => (a === 'software' ? -1 : b === 'software' ? 1 : a.localeCompare(b)));
}
