import { randomUUID } from 'node:crypto';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import type { Db } from '../shared/sqlite.js';
import type { Logger } from '../shared/log.js';
import { sendImmediately, TASKS, TOPIC_ROOT, topics, type AgentEvent, type AgentStatus, type AppKeyMessage, type Command, type CoordinatorStatus, type LibraryInfo, type RipArgs, type Track, type TranscodeArgs } from '../shared/protocol.js';
import type { DeviceEntry, Fleet } from './fleet.js';
import { metaLanguages, outputTarget, parseMeta, type JobRow, type JobsStore } from './jobs-store.js';
import { HttpError } from './http.js';
import type { KeyStore } from './key-store.js';
import type { SettingsStore } from './settings-store.js';
import { extrasFolder, jobEpisodes } from './library-info.js';
import { topicMatches } from '../shared/protocol.js';
import { nativeWorkerRefusal } from '../shared/native-worker.js';
import { DropLog } from '../shared/drop-log.js';
import { agentEventSchema, agentStatusSchema, driveStateSchema, parseMessage } from '../shared/protocol-schemas.js';
import { jobEventRefusal } from './event-rules.js';
import { apiStatus, isActive } from './jobs/job-status.js';

const PING_MS = 5_000;
const STALE_MS = 30_000;
const ACK_DELAY_MS = 50;
const REPLY_TIMEOUT_MS = 15_000;
const RECONCILE_MS = 10_000;
const SCAN_TIMEOUT_MS = 10 * 60_000;

/** The setting tracks:<device>: the last title scan of a drive. */
export interface StoredTracks {
  device: string;
  scanned_at: string | null;
  tracks: Track[];
  scanning: boolean;
  error: string | null;
}

type CommandState = 'sent' | 'accepted' | 'done' | 'superseded';
type JobTask = typeof TASKS.ripDisc | typeof TASKS.transcodeFiles;

interface CommandRow {
  id: string;
  node: string;
  task: JobTask;
  job_id: string;
  payload: string;
  state: CommandState;
}

interface QueueRow {
  id: string;
  job_id: string;
  args: string;
  preferred_node: string | null;
  state: 'queued' | 'assigned' | 'done';
  assigned_node: string | null;
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

/** A rip's events must name the raw folder the coordinator gave the rip, and its files must lie inside it. */
function rawDirMismatch(event: AgentEvent, cmd: CommandRow): string | null {
  if (event.type !== 'rip_started' && event.type !== 'rip_done') return null;
  const given = (JSON.parse(cmd.payload) as { args?: { raw_dir?: unknown } }).args?.raw_dir;
  const norm = (p: string): string => path.posix.normalize(p).replace(/\/+$/, '');
  if (typeof given !== 'string' || norm(event.raw_dir) !== norm(given)) return `${event.type} names the raw folder ${event.raw_dir.slice(0, 300)}, the rip was given ${String(given).slice(0, 300)}`;
  const outside = event.type === 'rip_done' ? event.files.find((f) => !norm(f).startsWith(`${norm(given)}/`) || f.split('/').includes('..')) : undefined;
  return outside === undefined ? null : `rip_done names the file ${outside.slice(0, 300)} outside the raw folder ${given.slice(0, 300)}`;
}

/** A refusal of the dispatcher (worker offline, no answer, wrong state): its message and status reach the client. */
export class DispatchError extends HttpError {
  constructor(message: string, status: number) {
    super(status, message);
  }
}

type Reply = { ok: true; event: AgentEvent } | { ok: false; reason: string };

/**
 * The coordinator's side of the MQTT protocol: sends commands to agents, applies their events to the
 * job rows exactly once, routes the transcode stage (chosen node, else the shared queue), and fails
 * or re-queues the work of agents that stay away longer than the grace period.
 */
export class Dispatcher {
  private client: MqttClient | null = null;
  private readonly pendingAcks = new Map<string, string[]>();
  private ackTimer: NodeJS.Timeout | null = null;
  private readonly graceTimers = new Map<string, NodeJS.Timeout>();
  /** Open requests (eject, scan, ping) by command id: the node asked, and what to call with its answer. */
  private readonly replies = new Map<string, { node: string; resolve: (reply: Reply) => void }>();
  private readonly drops: DropLog;
  private readonly timers: NodeJS.Timeout[] = [];
  private connectedSince: number | null = null;
  private url: string | null = null;
  private readonly startedAt = new Date().toISOString();
  /** Called when a job reaches an end state (for notifications and the library refresh). */
  onJobEnd: (job: JobRow) => void = () => undefined;
  /** How often the background capability ping goes out (CAPABILITY_PING_SECONDS); set before start. */
  pingMs = PING_MS;
  /** The media-server files (nfo, poster) the agent writes for a job; none unless set. */
  libraryFor: (job: JobRow) => LibraryInfo | null = () => null;
  /** Called for every drive state an agent publishes (insert detection, pre-scan, automatic rips). */
  onDriveState: (entry: DeviceEntry) => unknown = () => undefined;
  /** The disc-key material handed to the workers; set by the coordinator at start. */
  keys: KeyStore | null = null;

  constructor(
    private readonly db: Db,
    private readonly jobs: JobsStore,
    private readonly settings: SettingsStore,
    private readonly fleet: Fleet,
    private readonly graceMs: number,
    private readonly log: Logger,
  ) {
    this.drops = new DropLog(log);
  }

  /** Runs a timer's or handler's work so that no error in it can end the process: it is logged instead. */
  private guarded(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error(`${what} failed: ${(err as Error).message}`);
    }
  }

  // ---------------------------------------------------------------- connection

  /** The broker URL this coordinator uses (the embedded broker's or MQTT_URL); null before start. */
  get brokerUrl(): string | null {
    return this.url;
  }

  /** Connects to the broker; `login` is the coordinator's user name and the broker secret (null: the broker wants none). */
  async start(url: string, login: { username: string; password: string } | null): Promise<void> {
    this.url = url;
    this.endInterruptedScans();
    const client = mqtt.connect(url, {
      clientId: `ripwerk-coordinator-${randomUUID().slice(0, 8)}`,
      ...(login ?? {}),
      clean: true,
      protocolVersion: 4,
      keepalive: 10,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      queueQoSZero: false,
      will: { topic: topics.coordinatorStatus, payload: Buffer.from(JSON.stringify({ state: 'offline' } satisfies CoordinatorStatus)), qos: 1, retain: true },
    });
    this.client = client;
    client.on('connect', () => {
      sendImmediately(client);
      this.connectedSince = Date.now();
      this.log.info(`connected to MQTT broker ${url}`);
      client.subscribe([topics.agentStatusAll, topics.driveStateAll, topics.eventAll, ...this.rawSubs.keys()], { qos: 1 });
      client.publish(topics.coordinatorStatus, JSON.stringify({ state: 'online', started_at: this.startedAt } satisfies CoordinatorStatus), { qos: 1, retain: true });
      void this.publishKeys();
    });
    client.on('offline', () => {
      this.connectedSince = null;
      this.log.warn(`MQTT broker ${url} unreachable; reconnecting`);
    });
    client.on('error', (err) => this.log.warn(`MQTT error: ${err.message}`));
    client.on('message', (topic, payload) => this.guarded(`handling ${topic.slice(0, 200)}`, () => this.onMessage(topic, payload)));
    // Agents with open work are offline until they speak: their grace period starts now.
    for (const node of this.nodesWithOpenWork()) this.startGrace(node);
    this.timers.push(setInterval(() => this.guarded('the capability ping', () => this.pingAndSweep()), this.pingMs));
    await new Promise<void>((resolve) => {
      if (client.connected) resolve();
      else client.once('connect', () => resolve());
    });
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    for (const t of this.graceTimers.values()) clearTimeout(t);
    this.flushAcks();
    const client = this.client;
    if (!client) return;
    if (client.connected) await client.publishAsync(topics.coordinatorStatus, JSON.stringify({ state: 'offline' }), { qos: 1, retain: true }).catch(() => undefined);
    await client.endAsync().catch(() => undefined);
  }

  get connected(): boolean {
    return this.client?.connected ?? false;
  }

  /**
   * Hands the disc-key material to every worker as retained messages (key store, KEYDB.cfg, the
   * ripper's application key): a worker that connects later gets it from the broker.
   */
  async publishKeys(): Promise<void> {
    const client = this.client;
    if (!client?.connected || !this.keys) return;
    try {
      const messages: [string, object][] = [
        [topics.keystore, await this.keys.keystoreMessage()],
        [topics.keydb, await this.keys.keydbMessage()],
        [topics.appKey, { key: this.settings.get('ripperAppKey') || null } satisfies AppKeyMessage],
      ];
      for (const [topic, body] of messages) await client.publishAsync(topic, JSON.stringify(body), { qos: 1, retain: true });
    } catch (err) {
      this.log.warn(`handing the disc keys to the workers failed: ${(err as Error).message}`);
    }
  }

  private publish(node: string, cmd: Command, qos: 0 | 1 = 1): void {
    this.client?.publish(topics.command(node), JSON.stringify(cmd), { qos });
  }

  /** Subscriptions of other modules (Home Assistant) to topics outside the agent protocol: filter → handler. */
  private readonly rawSubs = new Map<string, (topic: string, payload: Buffer) => void>();

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

  private onMessage(topic: string, payload: Buffer): void {
    for (const [filter, handler] of this.rawSubs) {
      if (topicMatches(filter, topic)) {
        handler(topic, payload);
        return;
      }
    }
    const [root, kind, node, ...rest] = topic.split('/');
    if (root !== TOPIC_ROOT || !node) return;
    if (kind === 'agent' && rest.length === 1 && rest[0] === 'status') {
      if (payload.length === 0) return; // a retained status cleared when its worker was removed
      const status = parseMessage(agentStatusSchema, payload);
      if (!status.ok) return this.drops.drop(topic, status.reason);
      if (status.value.node !== node) return this.drops.drop(topic, `the status names node "${status.value.node}", the topic ${node}`);
      this.onStatus(status.value);
    } else if (kind === 'drive' && rest.length === 2 && rest[1] === 'state') {
      if (payload.length === 0) return;
      const state = parseMessage(driveStateSchema, payload);
      if (!state.ok) return this.drops.drop(topic, state.reason);
      if (state.value.node !== node || state.value.drive !== rest[0]) return this.drops.drop(topic, `the state names drive ${state.value.drive} of ${state.value.node}`);
      void this.onDriveState(this.fleet.applyDrive(state.value));
    } else if (kind === 'event' && rest.length === 0) {
      const event = parseMessage(agentEventSchema, payload);
      if (!event.ok) {
        this.drops.drop(topic, event.reason);
        // Acknowledged all the same: the agent's outbox would otherwise send it again for ever.
        const eventId = looseEventId(payload);
        if (eventId) this.queueAck(node, eventId);
        return;
      }
      if (event.value.node !== node) {
        this.drops.drop(topic, `the event names node "${event.value.node}", the topic ${node}`);
        this.queueAck(node, event.value.event_id);
        return;
      }
      this.onEvent(node, event.value);
    }
  }

  // ---------------------------------------------------------------- agents

  private onStatus(status: AgentStatus): void {
    // An offline status of a worker nobody knows (the last will of a removed one) adds nothing.
    if (status.state !== 'online' && !this.fleet.get(status.node)) return;
    const { wasOnline } = this.fleet.applyStatus(status);
    if (status.state !== 'online') {
      if (wasOnline) this.log.warn(`worker ${status.node} went offline; its work waits ${Math.round(this.graceMs / 1000)} s for it`);
      if (this.nodesWithOpenWork().includes(status.node)) this.startGrace(status.node);
      return;
    }
    this.clearGrace(status.node);
    if (!wasOnline) {
      this.log.info(`worker ${status.node} is online`);
      this.handshake(status);
    }
    this.pump();
  }

  /** After (re)connect: resend what the agent should hold but does not list, cancel what was taken away from it. */
  private handshake(status: AgentStatus): void {
    const holds = new Set(status.tasks ?? []);
    const missing: string[] = [];
    for (const cmd of this.commandsOf(status.node, ['sent', 'accepted'])) {
      if (holds.has(cmd.id)) continue;
      if (cmd.state === 'sent') this.publish(status.node, JSON.parse(cmd.payload) as Command);
      else missing.push(cmd.id);
    }
    // Accepted work the agent no longer lists either finished (its outcome is on the way from the
    // outbox) or was lost with the agent's state: after a while without an outcome, it fails.
    if (missing.length) {
      const timer = setTimeout(() => this.guarded(`the reconnect check of ${status.node}`, () => this.reconcile(status.node, missing)), RECONCILE_MS);
      timer.unref();
    }
    for (const id of holds) {
      const row = this.command(id);
      if (row?.state === 'superseded' || row?.state === 'done') {
        this.publish(status.node, { id: randomUUID(), task: TASKS.cancel, job_id: row.job_id, args: { command_id: id } });
      }
    }
  }

  private reconcile(node: string, ids: string[]): void {
    const holds = new Set(this.fleet.get(node)?.status?.tasks ?? []);
    for (const id of ids) {
      const cmd = this.command(id);
      if (!cmd || cmd.state !== 'accepted' || holds.has(id) || !this.fleet.get(node)?.online) continue;
      this.setCommandState(id, 'superseded');
      const job = this.jobs.get(cmd.job_id);
      if (!job || !this.isActive(job)) continue;
      const stage = cmd.task === TASKS.ripDisc ? 'rip' : 'transcode';
      this.finish(job.id, { status: 'failed', error: `the worker ${node} no longer runs this ${stage} (it restarted without it): retry the ${stage}` }, `worker ${node} lost the ${stage}`);
    }
    this.pump();
  }

  private startGrace(node: string): void {
    if (this.graceTimers.has(node)) return;
    const timer = setTimeout(() => this.guarded(`the grace period of ${node}`, () => {
      this.graceTimers.delete(node);
      if (this.fleet.get(node)?.online) return;
      // While we cannot see the broker ourselves (or just got it back) silence proves nothing: wait on.
      if (this.connectedSince === null || Date.now() - this.connectedSince < this.graceMs) {
        this.startGrace(node);
        return;
      }
      this.agentLost(node);
    }), this.graceMs);
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
    for (const cmd of this.commandsOf(node, ['sent', 'accepted'])) {
      this.setCommandState(cmd.id, 'superseded');
      const job = this.jobs.get(cmd.job_id);
      if (!job || !this.isActive(job)) continue;
      if (job.status === 'canceling') {
        this.finish(job.id, { status: 'canceled' }, `canceled (worker ${node} is offline)`);
      } else if (cmd.task === TASKS.ripDisc) {
        this.finish(job.id, { status: 'failed', error: `the worker ${node} went offline during the rip (no contact for ${seconds} s): retry the rip` }, `worker ${node} lost during the rip`);
      } else {
        this.db.prepare(`UPDATE transcode_queue SET state = 'queued', assigned_node = NULL, preferred_node = NULL WHERE job_id = ? AND state = 'assigned'`).run(job.id);
        this.jobs.update(job.id, { transcode_node: null });
        this.jobLog(job.id, 'warn', `worker ${node} went offline during the transcode; the transcode goes back to the shared queue`);
      }
    }
    this.pump();
  }

  /** Capability pings, and agents that went silent without a last will (a broker outage hid it). */
  private pingAndSweep(): void {
    if (!this.client?.connected) return;
    const now = Date.now();
    for (const agent of this.fleet.online()) {
      this.publish(agent.node, { id: randomUUID(), task: TASKS.pingWorker, args: {} }, 0);
      const connectedLongEnough = this.connectedSince !== null && now - this.connectedSince > STALE_MS;
      if (connectedLongEnough && now - agent.lastContact > STALE_MS) {
        this.log.warn(`worker ${agent.node} has not answered for ${Math.round(STALE_MS / 1000)} s; treating it as offline`);
        this.fleet.markOffline(agent.node);
        if (this.nodesWithOpenWork().includes(agent.node)) this.startGrace(agent.node);
      }
    }
  }

  // ---------------------------------------------------------------- events

  private onEvent(node: string, event: AgentEvent): void {
    this.fleet.touch(node);
    const seen = this.db.prepare<[string], { event_id: string }>('SELECT event_id FROM processed_events WHERE event_id = ?').get(event.event_id);
    if (!seen) {
      this.db.transaction(() => {
        this.db.prepare('INSERT INTO processed_events (event_id, ts) VALUES (?, ?)').run(event.event_id, new Date().toISOString());
        this.apply(node, event);
      })();
    }
    this.queueAck(node, event.event_id);
    if (event.command_id) {
      const reply = this.replies.get(event.command_id);
      // A native worker answers a scan or eject with "rejected": the request ends with its reason at once.
      if (reply && reply.node === node && (event.type === 'command_failed' || event.type === 'rejected' || event.type === 'ejected' || event.type === 'tracks' || event.type === 'pong')) {
        this.replies.delete(event.command_id);
        reply.resolve(event.type === 'command_failed' || event.type === 'rejected' ? { ok: false, reason: event.reason } : { ok: true, event });
      }
    }
  }

  private queueAck(node: string, id: string): void {
    const list = this.pendingAcks.get(node) ?? [];
    list.push(id);
    this.pendingAcks.set(node, list);
    if (!this.ackTimer) this.ackTimer = setTimeout(() => this.flushAcks(), ACK_DELAY_MS);
  }

  private flushAcks(): void {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
    for (const [node, ids] of this.pendingAcks) this.client?.publish(topics.ack(node), JSON.stringify({ event_ids: ids }), { qos: 1 });
    this.pendingAcks.clear();
  }

  /** Applies one event to the job rows (inside the transaction that records it as processed). */
  private apply(node: string, event: AgentEvent): void {
    if (event.type === 'pong') {
      this.fleet.recordPong(node, event.capabilities);
      return;
    }
    if (event.type === 'tracks') {
      // Only the answer to a scan this coordinator asked that node for.
      if (!event.command_id || this.replies.get(event.command_id)?.node !== node) return this.drops.drop(topics.event(node), `tracks for drive ${event.drive} nobody asked ${node} for`);
      const device = this.fleet.deviceName({ node, drive: event.drive });
      this.settings.setRaw(`tracks:${device}`, { device, scanned_at: event.ts, tracks: event.tracks, scanning: false, error: null } satisfies StoredTracks);
      this.log.info(`device ${device}: title scan found ${event.tracks.length} title(s)`);
      return;
    }
    if (event.type === 'aacs_dump') {
      const keys = this.keys;
      if (keys) {
        keys.storeDump(event.name, Buffer.from(event.data_base64, 'base64')).then(
          (stored) => {
            if (stored) this.log.info(`AACS dump ${event.name} from ${node} stored`);
          },
          (err: Error) => this.log.warn(`storing AACS dump ${event.name} from ${node} failed: ${err.message}`),
        );
      }
      return;
    }
    if (event.type === 'ejected' || event.type === 'command_failed') return;
    const cmd = event.command_id ? this.command(event.command_id) : undefined;
    const job = event.job_id ? this.jobs.get(event.job_id) : undefined;
    if (!job) return;
    const refusal = jobEventRefusal(event, node, cmd, job.status) ?? (cmd && rawDirMismatch(event, cmd));
    if (refusal) return this.drops.drop(topics.event(node), refusal);
    if (cmd?.state === 'superseded') {
      // Work taken away from this agent: only a finished transcode still counts, if nobody finished it meanwhile.
      if (event.type !== 'job_done' || cmd.task !== TASKS.transcodeFiles || job.status !== 'transcoding') return;
      this.withdrawOthers(job.id, cmd.id);
    }
    switch (event.type) {
      case 'accepted':
        if (cmd) this.setCommandState(cmd.id, 'accepted');
        this.jobLog(job.id, 'info', `worker ${node} accepted the ${cmd?.task === TASKS.transcodeFiles ? 'transcode' : 'rip'}`);
        return;
      case 'rejected':
        if (cmd) this.setCommandState(cmd.id, 'done');
        if (!this.isActive(job)) return;
        this.finish(job.id, { status: 'failed', error: event.reason }, `worker ${node} refused: ${event.reason}`);
        return;
      case 'log':
        this.jobs.addLog(job.id, event.level, event.message);
        return;
      case 'progress':
        if (this.isActive(job)) this.jobs.recordProgress(job.id, event.phase, event.progress);
        return;
      case 'rip_started':
        if (job.status === 'pending') this.jobs.startPhase(job.id, 'rip', { status: 'running', node });
        this.jobs.updateMeta(job.id, { rip_fertig: false });
        this.jobs.update(job.id, { raw_path: event.raw_dir });
        this.jobLog(job.id, 'info', `rip started on ${node} into ${event.raw_dir}`);
        return;
      case 'rip_done':
        return this.ripDone(job, event.raw_dir, event.files, node);
      case 'transcode_started':
        if (job.status !== 'canceling') this.jobs.startPhase(job.id, 'transcode', { status: 'transcoding', transcode_node: node });
        else this.jobs.update(job.id, { transcode_node: node });
        this.jobLog(job.id, 'info', `transcode started on ${node}`);
        return;
      case 'job_done':
        if (cmd) this.setCommandState(cmd.id, 'done');
        // One meta write: the streams of each file, guessed episode numbers, and the files relative to
        // the output folder (a correction after the fact renames exactly these).
        this.jobs.updateMeta(job.id, {
          ...(event.streams ? { streams: event.streams } : {}),
          ...(event.episodes_guessed ? { episodes_guessed: true } : {}),
          output_files: event.files.map((f) => path.relative(event.output_path, f)).filter((f) => f && !f.startsWith('..')),
        });
        this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ?`).run(job.id);
        this.finish(
          job.id,
          { status: 'completed', progress: 100, output_path: event.output_path, raw_state: event.raw_removed ? 'absent' : 'present', raw_checked_at: new Date().toISOString() },
          `finished: ${event.files.length} file(s) in ${event.output_path}${event.raw_removed ? '; raw data removed' : '; raw data kept'}`,
        );
        this.recordHistory(job);
        this.pump();
        return;
      case 'job_failed': {
        if (cmd) this.setCommandState(cmd.id, 'done');
        this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ?`).run(job.id);
        const rawPresent = event.phase === 'transcode';
        this.finish(job.id, { status: 'failed', error: event.reason, ...(rawPresent ? { raw_state: 'present', raw_checked_at: new Date().toISOString() } : {}) }, `${event.phase} failed on ${node}: ${event.reason}`);
        this.pump();
        return;
      }
      case 'job_canceled':
        if (cmd) this.setCommandState(cmd.id, 'done');
        this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ?`).run(job.id);
        this.finish(job.id, { status: 'canceled' }, `${event.phase} canceled on ${node}`);
        this.pump();
        return;
    }
  }

  private ripDone(job: JobRow, rawDir: string, files: string[], node: string): void {
    const cmd = this.activeCommand(job.id);
    if (cmd) this.setCommandState(cmd.id, 'done');
    this.jobs.updateMeta(job.id, { rip_fertig: true, raw_files: files });
    this.jobs.update(job.id, { raw_path: rawDir, raw_state: 'present', raw_checked_at: new Date().toISOString() });
    this.jobLog(job.id, 'info', `rip finished on ${node}: ${files.length} file(s)`);
    this.recordHistory(job);
    if (job.status === 'canceling') {
      this.finish(job.id, { status: 'canceled' }, 'canceled after the rip; the raw data is kept');
      return;
    }
    this.jobs.startPhase(job.id, 'transcode', { status: 'transcoding' });
    this.enqueueTranscode(job.id, rawDir, files);
  }

  // ---------------------------------------------------------------- jobs

  private isActive(job: JobRow): boolean {
    return isActive(job.status);
  }

  private jobLog(jobId: string, level: 'info' | 'warn' | 'error', message: string): void {
    this.jobs.addLog(jobId, level, message);
    this.log[level](message, jobId);
  }

  private finish(jobId: string, fields: Partial<JobRow>, message: string): void {
    const row = this.jobs.update(jobId, { ...fields, finished_at: new Date().toISOString() });
    this.jobLog(jobId, fields.status === 'failed' ? 'error' : 'info', message);
    if (row) {
      try {
        this.onJobEnd(row);
      } catch (err) {
        this.log.warn(`job end hook failed: ${(err as Error).message}`, jobId);
      }
    }
  }

  /** The disc of a job counts as ripped once its rip finished (automatic rips skip it from then on). */
  private recordHistory(job: JobRow): void {
    const fp = parseMeta(job.meta)?.fingerprint;
    if (typeof fp !== 'string') return;
    this.db
      .prepare('INSERT INTO history (fingerprint, title, job_id, finished_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM history WHERE job_id = ?)')
      .run(fp, job.title, job.id, new Date().toISOString(), job.id);
  }

  /** A late result of a superseded command won: the newer attempt of the job is stopped. */
  private withdrawOthers(jobId: string, winner: string): void {
    this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ?`).run(jobId);
    for (const other of this.db.prepare<[string, string], CommandRow>(`SELECT * FROM commands WHERE job_id = ? AND id != ? AND state IN ('sent','accepted')`).all(jobId, winner)) {
      this.setCommandState(other.id, 'superseded');
      this.publish(other.node, { id: randomUUID(), task: TASKS.cancel, job_id: jobId, args: { command_id: other.id } });
    }
    this.jobLog(jobId, 'info', 'the first worker finished the transcode after all; the second attempt is stopped');
  }

  /** A native worker (no drives, transcode queue only) gets no rip or title scan: the plain reason why, as a 409. */
  private refuseNative(node: string): void {
    const agent = this.fleet.get(node);
    if (agent?.status?.capabilities?.native) throw new DispatchError(nativeWorkerRefusal(agent.name), 409);
  }

  /** Sends the rip of a new job to the agent owning the drive. */
  startRip(job: JobRow, args: RipArgs): void {
    if (!job.node) throw new DispatchError('the job has no worker', 500);
    this.refuseNative(job.node);
    this.sendJobCommand(job.node, { id: randomUUID(), task: TASKS.ripDisc, job_id: job.id, args });
  }

  /** Queues the transcode stage: the chosen node when it is online, else any worker with a free slot. */
  enqueueTranscode(jobId: string, rawDir: string, files: string[]): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    const meta = parseMeta(job.meta) ?? {};
    const s = this.settings.all();
    const args: TranscodeArgs = {
      raw_dir: rawDir,
      files,
      target_dir: job.target_dir ?? '',
      ...outputTarget(job),
      preset: s.transcodePreset,
      keep_original: s.keepOriginal,
      episodes: jobEpisodes(job),
      disc_number: typeof meta.disc_number === 'number' ? meta.disc_number : null,
      library: this.libraryFor(job),
      extras_folder: extrasFolder(s.mediaServerType),
      audio_languages: metaLanguages(meta, 'audio_languages') ?? [...s.audioLanguages],
      subtitle_languages: metaLanguages(meta, 'subtitle_languages') ?? [...s.subtitleLanguages],
      audio: {
        keep_surround: s.keepSurround,
        stereo_companion: s.stereoCompanion,
        burn_forced_subtitles: s.burnForcedSubtitles,
        original_language: s.originalLanguage && typeof meta.original_language === 'string' ? meta.original_language : null,
      },
    };
    const preferred = typeof meta.transcode_node === 'string' && meta.transcode_node ? meta.transcode_node : null;
    this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ? AND state != 'done'`).run(jobId);
    this.db
      .prepare(`INSERT INTO transcode_queue (id, job_id, args, preferred_node, state, created_at) VALUES (?, ?, ?, ?, 'queued', ?)`)
      .run(randomUUID(), jobId, JSON.stringify(args), preferred, new Date().toISOString());
    this.jobLog(jobId, 'info', preferred ? `transcode queued for ${preferred}` : 'transcode queued for any free worker');
    this.pump();
  }

  /** Slots a worker has free: its slot count minus the rips and transcodes it holds. */
  private freeSlots(node: string): number {
    const slots = this.fleet.get(node)?.status?.slots ?? 4;
    const busy = (this.db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM commands WHERE node = ? AND state IN ('sent','accepted')`).get(node) as { n: number }).n;
    return slots - busy;
  }

  private canTranscode(node: string): boolean {
    const agent = this.fleet.get(node);
    return Boolean(agent?.online && (agent.status?.capabilities?.encoders.length ?? 0) > 0);
  }

  /** Hands queued transcodes to workers, oldest first. */
  pump(): void {
    const queued = this.db.prepare<[], QueueRow>(`SELECT * FROM transcode_queue WHERE state = 'queued' ORDER BY created_at`).all();
    for (const row of queued) {
      let node: string | null = null;
      if (row.preferred_node && this.canTranscode(row.preferred_node)) {
        if (this.freeSlots(row.preferred_node) <= 0) continue; // the chosen node is busy: wait for it
        node = row.preferred_node;
      } else {
        const candidates = this.fleet
          .online()
          .filter((a) => this.canTranscode(a.node))
          .map((a) => ({ node: a.node, free: this.freeSlots(a.node) }))
          .filter((c) => c.free > 0)
          .sort((a, b) => b.free - a.free || a.node.localeCompare(b.node));
        node = candidates[0]?.node ?? null;
      }
      if (!node) continue;
      const args = JSON.parse(row.args) as TranscodeArgs;
      this.db.prepare(`UPDATE transcode_queue SET state = 'assigned', assigned_node = ?, assigned_at = ? WHERE id = ?`).run(node, new Date().toISOString(), row.id);
      if (row.preferred_node && row.preferred_node !== node) this.jobLog(row.job_id, 'warn', `worker ${row.preferred_node} is offline; the transcode goes to ${node}`);
      this.jobs.update(row.job_id, { transcode_node: node });
      this.sendJobCommand(node, { id: randomUUID(), task: TASKS.transcodeFiles, job_id: row.job_id, args });
    }
  }

  private sendJobCommand(node: string, cmd: Extract<Command, { task: JobTask }>): void {
    this.db
      .prepare(`INSERT INTO commands (id, node, task, job_id, payload, state, created_at) VALUES (?, ?, ?, ?, ?, 'sent', ?)`)
      .run(cmd.id, node, cmd.task, cmd.job_id, JSON.stringify(cmd), new Date().toISOString());
    this.publish(node, cmd);
  }

  /** POST /jobs/{id}/cancel: canceling now; canceled once the agent confirms (or at once when nothing runs). */
  cancel(job: JobRow): JobRow {
    if (!this.isActive(job)) throw new DispatchError(`the job is ${apiStatus(job.status)}; only pending, processing or transcoding jobs can be canceled`, 409);
    if (job.status === 'canceling') return job;
    this.jobs.update(job.id, { status: 'canceling' });
    this.jobLog(job.id, 'info', 'cancel requested');
    const queued = this.db.prepare<[string], QueueRow>(`SELECT * FROM transcode_queue WHERE job_id = ? AND state = 'queued'`).get(job.id);
    const cmd = this.activeCommand(job.id);
    if (queued || !cmd) {
      this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ?`).run(job.id);
      this.finish(job.id, { status: 'canceled' }, 'canceled before a worker started it');
    } else if (!this.fleet.get(cmd.node)?.online) {
      this.setCommandState(cmd.id, 'superseded');
      this.finish(job.id, { status: 'canceled' }, `canceled (worker ${cmd.node} is offline; it is told when it returns)`);
    } else {
      this.publish(cmd.node, { id: randomUUID(), task: TASKS.cancel, job_id: job.id, args: { command_id: cmd.id } });
    }
    return this.jobs.get(job.id) as JobRow;
  }

  /** Sends eject or scan_tracks and waits for the agent's answer. */
  async request(node: string, task: typeof TASKS.eject | typeof TASKS.scanTracks, drive: string, timeoutMs = REPLY_TIMEOUT_MS): Promise<AgentEvent> {
    if (!this.fleet.get(node)?.online) throw new DispatchError(`the worker ${node} is offline`, 503);
    this.refuseNative(node);
    const id = randomUUID();
    const reply = new Promise<Reply>((resolve) => {
      this.replies.set(id, { node, resolve });
      setTimeout(() => {
        if (this.replies.delete(id)) resolve({ ok: false, reason: `the worker ${node} did not answer within ${Math.round(timeoutMs / 1000)} s` });
      }, timeoutMs).unref();
    });
    this.publish(node, { id, task, args: { drive } } as Command);
    const result = await reply;
    if (!result.ok) throw new DispatchError(result.reason, 502);
    return result.event;
  }

  /**
   * One capability ping to every online worker, waiting (at most timeoutMs) for their answers: for
   * GET /capabilities when the stored pings are older than 30 s. A worker that does not answer keeps
   * its stored state; the silence sweep takes it offline.
   */
  async pingNow(timeoutMs: number): Promise<void> {
    if (!this.client?.connected) return;
    await Promise.all(
      this.fleet.online().map(
        (agent) =>
          new Promise<void>((resolve) => {
            const id = randomUUID();
            this.replies.set(id, { node: agent.node, resolve: () => resolve() });
            setTimeout(() => {
              if (this.replies.delete(id)) resolve();
            }, timeoutMs).unref();
            this.publish(agent.node, { id, task: TASKS.pingWorker, args: {} }, 0);
          }),
      ),
    );
  }

  /** Scans that were running when the coordinator stopped get no answer any more: say so instead of "scanning" forever. */
  private endInterruptedScans(): void {
    for (const row of this.db.prepare<[], { key: string }>(`SELECT key FROM settings WHERE key LIKE 'tracks:%'`).all()) {
      const stored = this.settings.getRaw(row.key) as StoredTracks | undefined;
      if (stored?.scanning) this.settings.setRaw(row.key, { ...stored, scanning: false, error: 'the coordinator restarted during the scan: start it again' });
    }
  }

  /**
   * Starts a title scan without waiting: the setting tracks:<device> says "scanning" at once and holds
   * the titles (or the reason the scan failed) when the agent answers.
   */
  scanTracks(node: string, drive: string): void {
    if (!this.fleet.get(node)?.online) throw new DispatchError(`the worker ${node} is offline`, 503);
    this.refuseNative(node);
    const device = this.fleet.deviceName({ node, drive });
    const previous = this.settings.getRaw(`tracks:${device}`) as StoredTracks | undefined;
    this.settings.setRaw(`tracks:${device}`, { ...(previous ?? { device, scanned_at: null, tracks: [] }), scanning: true, error: null } satisfies StoredTracks);
    this.request(node, TASKS.scanTracks, drive, SCAN_TIMEOUT_MS).catch((err: Error) => {
      this.log.warn(`device ${device}: title scan failed: ${err.message}`);
      this.settings.setRaw(`tracks:${device}`, { device, scanned_at: new Date().toISOString(), tracks: [], scanning: false, error: err.message } satisfies StoredTracks);
    });
  }

  // ---------------------------------------------------------------- commands table

  private command(id: string): CommandRow | undefined {
    return this.db.prepare<[string], CommandRow>('SELECT * FROM commands WHERE id = ?').get(id);
  }

  private commandsOf(node: string, states: CommandState[]): CommandRow[] {
    return this.db.prepare<[string], CommandRow>(`SELECT * FROM commands WHERE node = ? AND state IN (${states.map((s) => `'${s}'`).join(',')}) ORDER BY created_at`).all(node);
  }

  private activeCommand(jobId: string): CommandRow | undefined {
    return this.db.prepare<[string], CommandRow>(`SELECT * FROM commands WHERE job_id = ? AND state IN ('sent','accepted') ORDER BY created_at DESC`).get(jobId);
  }

  private setCommandState(id: string, state: CommandState): void {
    this.db.prepare('UPDATE commands SET state = ? WHERE id = ?').run(state, id);
  }

  private nodesWithOpenWork(): string[] {
    return this.db.prepare<[], { node: string }>(`SELECT DISTINCT node FROM commands WHERE state IN ('sent','accepted')`).all().map((r) => r.node);
  }

  /** Drops bookkeeping older than a week: processed event ids (agents never resend that late), finished commands and queue rows. */
  prune(): void {
    const cutoff = new Date(Date.now() - 7 * 24 * 3600_000).toISOString();
    this.db.prepare('DELETE FROM processed_events WHERE ts < ?').run(cutoff);
    this.db.prepare(`DELETE FROM commands WHERE state IN ('done','superseded') AND created_at < ?`).run(cutoff);
    this.db.prepare(`DELETE FROM transcode_queue WHERE state = 'done' AND created_at < ?`).run(cutoff);
  }
}
