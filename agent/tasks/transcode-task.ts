import fs from 'node:fs/promises';
import path from 'node:path';
import type { AudioStream, FileStreams, SubtitleStream, TranscodeJob } from '../../shared/protocol.js';
import { describeOutput } from '../../shared/library-files.js';
import { keepOriginals, type MoveOps } from '../output/keep-original.js';
import { originalsDir } from '../../shared/originals.js';
import { libraryNames } from './library-names.js';
import { claimFileName, planOutput, releaseFileName, removeIfEmpty, type EncodedOutputs, type OutputLedger } from '../output/output-folder.js';
import { EndingWatch } from './ending-watch.js';
import { ProgressThrottle } from './progress-throttle.js';
import { forcedCandidateLanguages, handbrakeStreamArgs, planStreams, recogniseForced } from './stream-selection.js';
import { describeTrackFlags, type TrackFlagEdit } from '../tools/mkvpropedit-runner.js';
import type { TaskContext } from './rip-task.js';
import { TaskFailure } from './rip-task.js';
import { proofText, proveOutput, type DecodeSample, type ProofExpectation, type ProofReason } from '../output/output-proof.js';
import { privateEncode } from '../output/private-encode.js';
import { clock } from '../../shared/main-feature.js';

/** A file as the transcoder's own scan sees it. */
export interface ScannedFile {
  seconds: number;
  audio: AudioStream[];
  subtitles: SubtitleStream[];
}

export interface TranscodeHooks {
  signal: AbortSignal;
  /** `fps`: the encoder's speed in frames per second, when the encoder tells it. */
  onProgress(pct: number, fps?: number): void;
  onSpawn(pid: number): void;
  /** Stream selection arguments added after the preset's. */
  streamArgs: string[];
  /** The encoder ended well (exit code 0); its output is checked after this. */
  onExit?(): void;
  /** The encoder may be forked now but starts only once this resolves (its slot is free). */
  startWhen?: Promise<void>;
}

export interface Transcoder {
  transcode(input: string, output: string, preset: string, hooks: TranscodeHooks): Promise<void>;
  /** Length and streams of a file (its first title) from the transcoder's own scan. */
  scan(input: string, signal: AbortSignal): Promise<ScannedFile>;
  /**
   * The events of each subtitle stream of a file in stream order (null where unknown), to recognise
   * an unflagged forced track. Absent: none is looked for.
   */
  subtitleEvents?(input: string, signal: AbortSignal): Promise<(number | null)[]>;
  /**
   * Sets the track flags HandBrakeCLI cannot write on a finished output (mkvpropedit); throws with a
   * plain reason when it cannot. Absent: the output keeps the flags the encoder wrote.
   */
  setTrackFlags?(file: string, flags: TrackFlagEdit[], signal: AbortSignal): Promise<void>;
  /**
   * The output proof's facts of a finished file whose header claims `claimedSeconds`: the length its
   * packets reach and decode samples spread over it (ffmpeg-check-runner.ts); null when the host has
   * no tool for it (said in the job log, the output is then taken as the encoder left it). Absent: same.
   */
  inspect?(file: string, claimedSeconds: number, signal: AbortSignal): Promise<{ seconds: number; readErrors?: string[]; samples: DecodeSample[] } | null>;
  /** Copies a file's streams untouched into a new Matroska file with new timestamps (the second attempt). Absent: no remux. */
  remux?(input: string, output: string, signal: AbortSignal): Promise<void>;
}

/** One scan per file and task: episode naming and the stream choice share it. */
function scanner(transcoder: Transcoder, signal: AbortSignal): (file: string) => Promise<ScannedFile> {
  const scans = new Map<string, Promise<ScannedFile>>();
  return (file) => {
    let scan = scans.get(file);
    if (!scan) {
      scan = transcoder.scan(file, signal);
      scans.set(file, scan);
    }
    return scan;
  };
}

export interface TranscodeResult {
  output_path: string;
  files: string[];
  raw_removed: boolean;
  /** keepOriginal: the folder the raw files were moved into (the job's raw data from then on). */
  originals_dir?: string;
  /** The streams of each written file, from a scan of the output. */
  streams: FileStreams[];
  /** A series whose episode numbers were counted on from the season folder, not matched by runtime. */
  episodes_guessed: boolean;
}

/** What the transcode does with one raw file's streams: the encoder's arguments and the flags its output gets afterwards. */
interface StreamWork {
  args: string[];
  flags: TrackFlagEdit[];
  /** The languages of the audio and subtitle tracks the output gets, in order (null: the preset chose, nothing to check). */
  audio: string[] | null;
  subtitles: string[] | null;
}

/**
 * The subtitles of a scan with an unflagged forced track recognised by its few events, where a
 * language the choice uses has several tracks and none marked forced; the scan's own list when
 * nothing is to be looked for or the events cannot be counted (said in the job log).
 */
async function withRecognisedForced(file: string, scanned: ScannedFile, args: TranscodeJob, transcoder: Transcoder, ctx: TaskContext): Promise<ScannedFile['subtitles']> {
  const original = args.audio?.original_language;
  const used = [...(args.audio_languages ?? []), ...(args.subtitle_languages ?? []), ...(original ? [original] : [])];
  const candidates = forcedCandidateLanguages(scanned.subtitles).filter((l) => used.includes(l));
  if (candidates.length === 0 || !transcoder.subtitleEvents) return scanned.subtitles;
  let events: (number | null)[];
  try {
    events = await transcoder.subtitleEvents(file, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log('warn', `${path.basename(file)}: the subtitle events could not be counted (${(err as Error).message}): an unflagged forced track is not looked for`);
    return scanned.subtitles;
  }
  const { subtitles, recognised } = recogniseForced(scanned.subtitles, events);
  for (const r of recognised) {
    ctx.log('info', `${path.basename(file)}: subtitle stream ${r.stream.index} (${r.stream.language}) has ${r.events} events against ${r.fullest} of the fullest ${r.stream.language} track: taken for the forced subtitles`);
  }
  return subtitles;
}

/**
 * The stream selection arguments and track flags for one raw file (none when the command carries no
 * language choice: a coordinator from before the choice existed), with the choice written to the job log.
 */
async function streamWorkFor(file: string, args: TranscodeJob, scan: (file: string) => Promise<ScannedFile>, transcoder: Transcoder, ctx: TaskContext): Promise<StreamWork> {
  if (!args.audio) return { args: [], flags: [], audio: null, subtitles: null };
  let scanned: ScannedFile;
  try {
    scanned = await scan(file);
  } catch (err) {
    ctx.log('warn', `the streams of ${path.basename(file)} could not be read (${(err as Error).message}): the preset's own audio and subtitle choice applies`);
    return { args: [], flags: [], audio: null, subtitles: null };
  }
  const subtitles = await withRecognisedForced(file, scanned, args, transcoder, ctx);
  const plan = planStreams(scanned.audio, subtitles, { audio_languages: args.audio_languages ?? [], subtitle_languages: args.subtitle_languages ?? [], options: args.audio });
  for (const note of plan.notes) ctx.log(note.level, `${path.basename(file)}: ${note.message}`);
  const language = new Map(subtitles.map((s) => [s.index, s.language]));
  return {
    args: handbrakeStreamArgs(plan),
    flags: plan.flags,
    audio: plan.audio.map((a) => a.language),
    subtitles: plan.subtitles.filter((_, i) => i + 1 !== plan.burned).map((n) => language.get(n) ?? 'und'),
  };
}

/**
 * Gives a finished output the track flags HandBrakeCLI cannot write (languages.md, "Track roles"). A
 * failure fails the task: a file whose forced or commentary tracks are not marked is the problem the
 * flags are there to solve.
 */
async function applyTrackFlags(dest: string, flags: TrackFlagEdit[], transcoder: Transcoder, ctx: TaskContext): Promise<void> {
  if (flags.length === 0 || !transcoder.setTrackFlags) return;
  try {
    await transcoder.setTrackFlags(dest, flags, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    throw new TaskFailure(`the track flags of ${path.basename(dest)} (${describeTrackFlags(flags)}) could not be set: ${(err as Error).message}`);
  }
  ctx.log('info', `${path.basename(dest)}: track flags set: ${describeTrackFlags(flags)}`);
}

/** The streams of a finished file, or null (logged) when the scan fails: the file itself is fine. */
async function outputStreams(dest: string, transcoder: Transcoder, ctx: TaskContext): Promise<FileStreams | null> {
  try {
    const scanned = await transcoder.scan(dest, ctx.signal);
    return { file: path.basename(dest), audio: scanned.audio, subtitles: scanned.subtitles };
  } catch (err) {
    ctx.log('warn', `the streams of ${path.basename(dest)} could not be listed: ${(err as Error).message}`);
    return null;
  }
}

/**
 * Why a finished output is not the title it was made from (output-proof.ts); empty: proven, or not
 * provable on this host (said in the job log). A file the checks cannot read at all is not proven.
 */
async function proveFile(output: string, expected: ProofExpectation, transcoder: Transcoder, ctx: TaskContext): Promise<ProofReason[]> {
  if (!transcoder.inspect) return [];
  const unreadable = (err: unknown): ProofReason[] => {
    const why = (err as Error).message;
    return [{ code: 'read_error', params: { at_seconds: 0, error: why }, en: `the output cannot be read: ${why}`, de: `Ausgabe nicht lesbar: ${why}` }];
  };
  let scanned: ScannedFile;
  let measured: Awaited<ReturnType<NonNullable<Transcoder['inspect']>>>;
  try {
    scanned = await transcoder.scan(output, ctx.signal);
    measured = await transcoder.inspect(output, scanned.seconds, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return unreadable(err);
  }
  if (!measured) {
    ctx.log('warn', `${path.basename(output)}: not proven (this worker has no ffmpeg): the output is taken as the encoder left it`);
    return [];
  }
  const reasons = proveOutput(expected, { claimedSeconds: scanned.seconds, seconds: measured.seconds, readErrors: measured.readErrors ?? [], audio: scanned.audio, subtitles: scanned.subtitles, samples: measured.samples });
  if (reasons.length === 0) {
    const against = expected.seconds > 0 ? ` of ${clock(expected.seconds)}` : '';
    ctx.log('info', `${path.basename(output)}: proven: ${clock(measured.seconds)}${against}, ${scanned.audio.length} audio and ${scanned.subtitles.length} subtitle track(s), ${measured.samples.length} sample(s) decoded cleanly`);
  }
  return reasons;
}

/** Encoder names in HandBrake's hardware presets ("H.265 NVENC 1080p", "H.265 QSV 1080p", "H.265 VCN 1080p", "H.264 VideoToolbox 1080p"). */
const HARDWARE_PRESET = /\b(nvenc|qsv|vce|vcn|mf|vaapi|videotoolbox)\b/i;

/**
 * The HandBrakeCLI arguments that make a hardware preset encode in software at the preset's own
 * quality: x265 for H.265, SVT-AV1 for AV1, x264 otherwise, at the encoder preset "medium" (the
 * hardware preset's speed name need not exist in software). Null: the preset is a software one.
 */
export function softwareEncoderArgs(preset: string): string[] | null {
  if (!HARDWARE_PRESET.test(preset)) return null;
  const encoder = /\b(h\.?265|hevc)\b/i.test(preset) ? 'x265' : /\bav1\b/i.test(preset) ? 'svt_av1' : 'x264';
  return ['-e', encoder, '--encoder-preset', 'medium'];
}

/** One encoder run of a raw file: its input (the raw file, or its remux) and the arguments it adds. */
interface Attempt {
  input: string;
  extraArgs: string[];
  label: string;
}

/** The work area of the second attempt's remux: a folder inside the raw folder, removed with it (or after the attempt). */
const remuxDir = (rawDir: string): string => path.join(rawDir, '.ripwerk-remux');

/**
 * The second attempt for a raw file whose first output failed the proof, where one can help: the raw
 * file remuxed with new timestamps, and a hardware preset's encode in software. Null: none can.
 */
async function secondAttempt(file: string, preset: string, args: TranscodeJob, transcoder: Transcoder, ctx: TaskContext): Promise<Attempt | null> {
  const software = softwareEncoderArgs(preset);
  const parts: string[] = [];
  let input = file;
  if (transcoder.remux) {
    const dir = remuxDir(args.raw_dir);
    await fs.mkdir(dir, { recursive: true });
    const remuxed = path.join(dir, `${path.basename(file, path.extname(file))}.mkv`);
    try {
      await transcoder.remux(file, remuxed, ctx.signal);
      input = remuxed;
      parts.push('raw remuxed');
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      ctx.log('warn', `${path.basename(file)}: the remux for a second attempt failed: ${(err as Error).message}`);
    }
  }
  if (software) parts.push(`software encoder ${software[1]}`);
  if (parts.length === 0) return null;
  return { input, extraArgs: software ?? [], label: `attempt 2 (${parts.join(', ')})` };
}

/** Where and how one raw file is encoded, and what its output must prove. */
interface EncodePlan {
  file: string;
  dest: string;
  /** The checked output folder and its real path (private-encode.ts). */
  dir: string;
  realDir: string;
  streams: StreamWork;
  expected: ProofExpectation;
  hooks: Omit<TranscodeHooks, 'streamArgs'>;
  ledger?: OutputLedger;
}

/**
 * Encodes one raw file into a private folder, proves the output and moves it to its name; on a failed
 * proof one second attempt where it can help (secondAttempt). The job log says which attempt made the
 * file. Throws TaskFailure with the proof's reason when no attempt made a proven file.
 */
async function encodeProven(p: EncodePlan, args: TranscodeJob, transcoder: Transcoder, ctx: TaskContext): Promise<void> {
  let attempt: Attempt | null = { input: p.file, extraArgs: [], label: 'attempt 1' };
  let reasons: ProofReason[] = [];
  try {
    for (let n = 1; attempt; n++) {
      const target = await privateEncode(p.dir, p.realDir, p.dest);
      p.ledger?.privateFolder(path.join(p.realDir, path.basename(target.dir)));
      try {
        // The slot and its start gate belong to the first run; a second one runs once the first has given it back.
        const { label, input } = attempt;
        const again: TranscodeHooks = {
          ...p.hooks,
          startWhen: undefined,
          onExit: undefined,
          onSpawn: (pid) => {
            ctx.onSpawn(pid);
            ctx.log('info', `${label}: transcoding ${path.basename(input)} to ${p.dest}`);
          },
          streamArgs: [...p.streams.args, ...attempt.extraArgs],
        };
        const hooks: TranscodeHooks = n === 1 ? { ...p.hooks, streamArgs: p.streams.args } : again;
        await transcoder.transcode(attempt.input, target.file, args.preset, hooks);
        await applyTrackFlags(target.file, p.streams.flags, transcoder, ctx);
        reasons = await proveFile(target.file, p.expected, transcoder, ctx);
        if (reasons.length === 0) {
          await target.commit();
          if (n > 1) ctx.log('info', `${path.basename(p.dest)}: ${attempt.label} made the output, and it passed the proof`);
          return;
        }
      } finally {
        await target.discard();
      }
      ctx.log('warn', `${path.basename(p.dest)}: ${attempt.label} failed the proof: ${proofText(reasons)}`);
      attempt = n === 1 ? await secondAttempt(p.file, args.preset, args, transcoder, ctx) : null;
    }
  } finally {
    await fs.rm(remuxDir(args.raw_dir), { recursive: true, force: true });
  }
  throw new TaskFailure(`${path.basename(p.file)}: ${proofText(reasons)}; the raw data is kept`);
}

/** With keepOriginal: the media root the originals folder is in (and the file moves, for tests). */
export interface KeepOriginalsTo {
  mediaRoot: string;
  ops?: MoveOps;
}

/** Moves the raw files into the originals folder and removes the raw dir; answers that folder, or null when a failure left them where they were (with a warning). */
async function moveOriginals(args: TranscodeJob, outputDir: string, to: KeepOriginalsTo, ctx: TaskContext): Promise<string | null> {
  const dir = originalsDir(to.mediaRoot, args.target_dir, outputDir, args.job_id);
  try {
    await keepOriginals(args.files, { dir, mediaRoot: to.mediaRoot }, to.ops);
  } catch (err) {
    ctx.log('warn', `the originals stay in ${args.raw_dir}: moving them to ${dir} failed: ${(err as Error).message}`);
    return null;
  }
  await fs.rm(args.raw_dir, { recursive: true, force: true });
  ctx.log('info', `originals kept in ${dir}`);
  return dir;
}

/**
 * worker.tasks.transcode_files: one encoder run per raw file into the output folder; progress is the
 * encoder's own percentage, shared across the files (task N of M). The raw dir is removed only after
 * every file succeeded; with keepOriginal the raw files are first moved into MEDIA_ROOT/Originale.
 * `ledger` (the agent's record of this command's outputs, output-folder.ts): each output is entered
 * before its encoder starts and gets its identity once finished, and the release of the raw files is
 * noted before it happens, so that an agent that dies before its outcome is stored can remove exactly
 * its own files when the coordinator cancels the leftover task (and keeps them once nothing could redo them).
 * Once every encode ended well the ledger says so too: a restarted agent the coordinator lets resume
 * the task finishes it from there (finishTranscode) instead of encoding again.
 */
export async function runTranscode(args: TranscodeJob, transcoder: Transcoder, ctx: TaskContext, originals?: KeepOriginalsTo, ledger?: OutputLedger): Promise<TranscodeResult> {
  const scan = scanner(transcoder, ctx.signal);
  // The first file's scan runs while the output folder is planned: the encoder starts that much sooner
  // (its slot idles meanwhile). A failed scan is reported where it is awaited (streamArgsFor).
  if (args.files.length > 0) scan(args.files[0]).catch(() => undefined);
  for (const file of args.files) {
    const st = await fs.stat(file).catch(() => null);
    if (!st?.isFile()) throw new TaskFailure(`the raw file ${file} is missing: retry the rip`);
  }
  const plan = await planOutput({ ...args });
  const naming = await libraryNames(args, plan, async (file) => (await scan(file)).seconds, ctx);
  const throttle = new ProgressThrottle(ctx.progress, ctx.progressEveryMs);
  let encoded = false;
  /** Once: the last encoder has ended well (its exit, or the transcoder's return where it does not say). */
  const encoderDone = (): void => {
    if (encoded) return;
    encoded = true;
    ctx.encoderDone?.();
  };
  const written: string[] = [];
  /** Every output this run picked (names that were free), the one being encoded included: removed again on failure. */
  const claimed: string[] = [];
  try {
    for (const [i, file] of args.files.entries()) {
      const dir = path.join(plan.dir, naming.names[i].subdir);
      await fs.mkdir(dir, { recursive: true });
      const name = await claimFileName(dir, naming.names[i].name);
      const dest = path.join(dir, name);
      claimed.push(dest);
      ledger?.claimed(dest, [...new Set([dir, plan.dir])]);
      // The folder was checked by claimFileName: the encoder writes below its real path only (private-encode.ts).
      const realDir = await fs.realpath(dir);
      try {
        const streams = await streamWorkFor(file, args, scan, transcoder, ctx);
        const expected: ProofExpectation = { seconds: await scan(file).then((s) => s.seconds, () => 0), audio: streams.audio, subtitles: streams.subtitles };
        // All is ready: the encoder is forked now and waits for the slot, which starts it the moment it frees.
        const slot = i === 0 ? ctx.takeSlot?.() : undefined;
        const last = i === args.files.length - 1;
        const ending = last && ctx.encoderEnding ? new EndingWatch(ctx.encoderEnding) : null;
        const hooks: EncodePlan['hooks'] = {
          signal: ctx.signal,
          onSpawn: (pid) => {
            if (i === 0) ctx.encoderStarted?.();
            ctx.onSpawn(pid);
            ctx.log('info', `transcoding ${path.basename(file)} (${i + 1} of ${args.files.length}) with preset "${args.preset}" to ${dest}`);
          },
          onProgress: (pct, fps) => {
            throttle.update(((i + pct / 100) / args.files.length) * 100, fps);
            ending?.update(pct);
          },
          startWhen: slot,
          // The slot frees as the last encoder exits, before its output is looked at.
          onExit: last ? encoderDone : undefined,
        };
        await encodeProven({ file, dest, dir, realDir, streams, expected, hooks, ledger }, args, transcoder, ctx);
      } finally {
        releaseFileName(dir, name);
      }
      if (i === args.files.length - 1) encoderDone();
      await ledger?.written(dest);
      written.push(dest);
    }
  } catch (err) {
    await Promise.all(claimed.map((f) => fs.rm(f, { force: true })));
    for (const subdir of new Set(naming.names.map((n) => n.subdir).filter(Boolean))) await removeIfEmpty(path.join(plan.dir, subdir));
    await removeIfEmpty(plan.dir);
    ledger?.discard();
    throw err;
  }
  throttle.update(100);
  throttle.flush();
  const outputs: EncodedOutputs = { output_path: plan.dir, files: written, episodes_guessed: naming.episodesGuessed };
  ledger?.encoded(outputs);
  return finishTranscode(args, outputs, transcoder, ctx, originals, ledger);
}

/**
 * What follows the encodes: the streams of each output, the raw files removed (or moved to the
 * originals), the media server's files. Run by runTranscode, and on its own by an agent that restarted
 * after the encodes of a transcode had ended (its ledger says so): `resumed`, the raw files an earlier
 * run moved to the originals already are gone and are not looked for.
 */
export async function finishTranscode(args: TranscodeJob, outputs: EncodedOutputs, transcoder: Transcoder, ctx: TaskContext, originals?: KeepOriginalsTo, ledger?: OutputLedger, resumed = false): Promise<TranscodeResult> {
  // A run proved each output as it was made; after a restart they are proven again before the raw data goes.
  if (resumed) await proveResumed(args, outputs, transcoder, ctx, ledger);
  const streams: FileStreams[] = [];
  for (const dest of outputs.files) {
    const found = await outputStreams(dest, transcoder, ctx);
    if (found) streams.push(found);
  }
  let rawRemoved = false;
  let originalsKept: string | null = null;
  if (!args.keep_original || originals) ledger?.releasingRaw();
  if (!args.keep_original) {
    await fs.rm(args.raw_dir, { recursive: true, force: true });
    rawRemoved = true;
  } else if (originals) {
    const left = resumed ? await existing(args.files) : args.files;
    originalsKept = await moveOriginals({ ...args, files: left }, outputs.output_path, originals, ctx);
    rawRemoved = originalsKept !== null;
  }
  if (args.library) await describeOutput(outputs.output_path, args.library, ctx, args.target_dir);
  return { output_path: outputs.output_path, files: outputs.files, raw_removed: rawRemoved, ...(originalsKept ? { originals_dir: originalsKept } : {}), streams, episodes_guessed: outputs.episodes_guessed };
}

/**
 * The outputs of a resumed transcode against their raw files (length and decode; the stream choice
 * is not made again): one that fails fails the task with its reason, its outputs are removed and
 * the raw data is kept for a retry.
 */
async function proveResumed(args: TranscodeJob, outputs: EncodedOutputs, transcoder: Transcoder, ctx: TaskContext, ledger?: OutputLedger): Promise<void> {
  // Raw files moved to the originals already: the outputs may be all there is, they are not put at risk.
  if ((await existing(args.files)).length < args.files.length) return;
  for (const [i, dest] of outputs.files.entries()) {
    const raw = outputs.files.length === args.files.length ? args.files[i] : undefined;
    const seconds = raw ? await transcoder.scan(raw, ctx.signal).then((s) => s.seconds, () => 0) : 0;
    const reasons = await proveFile(dest, { seconds, audio: null, subtitles: null }, transcoder, ctx);
    if (reasons.length === 0) continue;
    await Promise.all(outputs.files.map((f) => fs.rm(f, { force: true })));
    ledger?.discard();
    throw new TaskFailure(`${path.basename(dest)}: ${proofText(reasons)}; the raw data is kept`);
  }
}

/** The files of the list that are there. */
async function existing(files: string[]): Promise<string[]> {
  const there = await Promise.all(files.map((f) => fs.stat(f).then(() => true, () => false)));
  return files.filter((_, i) => there[i]);
}
