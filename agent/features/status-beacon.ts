import os from 'node:os';
import type { AgentStatus } from '../../shared/protocol.js';
import type { AgentContext, AgentFeature } from '../agent-context.js';

/** Spec, Events: workers send a heartbeat (last_seen) once per minute. */
export const HEARTBEAT_MS = 60_000;

function localIp(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** The agent's retained status (name, host, slots, held tasks, capabilities), published on change and at least once a minute. */
export class StatusBeacon implements AgentFeature {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: Pick<AgentContext, 'config' | 'node' | 'store' | 'capabilities' | 'link'>,
    private readonly startedAt: string,
    /** Command ids held outside the task store: the chunks this agent encodes (chunk-runner.ts). */
    private readonly otherTasks: () => string[] = () => [],
  ) {}

  status(): AgentStatus {
    const { config, node, store, capabilities } = this.ctx;
    return {
      node,
      state: 'online',
      name: config.workerName,
      host: config.hostName,
      ip: localIp(),
      slots: config.slots,
      tasks: [...store.heldTaskIds(), ...this.otherTasks()],
      capabilities,
      started_at: this.startedAt,
      last_seen: new Date().toISOString(),
    };
  }

  start(): void {
    this.timer = setInterval(() => this.ctx.link.publishStatus(), HEARTBEAT_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
