import fs from 'node:fs/promises';
import { killProcessGroup } from '../../shared/process.js';
import { TASKS, type Phase } from '../../shared/protocol.js';
import type { AgentContext, AgentFeature } from '../agent-context.js';
import { removeRawFolderWithoutMedia } from '../raw-folder.js';
import type { TaskRow } from '../task-store.js';
import type { JobCommand, JobWork } from './job-work.js';

const PRUNE_AFTER_MS = 7 * 24 * 3600_000;
export const RESUME_DELAY_MS = 5_000;

/**
 * Runs job commands in the slots: state in the store, the outcome as an event (done, failed with the
 * reason, canceled). At start it takes over what a previous run left: a rip cannot resume (its disc
 * state is gone) and is failed; a transcode starts over after `resumeDelayMs`, so a cancel for work the
 * coordinator gave to another worker meanwhile arrives first.
 */
export class JobRunner implements AgentFeature {
  private readonly controllers = new Map<string, AbortController>();
  private resumeTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: AgentContext,
    private readonly work: JobWork,
    /** After every rip: AACS dumps the ripper wrote go to the coordinator. */
    private readonly afterRip: () => Promise<void>,
    private readonly resumeDelayMs = RESUME_DELAY_MS,
  ) {}

  async start(): Promise<void> {
    const { store } = this.ctx;
    store.pruneTasks(PRUNE_AFTER_MS);
    const resumable = await this.recover(store.tasksIn(['waiting', 'running']));
    this.resumeTimer = setTimeout(() => this.resume(resumable), this.resumeDelayMs);
  }

  stop(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    for (const c of this.controllers.values()) c.abort();
  }

  /** Puts a stored command into the queue of slots. */
  submit(cmd: JobCommand): void {
    this.ctx.pool.submit(cmd.id, () => this.run(cmd));
  }

  /** Aborts the command when it is running; false when it is not. */
  abort(commandId: string): boolean {
    const running = this.controllers.get(commandId);
    running?.abort();
    return running !== undefined;
  }

  /** Deletes a job's raw folder, only ever inside this worker's folders. */
  private async removeRaw(dir: string): Promise<void> {
    const refusal = this.ctx.roots.rawDirRefusal(dir);
    if (refusal) return this.ctx.log.warn(`not deleting: ${refusal}`);
    await fs.rm(this.ctx.toLocal(dir), { recursive: true, force: true }).catch(() => undefined);
  }

  async run(cmd: JobCommand): Promise<void> {
    const { ctx } = this;
    const { store, log, link } = ctx;
    const controller = new AbortController();
    this.controllers.set(cmd.id, controller);
    store.setTaskState(cmd.id, 'running');
    link.publishStatus();
    const phase: Phase = cmd.task === TASKS.ripDisc ? 'rip' : 'transcode';
    let final: 'done' | 'failed' | 'canceled' = 'done';
    try {
      await this.work(cmd, controller.signal);
    } catch (err) {
      if (ctx.stopping) return;
      if (controller.signal.aborted) {
        final = 'canceled';
        if (cmd.task === TASKS.ripDisc) await this.removeRaw(cmd.args.raw_dir);
        log.info(`${phase} canceled`, cmd.job_id);
        ctx.emit({ type: 'job_canceled', command_id: cmd.id, job_id: cmd.job_id, phase });
      } else {
        final = 'failed';
        const reason = (err as Error).message || String(err);
        if (cmd.task === TASKS.ripDisc && (await removeRawFolderWithoutMedia(ctx.toLocal(cmd.args.raw_dir)).catch(() => false))) log.info('the raw folder held no video or audio file and was removed', cmd.job_id);
        log.error(`${phase} failed: ${reason}`, cmd.job_id);
        ctx.emit({ type: 'job_failed', command_id: cmd.id, job_id: cmd.job_id, phase, reason });
      }
    } finally {
      if (cmd.task === TASKS.ripDisc && !ctx.stopping) await this.afterRip();
      this.controllers.delete(cmd.id);
      if (!ctx.stopping) {
        store.setTaskState(cmd.id, final);
        link.publishStatus();
      }
    }
  }

  private async recover(rows: TaskRow[]): Promise<JobCommand[]> {
    const { store, log } = this.ctx;
    const resumable: JobCommand[] = [];
    for (const row of rows) {
      if (row.pid) await killProcessGroup(row.pid, 1000);
      const cmd = JSON.parse(row.payload) as JobCommand;
      if (row.state === 'running' && cmd.task === TASKS.ripDisc) {
        store.setTaskState(row.id, 'interrupted');
        await this.removeRaw(cmd.args.raw_dir);
        log.warn('the agent stopped during this rip; the rip is marked failed', cmd.job_id);
        this.ctx.emit({ type: 'job_failed', command_id: row.id, job_id: cmd.job_id, phase: 'rip', reason: 'the worker stopped during the rip (crash or restart): retry the rip' });
        continue;
      }
      store.setTaskState(row.id, 'waiting');
      resumable.push(cmd);
    }
    return resumable;
  }

  private resume(cmds: JobCommand[]): void {
    for (const cmd of cmds) {
      if (this.ctx.stopping || this.ctx.store.getTask(cmd.id)?.state !== 'waiting') continue;
      this.ctx.log.info(`resuming ${cmd.task} after a restart`, cmd.job_id);
      this.submit(cmd);
    }
  }
}
