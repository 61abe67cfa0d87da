import { nativeWorkerRefusal } from '../../shared/native-worker.js';
import { TASKS, type Command, type Phase } from '../../shared/protocol.js';
import type { AgentContext } from '../agent-context.js';
import type { DriveCommands } from './drive-commands.js';
import type { JobRunner } from './job-runner.js';
import type { JobCommand } from './job-work.js';
import type { ChunkRunner } from './chunk-runner.js';
import type { ChunkJoins } from './chunk-joins.js';

/**
 * Every command from the coordinator comes in here: a job command is refused (`rejected` with the
 * reason) or stored once and queued for a slot (`accepted`; a redelivery of a known command id is
 * ignored), a cancel stops the running or waiting task, a resume lets a task recovered after a
 * restart run again, the rest is answered at once.
 */
export class CommandIntake {
  constructor(
    private readonly ctx: AgentContext,
    private readonly runner: Pick<JobRunner, 'submit' | 'abort' | 'resumeRecovered'>,
    private readonly driveCommands: Pick<DriveCommands, 'handle'>,
    /** The chunks of long titles this agent encodes for a lead (issue 41); absent: encode_chunk is refused. */
    private readonly chunks?: Pick<ChunkRunner, 'submit' | 'abort'>,
    /** A chunked title's lead waiting for join_chunks (issue 41). */
    private readonly joins?: Pick<ChunkJoins, 'deliver'>,
  ) {}

  onCommand(cmd: Command): void {
    const { ctx } = this;
    if (ctx.stopping) return;
    if (cmd.task === TASKS.cancel) return this.cancel(cmd);
    if (cmd.task === TASKS.resume) {
      this.runner.resumeRecovered(cmd.args.command_id, cmd.args.started_at);
      return;
    }
    if (cmd.task === TASKS.encodeChunk) {
      if (this.chunks) return this.chunks.submit(cmd);
      const reason = `the worker ${ctx.config.workerName} does not encode chunks of a title`;
      ctx.log.warn(`refused ${cmd.task} (command ${cmd.id}): ${reason}`, cmd.job_id);
      ctx.emit({ type: 'rejected', command_id: cmd.id, job_id: cmd.job_id, reason });
      return;
    }
    if (cmd.task === TASKS.joinChunks) {
      // A redelivery after the join, or the word for a transcode this agent no longer runs.
      if (!this.joins?.deliver(cmd)) ctx.log.warn(`ignored ${cmd.task} (command ${cmd.id}): no transcode of this worker waits for the chunks of title ${cmd.args.title + 1}`, cmd.job_id);
      return;
    }
    if (cmd.task !== TASKS.ripDisc && cmd.task !== TASKS.transcodeFiles) {
      void this.driveCommands.handle(cmd);
      return;
    }
    const refusal = this.refusal(cmd);
    if (refusal && !ctx.store.getTask(cmd.id)) {
      ctx.log.warn(`refused ${cmd.task} (command ${cmd.id}): ${refusal}`, cmd.job_id);
      ctx.emit({ type: 'rejected', command_id: cmd.id, job_id: cmd.job_id, reason: refusal });
      return;
    }
    if (!ctx.store.addTask(cmd)) return; // a redelivery of a command we hold or finished
    ctx.log.info(`accepted ${cmd.task} (command ${cmd.id})`, cmd.job_id);
    ctx.emit({ type: 'accepted', command_id: cmd.id, job_id: cmd.job_id });
    // A task that starts at once is in the status its run publishes; one that waits for a slot is published here.
    if (!this.runner.submit(cmd)) ctx.link.publishStatus();
  }

  private cancel(cmd: Extract<Command, { task: typeof TASKS.cancel }>): void {
    const { ctx } = this;
    const target = cmd.args.command_id;
    // A chunk's cancel: it stops quietly, the coordinator has ended it already.
    if (this.chunks?.abort(target)) return;
    if (this.runner.abort(target)) return;
    const task = ctx.store.getTask(target);
    if (task && task.state !== 'waiting') return; // finished: its outcome is in the outbox already
    if (task) {
      ctx.pool.withdraw(target);
      ctx.store.setTaskState(target, 'canceled');
      ctx.link.publishStatus();
      ctx.log.info(`${task.task} canceled before it started (command ${target})`, task.job_id ?? undefined);
    }
    const phase: Phase = task?.task === TASKS.transcodeFiles ? 'transcode' : 'rip';
    ctx.emit({ type: 'job_canceled', command_id: target, job_id: task?.job_id ?? cmd.job_id, phase });
  }

  /** Why this worker cannot take the command at all (answered with `rejected` instead of `accepted`), or null. */
  private refusal(cmd: JobCommand): string | null {
    return this.taskRefusal(cmd) ?? this.ctx.roots.commandRefusal(cmd);
  }

  private taskRefusal(cmd: JobCommand): string | null {
    const { config, drives, ripper, capabilities } = this.ctx;
    if (cmd.task === TASKS.ripDisc) {
      if (config.native) return nativeWorkerRefusal(config.workerName);
      if (!ripper && drives.get(cmd.args.drive)?.loaded?.disc.type !== 'cd') return `the worker ${config.workerName} has no ripper (a transcode-only or native worker cannot rip): install MakeMKV, or lsdvd, dvdbackup and ffmpeg for unencrypted DVDs`;
      if (!drives.get(cmd.args.drive)) return `the worker ${config.workerName} has no drive named "${cmd.args.drive}"`;
      return null;
    }
    if (capabilities.tools.HandBrakeCLI === null) return `the worker ${config.workerName} cannot transcode: ${config.handbrakeCli} was not found`;
    return null;
  }
}
