/**
 * The lead of a chunked title (issue 41; docs/scaling.md, "One title on several agents"): the agent
 * that took the transcode encodes a long title's video in chunks on every free agent instead of
 * alone. It wraps the transcoder's `transcode`, so the naming, stream choice, track flags, proof and
 * filing of transcode-task.ts stay exactly as they are; only the encoder run of a long raw file is
 * replaced by: plan the chunks, ask for help (chunk_plan), run the streams pass in its own slot, wait
 * until every chunk is encoded (join_chunks), join them into the output. The chunk folder goes in
 * every case: joined, failed or canceled.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ChunkCut, ChunkingArgs } from '../../shared/protocol.js';
import { chunkFolder } from '../../shared/chunking.js';
import { CHUNK_MIN_SECONDS, CHUNKS_PER_AGENT, planChunks, type ChunkPlan, type VideoPackets } from './chunk-plan.js';
import { DEFAULT_CHUNK_BINS, encodeStreams, JoinFrameMismatch, joinChunks, probeVideoPackets, type ChunkBins, type ChunkRunHooks } from './chunk-encode.js';
import type { Transcoder } from './transcode-task.js';

/** The coordinator's help with one title: sends the plan and resolves with the chunk files (local paths, in order) once all are encoded. */
export type AskForChunks = (plan: { title: number; input: string; folder: string; preset: string; cuts: ChunkCut[] }, signal: AbortSignal) => Promise<string[]>;

/** The tools the lead runs (chunk-encode.ts); replaceable in tests. */
export interface LeadTools {
  probe(input: string, signal: AbortSignal): Promise<VideoPackets>;
  streams(input: string, output: string, preset: string, streamArgs: string[], hooks: ChunkRunHooks): Promise<void>;
  join(chunkFiles: string[], streamsFile: string, output: string, signal: AbortSignal): Promise<void>;
}

export function leadTools(bins: ChunkBins = DEFAULT_CHUNK_BINS): LeadTools {
  return {
    probe: (input, signal) => probeVideoPackets(bins.ffprobe, input, { signal }),
    streams: (input, output, preset, streamArgs, hooks) => encodeStreams(bins, input, output, preset, streamArgs, hooks),
    join: async (chunkFiles, streamsFile, output, signal) => void (await joinChunks(bins, chunkFiles, streamsFile, output, signal)),
  };
}

export interface LeadOptions {
  chunking: ChunkingArgs;
  jobId: string;
  /** The job's raw folder and files (local paths): a file's index is its title's number in the plan. */
  rawDir: string;
  files: string[];
  ask: AskForChunks;
  tools?: LeadTools;
  /** No chunk shorter than this (seconds). */
  minChunkSeconds?: number;
  /** The encoder's nice value. */
  nice?: number;
  /** Says in the job log that a title is encoded in chunks. */
  log?: (message: string) => void;
}

/** The wire form of a plan's chunks. */
export function planCuts(plan: ChunkPlan): ChunkCut[] {
  return plan.chunks.map((c) => ({ index: c.index, first_frame: c.firstFrame, frames: c.frames, start_ticks: c.startTicks, duration_ticks: c.durationTicks }));
}

/**
 * The transcoder with the chunked encode for raw files longer than `chunking.min_seconds` that can be
 * cut into two chunks or more; every other run (a short file, the second attempt's remux) is the
 * base transcoder's.
 */
export function leadingTranscoder(base: Transcoder, opts: LeadOptions): Transcoder {
  const tools = opts.tools ?? leadTools();
  return {
    ...base,
    transcode: async (input, output, preset, hooks) => {
      const title = opts.files.indexOf(input);
      const seconds = title < 0 ? 0 : (await base.scan(input, hooks.signal)).seconds;
      if (seconds <= opts.chunking.min_seconds) return base.transcode(input, output, preset, hooks);
      const plan = planChunks(await tools.probe(input, hooks.signal), CHUNKS_PER_AGENT * opts.chunking.agents, opts.minChunkSeconds ?? CHUNK_MIN_SECONDS);
      if (plan.chunks.length < 2) return base.transcode(input, output, preset, hooks);
      const folder = chunkFolder(opts.rawDir, opts.jobId, title);
      await fs.mkdir(folder, { recursive: true });
      let mismatch: JoinFrameMismatch | null = null;
      try {
        opts.log?.(`${path.basename(input)}: ${plan.frames} frames in ${plan.chunks.length} chunks for the free workers; this worker runs the streams pass and joins`);
        const chunks = opts.ask({ title, input, folder, preset, cuts: planCuts(plan) }, hooks.signal);
        // Settled here too, so a refusal while the streams pass runs is no unhandled rejection.
        chunks.catch(() => undefined);
        await hooks.startWhen;
        const streamsFile = path.join(folder, 'streams.mkv');
        await tools.streams(input, streamsFile, preset, hooks.streamArgs, { signal: hooks.signal, onSpawn: hooks.onSpawn, nice: opts.nice });
        const files = await chunks;
        try {
          await tools.join(files, streamsFile, output, hooks.signal);
          hooks.onExit?.();
        } catch (err) {
          if (!(err instanceof JoinFrameMismatch) || hooks.signal?.aborted) throw err;
          mismatch = err;
        }
      } finally {
        await fs.rm(folder, { recursive: true, force: true });
        // The job's and the raw folder's chunk folders, once empty (another title's may still be in use).
        for (const dir of [path.dirname(folder), path.dirname(path.dirname(folder))]) await fs.rmdir(dir).catch(() => undefined);
      }
      if (mismatch) {
        // The chunks cannot make this title (the preset adds frames): it is encoded whole after all.
        opts.log?.(`${path.basename(input)}: the joined chunks have ${mismatch.frames} frames where the title has ${mismatch.want} (the preset makes frames of its own, bob deinterlacing say): the title is encoded whole on this worker`);
        return base.transcode(input, output, preset, hooks);
      }
    },
  };
}
