import { randomUUID } from 'node:crypto';
import { DEFAULT_CAPABILITY_PING_SECONDS } from '../../shared/config.js';
import type { Db } from '../../shared/sqlite.js';
import type { Logger } from '../../shared/log.js';
import type { InProcessConnect } from '../../shared/mqtt-client.js';
import { DropLog } from '../../shared/drop-log.js';
import { TASKS, topics, type AgentEvent, type AppKeyMessage, type LibraryInfo, type RipArgs, type RippedTitle } from '../../shared/protocol.js';
import type { DeviceEntry, Fleet } from '../workers/fleet.js';
import type { JobRow, JobsStore } from '../jobs/jobs-store.js';
import type { KeyStore } from '../keys/key-store.js';
import type { SettingsStore } from '../system/settings-store.js';
import { apiStatus, isActive } from '../jobs/job-status.js';
import { CommandTable, type OpenWork } from './commands.js';
import { DispatchError, refuseNative } from './dispatch-error.js';
import { DriveRequests } from './drive-requests.js';
import { EventIntake } from './event-intake.js';
import { Handshake } from './handshake.js';
import { JobJournal } from './job-journal.js';
import { recordFilesBytes } from '../jobs/job-sizes.js';
import { CoordinatorLink } from './link.js';
import { Presence, type PresenceTiming } from './presence.js';
import { ChunkBoard, type RunningChunk } from './chunk-board.js';
import { ChunkIntake } from './chunk-intake.js';
import { TranscodeQueue, type WaitingTranscode } from './transcode-queue.js';

export { DispatchError } from './dispatch-error.js';
export type { StoredTracks } from './drive-requests.js';

const PING_MS = DEFAULT_CAPABILITY_PING_SECONDS * 1000;

/**
 * The coordinator's side of the MQTT protocol: sends commands to agents, applies their events to the
 * job rows exactly once, routes the transcode stage (chosen node, else the shared queue), and fails
 * or re-queues the work of agents that stay away longer than the grace period. It puts together the
 * parts in dispatch/: the link, the command table, the transcode queue, presence with the handshake,
 * the requests that wait for an answer, and the event intake with one handler per job event.
 */
export class Dispatcher {
  /** Called when a job reaches an end state (for notifications and the library refresh). */
  onJobEnd: (job: JobRow) => void = () => undefined;
  /** A rip is done: whether its transcode is queued now (box-set sessions hold a disc whose episode numbers follow a disc not ripped yet). */
  beforeTranscode: (job: JobRow, files: string[], titles: RippedTitle[] | undefined) => boolean = () => true;
  /** MEDIA_ROOT: kept originals under its Originale folder are a finished job's raw data; set by the app. */
  mediaRoot: string | null = null;
  /** How often the background capability ping goes out (CAPABILITY_PING_SECONDS); set before start. */
  pingMs = PING_MS;
  /** The media-server files (nfo, poster) the agent writes for a job; none unless set. */
  libraryFor: (job: JobRow) => LibraryInfo | null = () => null;
  /** Called for every drive state an agent publishes (insert detection, pre-scan, automatic rips). */
  onDriveState: (entry: DeviceEntry) => unknown = () => undefined;
  /** The disc-key material handed to the workers; set by the coordinator at start. */
  keys: KeyStore | null = null;

  private readonly link: CoordinatorLink;
  private readonly commands: CommandTable;
  private readonly journal: JobJournal;
  private readonly queue: TranscodeQueue;
  private readonly presence: Presence;
  private readonly requests: DriveRequests;
  private readonly intake: EventIntake;

  constructor(
    private readonly db: Db,
    private readonly jobs: JobsStore,
    private readonly settings: SettingsStore,
    private readonly fleet: Fleet,
    timing: PresenceTiming,
    private readonly log: Logger,
  ) {
    const drops = new DropLog(log);
    this.link = new CoordinatorLink(
      {
        onStatus: (status) => this.presence.onStatus(status),
        onDriveState: (state) => {
          const entry = this.fleet.applyDrive(state);
          if (entry) void this.onDriveState(entry);
          else drops.drop(topics.driveState(state.node, state.drive), `the device name ${this.fleet.deviceName(state)} belongs to a drive of another worker`);
        },
        onEvent: (node, event) => this.intake.onEvent(node, event),
        onConnect: () => void this.publishKeys(),
      },
      drops,
      log,
    );
    this.commands = new CommandTable(db, this.link);
    this.journal = new JobJournal(db, jobs, log, (row) => this.onJobEnd(row));
    const chunks = new ChunkIntake({ board: new ChunkBoard(db), commands: this.commands, jobs, journal: this.journal });
    this.queue = new TranscodeQueue(db, jobs, settings, fleet, this.commands, this.journal, (job) => this.libraryFor(job), chunks);
    const handshake = new Handshake(this.commands, fleet, jobs, this.journal, this.queue, log);
    this.presence = new Presence(this.link, fleet, jobs, this.commands, this.queue, this.journal, handshake, log, timing);
    this.requests = new DriveRequests(db, this.link, fleet, settings, log);
    this.intake = new EventIntake(db, this.link, fleet, { jobs, commands: this.commands, queue: this.queue, journal: this.journal, chunks, beforeTranscode: (job, files, titles) => this.beforeTranscode(job, files, titles), mediaRoot: () => this.mediaRoot, measure: (jobId, key, files) => void recordFilesBytes(jobs, jobId, key, files, log) }, this.requests, () => this.keys, drops, log);
  }

  // ---------------------------------------------------------------- connection

  /** The broker URL this coordinator uses (the embedded broker's or MQTT_URL); null before start. */
  get brokerUrl(): string | null {
    return this.link.brokerUrl;
  }

  /**
   * Connects to the broker; `login` is the coordinator's user name and the broker secret (null: the
   * broker wants none), `inProcess` connections to the embedded broker as in-memory streams
   * (CoordinatorLink.start).
   */
  async start(url: string, login: { username: string; password: string } | null, inProcess: InProcessConnect | null = null): Promise<void> {
    this.requests.endInterruptedScans();
    await this.link.start(url, login, inProcess);
    this.presence.start(this.pingMs);
    await this.link.untilConnected();
  }

  async stop(): Promise<void> {
    this.presence.stop();
    await this.link.stop();
  }

  get connected(): boolean {
    return this.link.connected;
  }

  /**
   * Hands the disc-key material to every worker as retained messages (key store, KEYDB.cfg, the
   * ripper's application key): a worker that connects later gets it from the broker.
   */
  async publishKeys(): Promise<void> {
    if (!this.link.connected || !this.keys) return;
    try {
      const messages: [string, object][] = [
        [topics.keystore, await this.keys.keystoreMessage()],
        [topics.keydb, await this.keys.keydbMessage()],
        [topics.appKey, { key: this.settings.get('ripperAppKey') || null } satisfies AppKeyMessage],
      ];
      for (const [topic, body] of messages) await this.link.publishRetained(topic, body);
    } catch (err) {
      this.log.warn(`handing the disc keys to the workers failed: ${(err as Error).message}`);
    }
  }

  /** Subscribes to an MQTT topic filter outside the agent protocol; a second call for a filter replaces its handler. */
  subscribeRaw(filter: string, handler: (topic: string, payload: Buffer) => void): void {
    this.link.subscribeRaw(filter, handler);
  }

  /** Publishes a raw payload (QoS 1); with the client offline, mqtt.js sends it after reconnecting. */
  publishRaw(topic: string, payload: string, retain: boolean): void {
    this.link.publishRaw(topic, payload, retain);
  }

  // ---------------------------------------------------------------- jobs

  /** Sends the rip of a new job to the agent owning the drive. */
  startRip(job: JobRow, args: RipArgs): void {
    if (!job.node) throw new DispatchError('the job has no worker', 500);
    refuseNative(this.fleet, job.node);
    this.commands.send(job.node, { id: randomUUID(), task: TASKS.ripDisc, job_id: job.id, args });
  }

  /** Queues the transcode stage: the chosen node when it is online, else any worker with a free slot. */
  enqueueTranscode(jobId: string, rawDir: string, files: string[]): void {
    this.queue.enqueue(jobId, rawDir, files);
  }

  /** A worker was removed (DELETE /workers/{name}): the work it held ends now, with the reason in each job's log. */
  workerRemoved(node: string): void {
    this.presence.removed(node);
  }

  /** The open rips and transcodes of every worker, the chunks they encode, and the transcodes waiting for one (the live worker view). */
  liveWork(queueLimit: number): { running: OpenWork[]; chunks: RunningChunk[]; waiting: WaitingTranscode[] } {
    return { running: this.commands.openWork(), chunks: this.queue.runningChunks(), waiting: this.queue.waiting(queueLimit) };
  }

  /** Hands queued transcodes to workers, oldest first. */
  pump(): void {
    this.queue.pump();
  }

  /** POST /jobs/{id}/cancel: canceling now; canceled once the agent confirms (or at once when nothing runs). */
  cancel(job: JobRow): JobRow {
    if (!isActive(job.status)) throw new DispatchError(`the job is ${apiStatus(job.status)}; only pending, processing or transcoding jobs can be canceled`, 409);
    if (job.status === 'canceling') return job;
    if (!this.jobs.move(job.id, 'canceling')) return this.jobs.get(job.id) as JobRow;
    this.journal.note(job.id, 'info', 'cancel requested');
    const queued = this.queue.isQueued(job.id);
    const cmd = this.commands.active(job.id);
    if (queued || !cmd) {
      this.queue.close(job.id);
      this.journal.finish(job.id, 'canceled', {}, 'canceled before a worker started it');
    } else if (!this.fleet.get(cmd.node)?.online) {
      this.queue.stopChunks(job.id);
      this.commands.setState(cmd.id, 'superseded');
      this.journal.finish(job.id, 'canceled', {}, `canceled (worker ${cmd.node} is offline; it is told when it returns)`);
    } else {
      // The chunks of its title stop at once, on every agent running one; the lead removes their files.
      this.queue.stopChunks(job.id);
      this.commands.sendCancel(cmd.node, job.id, cmd.id);
    }
    return this.jobs.get(job.id) as JobRow;
  }

  // ---------------------------------------------------------------- drives

  /** Sends eject or scan_tracks and waits for the agent's answer. */
  request(node: string, task: typeof TASKS.eject | typeof TASKS.scanTracks, drive: string, timeoutMs?: number): Promise<AgentEvent> {
    return this.requests.request(node, task, drive, timeoutMs);
  }

  /** One capability ping to every online worker, waiting (at most timeoutMs) for their answers. */
  pingNow(timeoutMs: number): Promise<void> {
    return this.requests.pingNow(timeoutMs);
  }

  /** Starts a title scan without waiting; the setting tracks:<device> holds its outcome. */
  scanTracks(node: string, drive: string): void {
    this.requests.scanTracks(node, drive);
  }

  // ---------------------------------------------------------------- upkeep

  /** Drops bookkeeping older than a week: processed event ids (agents never resend that late), finished commands and queue rows. */
  prune(): void {
    const cutoff = new Date(Date.now() - 7 * 24 * 3600_000).toISOString();
    this.db.prepare('DELETE FROM processed_events WHERE ts < ?').run(cutoff);
    this.commands.prune(cutoff);
    this.queue.prune(cutoff);
  }
}
