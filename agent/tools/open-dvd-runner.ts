/**
 * The open DVD backend for unencrypted DVDs and DVD images (an ISO file, a folder holding VIDEO_TS, or
 * a drive device): lsdvd for the title list and the title's cells, dvdbackup to copy the title's set
 * (its cells are cut from it: dvd-title-cells.ts says why not dvdbackup's title copy), ffmpeg to remux
 * them losslessly into MKV with chapters, all audio and subtitle streams and their languages (dvd-tools.md).
 *
 * Title sizes: lsdvd does not print them, so a scan estimates each title as the VOB bytes of its title
 * set (from `dvdbackup -I`) shared among the set's titles in proportion to their length.
 * Every audio and subpicture stream is kept with its language from the IFO, so the transcode can
 * choose languages later (and again on a retry).
 * Progress of a rip: the copy counts for the first COPY_SHARE of the bar (bytes copied against that
 * estimate, since reading the disc is the slow part), the remux for the rest (ffmpeg out_time_us
 * against the title length), shared with the subtitle palette step when the title has subtitles.
 *
 * Subtitle palettes: a DVD keeps the colours of its subpictures in the IFO (the program chain's
 * colour lookup table), not in the VOBs, so ffmpeg 5.1 (no dvdvideo demuxer) copies the subpicture
 * streams into MKV without any CodecPrivate: no palette, no canvas size. Players then draw them in
 * made-up colours, and HandBrake writes `008700` sixteen times on a 720x480 canvas, which hides them
 * (issue 37). So after the remux the VobSub tracks get the disc's palette (`lsdvd -P`) and canvas
 * (`lsdvd -v`), see keepDiscPalette.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { dvdbackupError, DVD_SECTOR, estimateTitleSizes, parseDvdbackupInfo, scanVobSectors } from './dvdbackup-parser.js';
import type { DvdbackupInfo, SectorScan } from './dvdbackup-parser.js';
import { FfmpegProgressParser, ffmpegPercent } from './ffmpeg-progress-parser.js';
import type { MkvTrack, MkvTrackFlags } from './mkvtoolnix-parser.js';
import { mkvextractTracks, mkvmergeTracks } from './mkvtoolnix-runner.js';
import { subpictureCanvas, vobsubHeaderLines, withVobsubHeader } from './vobsub-idx.js';
import { cssLibraryMissing, lsdvdError, parseLsdvdTitleCells, parseLsdvdXml } from './lsdvd-parser.js';
import type { LsdvdDisc, LsdvdTitle, LsdvdTitleCells } from './lsdvd-parser.js';
import { joinTitleCells } from './dvd-title-cells.js';
import { matroskaLanguage, UNDETERMINED } from '../../shared/languages.js';
import type { Track } from './makemkv-parser.js';
import { trueRoles } from './stream-codec.js';
import { runTool, ToolError } from '../../shared/process.js';
import type { RunToolOptions } from '../../shared/process.js';

export interface OpenDvdBins {
  lsdvd: string;
  dvdbackup: string;
  ffmpeg: string;
  mkvmerge: string;
  mkvextract: string;
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
  /** A careful re-read: dvdbackup pads only the one block it cannot read (CAREFUL_READ_ERRORS) instead of the rest of its read. */
  careful?: boolean;
}

/**
 * dvdbackup 0.4.2's read error handling (-r): by default (m) a failed read of up to its buffer's blocks
 * is padded whole with zeros and the copy goes on after it; `b` pads one block and reads on from the
 * next, so only the blocks that really fail are lost. It has no retry: the drive's own retries are all.
 */
export const CAREFUL_READ_ERRORS = 'b';

export interface OpenDvdScan {
  label: string;
  /** The main feature (lsdvd's longest title). */
  longest: number;
  titles: Track[];
}

/** Share of the progress bar given to copying the title off the disc. */
export const COPY_SHARE = 80;
/** With subtitles: where the first remux ends, and the extraction of the subtitle tracks. */
const REMUX_END = 90;
const EXTRACT_END = 92;

const TOOL = 'open-dvd';
const COPY_NAME = 'title';
const POLL_MS = 500;
const EARLY_CHECK_BYTES = 1024 * 1024;
const SAMPLE_WINDOWS = 8;
const SAMPLE_BYTES = 256 * 1024;

function bins(opts: OpenDvdOptions): OpenDvdBins {
  return { lsdvd: 'lsdvd', dvdbackup: 'dvdbackup', ffmpeg: 'ffmpeg', mkvmerge: 'mkvmerge', mkvextract: 'mkvextract', ...opts.bins };
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
  // -v and -P: the video standard and the title's palette, which the subtitle tracks need (keepDiscPalette).
  const result = await runTool(bins(opts).lsdvd, ['-Ox', '-a', '-s', '-c', '-v', '-P', source], { ...toolOptions(opts), captureStdout: true });
  if (result.exitCode !== 0) throw new ToolError('lsdvd', lsdvdError(result.stderr, result.exitCode), { exitCode: result.exitCode ?? undefined });
  try {
    return { disc: parseLsdvdXml(result.stdout), cssMissing: cssLibraryMissing(result.stdout + result.stderr) };
  } catch {
    throw new ToolError('lsdvd', 'Reading the DVD gave no title list');
  }
}

async function discInfo(source: string, opts: OpenDvdOptions): Promise<DvdbackupInfo> {
  const result = await runTool(bins(opts).dvdbackup, ['-i', source, '-I'], { ...toolOptions(opts), captureStdout: true });
  if (result.exitCode !== 0) throw new ToolError('dvdbackup', dvdbackupError(result.stderr, result.exitCode), { exitCode: result.exitCode ?? undefined });
  return parseDvdbackupInfo(result.stdout);
}

/** `lsdvd -t N -x -Oy SRC`: the title set of title N and its cells' sectors (dvd-title-cells.ts). */
async function titleCells(source: string, titleNumber: number, opts: OpenDvdOptions): Promise<LsdvdTitleCells> {
  const result = await runTool(bins(opts).lsdvd, ['-t', String(titleNumber), '-x', '-Oy', source], { ...toolOptions(opts), captureStdout: true });
  if (result.exitCode !== 0) throw new ToolError('lsdvd', lsdvdError(result.stderr, result.exitCode), { exitCode: result.exitCode ?? undefined });
  try {
    return parseLsdvdTitleCells(result.stdout);
  } catch (err) {
    throw new ToolError('lsdvd', `Reading where title ${titleNumber} lies on the DVD failed: ${(err as Error).message}`);
  }
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

/** `lsdvd -Ox -a -s -c -v -P SRC` + `dvdbackup -i SRC -I`: the titles in the same shape as MakeMKV's. */
export async function openDvdScan(source: string, opts: OpenDvdOptions = {}): Promise<OpenDvdScan> {
  const { disc } = await readDisc(source, opts);
  const sizes = estimateTitleSizes(disc.titles, await discInfo(source, opts));
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
  titleSet: number;
  tmp: string;
  estimate: number;
  cssMissing: boolean;
  report: (pct: number) => void;
}

/** `dvdbackup -i SRC -T SET -o TMP -n title`: the VOBs of the title's set, checked for CSS scrambling. */
async function copyTitle(plan: CopyPlan, hooks: OpenDvdRipHooks): Promise<string[]> {
  const inner = new AbortController();
  const signal = hooks.signal ? AbortSignal.any([hooks.signal, inner.signal]) : inner.signal;
  const watcher = new CopyWatcher(plan.tmp, plan.estimate, plan.cssMissing, plan.report, () => inner.abort());
  const timer = setInterval(() => void watcher.poll().catch(() => undefined), POLL_MS);
  const args = ['-i', plan.source, '-T', String(plan.titleSet), '-o', plan.tmp, '-n', COPY_NAME, ...(hooks.careful ? ['-r', CAREFUL_READ_ERRORS] : [])];
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

/** Runs one ffmpeg remux that writes `outFile`, reporting 0-100 of the title's length. */
async function runFfmpeg(args: string[], outFile: string, what: string, seconds: number, hooks: OpenDvdRipHooks, onPct: (pct: number) => void): Promise<void> {
  const parser = new FfmpegProgressParser();
  const result = await runTool(bins(hooks).ffmpeg, args, {
    ...toolOptions(hooks),
    onStdoutLine: (line) => {
      const block = parser.push(line);
      if (block) onPct(ffmpegPercent(block, seconds));
    },
  });
  if (result.exitCode !== 0) {
    const last = result.stderr.trim().split(/\r?\n/).pop() ?? '';
    throw new ToolError('ffmpeg', `${what} failed${last ? `: ${last}` : ''}`, { exitCode: result.exitCode ?? undefined });
  }
  const st = await fs.stat(outFile).catch(() => null);
  if (!st || st.size === 0) throw new ToolError('ffmpeg', `${what} wrote no file ${outFile}`);
}

async function remux(vobs: string[], tmp: string, title: LsdvdTitle, outFile: string, hooks: OpenDvdRipHooks, onPct: (pct: number) => void): Promise<void> {
  const chaptersFile = path.join(tmp, 'chapters.ffmeta');
  await fs.writeFile(chaptersFile, chaptersMetadata(title.chapters));
  await runFfmpeg(remuxArgs(vobs, chaptersFile, title, outFile), outFile, 'Remuxing the DVD title into MKV', title.seconds, hooks, onPct);
}

/** ffmpeg's disposition for each Matroska track flag (its matroska muxer writes them back as those flags). */
const DISPOSITIONS: [keyof MkvTrackFlags, string][] = [
  ['default', 'default'],
  ['forced', 'forced'],
  ['hearingImpaired', 'hearing_impaired'],
  ['visualImpaired', 'visual_impaired'],
  ['textDescriptions', 'descriptions'],
  ['original', 'original'],
  ['commentary', 'comment'],
];

/** The -disposition value that keeps every flag a track has ("0": none). */
function keptDisposition(track: MkvTrack): string {
  const flags = DISPOSITIONS.filter(([flag]) => track.flags[flag]).map(([, name]) => name);
  return flags.length > 0 ? flags.join('+') : '0';
}

/**
 * ffmpeg arguments that write `outFile` from the remuxed file with its subtitle tracks replaced by
 * the same tracks read back from their .idx/.sub pairs (whose header carries the disc's palette and
 * canvas, which ffmpeg's vobsub demuxer hands on as the tracks' CodecPrivate). Everything else is
 * copied as it is, in the same order (video, audio, then the subtitles), with the chapters and tags.
 * -copyts keeps every timestamp as the remuxed file and the .idx have it, so the subtitles stay
 * where they were (and every packet is the same bytes at the same time as in the remuxed file).
 * Each subtitle track keeps its language, name and flags (default, forced, hearing impaired …).
 */
export function paletteRemuxArgs(remuxed: string, subtitles: { idx: string; track: MkvTrack }[], outFile: string): string[] {
  return [
    '-v', 'error', '-nostdin', '-copyts',
    '-i', remuxed, ...subtitles.flatMap((s) => ['-i', s.idx]),
    '-map', '0', '-map', '-0:s', ...subtitles.flatMap((_, i) => ['-map', `${i + 1}:s:0`]),
    '-map_metadata', '0', '-map_chapters', '0',
    ...subtitles.flatMap((s, i) => [
      `-metadata:s:s:${i}`, `language=${s.track.language}`,
      ...(s.track.name ? [`-metadata:s:s:${i}`, `title=${s.track.name}`] : []),
      `-disposition:s:${i}`, keptDisposition(s.track),
    ]),
    '-c', 'copy', '-f', 'matroska',
    '-progress', 'pipe:1', '-nostats', '-y', outFile,
  ];
}

/**
 * Writes `outFile` from the remuxed title with the disc's palette and canvas in every VobSub track
 * (issue 37). How: mkvextract takes the tracks out as .idx/.sub (the .sub is the subpicture packets
 * unchanged), the .idx header gets "size:" and "palette:" (vobsub-idx.ts), and a second ffmpeg
 * stream copy puts them back in place of the old tracks. Why this way: ffmpeg 5.1 has no option to
 * set a copied stream's CodecPrivate, mkvpropedit cannot edit CodecPrivate, and a rewrite by
 * mkvmerge would re-parse the audio (it drops bytes it finds invalid) where ffmpeg copies every
 * packet as it is; the cost is one more write of the title, after the VOBs are gone.
 * When the palette cannot be added (no palette from lsdvd, mkvtoolnix missing, a track that is no
 * VobSub) the remuxed file is kept as it is and the job log says why.
 */
async function keepDiscPalette(remuxed: string, title: LsdvdTitle, tmp: string, outFile: string, hooks: OpenDvdRipHooks, report: (pct: number) => void): Promise<void> {
  const mkvOpts = { signal: hooks.signal, onSpawn: hooks.onSpawn, timeoutMs: hooks.timeoutMs, bins: { mkvmerge: bins(hooks).mkvmerge, mkvextract: bins(hooks).mkvextract } };
  let subtitles: { idx: string; track: MkvTrack }[];
  try {
    if (title.palette.length !== 16) throw new Error('lsdvd printed no palette for this title');
    const header = vobsubHeaderLines(subpictureCanvas(title.videoFormat, title.videoHeight), title.palette);
    const tracks = (await mkvmergeTracks(remuxed, mkvOpts)).filter((t) => t.type === 'subtitles');
    const other = tracks.find((t) => t.codecId !== 'S_VOBSUB' && t.codec !== 'VobSub');
    if (other) throw new Error(`subtitle track ${other.id} is ${other.codec || 'of an unknown codec'}, not VobSub`);
    subtitles = tracks.map((track, i) => ({ idx: path.join(tmp, `subtitle_${i + 1}.idx`), track }));
    const extractPct = (pct: number): void => report(REMUX_END + ((EXTRACT_END - REMUX_END) * pct) / 100);
    if (subtitles.length > 0) await mkvextractTracks(remuxed, subtitles.map((s) => ({ id: s.track.id, file: s.idx })), { ...mkvOpts, onProgress: extractPct });
    for (const s of subtitles) await fs.writeFile(s.idx, withVobsubHeader(await fs.readFile(s.idx, 'utf8'), header));
  } catch (err) {
    if (hooks.signal?.aborted || (err instanceof ToolError && err.canceled)) throw err;
    hooks.onMessage?.(`subtitles keep no palette (they may show in wrong colours or not at all): ${err instanceof Error ? err.message : String(err)}${err instanceof ToolError && /not installed/.test(err.message) ? '; install mkvtoolnix' : ''}`);
    await fs.rename(remuxed, outFile);
    return;
  }
  if (subtitles.length === 0) {
    await fs.rename(remuxed, outFile);
    return;
  }
  hooks.onMessage?.(`subtitles: the disc's palette and canvas for ${subtitles.length} track(s)`);
  await runFfmpeg(paletteRemuxArgs(remuxed, subtitles, outFile), outFile, 'Adding the disc\'s subtitle palette', title.seconds, hooks, (pct) =>
    report(EXTRACT_END + ((100 - EXTRACT_END) * pct) / 100),
  );
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
 * Rips one title of an unencrypted DVD into `outFile` (MKV): dvdbackup copies the title's set into a
 * temp dir next to outFile, a CSS check refuses encrypted discs, the title's cells are cut from the
 * set into one VOB, ffmpeg remuxes it with chapters and audio languages, the subtitle tracks get the disc's
 * palette (keepDiscPalette); the temp dir is always removed.
 */
export async function openDvdRip(source: string, titleNumber: number, outFile: string, hooks: OpenDvdRipHooks = {}): Promise<{ files: string[] }> {
  const out = path.resolve(outFile);
  await fs.mkdir(path.dirname(out), { recursive: true });
  const { disc, cssMissing } = await readDisc(source, hooks);
  const title = disc.titles.find((t) => t.number === titleNumber);
  if (!title) throw new ToolError(TOOL, `the DVD has no title ${titleNumber} (titles on the disc: ${disc.titles.map((t) => t.number).join(', ') || 'none'})`);
  const [info, place] = await Promise.all([discInfo(source, hooks), titleCells(source, titleNumber, hooks)]);
  const report = progressReporter(hooks.onProgress);
  const tmp = await fs.mkdtemp(path.join(path.dirname(out), '.ripwerk-dvd-'));
  try {
    if (hooks.careful) hooks.onMessage?.(`careful read: dvdbackup skips only the blocks it cannot read (-r ${CAREFUL_READ_ERRORS}), it has no read retries`);
    hooks.onMessage?.(`copying title ${titleNumber} (${Math.round(title.seconds)} s, ${title.chapters.length} chapters) off the DVD`);
    // The whole title set is copied (the copy's progress counts its bytes); the title's cells are cut from it.
    const plan: CopyPlan = { source, titleNumber, titleSet: place.titleSet, tmp, estimate: info.vobBytes.get(place.titleSet) ?? 0, cssMissing, report };
    const setVobs = await copyTitle(plan, hooks);
    const titleVob = path.join(tmp, 'title.vob');
    await joinTitleCells(setVobs, place.cells, titleVob).catch((err: Error) => {
      throw new ToolError(TOOL, `title ${titleNumber} could not be cut from its title set: ${err.message}`);
    });
    await fs.rm(path.join(tmp, COPY_NAME), { recursive: true, force: true });
    const vobs = [titleVob];
    hooks.onMessage?.(`remuxing title ${titleNumber} (${place.cells.length} cells) into ${path.basename(out)}`);
    const withSubtitles = title.subtitles.length > 0;
    const remuxed = withSubtitles ? path.join(tmp, 'remuxed.mkv') : out;
    const remuxEnd = withSubtitles ? REMUX_END : 100;
    await remux(vobs, tmp, title, remuxed, hooks, (pct) => report(COPY_SHARE + ((remuxEnd - COPY_SHARE) * pct) / 100));
    // The title's VOB is not needed any more: the title is on disk twice at most, not three times.
    await fs.rm(titleVob, { force: true });
    if (withSubtitles) await keepDiscPalette(remuxed, title, tmp, out, hooks, report);
    report(100);
    return { files: [out] };
  } catch (err) {
    await fs.rm(out, { force: true });
    throw err;
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
