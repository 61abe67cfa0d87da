import type { AgentConfig } from '../../shared/config.js';
import { TASKS, type Command, type Phase, type RipJob, type TranscodeJob } from '../../shared/protocol.js';
import { truncateLogMessage } from '../../shared/protocol-schemas.js';
import type { AgentContext } from '../agent-context.js';
import { ripAudioCd } from '../tasks/audio-cd-ripper.js';
import { runRip, TaskFailure, type TaskContext } from '../tasks/rip-task.js';
import { ffprobeShells, ffprobeStreams, ffprobeSubtitleEvents } from '../tools/ffprobe-runner.js';
import { setTrackFlags } from '../tools/mkvpropedit-runner.js';
import { readMatroskaStreams } from '../tools/matroska-head.js';
import { handbrakeScan, handbrakeTranscode } from '../tools/handbrake-runner.js';
import { ffmpegDecodeSamples, ffmpegRealSeconds, ffmpegRemux } from '../tools/ffmpeg-check-runner.js';
import { DECODE_SAMPLE_SECONDS, DECODE_SAMPLES } from '../output/output-proof.js';
import { finishTranscode, runTranscode, type Transcoder, type TranscodeResult } from '../tasks/transcode-task.js';
import { OutputLedger, outputLedgerFile, type EncodedOutputs } from '../output/output-folder.js';
import { leadingTranscoder, leadTools, type AskForChunks } from '../tasks/chunk-lead.js';
import { DEFAULT_CHUNK_BINS } from '../tasks/chunk-encode.js';
import type { ChunkJoins } from './chunk-joins.js';

/** A command that becomes a stored task in a slot: a rip or a transcode. */
export type JobCommand = Extract<Command, { task: typeof TASKS.ripDisc | typeof TASKS.transcodeFiles }>;

/**
 * A task's slot (job-runner.ts): a rip has it when it starts; a transcode takes it once prepared, right
 * before its first encoder run, and gives it back when its last one is done, before the end of the task.
 */
export interface TaskSlot {
  take(): Promise<void>;
  /** The work has started in its slot: the task counts as running. */
  started(): void;
  release(): void;
}

/**
 * Runs one job command to its end; throws on failure, and when the signal aborts. `encoded`: a
 * resumed transcode whose encodes had ended, which is finished without a slot and without encoding again.
 */
export type JobWork = (cmd: JobCommand, signal: AbortSignal, slot: TaskSlot, encoded?: EncodedOutputs) => Promise<void>;

/**
 * HandBrakeCLI as the transcoder. Streams are read from a Matroska file's head in-process; other
 * files (and heads that do not tell surely) are listed by ffprobe, by HandBrake's scan where ffprobe is missing.
 * ffprobe counts the subtitle events where an unflagged forced track may hide; mkvpropedit sets the
 * track flags HandBrakeCLI cannot write.
 */
export function handbrakeTranscoder(config: Pick<AgentConfig, 'handbrakeCli' | 'encoderNice' | 'slots'>): Transcoder {
  // ffprobe, when it is needed, runs in shells, one per slot at most.
  const shells = ffprobeShells(config.slots);
  return {
    // The encode at ENCODER_NICE: the API and the host's other services go first (README: Configuration).
    transcode: (input, output, preset, hooks) => handbrakeTranscode(config.handbrakeCli, input, output, preset, { ...hooks, timeoutMs: 24 * 3600_000, nice: config.encoderNice }),
    // ffprobe answers in a tenth of HandBrake's start-up; a host without it (a native worker) asks HandBrake.
    scan: async (input, signal) => {
      const head = await readMatroskaStreams(input, signal);
      if (head) return head;
      try {
        return await ffprobeStreams('ffprobe', input, { signal, timeoutMs: 120_000, shells });
      } catch (err) {
        if (signal.aborted) throw err;
        return (await handbrakeScan(config.handbrakeCli, input, { signal, timeoutMs: 120_000 })).titles[0] ?? { seconds: 0, audio: [], subtitles: [] };
      }
    },
    // Reads the whole file (demuxing only): an hour of Blu-ray takes a while, so it has its own limit.
    subtitleEvents: (input, signal) => ffprobeSubtitleEvents('ffprobe', input, { signal, timeoutMs: 30 * 60_000 }),
    setTrackFlags: (file, flags, signal) => setTrackFlags('mkvpropedit', file, flags, { signal, timeoutMs: 120_000 }),
    // The output proof: a stream-copy pass (disk speed) and a few seconds of decoding, at the encoder's nice value.
    inspect: async (file, claimedSeconds, signal) => {
      const opts = { signal, timeoutMs: 60 * 60_000, nice: config.encoderNice };
      try {
        const read = await ffmpegRealSeconds('ffmpeg', file, opts);
        const samples = await ffmpegDecodeSamples('ffmpeg', file, read.seconds || claimedSeconds, DECODE_SAMPLES, DECODE_SAMPLE_SECONDS, { ...opts, timeoutMs: 10 * 60_000 });
        return { seconds: read.seconds, readErrors: read.errors, samples };
      } catch (err) {
        if ((err as { cause?: NodeJS.ErrnoException }).cause?.code === 'ENOENT') return null;
        throw err;
      }
    },
    remux: (input, output, signal) => ffmpegRemux('ffmpeg', input, output, { signal, timeoutMs: 6 * 3600_000, nice: config.encoderNice }),
  };
}

/** What a rip and a transcode do on this agent, with their progress and log lines sent as events. */
export function jobWork(ctx: AgentContext, transcoder: Transcoder, joins?: ChunkJoins): JobWork {
  const { config, drives, emit, toLocal, toShared } = ctx;

  const taskContext = (cmd: JobCommand, phase: Phase, signal: AbortSignal): TaskContext => ({
    signal,
    progress: (pct, fps) => emit({ type: 'progress', command_id: cmd.id, job_id: cmd.job_id, phase, progress: pct, ...(fps !== undefined ? { fps } : {}) }, `progress:${cmd.id}`),
    log: (level, message, fields) => {
      ctx.log[level](message, cmd.job_id);
      emit({ type: 'log', command_id: cmd.id, job_id: cmd.job_id, level, message: truncateLogMessage(message), ...(fields?.read_errors !== undefined ? { read_errors: fields.read_errors } : {}) });
    },
    onSpawn: (pid) => ctx.store.setTaskPid(cmd.id, pid),
  });

  async function rip(cmd: Extract<JobCommand, { task: typeof TASKS.ripDisc }>, signal: AbortSignal): Promise<void> {
    const args: RipJob = { ...cmd.args, job_id: cmd.job_id, raw_dir: toLocal(cmd.args.raw_dir), target_dir: toLocal(cmd.args.target_dir), library_folder: cmd.args.library_folder ? toLocal(cmd.args.library_folder) : null };
    const drive = drives.get(args.drive);
    if (!drive) throw new TaskFailure(`this worker has no drive named "${args.drive}"`);
    await drives.poll();
    const loaded = drive.loaded;
    if (!loaded) throw new TaskFailure(`there is no disc in drive ${args.drive}`);
    const audio = loaded.disc.type === 'cd';
    const videoRipper = audio ? null : ctx.ripper;
    if (!audio && !videoRipper) throw new TaskFailure('this worker has no ripper: install MakeMKV, or lsdvd, dvdbackup and ffmpeg for unencrypted DVDs');
    emit({ type: 'rip_started', command_id: cmd.id, job_id: cmd.job_id, raw_dir: toShared(args.raw_dir) });
    const tc = taskContext(cmd, 'rip', signal);
    const result = videoRipper ? await runRip(args, loaded.source, videoRipper, tc, loaded.disc) : await ripAudioCd(args, loaded.source, tc, ctx.audioTools);
    // An audio CD in a drive is ejected by abcde itself (its -x option follows auto_eject); images are moved aside here.
    if (args.auto_eject && (!audio || loaded.source.kind === 'cue')) {
      await drives.eject(args.drive).catch((err: Error) => tc.log('warn', `auto-eject after the rip failed: ${err.message}`));
    }
    if (result.output) {
      const out = result.output.files;
      // A rip that is the last stage: each output file with the title it was ripped from.
      const titles = result.titles.length === out.length ? result.titles.map((t, i) => ({ ...t, file: toShared(out[i]) })) : [];
      emit({ type: 'job_done', command_id: cmd.id, job_id: cmd.job_id, output_path: toShared(result.output.output_path), files: out.map(toShared), raw_removed: !args.keep_original, ...(titles.length ? { titles } : {}), ...(result.accuraterip ? { accuraterip: result.accuraterip } : {}) });
    } else {
      const titles = result.titles.map((t) => ({ ...t, file: toShared(t.file) }));
      emit({ type: 'rip_done', command_id: cmd.id, job_id: cmd.job_id, raw_dir: toShared(args.raw_dir), files: result.files.map(toShared), ...(titles.length ? { titles } : {}) });
    }
  }

  async function transcode(cmd: Extract<JobCommand, { task: typeof TASKS.transcodeFiles }>, signal: AbortSignal, slot: TaskSlot, encoded?: EncodedOutputs): Promise<void> {
    const args: TranscodeJob = { ...cmd.args, job_id: cmd.job_id, raw_dir: toLocal(cmd.args.raw_dir), target_dir: toLocal(cmd.args.target_dir), files: cmd.args.files.map(toLocal), library_folder: cmd.args.library_folder ? toLocal(cmd.args.library_folder) : null };
    if (ctx.capabilities.tools.HandBrakeCLI === null) throw new TaskFailure(`this worker cannot transcode: ${config.handbrakeCli} was not found`);
    const ledger = new OutputLedger(outputLedgerFile(config.dataDir, cmd.id), cmd.job_id); // what it writes, for a cleanup after a crash (job-runner.ts)
    const tc: TaskContext = {
      ...taskContext(cmd, 'transcode', signal),
      takeSlot: () => slot.take(),
      encoderStarted: () => {
        slot.started();
        emit({ type: 'transcode_started', command_id: cmd.id, job_id: cmd.job_id });
      },
      encoderEnding: () => emit({ type: 'transcode_ending', command_id: cmd.id, job_id: cmd.job_id }),
      encoderDone: () => {
        // The slot first: a transcode waiting for it (sent ahead) starts its encoder before this event goes out.
        slot.release();
        // The coordinator counts the slot free and hands out the next transcode while this one finishes.
        emit({ type: 'transcode_encoded', command_id: cmd.id, job_id: cmd.job_id });
      },
    };
    const originals = { mediaRoot: config.mediaRoot };
    // Issue 41: long titles encoded in chunks by the free agents, this one leading (chunk-lead.ts).
    const chunking = cmd.args.chunking;
    const ask: AskForChunks = async (plan, askSignal) => {
      if (!joins) throw new TaskFailure('this worker cannot wait for chunks');
      const files = joins.wait(cmd.id, plan.title, askSignal);
      emit({ type: 'chunk_plan', command_id: cmd.id, job_id: cmd.job_id, title: plan.title, input: toShared(plan.input), folder: toShared(plan.folder), preset: plan.preset, cuts: plan.cuts });
      return (await files).map(toLocal);
    };
    const encoder = chunking && joins && !encoded
      ? leadingTranscoder(transcoder, { chunking, jobId: cmd.job_id, rawDir: args.raw_dir, files: args.files, ask, tools: leadTools({ ...DEFAULT_CHUNK_BINS, handbrake: config.handbrakeCli }), nice: config.encoderNice, log: (m) => tc.log('info', m) })
      : transcoder;
    let result: TranscodeResult;
    if (encoded) {
      slot.started();
      // The coordinator counts the slot free again (it may have restarted without the first word).
      emit({ type: 'transcode_encoded', command_id: cmd.id, job_id: cmd.job_id });
      tc.log('info', `the encode had ended before the worker restarted: finishing with ${encoded.files.length} file(s) in ${toShared(encoded.output_path)}`);
      result = await finishTranscode(args, encoded, transcoder, tc, originals, ledger, true);
    } else {
      result = await runTranscode(args, encoder, tc, originals, ledger);
    }
    emit({ type: 'job_done', command_id: cmd.id, job_id: cmd.job_id, output_path: toShared(result.output_path), files: result.files.map(toShared), raw_removed: result.raw_removed, ...(result.originals_dir ? { originals_dir: toShared(result.originals_dir) } : {}), streams: result.streams, episodes_guessed: result.episodes_guessed });
  }

  return (cmd, signal, slot, encoded) => (cmd.task === TASKS.ripDisc ? rip(cmd, signal) : transcode(cmd, signal, slot, encoded));
}
