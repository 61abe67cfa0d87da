import fs from 'node:fs/promises';
import path from 'node:path';
import type { AccurateRipReport, RipJob, Track } from '../../shared/protocol.js';
import { safeName } from '../../shared/output-name.js';
import { runTool, ToolError } from '../../shared/process.js';
import type { DiscSource } from '../disc/image-drive.js';
import { moveFile, planOutput } from '../output/output-folder.js';
import { ProgressThrottle } from './progress-throttle.js';
import { TaskFailure, type RipResult, type TaskContext } from './rip-task.js';
import { isMultiDisc, metaflacTagReader, planAlbumFolder, saveCover, trackFileName, trackTitle, vorbisTags, writeTags } from '../cd/album-files.js';
import { abcdeFailure, abcdePercent, applyAbcdeLine, createAbcdeProgress } from '../cd/abcde-output.js';
import { paranoiaFailure, parseParanoiaToc } from '../cd/cdparanoia-toc.js';
import { BYTES_PER_FRAME, FRAMES_PER_SECOND, cueLayout, parseCueSheet, trackSpans, type CueSheet } from '../cd/cue-sheet.js';
import { DEFAULT_ACCURATERIP_URL } from '../../shared/config.js';
import { checksumFlac, reportLines, verifyAudioCd, writeReport, type RippedTrack } from '../cd/accuraterip-verify.js';
import { readDriveLayout } from '../cd/drive-cd-identity.js';
import type { DiscLayout } from '../cd/cd-toc.js';

export interface AudioCdTools {
  abcde: string;
  cdparanoia: string;
  cdInfo: string;
  ffmpeg: string;
  flac: string;
  metaflac: string;
  /** The AccurateRip database (AgentConfig.accurateRipUrl); null: the FLACs are decoded in full but not compared. */
  accurateRipUrl: string | null;
  /** Each drive's read offset in samples (AgentConfig.cdReadOffsets). */
  readOffsets: Record<string, number>;
}

export const DEFAULT_AUDIO_CD_TOOLS: AudioCdTools = { abcde: 'abcde', cdparanoia: 'cdparanoia', cdInfo: 'cd-info', ffmpeg: 'ffmpeg', flac: 'flac', metaflac: 'metaflac', accurateRipUrl: DEFAULT_ACCURATERIP_URL, readOffsets: {} };

/** The cover download names itself; MusicBrainz's own contact rules apply to the coordinator's lookups. */
const COVER_USER_AGENT = 'Ripwerk (audio CD cover)';

const SAMPLES_PER_FRAME = 588;
/** abcde waits on its own between steps; a whole CD takes minutes, a stuck drive must not hold a slot forever. */
const ABCDE_TIMEOUT_MS = 4 * 3600_000;

/** Shell single quotes for a value in abcde's config (the config is sourced by sh). */
function sh(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * abcde's config for one rip: FLAC only, no questions, no network lookups (the cddb method with
 * NOCDDBQUERY; the default musicbrainz method would go online, audio-cd.md §5), files named
 * "NN - Title.flac" in OUTPUTDIR. Ejecting is left to the -x option.
 */
export function abcdeConfig(outputDir: string, wavDir: string, readOffset = 0): string {
  return [
    // cdparanoia's --sample-offset shifts the read by the drive's offset, as whipper does (AccurateRip needs it).
    ...(readOffset !== 0 ? [`CDPARANOIAOPTS=${sh(`--sample-offset=${readOffset}`)}`] : []),
    'CDDBMETHOD=cddb',
    "CDDBURL='http://127.0.0.1:9/~cddb/cddb.cgi'",
    'NOCDDBQUERY=y',
    'INTERACTIVE=n',
    'OUTPUTTYPE=flac',
    "FLACOPTS='-s -5'",
    'ACTIONS=read,encode,tag,move,clean',
    `OUTPUTDIR=${sh(outputDir)}`,
    `WAVOUTPUTDIR=${sh(wavDir)}`,
    "OUTPUTFORMAT='${TRACKNUM} - ${TRACKFILE}'",
    'PADTRACKS=y',
    'MAXPROCS=2',
    'EJECTCD=n',
    '',
  ].join('\n');
}

/** abcde's command line: the eject option only when auto-eject is on; selected tracks at the end. */
export function abcdeArgs(config: string, device: string, eject: boolean, tracks: number[]): string[] {
  return ['-c', config, '-N', '-o', 'flac', '-d', device, ...(eject ? ['-x'] : []), ...tracks.map(String)];
}

async function readCue(file: string): Promise<{ sheet: CueSheet; bin: string; size: number }> {
  const sheet = parseCueSheet(await fs.readFile(file, 'utf8'));
  if (!sheet.file) throw new TaskFailure(`the cue sheet ${path.basename(file)} names no FILE`);
  const bin = path.resolve(path.dirname(file), sheet.file);
  const size = (await fs.stat(bin).catch(() => null))?.size;
  if (size === undefined) throw new TaskFailure(`the audio file ${sheet.file} of ${path.basename(file)} is missing`);
  return { sheet, bin, size };
}

/** The audio tracks of a CD: from the cue sheet of an image, from `cdparanoia -Q` for a drive. */
export async function scanAudioCd(source: DiscSource, signal: AbortSignal, tools: AudioCdTools = DEFAULT_AUDIO_CD_TOOLS): Promise<Track[]> {
  let spans: { number: number; frames: number }[];
  if (source.kind === 'cue') {
    const { sheet, size } = await readCue(source.path);
    spans = trackSpans(sheet, size);
  } else if (source.kind === 'device') {
    const result = await runTool(tools.cdparanoia, ['-Q', '-d', source.path], { signal, timeoutMs: 60_000 });
    spans = parseParanoiaToc(result.stderr);
    if (result.exitCode !== 0 || spans.length === 0) throw new TaskFailure(paranoiaFailure(result.stderr, source.path));
  } else {
    throw new TaskFailure('this disc is not an audio CD');
  }
  return spans.map((s) => ({ number: s.number, seconds: Math.round((s.frames / FRAMES_PER_SECOND) * 100) / 100, size_bytes: s.frames * BYTES_PER_FRAME, chapters: 0 }));
}

function chosen<T extends { number: number }>(all: T[], titles: number[]): T[] {
  if (titles.length === 0) return all;
  const missing = titles.filter((n) => !all.some((t) => t.number === n));
  if (missing.length) throw new TaskFailure(`the CD has no track ${missing.join(', ')} (tracks: ${all.map((t) => t.number).join(', ')})`);
  return all.filter((t) => titles.includes(t.number));
}

const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * A CD image: one FLAC per track cut sample-exact from the raw CD-DA with ffmpeg, tagged from the cue
 * sheet. Not abcde: it reads drives only, and its FLAC-with-cuesheet mode drops INDEX 00 pregaps
 * (audio-cd.md §5, §6); here a pregap stays with the track before it, as abcde on a drive does.
 */
async function ripCueImage(file: string, args: RipJob, dir: string, ctx: TaskContext, tools: AudioCdTools, out: RippedTrack[]): Promise<DiscLayout> {
  const { sheet, bin, size } = await readCue(file);
  const spans = chosen(trackSpans(sheet, size), args.titles);
  const format = sheet.fileType === 'MOTOROLA' ? 's16be' : 's16le';
  const throttle = new ProgressThrottle(ctx.progress, ctx.progressEveryMs);
  for (const [i, span] of spans.entries()) {
    const track = sheet.tracks.find((t) => t.number === span.number);
    const album = args.album;
    const title = album ? trackTitle(album, span.number, track?.title) : track?.title || `Track ${span.number}`;
    const dest = path.join(dir, album ? trackFileName(album, span.number, track?.title) : `${pad(span.number)} - ${safeName(title)}.flac`);
    // With an album the tags are written by metaflac afterwards (exact Vorbis comment names).
    const tags: [string, string][] = album
      ? []
      : [
          ['TITLE', title],
          ['ARTIST', track?.performer ?? sheet.performer ?? ''],
          ['ALBUM', sheet.title ?? args.title],
          ['TRACKNUMBER', String(span.number)],
          ['TRACKTOTAL', String(sheet.tracks.length)],
        ];
    // Samples from the start of the file: a data track before the audio may have sectors of another size.
    const startSample = span.byteStart / 4;
    const endSample = startSample + span.frames * SAMPLES_PER_FRAME;
    const ffArgs = ['-v', 'error', '-nostdin', '-y', '-f', format, '-ar', '44100', '-ac', '2', '-i', bin, '-af', `atrim=start_sample=${startSample}:end_sample=${endSample}`, '-c:a', 'flac'];
    if (album) ffArgs.push('-map_metadata', '-1', '-fflags', '+bitexact');
    for (const [k, v] of tags) if (v) ffArgs.push('-metadata', `${k}=${v}`);
    ffArgs.push(dest);
    ctx.log('info', `track ${pad(span.number)}: ${title}`);
    out.push({ number: span.number, file: dest });
    const result = await runTool(tools.ffmpeg, ffArgs, { signal: ctx.signal, onSpawn: ctx.onSpawn, timeoutMs: 3600_000 });
    if (result.exitCode !== 0) {
      throw new ToolError('ffmpeg', `ffmpeg could not encode track ${span.number}: ${result.stderr.trim().split('\n').pop() ?? 'no reason given'}`, { exitCode: result.exitCode ?? undefined });
    }
    if (album) await writeTags(tools.metaflac, dest, vorbisTags(album, span.number, sheet.tracks.length, track?.title), ctx.signal);
    throttle.update(((i + 1) / spans.length) * 100);
  }
  throttle.flush();
  return cueLayout(sheet, size);
}

async function findFlacs(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await findFlacs(full)));
    else if (e.isFile() && e.name.toLowerCase().endsWith('.flac')) out.push(full);
  }
  return out.sort();
}

/** A CD in a drive: abcde (cdparanoia) reads and encodes into the raw dir; the FLACs then move into the target. */
async function ripDevice(device: string, args: RipJob, dir: string, ctx: TaskContext, tools: AudioCdTools, out: RippedTrack[]): Promise<DiscLayout | null> {
  const total = args.titles.length || (await scanAudioCd({ kind: 'device', path: device }, ctx.signal, tools)).length;
  // The TOC as AccurateRip counts it (data tracks, the real lead-out), read before abcde takes the drive.
  const read = await readDriveLayout(device, tools, ctx.signal);
  const outputDir = path.join(args.raw_dir, 'flac');
  const wavDir = path.join(args.raw_dir, 'wav');
  await fs.mkdir(outputDir, { recursive: true });
  await fs.mkdir(wavDir, { recursive: true });
  const config = path.join(args.raw_dir, 'abcde.conf');
  await fs.writeFile(config, abcdeConfig(outputDir, wavDir, tools.readOffsets[device] ?? 0));
  const progress = createAbcdeProgress(total);
  const throttle = new ProgressThrottle(ctx.progress, ctx.progressEveryMs);
  const lines: string[] = [];
  const onLine = (line: string): void => {
    lines.push(line);
    if (applyAbcdeLine(progress, line)) ctx.log('info', line.trim());
    throttle.update(abcdePercent(progress));
  };
  const result = await runTool(tools.abcde, abcdeArgs(config, device, args.auto_eject, args.titles), {
    signal: ctx.signal,
    onSpawn: ctx.onSpawn,
    onStdoutLine: onLine,
    onStderrLine: onLine,
    timeoutMs: ABCDE_TIMEOUT_MS,
  });
  throttle.flush();
  const flacs = await findFlacs(outputDir);
  if (result.exitCode !== 0 || flacs.length === 0) throw new ToolError('abcde', abcdeFailure(lines.join('\n'), device), { exitCode: result.exitCode ?? undefined });
  for (const file of flacs) {
    // abcde names its files "NN - Track_N.flac" (no lookup): with an album they get its names and tags.
    const n = Number(/^(\d+)/.exec(path.basename(file))?.[1] ?? NaN);
    const album = args.album && Number.isInteger(n) ? args.album : null;
    const dest = path.join(dir, album ? trackFileName(album, n) : path.basename(file));
    out.push({ number: n, file: dest });
    await moveFile(file, dest);
    if (album) await writeTags(tools.metaflac, dest, vorbisTags(album, n, total), ctx.signal);
  }
  return read?.layout ?? null;
}

/**
 * The rip proven: every FLAC decoded in full (a file that does not decode fails the rip), and, with a
 * database and the disc's layout, each track compared with AccurateRip. The verdict goes to the job
 * log, into the album folder (accuraterip.log) and to the job (job_done). A track that differs from a
 * confident database entry is a warning; a database that cannot be asked changes nothing.
 */
async function proveAudioCd(layout: DiscLayout | null, tracks: RippedTrack[], source: DiscSource, args: RipJob, dir: string, ctx: TaskContext, tools: AudioCdTools): Promise<AccurateRipReport | undefined> {
  const fail = (err: unknown): never => {
    if (ctx.signal.aborted) throw err;
    throw new TaskFailure(`the rip is broken: ${(err as Error).message}`);
  };
  if (!tools.accurateRipUrl || !layout) {
    for (const [i, t] of tracks.entries()) await checksumFlac(t.file, { index: i + 1, count: tracks.length }, tools, ctx.signal).catch(fail);
    ctx.log('info', `all ${tracks.length} FLAC files decode in full; ${layout ? 'the AccurateRip check is off (ACCURATERIP_BASE_URL=off)' : 'no AccurateRip check: the disc\'s TOC could not be read again'}`);
    return undefined;
  }
  const offset = source.kind === 'cue' ? { samples: 0, source: 'image' as const } : source.path in tools.readOffsets ? { samples: tools.readOffsets[source.path], source: 'setting' as const } : { samples: 0, source: 'assumed' as const };
  const report = await verifyAudioCd({ layout, tracks, readOffset: offset, baseUrl: tools.accurateRipUrl, tools, signal: ctx.signal }).catch(fail);
  const warn = report.status === 'inaccurate';
  for (const line of reportLines(report)) ctx.log(warn && / NOT accurate /.test(line) ? 'warn' : 'info', line);
  if (warn) ctx.log('warn', 'AccurateRip: a track differs from the database: clean the disc and rip it again (retry-rip), or check the drive\'s read offset');
  const file = await writeReport(dir, report, args.album && isMultiDisc(args.album) ? args.album.disc_number : null);
  ctx.log('info', `AccurateRip log written to ${path.basename(file)}`);
  return report;
}

/**
 * worker.tasks.rip_disc for an audio CD: lossless FLAC, one file per track, straight into the output
 * folder `<target>/<Title>` (audio CDs have no transcode stage). The raw dir only holds abcde's
 * temporary files and is removed afterwards.
 */
export async function ripAudioCd(args: RipJob, source: DiscSource, ctx: TaskContext, tools: AudioCdTools = DEFAULT_AUDIO_CD_TOOLS): Promise<RipResult> {
  await fs.mkdir(args.raw_dir, { recursive: true });
  const plan = args.album ? { dir: await planAlbumFolder(args.target_dir, args.album, args.job_id, metaflacTagReader(tools.metaflac, ctx.signal)) } : await planOutput({ ...args, series: null, season: null });
  ctx.log('info', `ripping the audio CD "${args.album ? `${args.album.artist} - ${args.album.album}` : args.title}" to FLAC into ${plan.dir}`);
  const tracks: RippedTrack[] = [];
  let accuraterip: AccurateRipReport | undefined;
  try {
    let layout: DiscLayout | null;
    if (source.kind === 'cue') layout = await ripCueImage(source.path, args, plan.dir, ctx, tools, tracks);
    else if (source.kind === 'device') layout = await ripDevice(source.path, args, plan.dir, ctx, tools, tracks);
    else throw new TaskFailure('this disc is not an audio CD');
    accuraterip = await proveAudioCd(layout, tracks, source, args, plan.dir, ctx, tools);
  } catch (err) {
    // No half-written album stays behind in the library.
    await Promise.all(tracks.map((t) => fs.rm(t.file, { force: true })));
    const left = await fs.readdir(plan.dir).catch(() => ['?']);
    if (left.length === 0) await fs.rmdir(plan.dir).catch(() => undefined);
    // An artist folder made for this album alone goes too (rmdir refuses a folder that holds other albums).
    if (args.album && left.length === 0) await fs.rmdir(path.dirname(plan.dir)).catch(() => undefined);
    throw err;
  }
  if (args.album?.cover_url) {
    const cover = await saveCover(args.album.cover_url, plan.dir, COVER_USER_AGENT, ctx.signal);
    if ('file' in cover) ctx.log('info', `front cover saved as ${path.basename(cover.file)}`);
    else ctx.log('warn', `no cover.jpg: ${cover.why}`);
  }
  await fs.rm(args.raw_dir, { recursive: true, force: true });
  const files = tracks.map((t) => t.file);
  return { files, titles: [], output: { output_path: plan.dir, files }, ...(accuraterip ? { accuraterip } : {}) };
}
