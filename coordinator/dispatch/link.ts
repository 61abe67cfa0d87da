import { randomUUID } from 'node:crypto';
import { connectMqtt, type InProcessConnect, type MqttClient } from '../../shared/mqtt-client.js';
import { closeWithLastWord } from '../../shared/mqtt-close.js';
import type { Logger } from '../../shared/log.js';
import { DropLog } from '../../shared/drop-log.js';
import { linkConnectOptions, parseAgentTopic, sendImmediately, topicMatches, topics, type AgentEvent, type AgentStatus, type Command, type CoordinatorStatus, type DriveState } from '../../shared/protocol.js';
import { agentEventSchema, agentStatusSchema, driveStateSchema, parseMessage } from '../../shared/protocol-schemas.js';

const ACK_DELAY_MS = 50;

/** What the coordinator's link hands on: agent messages that passed their schema and name the node of their topic. */
export interface CoordinatorLinkHandlers {
  onStatus(status: AgentStatus): void;
  onDriveState(state: DriveState): void;
  onEvent(node: string, event: AgentEvent): void;
  /** After every (re)connect, once subscribed and announced online. */
  onConnect(): void;
}

/** The part of the link the dispatcher's parts use: sending to agents and knowing how long the broker has been in sight. */
export interface CommandLink {
  readonly connected: boolean;
  /** Since when (ms) the connection stands; null while the broker is out of sight. */
  readonly connectedSince: number | null;
  sendCommand(node: string, cmd: Command, qos?: 0 | 1): void;
  queueAck(node: string, eventId: string): void;
}

/** The event_id of a payload that failed its schema, when it has a plausible one (to acknowledge it). */
function looseEventId(payload: Buffer): string | null {
  try {
    const id: unknown = (JSON.parse(payload.toString('utf8')) as { event_id?: unknown } | null)?.event_id;
    return typeof id === 'string' && id.length > 0 && id.length <= 200 ? id : null;
  } catch {
    return null;
  }
}

/**
 * The coordinator's MQTT connection, the twin of agent/mqtt/link.ts: last will + retained online state,
 * the agent topics in (checked against their schemas; a bad message is dropped, never thrown),
 * commands and batched event acknowledgements out, and raw topics for other modules (Home Assistant).
 */
export class CoordinatorLink implements CommandLink {
  private client: MqttClient | null = null;
  private url: string | null = null;
  private since: number | null = null;
  private readonly startedAt = new Date().toISOString();
  private readonly pendingAcks = new Map<string, string[]>();
  private ackTimer: NodeJS.Timeout | null = null;
  /** Subscriptions of other modules (Home Assistant) to topics outside the agent protocol: filter → handler. */
  private readonly rawSubs = new Map<string, (topic: string, payload: Buffer) => void>();

  constructor(
    private readonly handlers: CoordinatorLinkHandlers,
    private readonly drops: DropLog,
    private readonly log: Logger,
  ) {}

  /** The broker URL in use (the embedded broker's or MQTT_URL); null before start. */
  get brokerUrl(): string | null {
    return this.url;
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  get connectedSince(): number | null {
    return this.since;
  }

  /**
   * Connects; `login` is the coordinator's user name and the broker secret (null: the broker wants
   * none). `inProcess`: a new connection to the embedded broker as an in-memory stream, used instead
   * of a TCP connection to `url` (each (re)connect takes a new one). Resolves once connected.
   */
  async start(url: string, login: { username: string; password: string } | null, inProcess: InProcessConnect | null = null): Promise<void> {
    this.url = url;
    const options = linkConnectOptions({ clientId: `ripwerk-coordinator-${randomUUID().slice(0, 8)}`, login, clean: true, will: { topic: topics.coordinatorStatus, state: { state: 'offline' } } });
    const client = connectMqtt(url, options, inProcess);
    this.client = client;
    client.on('connect', () => {
      sendImmediately(client);
      this.since = Date.now();
      this.log.info(`connected to MQTT broker ${url}${inProcess ? ' in-process' : ''}`);
      client.subscribe([topics.agentStatusAll, topics.driveStateAll, topics.eventAll, ...this.rawSubs.keys()], { qos: 1 });
      client.publish(topics.coordinatorStatus, JSON.stringify({ state: 'online', started_at: this.startedAt } satisfies CoordinatorStatus), { qos: 1, retain: true });
      this.handlers.onConnect();
    });
    client.on('offline', () => {
      this.since = null;
      this.log.warn(`MQTT broker ${url} unreachable; reconnecting`);
    });
    client.on('error', (err) => this.log.warn(`MQTT error: ${err.message}`));
    client.on('message', (topic, payload) => {
      try {
        this.onMessage(topic, payload);
      } catch (err) {
        this.log.error(`handling ${topic.slice(0, 200)} failed: ${(err as Error).message}`);
      }
    });
  }

  /** Resolves once the client is connected (at once when it is). */
  async untilConnected(): Promise<void> {
    const client = this.client;
    if (!client) return;
    await new Promise<void>((resolve) => {
      if (client.connected) resolve();
      else client.once('connect', () => resolve());
    });
  }

  /** Sends the acknowledgements still waiting, announces offline and disconnects. */
  async stop(): Promise<void> {
    this.flushAcks();
    const client = this.client;
    if (!client) return;
    await closeWithLastWord(client, { topic: topics.coordinatorStatus, payload: JSON.stringify({ state: 'offline' }) });
  }

  sendCommand(node: string, cmd: Command, qos: 0 | 1 = 1): void {
    this.client?.publish(topics.command(node), JSON.stringify(cmd), { qos });
  }

  /** A retained QoS 1 message, waited for (the key material); throws when the client cannot send it. */
  async publishRetained(topic: string, body: object): Promise<void> {
    const client = this.client;
    if (!client) throw new Error('not connected');
    await client.publishAsync(topic, JSON.stringify(body), { qos: 1, retain: true });
  }

  /** Subscribes to an MQTT topic filter outside the agent protocol; a second call for a filter replaces its handler. */
  subscribeRaw(filter: string, handler: (topic: string, payload: Buffer) => void): void {
    const fresh = !this.rawSubs.has(filter);
    this.rawSubs.set(filter, handler);
    if (fresh && this.client?.connected) this.client.subscribe(filter, { qos: 1 });
  }

  /** Publishes a raw payload (QoS 1); with the client offline, mqtt.js sends it after reconnecting. */
  publishRaw(topic: string, payload: string, retain: boolean): void {
    this.client?.publish(topic, payload, { qos: 1, retain });
  }

  /** Acknowledges an event to its agent; the acknowledgements of ACK_DELAY_MS go out together, one message per node. */
  queueAck(node: string, eventId: string): void {
    const list = this.pendingAcks.get(node) ?? [];
    list.push(eventId);
    this.pendingAcks.set(node, list);
    if (!this.ackTimer) this.ackTimer = setTimeout(() => this.flushAcks(), ACK_DELAY_MS);
  }

  private flushAcks(): void {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    for (const [node, ids] of this.pendingAcks) this.client?.publish(topics.ack(node), JSON.stringify({ event_ids: ids }), { qos: 1 });
    this.pendingAcks.clear();
  }

  private onMessage(topic: string, payload: Buffer): void {
    for (const [filter, handler] of this.rawSubs) {
      if (topicMatches(filter, topic)) {
        handler(topic, payload);
        return;
      }
    }
    const at = parseAgentTopic(topic);
    if (!at) return;
    if (at.kind === 'status') {
      if (payload.length === 0) return; // a retained status cleared when its worker was removed
      const status = parseMessage(agentStatusSchema, payload);
      if (!status.ok) return this.drops.drop(topic, status.reason);
      if (status.value.node !== at.node) return this.drops.drop(topic, `the status names node "${status.value.node}", the topic ${at.node}`);
      this.handlers.onStatus(status.value);
    } else if (at.kind === 'drive') {
      if (payload.length === 0) return;
      const state = parseMessage(driveStateSchema, payload);
      if (!state.ok) return this.drops.drop(topic, state.reason);
      if (state.value.node !== at.node || state.value.drive !== at.drive) return this.drops.drop(topic, `the state names drive ${state.value.drive} of ${state.value.node}`);
      this.handlers.onDriveState(state.value);
    } else {
      const event = parseMessage(agentEventSchema, payload);
      if (!event.ok) {
        this.drops.drop(topic, event.reason);
        // Acknowledged all the same: the agent's outbox would otherwise send it again for ever.
        const eventId = looseEventId(payload);
        if (eventId) this.queueAck(at.node, eventId);
        return;
      }
      if (event.value.node !== at.node) {
        this.drops.drop(topic, `the event names node "${event.value.node}", the topic ${at.node}`);
        this.queueAck(at.node, event.value.event_id);
        return;
      }
      this.handlers.onEvent(at.node, event.value);
    }
  }
}
