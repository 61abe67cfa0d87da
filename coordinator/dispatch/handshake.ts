import type { Logger } from '../../shared/log.js';
import { TASKS, type AgentStatus } from '../../shared/protocol.js';
import type { Fleet } from '../workers/fleet.js';
import type { JobsStore } from '../jobs/jobs-store.js';
import { isActive } from '../jobs/job-status.js';
import type { CommandTable } from './commands.js';
import { guarded } from './guarded.js';
import type { JobJournal } from './job-journal.js';
import type { TranscodeQueue } from './transcode-queue.js';

/** How long accepted work the agent no longer lists may take to show its outcome before it fails. */
const RECONCILE_MS = 10_000;
/**
 * A recovered task the agent still lists this long after its answer went out is answered again (the
 * answer may have been lost): two of the agent's asks (every 10 s, agent/features/job-runner.ts), so
 * an answer still on its way through a busy broker is not sent twice.
 */
const REANSWER_MS = 20_000;

/** The answer given to one recovered task: to which run of the agent (its started_at), and when. */
interface Answered {
  node: string;
  startedAt: string;
  at: number;
  answer: 'resume' | 'cancel';
}

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
    private readonly reanswerMs = REANSWER_MS,
  ) {}

  /** The recovered tasks answered so far, by command id; dropped once the agent no longer lists them. */
  private readonly answered = new Map<string, Answered>();

  /** After (re)connect: resend what the agent should hold but does not list, cancel what was taken away from it. */
  run(status: AgentStatus): void {
    // Answers sent while the agent was away may be lost with its session: its next ask is answered at once (quietly).
    for (const mark of this.answered.values()) if (mark.node === status.node) mark.at = Number.NEGATIVE_INFINITY;
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
   * Answers the tasks an agent that restarted left from its last run (its status's `recovered`):
   * `resume` for work that is still this agent's (its command open, its job active and not being
   * canceled), `cancel` for the rest (superseded or done, taken away while the agent was gone, or
   * unknown). The resume names the status's `started_at`, so a copy the broker delivers to a later run
   * of the agent counts for nothing. The agent asks with every status until its answer arrived: each
   * task is answered (and its job-log line written) once per run of the agent; a task still listed
   * `reanswerMs` after its answer (or after the agent was offline meanwhile) is answered again, as that
   * answer may have been lost, without a new log line unless the answer changed. The mark goes once a
   * status of that agent no longer lists the task.
   */
  answerRecovered(status: AgentStatus): void {
    const listed = new Set((status.recovered ?? []).map((r) => r.command_id));
    for (const [id, mark] of this.answered) {
      if (mark.node === status.node && !listed.has(id)) this.answered.delete(id);
    }
    const now = Date.now();
    for (const { command_id: id, job_id: jobId } of status.recovered ?? []) {
      const mark = this.answered.get(id);
      const again = mark?.node === status.node && mark.startedAt === (status.started_at ?? '');
      if (again && now - mark.at < this.reanswerMs) continue;
      const given = this.answer(status, id, jobId, again ? mark.answer : undefined);
      this.answered.set(id, { node: status.node, startedAt: status.started_at ?? '', at: now, answer: given });
    }
  }

  /**
   * One answer to a recovered task, with its job-log line unless the job log has it already (`previous`
   * is the same answer given before: this one repeats it for an agent that may have lost it).
   */
  private answer(status: AgentStatus, id: string, jobId: string, previous: 'resume' | 'cancel' | undefined): 'resume' | 'cancel' {
    const cmd = this.commands.get(id);
    const job = cmd ? this.jobs.get(cmd.job_id) : undefined;
    const open = cmd?.node === status.node && cmd.job_id === jobId && (cmd.state === 'sent' || cmd.state === 'accepted');
    if (open && job && isActive(job.status) && job.status !== 'canceling') {
      this.commands.sendResume(status.node, jobId, id, status.started_at ?? '');
      const how = cmd.encoded ? 'finishes the transcode, whose encode had ended' : `runs the ${cmd.task === TASKS.ripDisc ? 'rip' : 'transcode'} again from the start`;
      if (previous !== 'resume') this.journal.note(jobId, 'info', `worker ${status.node} restarted and ${how}`);
      return 'resume';
    }
    this.commands.sendCancel(status.node, jobId, id);
    if (cmd?.job_id === jobId && job && previous !== 'cancel') this.journal.note(jobId, 'info', `worker ${status.node} restarted holding command ${id}, which is no longer its work: canceled there`);
    return 'cancel';
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
      this.journal.finish(job.id, 'failed', { error: `the worker ${node} no longer runs this ${stage} (it restarted without it): retry the ${stage}` }, `worker ${node} lost the ${stage}`);
    }
    this.queue.pump();
  }
}
