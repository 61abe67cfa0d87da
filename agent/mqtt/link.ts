import { connectMqtt, type InProcessConnect, type MqttClient } from '../../shared/mqtt-client.js';
import { closeWithLastWord } from '../../shared/mqtt-close.js';
import { linkConnectOptions, sendImmediately, topics, type AgentEvent, type AgentStatus, type AppKeyMessage, type Command, type DriveState, type KeydbMessage, type KeystoreMessage } from '../../shared/protocol.js';
import { appKeyMessageSchema, commandSchema, eventAckSchema, keydbMessageSchema, keystoreMessageSchema, parseMessage } from '../../shared/protocol-schemas.js';
import { DropLog } from '../../shared/drop-log.js';
import type { Logger } from '../../shared/log.js';
import type { TaskStore } from '../store/task-store.js';

const RESEND_AFTER_MS = 15_000;

export interface LinkHandlers {
  onCommand(cmd: Command): void;
  /** The retained status to publish on every (re)connect and heartbeat. */
  status(): AgentStatus;
  /** A retained message of the coordinator on one of the ripwerk/keys/* topics, checked against its schema. */
  onKeys(topic: string, body: KeystoreMessage | KeydbMessage | AppKeyMessage): void;
  /** The drive states, published again on every (re)connect: a coordinator with an embedded broker that restarted has lost the retained ones. */
  drives(): DriveState[];
}

/**
 * The agent's MQTT connection: last will + retained online state, commands in,
 * events out of the outbox (replayed after an outage until acknowledged).
 */
export class AgentLink {
  private client: MqttClient | null = null;
  private resendTimer: NodeJS.Timeout | null = null;
  private flushing = false;
  private lastFlush = 0;
  private readonly drops: DropLog;

  constructor(
    private readonly url: string,
    private readonly node: string,
    private readonly store: TaskStore,
    private readonly handlers: LinkHandlers,
    private readonly log: Logger,
    /** The MQTT user name and password (the worker's own credentials, or the node name and the legacy broker secret); null: the broker wants none. */
    private readonly credentials: { username: string; password: string } | null = null,
    /** The all-in-one process's local agent reaches the embedded broker in memory instead of over a socket. */
    private readonly inProcess: InProcessConnect | null = null,
  ) {
    this.drops = new DropLog(log);
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  /** When each repeating connection line was last written. */
  private readonly repeated = new Map<string, number>();

  /** A line about the connection, at most once a minute: a worker that is refused tries again every second. */
  private warnEveryMinute(line: string): void {
    const now = Date.now();
    if (now - (this.repeated.get(line) ?? -Infinity) < 60_000) return;
    if (this.repeated.size >= 100) this.repeated.clear();
    this.repeated.set(line, now);
    this.log.warn(line);
  }

  start(): void {
    const willPayload: AgentStatus = { node: this.node, state: 'offline' };
    this.client = connectMqtt(
      this.url,
      linkConnectOptions({ clientId: `ripwerk-agent-${this.node}`.slice(0, 120), login: this.credentials, clean: false, will: { topic: topics.agentStatus(this.node), state: willPayload } }),
      this.inProcess,
    );
    this.client.on('connect', (packet) => {
      if (this.client) sendImmediately(this.client);
      this.log.info(`connected to MQTT broker ${this.url}${this.inProcess ? ' in-process' : ''} (session present: ${packet.sessionPresent})`);
      this.client?.subscribe([topics.command(this.node), topics.ack(this.node), topics.keystore, topics.keydb, topics.appKey], { qos: 1 });
      this.publishStatus();
      for (const state of this.handlers.drives()) this.publishDrive(state);
      this.flushLogged(true);
    });
    this.client.on('offline', () => this.warnEveryMinute(`MQTT broker ${this.url} unreachable; events are kept in the outbox`));
    // A refused login is tried again every second (linkConnectOptions): its line once a minute is enough.
    this.client.on('error', (err) => this.warnEveryMinute(`MQTT error: ${err.message}`));
    this.client.on('message', (topic, payload) => {
      try {
        this.onMessage(topic, payload);
      } catch (err) {
        this.log.error(`handling ${topic.slice(0, 200)} failed: ${(err as Error).message}`);
      }
    });
    this.resendTimer = setInterval(() => this.flushLogged(false), 5_000);
  }

  private onMessage(topic: string, payload: Buffer): void {
    if (topic === topics.ack(this.node)) {
      const ack = parseMessage(eventAckSchema, payload);
      if (!ack.ok) return this.drops.drop(topic, ack.reason);
      this.store.ackEvents(ack.value.event_ids);
      return;
    }
    const keySchema = topic === topics.keystore ? keystoreMessageSchema : topic === topics.keydb ? keydbMessageSchema : topic === topics.appKey ? appKeyMessageSchema : null;
    if (keySchema) {
      if (payload.length === 0) return; // a cleared retained message
      const body = parseMessage(keySchema, payload);
      if (!body.ok) return this.drops.drop(topic, body.reason);
      this.handlers.onKeys(topic, body.value);
      return;
    }
    if (topic === topics.command(this.node)) {
      const cmd = parseMessage(commandSchema, payload);
      if (!cmd.ok) return this.drops.drop(topic, cmd.reason);
      this.handlers.onCommand(cmd.value);
    }
  }

  publishStatus(): void {
    if (!this.client?.connected) return;
    this.client.publish(topics.agentStatus(this.node), JSON.stringify(this.handlers.status()), { qos: 1, retain: true });
  }

  publishDrive(state: DriveState): void {
    if (!this.client?.connected) return;
    this.client.publish(topics.driveState(this.node, state.drive), JSON.stringify(state), { qos: 1, retain: true });
  }

  /** Stores the event in the outbox and sends it when connected. */
  emit(event: AgentEvent): void {
    if (this.client?.connected) this.client.publish(topics.event(this.node), JSON.stringify(event), { qos: 1 });
  }

  /** flush() from a handler or timer: a failure is logged, never an unhandled rejection. */
  private flushLogged(all: boolean): void {
    this.flush(all).catch((err: Error) => this.log.warn(`sending the outbox failed: ${err.message}`));
  }

  /**
   * Publishes the outbox. On connect everything is sent; later only when events wait longer than
   * RESEND_AFTER_MS without an ack (a coordinator that restarted behind an external broker).
   */
  private async flush(all: boolean): Promise<void> {
    if (!this.client?.connected || this.flushing) return;
    const now = Date.now();
    if (!all && now - this.lastFlush < RESEND_AFTER_MS) return;
    const pending = this.store.pendingEvents();
    if (pending.length === 0) {
      this.lastFlush = now;
      return;
    }
    this.flushing = true;
    try {
      for (const row of pending) this.client.publish(topics.event(this.node), row.payload, { qos: 1 });
      this.lastFlush = now;
    } finally {
      this.flushing = false;
    }
  }

  /** Graceful stop: the offline state is published by us (a clean disconnect sends no will). */
  async stop(): Promise<void> {
    if (this.resendTimer) clearInterval(this.resendTimer);
    const client = this.client;
    if (!client) return;
    await closeWithLastWord(client, { topic: topics.agentStatus(this.node), payload: JSON.stringify({ node: this.node, state: 'offline' } satisfies AgentStatus) });
  }
}
