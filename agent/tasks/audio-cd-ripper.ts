import fs from 'node:fs/promises';
import path from 'node:path';
import type { RipJob, Track } from '../../shared/protocol.js';
import { safeName } from '../../shared/output-name.js';
import { runTool, ToolError } from '../../shared/process.js';
import type { DiscSource } from '../disc/image-drive.js';
import { moveFile, planOutput } from '../output/output-folder.js';
import { ProgressThrottle } from './progress-throttle.js';
import { TaskFailure, type RipResult, type TaskContext } from './rip-task.js';
import { metaflacTagReader, planAlbumFolder, saveCover, trackFileName, trackTitle, vorbisTags, writeTags } from '../cd/album-files.js';
import { abcdeFailure, abcdePercent, applyAbcdeLine, createAbcdeProgress } from '../cd/abcde-output.js';
import { paranoiaFailure, parseParanoiaToc } from '../cd/cdparanoia-toc.js';
import { BYTES_PER_FRAME, FRAMES_PER_SECOND, parseCueSheet, trackSpans, type CueSheet } from '../cd/cue-sheet.js';

export interface AudioCdTools {
  abcde: string;
  cdparanoia: string;
  ffmpeg: string;
  metaflac: string;
}

export const DEFAULT_AUDIO_CD_TOOLS: AudioCdTools = { abcde: 'abcde', cdparanoia: 'cdparanoia', ffmpeg: 'ffmpeg', metaflac: 'metaflac' };

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
export function abcdeConfig(outputDir: string, wavDir: string): string {
  return [
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
async function ripCueImage(file: string, args: RipJob, dir: string, ctx: TaskContext, tools: AudioCdTools, out: string[]): Promise<void> {
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
    out.push(dest);
    const result = await runTool(tools.ffmpeg, ffArgs, { signal: ctx.signal, onSpawn: ctx.onSpawn, timeoutMs: 3600_000 });
    if (result.exitCode !== 0) {
      throw new ToolError('ffmpeg', `ffmpeg could not encode track ${span.number}: ${result.stderr.trim().split('\n').pop() ?? 'no reason given'}`, { exitCode: result.exitCode ?? undefined });
    }
    if (album) await writeTags(tools.metaflac, dest, vorbisTags(album, span.number, sheet.tracks.length, track?.title), ctx.signal);
    throttle.update(((i + 1) / spans.length) * 100);
  }
  throttle.flush();
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
async function ripDevice(device: string, args: RipJob, dir: string, ctx: TaskContext, tools: AudioCdTools, out: string[]): Promise<void> {
  const total = args.titles.length || (await scanAudioCd({ kind: 'device', path: device }, ctx.signal, tools)).length;
  const outputDir = path.join(args.raw_dir, 'flac');
  const wavDir = path.join(args.raw_dir, 'wav');
  await fs.mkdir(outputDir, { recursive: true });
  await fs.mkdir(wavDir, { recursive: true });
  const config = path.join(args.raw_dir, 'abcde.conf');
  await fs.writeFile(config, abcdeConfig(outputDir, wavDir));
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
    out.push(dest);
    await moveFile(file, dest);
    if (album) await writeTags(tools.metaflac, dest, vorbisTags(album, n, total), ctx.signal);
  }
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
  const files: string[] = [];
  try {
    if (source.kind === 'cue') await ripCueImage(source.path, args, plan.dir, ctx, tools, files);
    else if (source.kind === 'device') await ripDevice(source.path, args, plan.dir, ctx, tools, files);
    else throw new TaskFailure('this disc is not an audio CD');
  } catch (err) {
    // No half-written album stays behind in the library.
    await Promise.all(files.map((f) => fs.rm(f, { force: true })));
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
  return { files, titles: [], output: { output_path: plan.dir, files } };
}
