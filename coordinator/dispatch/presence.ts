import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/log.js';
import { TASKS, type AgentStatus } from '../../shared/protocol.js';
import type { Fleet } from '../workers/fleet.js';
import type { JobsStore } from '../jobs/jobs-store.js';
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

/** How long Presence waits for what; the last three are the constants above unless a test shortens them. */
export interface PresenceTiming {
  /** AGENT_GRACE_SECONDS: how long an agent with open work may be away before its work is taken away. */
  graceMs: number;
  /**
   * ENCODED_WAIT_SECONDS: how long past the grace period a transcode whose encodes had ended
   * (transcode_encoded) waits for its worker before it goes back to the queue. The worker's restart
   * finishes it in seconds (agent/features/job-runner.ts), where another worker would encode it all again.
   */
  encodedWaitMs: number;
  staleMs?: number;
  unansweredMs?: number;
  settleMs?: number;
}

/** 10 min, 45 s: a wait for the job log. */
function waitText(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/**
 * Which agents are there: their retained status, the capability ping with its silence sweep, and the
 * grace period of an agent that went away with open work. An agent that stays away past the grace
 * period loses its work: its rips fail, its transcodes go back to the shared queue.
 */
export class Presence {
  private readonly graceTimers = new Map<string, NodeJS.Timeout>();
  /** Nodes past their grace period that still hold encoded transcodes (encodedWaitMs). */
  private readonly encodedTimers = new Map<string, NodeJS.Timeout>();
  private pingTimer: NodeJS.Timeout | null = null;
  private readonly graceMs: number;
  private readonly encodedWaitMs: number;
  private readonly staleMs: number;
  private readonly unansweredMs: number;
  private readonly settleMs: number;

  constructor(
    private readonly link: CommandLink,
    private readonly fleet: Fleet,
    private readonly jobs: JobsStore,
    private readonly commands: CommandTable,
    private readonly queue: TranscodeQueue,
    private readonly journal: JobJournal,
    private readonly handshake: Handshake,
    private readonly log: Logger,
    timing: PresenceTiming,
  ) {
    this.graceMs = timing.graceMs;
    this.encodedWaitMs = timing.encodedWaitMs;
    this.staleMs = timing.staleMs ?? STALE_MS;
    this.unansweredMs = timing.unansweredMs ?? UNANSWERED_MS;
    this.settleMs = timing.settleMs ?? SETTLE_MS;
  }

  /** Agents with open work are offline until they speak: their grace period starts now; the ping goes out every pingMs. */
  start(pingMs: number): void {
    for (const node of this.commands.nodesWithOpenWork()) this.startGrace(node);
    this.pingTimer = setInterval(() => guarded(this.log, 'the capability ping', () => this.pingAndSweep()), pingMs);
  }

  stop(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
    for (const t of [...this.graceTimers.values(), ...this.encodedTimers.values()]) clearTimeout(t);
    this.graceTimers.clear();
    this.encodedTimers.clear();
  }

  /** Whether the node's grace period runs (it went away with open work and has not come back), or the longer wait of its encoded transcodes. */
  inGrace(node: string): boolean {
    return this.graceTimers.has(node) || this.encodedTimers.has(node);
  }

  /** An agent's retained status (online, or offline from its last will or its goodbye). */
  onStatus(status: AgentStatus): void {
    // An offline status of a worker nobody knows (the last will of a removed one) adds nothing.
    if (status.state !== 'online' && !this.fleet.get(status.node)) return;
    const { wasOnline } = this.fleet.applyStatus(status);
    if (status.state !== 'online') {
      if (wasOnline) this.log.warn(`worker ${status.node} went offline; its work waits ${Math.round(this.graceMs / 1000)} s for it`);
      if (this.hasOpenWork(status.node)) this.startGrace(status.node);
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
    // A chunk the agent no longer lists (it restarted within its grace period) is handed out again.
    if (status.tasks) this.queue.chunksNotHeld(status.node, status.tasks);
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
        if (this.hasOpenWork(agent.node)) this.startGrace(agent.node);
      }
    }
  }

  /** Whether the node holds a rip, a transcode or a chunk (issue 41): its going away starts a grace period. */
  private hasOpenWork(node: string): boolean {
    return this.commands.nodesWithOpenWork().includes(node) || this.queue.hasChunksOn(node);
  }

  private startGrace(node: string): void {
    if (this.graceTimers.has(node) || this.encodedTimers.has(node)) return;
    this.wait(this.graceTimers, node, this.graceMs, `the grace period of ${node}`, () => this.agentLost(node, false));
  }

  /**
   * Runs `lost` after `ms` unless the node is back online by then. While we cannot see the broker
   * ourselves (or just got it back, and the agents are still reconnecting) silence proves nothing: the
   * wait starts again.
   */
  private wait(timers: Map<string, NodeJS.Timeout>, node: string, ms: number, what: string, lost: () => void): void {
    const timer = setTimeout(
      () =>
        guarded(this.log, what, () => {
          timers.delete(node);
          if (this.fleet.get(node)?.online) return;
          const since = this.link.connectedSince;
          if (since === null || Date.now() - since < Math.max(this.graceMs, this.settleMs)) {
            this.wait(timers, node, ms, what, lost);
            return;
          }
          lost();
        }),
      ms,
    );
    timers.set(node, timer);
  }

  private clearGrace(node: string): void {
    for (const timers of [this.graceTimers, this.encodedTimers]) {
      const t = timers.get(node);
      if (t) clearTimeout(t);
      timers.delete(node);
    }
  }

  /**
   * The worker was removed (DELETE /workers/{name}): its work ends now, as at the end of a grace
   * period that will never come (a removed worker sends no last will and cannot log in again): a
   * canceling job is canceled, a rip fails, a transcode goes back to the shared queue.
   */
  removed(node: string): void {
    this.clearGrace(node);
    this.agentLost(node, true, 'removed');
  }

  /**
   * The agent stayed away past the grace period: its rips fail, its transcodes go back to the queue.
   * A transcode whose encodes had ended waits on (encodedWaitMs) unless `encodedToo`, the end of that
   * wait, or its job is being canceled.
   */
  private agentLost(node: string, encodedToo: boolean, why: 'offline' | 'removed' = 'offline'): void {
    const seconds = Math.round(this.graceMs / 1000);
    const removed = why === 'removed';
    let encodedWaiting = false;
    for (const cmd of this.commands.of(node, ['sent', 'accepted'])) {
      const job = this.jobs.get(cmd.job_id);
      const active = job !== undefined && isActive(job.status);
      if (!encodedToo && cmd.encoded && active && job.status !== 'canceling') {
        encodedWaiting = true;
        this.journal.note(job.id, 'warn', `worker ${node} went offline after the encode had ended; the transcode waits up to ${waitText(this.encodedWaitMs)} for it to come back and finish, then goes back to the shared queue`);
        continue;
      }
      this.commands.setState(cmd.id, 'superseded');
      // Queued in the agent's session behind any copy of the command the broker still holds for it:
      // when it comes back, that copy is canceled at once instead of running a second time.
      this.commands.sendCancel(node, cmd.job_id, cmd.id);
      if (!active) continue;
      if (job.status === 'canceling') {
        this.journal.finish(job.id, 'canceled', {}, `canceled (worker ${node} ${removed ? 'was removed' : 'is offline'})`);
      } else if (cmd.task === TASKS.ripDisc) {
        const error = removed ? `the worker ${node} was removed during the rip: retry the rip` : `the worker ${node} went offline during the rip (no contact for ${seconds} s): retry the rip`;
        this.journal.finish(job.id, 'failed', { error }, `worker ${node} ${removed ? 'removed' : 'lost'} during the rip`);
      } else {
        this.queue.requeue(job.id);
        this.journal.note(job.id, 'warn', `worker ${node} ${removed ? 'was removed' : 'went offline'} during the transcode; the transcode goes back to the shared queue`);
      }
    }
    this.queue.nodeLost(node);
    if (encodedWaiting) this.wait(this.encodedTimers, node, this.encodedWaitMs, `the wait for the encoded transcodes of ${node}`, () => this.agentLost(node, true));
    this.queue.pump();
  }
}
