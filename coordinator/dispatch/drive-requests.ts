/** Eject, title scan and capability ping: commands whose answer the coordinator waits for. */
import { randomUUID } from 'node:crypto';
import { EJECT_REPLY_TIMEOUT_MS } from '../../shared/drive-limits.js';
import type { Db } from '../../shared/sqlite.js';
import type { Logger } from '../../shared/log.js';
import { TASKS, type AgentEvent, type Command, type Track } from '../../shared/protocol.js';
import type { Fleet } from '../workers/fleet.js';
import type { SettingsStore } from '../system/settings-store.js';
import { DispatchError, refuseNative } from './dispatch-error.js';
import type { CommandLink } from './link.js';

/** An eject's answer: longer than the agent can take (shared/drive-limits.ts), so a slow tray is no 502 while it ejects. */
const REPLY_TIMEOUT_MS = EJECT_REPLY_TIMEOUT_MS;
const SCAN_TIMEOUT_MS = 10 * 60_000;

/** The setting tracks:<device>: the last title scan of a drive. */
export interface StoredTracks {
  device: string;
  scanned_at: string | null;
  tracks: Track[];
  scanning: boolean;
  error: string | null;
}

type Reply = { ok: true; event: AgentEvent } | { ok: false; reason: string };

/**
 * Requests that wait for an agent's answer: eject, title scan, capability ping. Each open request is
 * known by its command id with the node asked; the answer resolves it, silence ends it with a reason.
 */
export class DriveRequests {
  /** Open requests by command id: the node asked, and what to call with its answer. */
  private readonly replies = new Map<string, { node: string; resolve: (reply: Reply) => void }>();

  constructor(
    private readonly db: Db,
    private readonly link: CommandLink,
    private readonly fleet: Fleet,
    private readonly settings: SettingsStore,
    private readonly log: Logger,
  ) {}

  /** Sends eject or scan_tracks and waits for the agent's answer. */
  async request(node: string, task: typeof TASKS.eject | typeof TASKS.scanTracks, drive: string, timeoutMs = REPLY_TIMEOUT_MS): Promise<AgentEvent> {
    if (!this.fleet.get(node)?.online) throw new DispatchError(`the worker ${node} is offline`, 503);
    refuseNative(this.fleet, node);
    const id = randomUUID();
    const reply = new Promise<Reply>((resolve) => {
      this.replies.set(id, { node, resolve });
      setTimeout(() => {
        if (this.replies.delete(id)) resolve({ ok: false, reason: `the worker ${node} did not answer within ${Math.round(timeoutMs / 1000)} s` });
      }, timeoutMs).unref();
    });
    this.link.sendCommand(node, { id, task, args: { drive } } as Command);
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
    if (!this.link.connected) return;
    await Promise.all(
      this.fleet.online().map(
        (agent) =>
          new Promise<void>((resolve) => {
            const id = randomUUID();
            this.replies.set(id, { node: agent.node, resolve: () => resolve() });
            setTimeout(() => {
              if (this.replies.delete(id)) resolve();
            }, timeoutMs).unref();
            this.link.sendCommand(agent.node, { id, task: TASKS.pingWorker, args: {} }, 0);
          }),
      ),
    );
  }

  /**
   * Starts a title scan without waiting: the setting tracks:<device> says "scanning" at once and holds
   * the titles (or the reason the scan failed) when the agent answers.
   */
  scanTracks(node: string, drive: string): void {
    if (!this.fleet.get(node)?.online) throw new DispatchError(`the worker ${node} is offline`, 503);
    refuseNative(this.fleet, node);
    const device = this.fleet.deviceName({ node, drive });
    const previous = this.settings.getRaw(`tracks:${device}`) as StoredTracks | undefined;
    this.settings.setRaw(`tracks:${device}`, { ...(previous ?? { device, scanned_at: null, tracks: [] }), scanning: true, error: null } satisfies StoredTracks);
    this.request(node, TASKS.scanTracks, drive, SCAN_TIMEOUT_MS).catch((err: Error) => {
      this.log.warn(`device ${device}: title scan failed: ${err.message}`);
      this.settings.setRaw(`tracks:${device}`, { device, scanned_at: new Date().toISOString(), tracks: [], scanning: false, error: err.message } satisfies StoredTracks);
    });
  }

  /** Whether the coordinator waits for an answer of `node` to the command `commandId`. */
  awaits(commandId: string | undefined, node: string): boolean {
    return commandId !== undefined && this.replies.get(commandId)?.node === node;
  }

  /** Stores the titles a scan found (the answer to a scan this coordinator asked that node for). */
  storeTracks(node: string, event: Extract<AgentEvent, { type: 'tracks' }>): void {
    const device = this.fleet.deviceName({ node, drive: event.drive });
    this.settings.setRaw(`tracks:${device}`, { device, scanned_at: event.ts, tracks: event.tracks, scanning: false, error: null } satisfies StoredTracks);
    this.log.info(`device ${device}: title scan found ${event.tracks.length} title(s)`);
  }

  /** Ends the open request an event answers, if it is one from the node asked. */
  answer(node: string, event: AgentEvent): void {
    if (!event.command_id) return;
    const reply = this.replies.get(event.command_id);
    // A native worker answers a scan or eject with "rejected": the request ends with its reason at once.
    if (reply && reply.node === node && (event.type === 'command_failed' || event.type === 'rejected' || event.type === 'ejected' || event.type === 'tracks' || event.type === 'pong')) {
      this.replies.delete(event.command_id);
      reply.resolve(event.type === 'command_failed' || event.type === 'rejected' ? { ok: false, reason: event.reason } : { ok: true, event });
    }
  }

  /** Scans that were running when the coordinator stopped get no answer any more: say so instead of "scanning" forever. */
  endInterruptedScans(): void {
    for (const row of this.db.prepare<[], { key: string }>(`SELECT key FROM settings WHERE key LIKE 'tracks:%'`).all()) {
      const stored = this.settings.getRaw(row.key) as StoredTracks | undefined;
      if (stored?.scanning) this.settings.setRaw(row.key, { ...stored, scanning: false, error: 'the coordinator restarted during the scan: start it again' });
    }
  }
}
