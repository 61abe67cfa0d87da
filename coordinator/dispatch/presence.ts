import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/log.js';
import { TASKS, type AgentStatus } from '../../shared/protocol.js';
import type { Fleet } from '../fleet.js';
import type { JobsStore } from '../jobs-store.js';
import { isActive } from '../jobs/job-status.js';
import type { CommandTable } from './commands.js';
import { guarded } from './guarded.js';
import type { Handshake } from './handshake.js';
import type { JobJournal } from './job-journal.js';
import type { CommandLink } from './link.js';
import type { TranscodeQueue } from './transcode-queue.js';

/** An online agent that has not been heard of for this long (and no last will came) counts as offline. */
const STALE_MS = 30_000;
/** A job command no agent answered (accepted or refused) for this long goes out again. */
const UNANSWERED_MS = 10_000;
/**
 * After the coordinator (re)connects to the broker its agents must reconnect too, and a reconnect
 * storm takes a while: in the scale bench's fault run 20 workers on a busy 2-core host were back 6 to
 * 14 s after the coordinator's restart. No grace period runs out before this long after the connect
 * (nor before a whole grace period): with a short AGENT_GRACE_SECONDS, live workers were declared
 * lost, their transcodes given to others while they finished them and removed the raw folders.
 */
const SETTLE_MS = 30_000;

/**
 * Which agents are there: their retained status, the capability ping with its silence sweep, and the
 * grace period of an agent that went away with open work. An agent that stays away past the grace
 * period loses its work: its rips fail, its transcodes go back to the shared queue.
 */
export class Presence {
  private readonly graceTimers = new Map<string, NodeJS.Timeout>();
  private pingTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly link: CommandLink,
    private readonly fleet: Fleet,
    private readonly jobs: JobsStore,
    private readonly commands: CommandTable,
    private readonly queue: TranscodeQueue,
    private readonly journal: JobJournal,
    private readonly handshake: Handshake,
    private readonly graceMs: number,
    private readonly log: Logger,
    private readonly staleMs = STALE_MS,
    private readonly unansweredMs = UNANSWERED_MS,
    private readonly settleMs = SETTLE_MS,
  ) {}

  /** Agents with open work are offline until they speak: their grace period starts now; the ping goes out every pingMs. */
  start(pingMs: number): void {
    for (const node of this.commands.nodesWithOpenWork()) this.startGrace(node);
    this.pingTimer = setInterval(() => guarded(this.log, 'the capability ping', () => this.pingAndSweep()), pingMs);
  }

  stop(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    for (const t of this.graceTimers.values()) clearTimeout(t);
    this.graceTimers.clear();
  }

  /** Whether the node's grace period runs (it went away with open work and has not come back). */
  inGrace(node: string): boolean {
    return this.graceTimers.has(node);
  }

  /** An agent's retained status (online, or offline from its last will or its goodbye). */
  onStatus(status: AgentStatus): void {
    // An offline status of a worker nobody knows (the last will of a removed one) adds nothing.
    if (status.state !== 'online' && !this.fleet.get(status.node)) return;
    const { wasOnline } = this.fleet.applyStatus(status);
    if (status.state !== 'online') {
      if (wasOnline) this.log.warn(`worker ${status.node} went offline; its work waits ${Math.round(this.graceMs / 1000)} s for it`);
      if (this.commands.nodesWithOpenWork().includes(status.node)) this.startGrace(status.node);
      return;
    }
    this.clearGrace(status.node);
    if (!wasOnline) {
      this.log.info(`worker ${status.node} is online`);
      this.handshake.run(status);
    }
    // Not only on the way back online: an agent that restarted before its last will was seen, or
    // whose answer was lost, asks again with every status until it has its answer.
    this.handshake.answerRecovered(status);
    this.queue.pump();
  }

  /**
   * Capability pings; agents that went silent without a last will (a broker outage hid it); and
   * commands an online agent has not answered for `unansweredMs`, sent again. A command published
   * while the agent's subscription was not yet back at the broker (a restarted embedded broker) is
   * dropped by the broker; the agent takes a copy it already holds as a redelivery and ignores it.
   */
  pingAndSweep(): void {
    if (!this.link.connected) return;
    const now = Date.now();
    for (const cmd of this.commands.unanswered(new Date(now - this.unansweredMs).toISOString())) {
      if (!this.fleet.get(cmd.node)?.online) continue;
      this.log.warn(`worker ${cmd.node} has not answered command ${cmd.id} (${cmd.task}) for ${Math.round(this.unansweredMs / 1000)} s or more; sending it again`, cmd.job_id);
      this.commands.resend(cmd);
    }
    const since = this.link.connectedSince;
    for (const agent of this.fleet.online()) {
      this.link.sendCommand(agent.node, { id: randomUUID(), task: TASKS.pingWorker, args: {} }, 0);
      const connectedLongEnough = since !== null && now - since > this.staleMs;
      if (connectedLongEnough && now - agent.lastContact > this.staleMs) {
        this.log.warn(`worker ${agent.node} has not answered for ${Math.round(this.staleMs / 1000)} s; treating it as offline`);
        this.fleet.markOffline(agent.node);
        if (this.commands.nodesWithOpenWork().includes(agent.node)) this.startGrace(agent.node);
      }
    }
  }

  private startGrace(node: string): void {
    if (this.graceTimers.has(node)) return;
    const timer = setTimeout(
      () =>
        guarded(this.log, `the grace period of ${node}`, () => {
          this.graceTimers.delete(node);
          if (this.fleet.get(node)?.online) return;
          // While we cannot see the broker ourselves (or just got it back, and the agents are still
          // reconnecting) silence proves nothing: wait on.
          const since = this.link.connectedSince;
          if (since === null || Date.now() - since < Math.max(this.graceMs, this.settleMs)) {
            this.startGrace(node);
            return;
          }
          this.agentLost(node);
        }),
      this.graceMs,
    );
    this.graceTimers.set(node, timer);
  }

  private clearGrace(node: string): void {
    const t = this.graceTimers.get(node);
    if (t) clearTimeout(t);
    this.graceTimers.delete(node);
  }

  /** The agent stayed away past the grace period: its rips fail, its transcodes go back to the queue. */
  private agentLost(node: string): void {
    const seconds = Math.round(this.graceMs / 1000);
    for (const cmd of this.commands.of(node, ['sent', 'accepted'])) {
      this.commands.setState(cmd.id, 'superseded');
      // Queued in the agent's session behind any copy of the command the broker still holds for it:
      // when it comes back, that copy is canceled at once instead of running a second time.
      this.commands.sendCancel(node, cmd.job_id, cmd.id);
      const job = this.jobs.get(cmd.job_id);
      if (!job || !isActive(job.status)) continue;
      if (job.status === 'canceling') {
        this.journal.finish(job.id, { status: 'canceled' }, `canceled (worker ${node} is offline)`);
      } else if (cmd.task === TASKS.ripDisc) {
        this.journal.finish(job.id, { status: 'failed', error: `the worker ${node} went offline during the rip (no contact for ${seconds} s): retry the rip` }, `worker ${node} lost during the rip`);
      } else {
        this.queue.requeue(job.id);
        this.journal.note(job.id, 'warn', `worker ${node} went offline during the transcode; the transcode goes back to the shared queue`);
      }
    }
    this.queue.pump();
  }
}
