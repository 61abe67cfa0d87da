/** The agents' events in, applied once each: the node's own events here, the job events through job-events.ts. */
import path from 'node:path';
import type { Db } from '../../shared/sqlite.js';
import type { Logger } from '../../shared/log.js';
import type { DropLog } from '../../shared/drop-log.js';
import type { ChunkIntake } from './chunk-intake.js';
import { TASKS, topics, type AgentEvent } from '../../shared/protocol.js';
import type { Fleet } from '../workers/fleet.js';
import type { KeyStore } from '../keys/key-store.js';
import { jobEventRefusal, supersededResultCounts } from './event-rules.js';
import { checkMediaPath, isUnderRoot } from '../../shared/media-paths.js';
import type { CommandRow } from './commands.js';
import type { DriveRequests } from './drive-requests.js';
import { handleJobEvent, isJobEvent, type JobEventParts } from './job-events.js';
import type { CommandLink } from './link.js';

/** A rip's events must name the raw folder the coordinator gave the rip, and its files must lie inside it. */
function rawDirMismatch(event: AgentEvent, cmd: CommandRow): string | null {
  if (event.type !== 'rip_started' && event.type !== 'rip_done') return null;
  const given = (JSON.parse(cmd.payload) as { args?: { raw_dir?: unknown } }).args?.raw_dir;
  const norm = (p: string): string => path.posix.normalize(p).replace(/\/+$/, '');
  if (typeof given !== 'string' || norm(event.raw_dir) !== norm(given)) return `${event.type} names the raw folder ${event.raw_dir.slice(0, 300)}, the rip was given ${String(given).slice(0, 300)}`;
  const outside = event.type === 'rip_done' ? event.files.find((f) => !norm(f).startsWith(`${norm(given)}/`) || f.split('/').includes('..')) : undefined;
  return outside === undefined ? null : `rip_done names the file ${outside.slice(0, 300)} outside the raw folder ${given.slice(0, 300)}`;
}

/**
 * A finished job's outputs must lie inside the target folder the job was given (under MEDIA_ROOT,
 * checked when the job was made): the output folder strictly below it, every file inside that
 * folder, no `..`. The API serves and corrects exactly these paths later; a worker may not point
 * them at /etc.
 */
function outputMismatch(event: AgentEvent, job: { target_dir: string | null }): string | null {
  if (event.type !== 'job_done') return null;
  const target = job.target_dir;
  if (!target || !isUnderRoot('/', target)) return `job_done for a job without a target folder`;
  const check = checkMediaPath(target, event.output_path);
  if (!check.ok || check.path === path.posix.normalize(target).replace(/(.)\/+$/, '$1')) return `job_done names the output folder ${event.output_path.slice(0, 300)}, outside the job's target folder ${target.slice(0, 300)}`;
  const outside = event.files.find((f) => { const c = checkMediaPath(check.path, f); return !c.ok || c.path === check.path; });
  return outside === undefined ? null : `job_done names the file ${outside.slice(0, 300)} outside its output folder ${check.path.slice(0, 300)}`;
}

/**
 * After a rip the worker sends the AACS dumps its ripper wrote, right behind the rip's outcome: a
 * dump is taken from a worker with an open rip, or whose rip ended this long ago at most.
 */
export const DUMP_AFTER_RIP_MS = 5 * 60_000;

/**
 * The agents' events in: each is applied exactly once (its id is recorded in the same transaction
 * that applies it), acknowledged every time (the agent's outbox resends until then), and answers the
 * request it belongs to. A job event acts only when the rules allow it; its handler is in job-events.ts.
 */
export class EventIntake {
  private readonly stmts;
  /** Per node when its last rip ended (DUMP_AFTER_RIP_MS). */
  private readonly ripEnded = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly link: CommandLink,
    private readonly fleet: Fleet,
    private readonly parts: JobEventParts,
    private readonly requests: DriveRequests,
    private readonly keys: () => KeyStore | null,
    private readonly drops: DropLog,
    private readonly log: Logger,
  ) {
    this.stmts = {
      seen: db.prepare<[string], { event_id: string }>('SELECT event_id FROM processed_events WHERE event_id = ?'),
      record: db.prepare<[string, string]>('INSERT INTO processed_events (event_id, ts) VALUES (?, ?)'),
    };
  }

  onEvent(node: string, event: AgentEvent): void {
    this.fleet.touch(node);
    const seen = this.stmts.seen.get(event.event_id);
    if (!seen) {
      this.db.transaction(() => {
        this.stmts.record.run(event.event_id, new Date().toISOString());
        this.apply(node, event);
      })();
    }
    this.link.queueAck(node, event.event_id);
    this.requests.answer(node, event);
  }

  /** Applies one event (inside the transaction that records it as processed). */
  private apply(node: string, event: AgentEvent): void {
    switch (event.type) {
      case 'pong':
        return this.fleet.recordPong(node, event.capabilities);
      case 'tracks':
        // Only the answer to a scan this coordinator asked that node for.
        if (!this.requests.awaits(event.command_id, node)) return this.drops.drop(topics.event(node), `tracks for drive ${event.drive} nobody asked ${node} for`);
        return this.requests.storeTracks(node, event);
      case 'aacs_dump':
        return this.storeDump(node, event);
      case 'ejected':
      case 'command_failed':
        return; // they answer a request only
      case 'chunk_plan':
      case 'chunk_progress':
      case 'chunk_done':
      case 'chunk_failed':
        return this.applyChunk(node, event);
    }
    if ((event.type === 'accepted' || event.type === 'rejected') && this.parts.chunks?.owns(event.command_id)) return this.applyChunk(node, event);
    if (!isJobEvent(event.type)) return;
    const { commands, jobs } = this.parts;
    const cmd = event.command_id ? commands.get(event.command_id) : undefined;
    const job = event.job_id ? jobs.get(event.job_id) : undefined;
    if (!job) return;
    if (event.type === 'accepted' && cmd?.state === 'superseded' && cmd.node === node) {
      // A stale copy the broker kept for the agent while it was away: the work went to another worker.
      commands.sendCancel(node, job.id, cmd.id);
      return this.drops.drop(topics.event(node), `accepted for command ${cmd.id} of job ${job.id}, which was given to another worker: canceled`);
    }
    const refusal = jobEventRefusal(event, node, cmd, job.status, job.phase) ?? (cmd && rawDirMismatch(event, cmd));
    if (refusal) return this.drops.drop(topics.event(node), refusal);
    const outside = outputMismatch(event, job);
    if (outside) {
      this.drops.drop(topics.event(node), outside);
      // The worker that held the job says it is done, somewhere else: the job fails with the reason
      // rather than wait for ever. A late result of a superseded command only counts for nothing.
      if (cmd && cmd.state !== 'superseded') this.failOutside(job.id, cmd.id, outside);
      return;
    }
    if (cmd?.task === TASKS.ripDisc && ['rip_done', 'job_done', 'job_failed', 'job_canceled', 'rejected'].includes(event.type)) this.ripEnded.set(node, Date.now());
    if (cmd?.state === 'superseded') {
      // Work taken away from this agent: only a finished transcode still counts, if nobody finished it meanwhile.
      if (!supersededResultCounts(event, cmd, job.status, job.phase)) return;
      this.withdrawOthers(job.id, cmd.id, job.status === 'failed');
    }
    handleJobEvent(this.parts, { node, job, cmd, event });
  }

  /** An event about a chunk (chunk-intake.ts): refused ones are dropped with the reason; the chunks queued now are handed out. */
  private applyChunk(node: string, event: Parameters<ChunkIntake['apply']>[1]): void {
    const chunks = this.parts.chunks;
    if (!chunks) return this.drops.drop(topics.event(node), `${event.type} from ${node}: this coordinator hands out no chunks`);
    const refusal = chunks.apply(node, event);
    if (refusal) return this.drops.drop(topics.event(node), refusal);
    this.parts.queue.pump();
  }

  private failOutside(jobId: string, commandId: string, reason: string): void {
    const { commands, queue, journal } = this.parts;
    commands.setState(commandId, 'done');
    queue.close(jobId);
    journal.finish(jobId, 'failed', { error: `${reason}: refused` }, `${reason}: refused`);
    queue.pump();
  }

  /** Only from a worker that rips (or just ripped): no worker without a job fills the coordinator's disk with dumps. */
  private storeDump(node: string, event: Extract<AgentEvent, { type: 'aacs_dump' }>): void {
    const ripping = this.parts.commands.of(node, ['sent', 'accepted']).some((c) => c.task === TASKS.ripDisc);
    if (!ripping && Date.now() - (this.ripEnded.get(node) ?? -Infinity) > DUMP_AFTER_RIP_MS) return this.drops.drop(topics.event(node), `aacs_dump ${event.name.slice(0, 200)} from ${node}, which holds no rip`);
    const keys = this.keys();
    if (!keys) return;
    keys.storeDump(event.name, Buffer.from(event.data_base64, 'base64')).then(
      (stored) => {
        if (stored) this.log.info(`AACS dump ${event.name} from ${node} stored`);
      },
      (err: Error) => this.log.warn(`storing AACS dump ${event.name} from ${node} failed: ${err.message}`),
    );
  }

  /** A late result of a superseded command won: the newer attempt of the job is stopped (or had failed already). */
  private withdrawOthers(jobId: string, winner: string, newerFailed: boolean): void {
    const { commands, queue, journal } = this.parts;
    queue.close(jobId);
    for (const other of commands.othersOpen(jobId, winner)) {
      commands.setState(other.id, 'superseded');
      commands.sendCancel(other.node, jobId, other.id);
    }
    journal.note(jobId, 'info', newerFailed ? 'the first worker finished the transcode after all; the second attempt had failed: its files complete the job' : 'the first worker finished the transcode after all; the second attempt is stopped');
  }
}
