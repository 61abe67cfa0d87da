import fs from 'node:fs/promises';
import path from 'node:path';
import type { AudioStream, FileStreams, SubtitleStream, TranscodeJob } from '../../shared/protocol.js';
import { describeOutput } from '../../shared/library-files.js';
import { keepOriginals, originalsDir, type MoveOps } from '../output/keep-original.js';
import { libraryNames } from './library-names.js';
import { claimFileName, planOutput, releaseFileName, removeIfEmpty, type EncodedOutputs, type OutputLedger } from '../output/output-folder.js';
import { EndingWatch } from './ending-watch.js';
import { ProgressThrottle } from './progress-throttle.js';
import { forcedCandidateLanguages, handbrakeStreamArgs, planStreams, recogniseForced } from './stream-selection.js';
import { describeTrackFlags, type TrackFlagEdit } from '../tools/mkvpropedit-runner.js';
import type { TaskContext } from './rip-task.js';
import { TaskFailure } from './rip-task.js';

/** A file as the transcoder's own scan sees it. */
export interface ScannedFile {
  seconds: number;
  audio: AudioStream[];
  subtitles: SubtitleStream[];
}

export interface TranscodeHooks {
  signal: AbortSignal;
  onProgress(pct: number): void;
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
  /** The streams of each written file, from a scan of the output. */
  streams: FileStreams[];
  /** A series whose episode numbers were counted on from the season folder, not matched by runtime. */
  episodes_guessed: boolean;
}

/** What the transcode does with one raw file's streams: the encoder's arguments and the flags its output gets afterwards. */
interface StreamWork {
  args: string[];
  flags: TrackFlagEdit[];
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
  if (!args.audio) return { args: [], flags: [] };
  let scanned: ScannedFile;
  try {
    scanned = await scan(file);
  } catch (err) {
    ctx.log('warn', `the streams of ${path.basename(file)} could not be read (${(err as Error).message}): the preset's own audio and subtitle choice applies`);
    return { args: [], flags: [] };
  }
  const subtitles = await withRecognisedForced(file, scanned, args, transcoder, ctx);
  const plan = planStreams(scanned.audio, subtitles, { audio_languages: args.audio_languages ?? [], subtitle_languages: args.subtitle_languages ?? [], options: args.audio });
  for (const note of plan.notes) ctx.log(note.level, `${path.basename(file)}: ${note.message}`);
  return { args: handbrakeStreamArgs(plan), flags: plan.flags };
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

/** With keepOriginal: the media root the originals folder is in (and the file moves, for tests). */
export interface KeepOriginalsTo {
  mediaRoot: string;
  ops?: MoveOps;
}

/** Moves the raw files into the originals folder and removes the raw dir; a failure leaves them there, with a warning. */
async function moveOriginals(args: TranscodeJob, outputDir: string, to: KeepOriginalsTo, ctx: TaskContext): Promise<boolean> {
  const dir = originalsDir(to.mediaRoot, args.target_dir, outputDir);
  try {
    await keepOriginals(args.files, { dir, mediaRoot: to.mediaRoot }, to.ops);
  } catch (err) {
    ctx.log('warn', `the originals stay in ${args.raw_dir}: moving them to ${dir} failed: ${(err as Error).message}`);
    return false;
  }
  await fs.rm(args.raw_dir, { recursive: true, force: true });
  ctx.log('info', `originals kept in ${dir}`);
  return true;
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
      try {
        const streams = await streamWorkFor(file, args, scan, transcoder, ctx);
        // All is ready: the encoder is forked now and waits for the slot, which starts it the moment it frees.
        const slot = i === 0 ? ctx.takeSlot?.() : undefined;
        const last = i === args.files.length - 1;
        const ending = last && ctx.encoderEnding ? new EndingWatch(ctx.encoderEnding) : null;
        await transcoder.transcode(file, dest, args.preset, {
          signal: ctx.signal,
          onSpawn: (pid) => {
            if (i === 0) ctx.encoderStarted?.();
            ctx.onSpawn(pid);
            ctx.log('info', `transcoding ${path.basename(file)} (${i + 1} of ${args.files.length}) with preset "${args.preset}" to ${dest}`);
          },
          onProgress: (pct) => {
            throttle.update(((i + pct / 100) / args.files.length) * 100);
            ending?.update(pct);
          },
          streamArgs: streams.args,
          startWhen: slot,
          // The slot frees as the last encoder exits, before its output is looked at.
          onExit: last ? encoderDone : undefined,
        });
        await applyTrackFlags(dest, streams.flags, transcoder, ctx);
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
  const streams: FileStreams[] = [];
  for (const dest of outputs.files) {
    const found = await outputStreams(dest, transcoder, ctx);
    if (found) streams.push(found);
  }
  let rawRemoved = false;
  if (!args.keep_original || originals) ledger?.releasingRaw();
  if (!args.keep_original) {
    await fs.rm(args.raw_dir, { recursive: true, force: true });
    rawRemoved = true;
  } else if (originals) {
    const left = resumed ? await existing(args.files) : args.files;
    rawRemoved = await moveOriginals({ ...args, files: left }, outputs.output_path, originals, ctx);
  }
  if (args.library) await describeOutput(outputs.output_path, args.library, ctx);
  return { output_path: outputs.output_path, files: outputs.files, raw_removed: rawRemoved, streams, episodes_guessed: outputs.episodes_guessed };
}

/** The files of the list that are there. */
async function existing(files: string[]): Promise<string[]> {
  const there = await Promise.all(files.map((f) => fs.stat(f).then(() => true, () => false)));
  return files.filter((_, i) => there[i]);
}
