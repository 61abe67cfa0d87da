import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { killProcessGroup } from '../../shared/process.js';
import { TASKS, type Phase, type RecoveredTask } from '../../shared/protocol.js';
import type { AgentContext, AgentFeature } from '../agent-context.js';
import { finishedEncode, outputLedgerFile, removeOwnOutputs, type EncodedOutputs } from '../output/output-folder.js';
import { removeRawFolderWithoutMedia } from '../output/raw-folder.js';
import { OUTCOME_EVENTS, type TaskRow, type TaskState } from '../store/task-store.js';
import type { JobCommand, JobWork, TaskSlot } from './job-work.js';

const PRUNE_AFTER_MS = 7 * 24 * 3600_000;
/** While recovered tasks wait for the coordinator's word, the agent asks again (its status) this often. */
export const ASK_AGAIN_MS = 10_000;

/**
 * Runs job commands in the slots: state in the store, the outcome as an event (done, failed with the
 * reason, canceled). At start it takes over what a previous run left: a rip cannot resume (its disc
 * state is gone) and is failed; every other task waits until the coordinator says it is still this
 * agent's work (`resume`, answering the `recovered` list of the status) or takes it away (`cancel`).
 * Waiting for that word instead of a fixed delay is what keeps a job from running twice: while the
 * agent was away the coordinator may have given the work to another worker, and a resumed copy would
 * remove the raw folder under it. Without an answer (no broker, no coordinator) the task stays stored
 * and listed, and runs once the coordinator confirms it.
 */
export class JobRunner implements AgentFeature {
  private readonly controllers = new Map<string, AbortController>();
  /** Tasks from the previous run, waiting for the coordinator's word. */
  private readonly recovered = new Map<string, JobCommand>();
  private askTimer: NodeJS.Timeout | null = null;
  /**
   * Recovered transcodes the coordinator confirmed: one whose encodes had all ended is finished from
   * there; of the others, the earlier run's files go before they start over.
   */
  private readonly startOver = new Set<string>();

  constructor(
    private readonly ctx: AgentContext,
    private readonly work: JobWork,
    /** After every rip: AACS dumps the ripper wrote go to the coordinator. */
    private readonly afterRip: () => Promise<void>,
    /** This run's `started_at`, as the status says it: a resume answering an earlier run's status is ignored. */
    private readonly startedAt: string,
    private readonly askAgainMs = ASK_AGAIN_MS,
  ) {}

  async start(): Promise<void> {
    const { store, log } = this.ctx;
    store.pruneTasks(PRUNE_AFTER_MS);
    for (const cmd of await this.recover(store.tasksIn(['waiting', 'running']))) this.recovered.set(cmd.id, cmd);
    if (this.recovered.size === 0) return;
    log.info(`${this.recovered.size} task(s) left from the last run wait for the coordinator to confirm them`);
    // The status lists them on every connect; asking again covers an answer lost on the way.
    this.askTimer = setInterval(() => {
      if (this.recoveredTasks().length) this.ctx.link.publishStatus();
      else this.stopAsking();
    }, this.askAgainMs);
    this.askTimer.unref();
  }

  /** The tasks of the previous run still waiting for the coordinator's word (the status's `recovered`). */
  recoveredTasks(): RecoveredTask[] {
    for (const [id, cmd] of this.recovered) {
      // A cancel ends a recovered task in the store (command intake): it no longer waits.
      const state = this.ctx.store.getTask(id)?.state;
      if (state === 'waiting') continue;
      this.recovered.delete(id);
      // Taken away: the files its last run finished before the agent died go (the encode is redone elsewhere).
      if (state === 'canceled' && cmd.task === TASKS.transcodeFiles) void this.removeOwnOutputs(cmd, 'its transcode was canceled after the restart');
    }
    return [...this.recovered.values()].map((cmd) => ({ command_id: cmd.id, job_id: cmd.job_id }));
  }

  /**
   * The coordinator's word that a recovered task is still this agent's: it is queued for a slot and
   * starts over (a transcode whose encodes had ended only finishes). False when there is nothing to
   * resume (not recovered, already answered, or the answer belongs to an earlier run of this agent,
   * whose tasks the coordinator may have taken away since).
   */
  resumeRecovered(commandId: string, startedAt: string): boolean {
    const { ctx } = this;
    const cmd = this.recovered.get(commandId);
    if (!cmd) return false;
    if (startedAt !== this.startedAt) {
      ctx.log.info(`ignoring a resume of command ${commandId} that answers an earlier run of this agent`, cmd.job_id);
      return false;
    }
    this.recovered.delete(commandId);
    if (this.recovered.size === 0) this.stopAsking();
    if (ctx.stopping || ctx.store.getTask(commandId)?.state !== 'waiting') return false;
    ctx.log.info(`resuming the ${cmd.task === TASKS.ripDisc ? 'rip' : 'transcode'} after a restart: the coordinator confirmed it`, cmd.job_id);
    if (cmd.task === TASKS.transcodeFiles) this.startOver.add(cmd.id);
    if (!this.submit(cmd)) ctx.link.publishStatus();
    return true;
  }

  private stopAsking(): void {
    if (this.askTimer) clearInterval(this.askTimer);
    this.askTimer = null;
  }

  stop(): void {
    this.stopAsking();
    for (const c of this.controllers.values()) c.abort();
  }

  /**
   * Puts a stored command into the queue of slots. True when it started at once: its run has published
   * the status already. False when it waits for a slot: the caller publishes the status with it waiting.
   * A transcode starts at once but waits as well: it prepares (checks its raw files, plans its output
   * folder, scans its first file) and then waits for its slot (TaskSlot.take), so that a slot that
   * frees starts its encoder without delay. The coordinator sends one ahead of a slot that is about
   * to free (transcode_ending).
   */
  submit(cmd: JobCommand): boolean {
    if (cmd.task === TASKS.transcodeFiles) {
      void this.run(cmd);
      return false;
    }
    return this.ctx.pool.submit(cmd.id, (release) => this.run(cmd, release));
  }

  /** Aborts the command when it is running; false when it is not. */
  abort(commandId: string): boolean {
    const running = this.controllers.get(commandId);
    running?.abort();
    return running !== undefined;
  }

  /** The ledger of a transcode's outputs (output-folder.ts). */
  private ledgerFile(cmd: JobCommand): string {
    return outputLedgerFile(this.ctx.config.dataDir, cmd.id);
  }

  /** Drops a transcode's ledger once its outcome is stored: nothing of it is cleaned up after a restart. */
  private async dropLedger(cmd: JobCommand): Promise<void> {
    if (cmd.task === TASKS.transcodeFiles && existsSync(this.ledgerFile(cmd))) await fs.rm(this.ledgerFile(cmd), { force: true }).catch(() => undefined);
  }

  /**
   * Removes what an earlier run of this transcode wrote and finished before the agent died (only files
   * that are provably its own, see removeOwnOutputs), so that it neither stays behind next to the
   * encode redone elsewhere nor pushes a resumed run into a second folder.
   */
  private async removeOwnOutputs(cmd: JobCommand, why: string): Promise<void> {
    // Most resumed transcodes had written nothing yet: no ledger, nothing to wait for.
    if (cmd.task !== TASKS.transcodeFiles || !existsSync(this.ledgerFile(cmd))) return;
    try {
      const { removed, keptAfterRawReleased } = await removeOwnOutputs(this.ledgerFile(cmd));
      if (keptAfterRawReleased) this.ctx.log.warn(`${why}: the files its run before the restart had written are kept, as that run had removed the raw files after its encodes: they may be the only encode of this job`, cmd.job_id);
      else if (removed.length) this.ctx.log.info(`${why}: removed ${removed.length} file(s) its run before the restart had written: ${removed.join(', ')}`, cmd.job_id);
    } catch (err) {
      this.ctx.log.warn(`the files of an earlier run of command ${cmd.id} were not cleaned up: ${(err as Error).message}`, cmd.job_id);
    }
  }

  /** Deletes a job's raw folder, only ever inside this worker's folders. */
  private async removeRaw(dir: string): Promise<void> {
    const refusal = this.ctx.roots.rawDirRefusal(dir);
    if (refusal) return this.ctx.log.warn(`not deleting: ${refusal}`);
    await fs.rm(this.ctx.toLocal(dir), { recursive: true, force: true }).catch(() => undefined);
  }

  /**
   * Runs a command: `held`, the release of the slot it was started in (a rip); without it the work
   * takes its slot itself once prepared (a transcode). The task counts as running once its work has
   * started in the slot (a transcode: its first encoder).
   */
  private async run(cmd: JobCommand, held?: () => void): Promise<void> {
    const { ctx } = this;
    const { store, log, link } = ctx;
    const controller = new AbortController();
    this.controllers.set(cmd.id, controller);
    let release = held;
    let ended = false;
    const running = (): void => {
      store.setTaskState(cmd.id, 'running');
      link.publishStatus();
    };
    const slot: TaskSlot = {
      take: async () => {
        if (release) return;
        const granted = await ctx.pool.take(cmd.id, controller.signal);
        // Granted after the task ended (it failed while its encoder waited, forked ahead): given back.
        if (ended) granted();
        else release = granted;
      },
      started: () => {
        if (!held) running();
      },
      release: () => release?.(),
    };
    if (held) running();
    const phase: Phase = cmd.task === TASKS.ripDisc ? 'rip' : 'transcode';
    let final: 'done' | 'failed' | 'canceled' = 'done';
    try {
      let encoded: EncodedOutputs | undefined;
      if (this.startOver.delete(cmd.id)) {
        // Encodes that had all ended are not redone: only the steps after them are left.
        encoded = (await finishedEncode(this.ledgerFile(cmd))) ?? undefined;
        if (!encoded) await this.removeOwnOutputs(cmd, 'the transcode starts over after a restart');
      }
      await this.work(cmd, controller.signal, slot, encoded);
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
        // Its outcome is stored: its files are the job's now (or were removed on failure).
        await this.dropLedger(cmd);
        link.publishStatus();
      }
      ended = true;
      // A take still waiting (the task failed before its slot came) leaves the queue.
      ctx.pool.withdraw(cmd.id);
      slot.release();
    }
  }

  /** The end state of each task whose outcome event waits in the outbox (the last run ended it, then stopped before it stored that). */
  private outcomesInOutbox(): Map<string, TaskState> {
    const ends = new Map<string, TaskState>();
    for (const { payload } of this.ctx.store.pendingEvents()) {
      const event = JSON.parse(payload) as { type?: string; command_id?: string };
      if (!event.command_id || !event.type || !OUTCOME_EVENTS.has(event.type)) continue;
      ends.set(event.command_id, event.type === 'job_failed' ? 'failed' : event.type === 'job_canceled' ? 'canceled' : 'done');
    }
    return ends;
  }

  private async recover(rows: TaskRow[]): Promise<JobCommand[]> {
    const { store, log } = this.ctx;
    const resumable: JobCommand[] = [];
    const outcomes = rows.length ? this.outcomesInOutbox() : new Map<string, TaskState>();
    for (const row of rows) {
      if (row.pid) await killProcessGroup(row.pid, 1000);
      const cmd = JSON.parse(row.payload) as JobCommand;
      const ended = outcomes.get(row.id);
      if (ended) {
        // Finished, its outcome on its way: running it again would redo (or undo) finished work.
        store.setTaskState(row.id, ended);
        await this.dropLedger(cmd);
        continue;
      }
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
}
