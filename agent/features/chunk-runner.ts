import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { TASKS, type ChunkCut, type Command } from '../../shared/protocol.js';
import { truncateLogMessage } from '../../shared/protocol-schemas.js';
import type { AgentContext, AgentFeature } from '../agent-context.js';
import type { Chunk } from '../tasks/chunk-plan.js';
import { DEFAULT_CHUNK_BINS, encodeChunk, type ChunkRunHooks } from '../tasks/chunk-encode.js';
import { ProgressThrottle } from '../tasks/progress-throttle.js';
import { ChunkEncoderLedger, chunkEncodersFile } from './chunk-leftovers.js';

export type EncodeChunkCommand = Extract<Command, { task: typeof TASKS.encodeChunk }>;

/** Encodes one chunk of `input` into `output` (local paths); throws with a plain reason when it fails. */
export type ChunkEncoder = (input: string, output: string, preset: string, chunk: Chunk, hooks: ChunkRunHooks) => Promise<void>;

/** The chunk's cut as chunk-encode.ts takes it: only the frames and HandBrake's cut matter there. */
export function chunkOfCut(cut: ChunkCut): Chunk {
  return { index: cut.index, startSeconds: 0, endSeconds: null, firstFrame: cut.first_frame, frames: cut.frames, startTicks: cut.start_ticks, durationTicks: cut.duration_ticks };
}

/**
 * Runs the `encode_chunk` commands the coordinator hands this agent (issue 41; docs/scaling.md): each
 * waits for a slot, encodes its chunk video-only with the job's preset (chunk-encode.ts) into the
 * chunk folder beside the raw data, and reports `chunk_progress` (frames, about once a second),
 * `chunk_done` or `chunk_failed`. A chunk is no stored task: an agent that restarts has lost it, and
 * the coordinator, which finds its id missing from the status `tasks` (held()), hands it out again.
 * A cancel stops it; its partial file is removed and nothing is reported (the coordinator ended it).
 * The encoders run are kept in a ledger (chunk-leftovers.ts): at its start the agent ends those a
 * killed run of it left encoding, and removes their files.
 */
export class ChunkRunner implements AgentFeature {
  private readonly running = new Map<string, AbortController>();
  private readonly ledger: ChunkEncoderLedger;

  constructor(
    private readonly ctx: AgentContext,
    private readonly encode: ChunkEncoder = (input, output, preset, chunk, hooks) => encodeChunk({ ...DEFAULT_CHUNK_BINS, handbrake: ctx.config.handbrakeCli }, input, output, preset, chunk, hooks),
  ) {
    this.ledger = new ChunkEncoderLedger(chunkEncodersFile(ctx.config.dataDir, ctx.config.workerName));
  }

  /** Ends the chunk encoders a killed run of this agent left running, before any new chunk comes in. */
  async start(): Promise<void> {
    const { ended, gone } = await this.ledger.endLeftovers();
    for (const e of ended) this.ctx.log.warn(`a chunk encoder (pid ${e.pid}) of a run that did not end was still writing ${e.output}: stopped, and its file removed (the coordinator hands the chunk out again)`);
    for (const e of gone) this.ctx.log.info(`the chunk file ${e.output} of a run that did not end is removed`);
  }

  /** The command ids of the chunks this agent holds (running or waiting for a slot), for its status. */
  held(): string[] {
    return [...this.running.keys()];
  }

  /** Takes an encode_chunk command: refused at once (`rejected`) when this agent cannot encode it or may not touch its paths. */
  submit(cmd: EncodeChunkCommand): void {
    const { ctx } = this;
    if (this.running.has(cmd.id)) return; // a redelivery
    const refusal = ctx.capabilities.tools.HandBrakeCLI === null ? `the worker ${ctx.config.workerName} cannot encode: ${ctx.config.handbrakeCli} was not found` : ctx.roots.chunkOutputRefusal(cmd.args.output);
    if (refusal) {
      ctx.log.warn(`refused ${cmd.task} (command ${cmd.id}): ${refusal}`, cmd.job_id);
      ctx.emit({ type: 'rejected', command_id: cmd.id, job_id: cmd.job_id, reason: refusal });
      return;
    }
    const controller = new AbortController();
    this.running.set(cmd.id, controller);
    ctx.link.publishStatus();
    void this.run(cmd, controller.signal).finally(() => {
      this.running.delete(cmd.id);
      ctx.link.publishStatus();
    });
  }

  /** Stops the chunk of that command id; false when this agent holds no such chunk. */
  abort(commandId: string): boolean {
    const controller = this.running.get(commandId);
    if (!controller) return false;
    controller.abort(new Error('canceled'));
    this.ctx.pool.withdraw(commandId);
    return true;
  }

  stop(): void {
    for (const id of [...this.running.keys()]) this.abort(id);
  }

  /** Why this worker cannot read the chunk's raw file (`shared`: its path as the coordinator sent it, `local`: mapped), or null. */
  private async unreadable(shared: string, local: string): Promise<string | null> {
    const outside = this.ctx.roots.chunkInputRefusal(shared);
    if (outside) return outside;
    try {
      await fs.access(local, fsConstants.R_OK);
      return null;
    } catch {
      return `the raw file ${local.slice(0, 300)} is not readable on ${this.ctx.config.workerName} (is RAW_DIR shared storage, or mapped with RIPWERK_PATH_MAP?)`;
    }
  }

  private async run(cmd: EncodeChunkCommand, signal: AbortSignal): Promise<void> {
    const { ctx } = this;
    const { cut, preset } = cmd.args;
    const input = ctx.toLocal(cmd.args.input);
    const output = ctx.toLocal(cmd.args.output);
    const base = { command_id: cmd.id, job_id: cmd.job_id };
    const throttle = new ProgressThrottle((pct) => ctx.emit({ type: 'chunk_progress', ...base, frames_done: Math.floor((pct / 100) * cut.frames) }, `chunk:${cmd.id}`));
    let release: (() => void) | null = null;
    // A raw file this worker cannot read (it lies on the lead's own disk): not the chunk's failure, the coordinator gives it to another worker.
    const unreadable = await this.unreadable(cmd.args.input, input);
    if (unreadable) {
      ctx.log.warn(`chunk ${cut.index + 1} not taken: ${unreadable}`, cmd.job_id);
      ctx.emit({ type: 'chunk_failed', ...base, reason: unreadable, unreadable: true });
      return;
    }
    try {
      release = await ctx.pool.take(cmd.id, signal);
      await fs.mkdir(path.dirname(output), { recursive: true });
      ctx.log.info(`encoding chunk ${cut.index + 1} (${cut.frames} frames) of ${path.basename(input)} with preset "${preset}" to ${output}`, cmd.job_id);
      await this.encode(input, output, preset, chunkOfCut(cut), {
        signal,
        nice: ctx.config.encoderNice,
        onSpawn: (pid) => this.ledger.started(cmd.id, pid, output),
        onProgress: (pct) => throttle.update(pct),
      });
      throttle.flush();
      ctx.emit({ type: 'chunk_done', ...base });
    } catch (err) {
      await fs.rm(output, { force: true }).catch(() => undefined);
      if (signal.aborted) {
        ctx.log.info(`chunk ${cut.index + 1} canceled (command ${cmd.id})`, cmd.job_id);
        return;
      }
      const reason = truncateLogMessage((err as Error).message);
      ctx.log.warn(`chunk ${cut.index + 1} failed: ${reason}`, cmd.job_id);
      ctx.emit({ type: 'chunk_failed', ...base, reason });
    } finally {
      this.ledger.ended(cmd.id);
      release?.();
    }
  }
}
