import type { Logger } from '../../shared/log.js';
import { TASKS, type AgentStatus } from '../../shared/protocol.js';
import type { Fleet } from '../fleet.js';
import type { JobsStore } from '../jobs-store.js';
import { isActive } from '../jobs/job-status.js';
import type { CommandTable } from './commands.js';
import { guarded } from './guarded.js';
import type { JobJournal } from './job-journal.js';
import type { TranscodeQueue } from './transcode-queue.js';

/** How long accepted work the agent no longer lists may take to show its outcome before it fails. */
const RECONCILE_MS = 10_000;

/**
 * What happens when an agent comes (back) online: it lists the commands it holds, and the
 * coordinator resends what it should hold but does not list, cancels what was taken away from it,
 * and fails, after a while, accepted work the agent lost.
 */
export class Handshake {
  constructor(
    private readonly commands: CommandTable,
    private readonly fleet: Fleet,
    private readonly jobs: JobsStore,
    private readonly journal: JobJournal,
    private readonly queue: TranscodeQueue,
    private readonly log: Logger,
    private readonly reconcileMs = RECONCILE_MS,
  ) {}

  /** After (re)connect: resend what the agent should hold but does not list, cancel what was taken away from it. */
  run(status: AgentStatus): void {
    const holds = new Set(status.tasks ?? []);
    const missing: string[] = [];
    for (const cmd of this.commands.of(status.node, ['sent', 'accepted'])) {
      if (holds.has(cmd.id)) continue;
      if (cmd.state === 'sent') this.commands.resend(cmd);
      else missing.push(cmd.id);
    }
    // Accepted work the agent no longer lists either finished (its outcome is on the way from the
    // outbox) or was lost with the agent's state: after a while without an outcome, it fails.
    if (missing.length) {
      const timer = setTimeout(() => guarded(this.log, `the reconnect check of ${status.node}`, () => this.reconcile(status.node, missing)), this.reconcileMs);
      timer.unref();
    }
    for (const id of holds) {
      const row = this.commands.get(id);
      if (row?.state === 'superseded' || row?.state === 'done') this.commands.sendCancel(status.node, row.job_id, id);
    }
  }

  /**
   * Answers the tasks an agent that restarted left from its last run (its status's `recovered`; on
   * every status that lists them, so an answer lost on the way is given again): `resume` for work that
   * is still this agent's (its command open, its job active and not being canceled), `cancel` for
   * the rest (superseded or done, taken away while the agent was gone, or unknown). The resume names
   * the status's `started_at`, so a copy the broker delivers to a later run of the agent counts for nothing.
   */
  answerRecovered(status: AgentStatus): void {
    for (const { command_id: id, job_id: jobId } of status.recovered ?? []) {
      const cmd = this.commands.get(id);
      const job = cmd ? this.jobs.get(cmd.job_id) : undefined;
      const open = cmd?.node === status.node && cmd.job_id === jobId && (cmd.state === 'sent' || cmd.state === 'accepted');
      if (open && job && isActive(job.status) && job.status !== 'canceling') {
        this.commands.sendResume(status.node, jobId, id, status.started_at ?? '');
        this.journal.note(jobId, 'info', `worker ${status.node} restarted and runs the ${cmd.task === TASKS.ripDisc ? 'rip' : 'transcode'} again from the start`);
        continue;
      }
      this.commands.sendCancel(status.node, jobId, id);
      if (cmd?.job_id === jobId && job) this.journal.note(jobId, 'info', `worker ${status.node} restarted holding command ${id}, which is no longer its work: canceled there`);
    }
  }

  private reconcile(node: string, ids: string[]): void {
    const holds = new Set(this.fleet.get(node)?.status?.tasks ?? []);
    for (const id of ids) {
      const cmd = this.commands.get(id);
      if (!cmd || cmd.state !== 'accepted' || holds.has(id) || !this.fleet.get(node)?.online) continue;
      this.commands.setState(id, 'superseded');
      const job = this.jobs.get(cmd.job_id);
      if (!job || !isActive(job.status)) continue;
      const stage = cmd.task === TASKS.ripDisc ? 'rip' : 'transcode';
      this.journal.finish(job.id, { status: 'failed', error: `the worker ${node} no longer runs this ${stage} (it restarted without it): retry the ${stage}` }, `worker ${node} lost the ${stage}`);
    }
    this.queue.pump();
  }
}
