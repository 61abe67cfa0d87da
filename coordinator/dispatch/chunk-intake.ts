import { randomUUID } from 'node:crypto';
import { TASKS, type AgentEvent } from '../../shared/protocol.js';
import type { JobsStore } from '../jobs/jobs-store.js';
import { isActive } from '../jobs/job-status.js';
import type { ChunkBoard, ChunkFailure, ChunkRow } from './chunk-board.js';
import type { CommandTable } from './commands.js';
import type { JobJournal } from './job-journal.js';
import type { ChunkEventType } from './job-events.js';

type ChunkEvent = Extract<AgentEvent, { type: ChunkEventType }>;

/** What the chunk events work with. */
export interface ChunkParts {
  board: ChunkBoard;
  commands: CommandTable;
  jobs: JobsStore;
  journal: JobJournal;
}

/**
 * The coordinator's side of a title encoded by several agents (issue 41; docs/scaling.md): a lead's
 * plan enters the chunk board, each agent's reports about the chunk it holds move it on, the lead is
 * told to join when its title's last chunk is encoded, and the job's progress and meta count the
 * frames over all chunks. Called inside the transaction that records the event; the caller hands the
 * queued chunks out afterwards (TranscodeQueue.pump). Answers a refusal (the event is dropped with it) or null.
 */
export class ChunkIntake {
  constructor(private readonly p: ChunkParts) {}

  get board(): ChunkBoard {
    return this.p.board;
  }

  /** Hands queued chunks to the nodes with free slots (`free` is lowered for each) and sends their encode_chunk commands. */
  handOut(free: Map<string, number>): void {
    for (const h of this.p.board.handOut(free)) {
      this.p.commands.sendChunkCommand(h.node, { id: h.command_id, task: TASKS.encodeChunk, job_id: h.job_id, args: { input: h.input, output: h.output, preset: h.preset, cut: h.cut } });
    }
  }

  /** Whether the command id is a chunk's hand-out (its accepted and rejected events are the chunk's). */
  owns(commandId: string | undefined): boolean {
    return commandId !== undefined && this.p.board.byCommand(commandId) !== undefined;
  }

  apply(node: string, event: ChunkEvent | Extract<AgentEvent, { type: 'accepted' | 'rejected' }>): string | null {
    switch (event.type) {
      case 'chunk_plan':
        return this.plan(node, event);
      case 'chunk_progress': {
        const r = this.p.board.progress(node, event.command_id ?? '', event.frames_done);
        if (!r.ok) return r.refusal;
        this.count(r.value.job_id);
        return null;
      }
      case 'chunk_done':
        return this.done(node, event.command_id ?? '');
      case 'chunk_failed':
        return this.failed(node, event.command_id ?? '', event.reason, event.unreadable === true);
      case 'rejected':
        return this.failed(node, event.command_id ?? '', event.reason);
      case 'accepted':
        return null;
    }
  }

  /** A lead's plan: taken from the agent holding the job's open transcode, with chunks numbered 0, 1, … in order. */
  private plan(node: string, event: Extract<AgentEvent, { type: 'chunk_plan' }>): string | null {
    const { commands, jobs, board, journal } = this.p;
    const cmd = event.command_id ? commands.get(event.command_id) : undefined;
    if (!cmd || cmd.task !== TASKS.transcodeFiles || cmd.node !== node || cmd.job_id !== event.job_id || (cmd.state !== 'sent' && cmd.state !== 'accepted')) {
      return `chunk_plan from ${node} for command ${event.command_id ?? '-'}, which is no transcode it holds`;
    }
    const job = jobs.get(cmd.job_id);
    if (!job || job.status !== 'transcoding') return `chunk_plan from ${node} for job ${cmd.job_id}, which is not transcoding`;
    if (event.cuts.some((c, i) => c.index !== i)) return `chunk_plan from ${node} for job ${job.id}: the chunks are not numbered 0 to ${event.cuts.length - 1} in order`;
    const replaced = board.plan({ job_id: job.id, title: event.title, lead_node: node, input: event.input, folder: event.folder, preset: event.preset }, event.cuts);
    for (const r of replaced) if (r.node && r.command_id) this.p.commands.sendCancel(r.node, job.id, r.command_id);
    const frames = event.cuts.reduce((n, c) => n + c.frames, 0);
    journal.note(job.id, 'info', `title ${event.title + 1} (${frames} frames) split into ${event.cuts.length} chunks for the free workers, led by ${node}`);
    this.count(job.id);
    return null;
  }

  private done(node: string, commandId: string): string | null {
    const { board, journal, commands } = this.p;
    const r = board.done(node, commandId);
    if (!r.ok) return r.refusal;
    const { row, titleDone } = r.value;
    this.count(row.job_id);
    if (!titleDone) return null;
    const lead = commands.active(row.job_id);
    const files = board.ofJob(row.job_id).filter((c) => c.title === row.title).map((c) => c.output);
    journal.note(row.job_id, 'info', `all ${files.length} chunks of title ${row.title + 1} are encoded: ${row.lead_node} joins them`);
    if (lead && lead.node === row.lead_node) {
      commands.sendChunkCommand(lead.node, { id: randomUUID(), task: TASKS.joinChunks, job_id: row.job_id, args: { command_id: lead.id, title: row.title, files } });
    }
    return null;
  }

  private failed(node: string, commandId: string, reason: string, unreadable = false): string | null {
    const r = this.p.board.failed(node, commandId, reason, unreadable);
    if (!r.ok) return r.refusal;
    this.afterFailure(r.value);
    return null;
  }

  private afterFailure(f: ChunkFailure): void {
    const { journal, commands, jobs } = this.p;
    const jobId = f.row.job_id;
    if (f.verdict === 'unreadable') {
      // Said once per worker: the chunks it held at that moment all come back the same way.
      if (f.first) journal.note(jobId, 'warn', `${f.row.reason ?? ''}: the chunks of this job go to the other workers`);
      return;
    }
    if (f.verdict === 'requeued') {
      journal.note(jobId, 'warn', `${f.row.reason ?? `chunk ${f.row.idx + 1} failed`}: it is handed out once more`);
      return;
    }
    this.stopChunks(jobId);
    const lead = commands.active(jobId);
    if (lead) {
      commands.setState(lead.id, 'done');
      commands.sendCancel(lead.node, jobId, lead.id);
    }
    if (isActive(jobs.get(jobId)?.status ?? 'failed')) journal.finish(jobId, 'failed', { error: f.reason }, f.reason);
  }

  /** Frames over all chunks into the job's progress and its meta's frames by node. */
  private count(jobId: string): void {
    const tally = this.p.board.tally(jobId);
    if (tally.frames === 0) return;
    this.p.jobs.recordProgress(jobId, 'transcode', (tally.done / tally.frames) * 100);
    this.p.jobs.update(jobId, {}, { chunk_frames: tally.by_node });
  }

  /**
   * The job's chunks end (canceled, failed, its lead lost or its transcode handed out again): none
   * is handed out any more and each running one's agent is told to stop. Answers those chunks.
   */
  stopChunks(jobId: string): ChunkRow[] {
    const running = this.p.board.endJob(jobId);
    for (const r of running) if (r.node && r.command_id) this.p.commands.sendCancel(r.node, jobId, r.command_id);
    // What they did is in the job's meta (chunk_frames); a late report of a forgotten chunk is refused.
    this.p.board.forget(jobId);
    return running;
  }

  /**
   * An online status of `node` listing the command ids it holds: its chunks handed out more than
   * `settleMs` ago that it does not list (it restarted and lost them) go back to the queue.
   */
  notHeld(node: string, tasks: readonly string[], settleMs: number): void {
    const before = new Date(Date.now() - settleMs).toISOString();
    for (const r of this.p.board.notHeld(node, tasks, before)) {
      this.p.journal.note(r.job_id, 'warn', `worker ${node} no longer holds chunk ${r.idx + 1} of title ${r.title + 1} (it restarted); the chunk goes to another worker`);
      this.count(r.job_id);
    }
  }

  /** A node was lost: its chunks go back to the queue, said in each job's log. */
  nodeLost(node: string): void {
    for (const r of this.p.board.nodeLost(node)) {
      this.p.journal.note(r.job_id, 'warn', `worker ${node} went offline while encoding chunk ${r.idx + 1} of title ${r.title + 1}; the chunk goes to another worker`);
      this.count(r.job_id);
    }
  }
}
