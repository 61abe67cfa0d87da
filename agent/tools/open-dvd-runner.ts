/**
 * The open DVD backend for unencrypted DVDs and DVD images (an ISO file, a folder holding VIDEO_TS, or
 * a drive device): lsdvd for the title list, dvdbackup to copy one title's VOBs, ffmpeg to remux them
 * losslessly into MKV with chapters, all audio and subtitle streams and their languages (dvd-tools.md).
 *
 * Title sizes: lsdvd does not print them, so a scan estimates each title as the VOB bytes of its title
 * set (from `dvdbackup -I`) shared among the set's titles in proportion to their length.
 * Every audio and subpicture stream is kept with its language from the IFO, so the transcode can
 * choose languages later (and again on a retry).
 * Progress of a rip: the copy counts for the first COPY_SHARE of the bar (bytes copied against that
 * estimate, since reading the disc is the slow part), the remux for the rest (ffmpeg out_time_us
 * against the title length).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { dvdbackupError, DVD_SECTOR, estimateTitleSizes, parseDvdbackupInfo, scanVobSectors } from './dvdbackup-parser.js';
import type { SectorScan } from './dvdbackup-parser.js';
import { FfmpegProgressParser, ffmpegPercent } from './ffmpeg-progress-parser.js';
import { cssLibraryMissing, lsdvdError, parseLsdvdXml } from './lsdvd-parser.js';
import type { LsdvdDisc, LsdvdTitle } from './lsdvd-parser.js';
import { matroskaLanguage, UNDETERMINED } from '../../shared/languages.js';
import type { Track } from './makemkv-parser.js';
import { trueRoles } from './stream-codec.js';
import { runTool, ToolError } from '../../shared/process.js';
import type { RunToolOptions } from '../../shared/process.js';

export interface OpenDvdBins {
  lsdvd: string;
  dvdbackup: string;
  ffmpeg: string;
}

export interface OpenDvdOptions {
  signal?: AbortSignal;
  onSpawn?: (pid: number) => void;
  /** Limit for each tool call. */
  timeoutMs?: number;
  bins?: Partial<OpenDvdBins>;
}

export interface OpenDvdRipHooks extends OpenDvdOptions {
  onProgress?: (pct: number) => void;
  onMessage?: (text: string) => void;
}

export interface OpenDvdScan {
  label: string;
  /** The main feature (lsdvd's longest title). */
  longest: number;
  titles: Track[];
}

/** Share of the progress bar given to copying the title off the disc. */
export const COPY_SHARE = 80;

const TOOL = 'open-dvd';
const COPY_NAME = 'title';
const POLL_MS = 500;
const EARLY_CHECK_BYTES = 1024 * 1024;
const SAMPLE_WINDOWS = 8;
const SAMPLE_BYTES = 256 * 1024;

function bins(opts: OpenDvdOptions): OpenDvdBins {
  return { lsdvd: 'lsdvd', dvdbackup: 'dvdbackup', ffmpeg: 'ffmpeg', ...opts.bins };
}

function toolOptions(opts: OpenDvdOptions): RunToolOptions {
  return { signal: opts.signal, onSpawn: opts.onSpawn, timeoutMs: opts.timeoutMs };
}

function encryptedError(cssMissing: boolean): ToolError {
  const reason = cssMissing
    ? 'this DVD is encrypted (CSS) and this worker has no libdvdcss: add it with `sudo bash scripts/install.sh --with-libdvdcss` (or install MakeMKV: --with-makemkv), then rip again'
    : 'this DVD is encrypted and libdvdcss could not decrypt it: it needs MakeMKV (`sudo bash scripts/install.sh --with-makemkv`)';
  return new ToolError(TOOL, reason);
}

async function readDisc(source: string, opts: OpenDvdOptions): Promise<{ disc: LsdvdDisc; cssMissing: boolean }> {
  const result = await runTool(bins(opts).lsdvd, ['-Ox', '-a', '-s', '-c', source], { ...toolOptions(opts), captureStdout: true });
  if (result.exitCode !== 0) throw new ToolError('lsdvd', lsdvdError(result.stderr, result.exitCode), { exitCode: result.exitCode ?? undefined });
  try {
    return { disc: parseLsdvdXml(result.stdout), cssMissing: cssLibraryMissing(result.stdout + result.stderr) };
  } catch {
    throw new ToolError('lsdvd', 'Reading the DVD gave no title list');
  }
}

async function titleSizes(source: string, titles: LsdvdTitle[], opts: OpenDvdOptions): Promise<Map<number, number>> {
  const result = await runTool(bins(opts).dvdbackup, ['-i', source, '-I'], { ...toolOptions(opts), captureStdout: true });
  if (result.exitCode !== 0) throw new ToolError('dvdbackup', dvdbackupError(result.stderr, result.exitCode), { exitCode: result.exitCode ?? undefined });
  return estimateTitleSizes(titles, parseDvdbackupInfo(result.stdout));
}

function toTrack(title: LsdvdTitle, sizes: Map<number, number>): Track {
  return {
    number: title.number,
    seconds: title.seconds,
    sizeBytes: sizes.get(title.number) ?? 0,
    chapters: title.chapters.length,
    outputFileName: null,
    // MakeMKV names a DVD title by its DVD title number (TINFO 24, "01"); lsdvd's number is the same one.
    originalTitleId: String(title.number).padStart(2, '0'),
    audio: title.audio.map((a, i) => ({ index: i + 1, language: a.language, codec: a.codec, channels: a.channels, ...trueRoles({ commentary: a.commentary, visual_impaired: a.visualImpaired }) })),
    subtitles: title.subtitles.map((sp, i) => ({ index: i + 1, language: sp.language, codec: 'vobsub', forced: sp.forced, ...trueRoles({ hearing_impaired: sp.hearingImpaired, commentary: sp.commentary }) })),
  };
}

/** `lsdvd -Ox -a -s -c SRC` + `dvdbackup -i SRC -I`: the titles in the same shape as MakeMKV's. */
export async function openDvdScan(source: string, opts: OpenDvdOptions = {}): Promise<OpenDvdScan> {
  const { disc } = await readDisc(source, opts);
  const sizes = await titleSizes(source, disc.titles, opts);
  return { label: disc.label, longest: disc.longest, titles: disc.titles.map((t) => toTrack(t, sizes)) };
}

/** The title VOBs dvdbackup wrote (VTS_nn_1.VOB, VTS_nn_2.VOB …), in playback order. */
async function copiedVobs(tmp: string): Promise<string[]> {
  const dir = path.join(tmp, COPY_NAME, 'VIDEO_TS');
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names
    .map((name) => ({ name, m: /^VTS_(\d+)_([1-9])\.VOB$/i.exec(name) }))
    .filter((e): e is { name: string; m: RegExpExecArray } => e.m !== null)
    .sort((a, b) => Number(a.m[1]) - Number(b.m[1]) || Number(a.m[2]) - Number(b.m[2]))
    .map((e) => path.join(dir, e.name));
}

async function readWindow(file: string, offset: number, length: number): Promise<Uint8Array> {
  const handle = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Scans SAMPLE_WINDOWS evenly spread windows of every VOB for pack headers and CSS scrambling. */
async function sampleVobs(files: string[]): Promise<SectorScan> {
  const total: SectorScan = { packs: 0, scrambled: 0 };
  for (const file of files) {
    const size = (await fs.stat(file)).size;
    const step = Math.max(SAMPLE_BYTES, Math.floor(size / SAMPLE_WINDOWS / DVD_SECTOR) * DVD_SECTOR);
    for (let offset = 0; offset < size; offset += step) {
      const scan = scanVobSectors(await readWindow(file, offset, SAMPLE_BYTES));
      total.packs += scan.packs;
      total.scrambled += scan.scrambled;
    }
  }
  return total;
}

async function copiedBytes(tmp: string): Promise<number> {
  let bytes = 0;
  for (const file of await copiedVobs(tmp)) bytes += (await fs.stat(file).catch(() => null))?.size ?? 0;
  return bytes;
}

class CopyWatcher {
  private checked = false;
  private busy = false;
  refusal: ToolError | null = null;

  constructor(
    private readonly tmp: string,
    private readonly estimate: number,
    private readonly cssMissing: boolean,
    private readonly report: (pct: number) => void,
    private readonly abort: () => void,
  ) {}

  async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const bytes = await copiedBytes(this.tmp);
      if (this.estimate > 0) this.report(Math.min(COPY_SHARE - 1, (bytes / this.estimate) * COPY_SHARE));
      if (!this.checked && bytes >= EARLY_CHECK_BYTES) await this.earlyCheck();
    } finally {
      this.busy = false;
    }
  }

  /** Stops the copy of an encrypted disc early instead of reading all of it. */
  private async earlyCheck(): Promise<void> {
    this.checked = true;
    const [first] = await copiedVobs(this.tmp);
    if (!first) return;
    const scan = scanVobSectors(await readWindow(first, 0, EARLY_CHECK_BYTES));
    if (scan.scrambled > 0) {
      this.refusal = encryptedError(this.cssMissing);
      this.abort();
    }
  }
}

interface CopyPlan {
  source: string;
  titleNumber: number;
  tmp: string;
  estimate: number;
  cssMissing: boolean;
  report: (pct: number) => void;
}

/** `dvdbackup -i SRC -t N -o TMP -n title`: the title's VOBs, checked for CSS scrambling. */
async function copyTitle(plan: CopyPlan, hooks: OpenDvdRipHooks): Promise<string[]> {
  const inner = new AbortController();
  const signal = hooks.signal ? AbortSignal.any([hooks.signal, inner.signal]) : inner.signal;
  const watcher = new CopyWatcher(plan.tmp, plan.estimate, plan.cssMissing, plan.report, () => inner.abort());
  const timer = setInterval(() => void watcher.poll().catch(() => undefined), POLL_MS);
  const args = ['-i', plan.source, '-t', String(plan.titleNumber), '-o', plan.tmp, '-n', COPY_NAME];
  try {
    const result = await runTool(bins(hooks).dvdbackup, args, { ...toolOptions(hooks), signal }).catch((err: unknown) => {
      throw watcher.refusal ?? err;
    });
    if (result.exitCode !== 0) throw new ToolError('dvdbackup', dvdbackupError(result.stderr, result.exitCode), { exitCode: result.exitCode ?? undefined });
  } finally {
    clearInterval(timer);
  }
  const vobs = await copiedVobs(plan.tmp);
  if (vobs.length === 0) throw new ToolError('dvdbackup', `Copying title ${plan.titleNumber} off the DVD gave no video files`);
  const scan = await sampleVobs(vobs);
  if (scan.scrambled > 0) throw encryptedError(plan.cssMissing);
  if (scan.packs === 0) throw new ToolError(TOOL, `title ${plan.titleNumber} could not be read from the DVD: no video data was found (the disc may be encrypted or damaged)`);
  return vobs;
}

/** An ffmetadata file with one chapter per lsdvd chapter length (seconds), in milliseconds. */
export function chaptersMetadata(lengths: number[]): string {
  const lines = [';FFMETADATA1'];
  let start = 0;
  lengths.forEach((length, i) => {
    const end = start + Math.max(0, Math.round(length * 1000));
    lines.push('[CHAPTER]', 'TIMEBASE=1/1000', `START=${start}`, `END=${end}`, `title=Chapter ${i + 1}`);
    start = end;
  });
  return `${lines.join('\n')}\n`;
}

/** A stream's roles from the IFO's content code as ffmpeg dispositions (Matroska track flags); null for none. */
function disposition(st: { forced?: boolean; commentary: boolean; visualImpaired?: boolean; hearingImpaired?: boolean }): string | null {
  const flags = [st.forced && 'forced', st.commentary && 'comment', st.visualImpaired && 'visual_impaired', st.hearingImpaired && 'hearing_impaired'].filter(Boolean);
  return flags.length ? flags.join('+') : null;
}

/**
 * ffmpeg -map/-metadata arguments for every audio and subpicture stream of the title, in the IFO's
 * order. The languages and the roles (content codes: forced, commentary, audio description, closed
 * captions, as track flags) live only in the IFO (VOBs carry none), so they are written here. Streams are
 * mapped by their MPEG id so the order is the IFO's, not the order the demuxer met them in; "?" keeps
 * a stream the IFO lists but the title never uses from failing the remux.
 */
export function streamArgs(title: LsdvdTitle): string[] {
  const args: string[] = [];
  const map = (kind: 'a' | 's', streams: (Parameters<typeof disposition>[0] & { streamId: number | null; language: string })[]): void => {
    const byId = streams.length > 0 && streams.every((st) => st.streamId !== null);
    if (byId) for (const st of streams) args.push('-map', `0:i:0x${(st.streamId as number).toString(16)}?`);
    else args.push('-map', `0:${kind}?`);
    streams.forEach((st, i) => {
      if (st.language !== UNDETERMINED) args.push(`-metadata:s:${kind}:${i}`, `language=${matroskaLanguage(st.language)}`);
      const flags = disposition(st);
      if (flags) args.push(`-disposition:${kind}:${i}`, flags);
    });
  };
  map('a', title.audio);
  if (title.subtitles.length > 0) map('s', title.subtitles);
  return args;
}

function remuxArgs(vobs: string[], chaptersFile: string, title: LsdvdTitle, outFile: string): string[] {
  const input = vobs.length === 1 ? vobs[0] : `concat:${vobs.join('|')}`;
  return [
    // Subpicture streams appear only when a subtitle is first shown: probe far enough to meet them.
    '-v', 'error', '-nostdin', '-fflags', '+genpts', '-probesize', '200M', '-analyzeduration', '200M',
    '-i', input, '-i', chaptersFile,
    '-map', '0:v', ...streamArgs(title),
    '-map_metadata', '1', '-map_chapters', '1',
    '-c', 'copy', '-f', 'matroska',
    '-progress', 'pipe:1', '-nostats', '-y', outFile,
  ];
}

async function remux(vobs: string[], tmp: string, title: LsdvdTitle, outFile: string, hooks: OpenDvdRipHooks, report: (pct: number) => void): Promise<void> {
  const chaptersFile = path.join(tmp, 'chapters.ffmeta');
  await fs.writeFile(chaptersFile, chaptersMetadata(title.chapters));
  const parser = new FfmpegProgressParser();
  const result = await runTool(bins(hooks).ffmpeg, remuxArgs(vobs, chaptersFile, title, outFile), {
    ...toolOptions(hooks),
    onStdoutLine: (line) => {
      const block = parser.push(line);
      if (block) report(COPY_SHARE + (ffmpegPercent(block, title.seconds) * (100 - COPY_SHARE)) / 100);
    },
  });
  if (result.exitCode !== 0) {
    const last = result.stderr.trim().split(/\r?\n/).pop() ?? '';
    throw new ToolError('ffmpeg', `Remuxing the DVD title into MKV failed${last ? `: ${last}` : ''}`, { exitCode: result.exitCode ?? undefined });
  }
  const st = await fs.stat(outFile).catch(() => null);
  if (!st || st.size === 0) throw new ToolError('ffmpeg', `Remuxing the DVD title wrote no file ${outFile}`);
}

function progressReporter(onProgress: ((pct: number) => void) | undefined): (pct: number) => void {
  let last = -1;
  return (pct) => {
    const value = Math.min(100, Math.max(0, pct));
    if (value <= last) return;
    last = value;
    onProgress?.(value);
  };
}

/**
 * Rips one title of an unencrypted DVD into `outFile` (MKV): dvdbackup copies the title into a temp
 * dir next to outFile, a CSS check refuses encrypted discs, ffmpeg remuxes the VOB(s) (concat
 * protocol for several parts) with chapters and audio languages; the temp dir is always removed.
 */
export async function openDvdRip(source: string, titleNumber: number, outFile: string, hooks: OpenDvdRipHooks = {}): Promise<{ files: string[] }> {
  const out = path.resolve(outFile);
  await fs.mkdir(path.dirname(out), { recursive: true });
  const { disc, cssMissing } = await readDisc(source, hooks);
  const title = disc.titles.find((t) => t.number === titleNumber);
  if (!title) throw new ToolError(TOOL, `the DVD has no title ${titleNumber} (titles on the disc: ${disc.titles.map((t) => t.number).join(', ') || 'none'})`);
  const sizes = await titleSizes(source, disc.titles, hooks);
  const report = progressReporter(hooks.onProgress);
  const tmp = await fs.mkdtemp(path.join(path.dirname(out), '.ripwerk-dvd-'));
  try {
    hooks.onMessage?.(`copying title ${titleNumber} (${Math.round(title.seconds)} s, ${title.chapters.length} chapters) off the DVD`);
    const plan: CopyPlan = { source, titleNumber, tmp, estimate: sizes.get(titleNumber) ?? 0, cssMissing, report };
    const vobs = await copyTitle(plan, hooks);
    hooks.onMessage?.(`remuxing ${vobs.length} VOB part(s) into ${path.basename(out)}`);
    await remux(vobs, tmp, title, out, hooks, report);
    report(100);
    return { files: [out] };
  } catch (err) {
    await fs.rm(out, { force: true });
    throw err;
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
