import type { Db } from '../../shared/sqlite.js';
import type { AgentStatus, Capabilities, DriveState } from '../../shared/protocol.js';
import { agentStatusSchema } from '../../shared/protocol-schemas.js';

export interface AgentEntry {
  node: string;
  /** The worker's name in the API and in its device names: from its node (its credential), never from what its status says (Fleet.nameOf). */
  name: string;
  online: boolean;
  status: AgentStatus | null;
  /** Last time anything came from the agent (status, event), ms. */
  lastContact: number;
  offlineSince: number | null;
  /** When the worker last answered a capability ping (ms), null before its first answer since the start. */
  lastPing: number | null;
}

export interface DeviceEntry {
  /** The device name of the API: <worker name>-<drive>, stable across restarts. */
  name: string;
  state: DriveState;
}

/** Spec, Limits: a stored capability ping older than 30 s is stale (GET /capabilities then pings once itself). */
export const PING_STALE_MS = 30_000;

/** An online worker's row is written again at least this often while its statuses change only in their live parts. */
export const STATUS_STORE_EVERY_MS = 60_000;

/**
 * What a restart needs of a status: all but the parts that change with every job (the tasks it
 * holds, those left from its last run, the time it sent it), with its online state.
 */
function storedPart(status: AgentStatus): string {
  const { tasks: _tasks, recovered: _recovered, last_seen: _seen, ...rest } = status;
  return JSON.stringify(rest);
}

/** The workers the coordinator knows and the drives they own (from their retained MQTT topics). */
export class Fleet {
  private readonly agents = new Map<string, AgentEntry>();
  private readonly drives = new Map<string, DeviceEntry>();
  /** Per worker, what its row holds of its status and when it was written. */
  private readonly stored = new Map<string, { part: string; at: number }>();
  /** Per node the name it goes by (nameOf), unique among the nodes known. */
  private readonly names = new Map<string, string>();
  /** Written on statuses and pongs of every worker: prepared once. */
  private readonly stmts;

  constructor(private readonly db: Db, private readonly clock: () => number = Date.now) {
    this.stmts = {
      upsert: db.prepare(
        `INSERT INTO workers (node, name, host, ip, online, status, capabilities, last_seen) VALUES (@node, @name, @host, @ip, @online, @status, @caps, @seen)
         ON CONFLICT(node) DO UPDATE SET name = excluded.name, host = COALESCE(excluded.host, host), ip = COALESCE(excluded.ip, ip), online = excluded.online,
           status = COALESCE(excluded.status, status), capabilities = COALESCE(excluded.capabilities, capabilities), last_seen = COALESCE(excluded.last_seen, last_seen)`,
      ),
      pong: db.prepare<[string, string, string]>('UPDATE workers SET capabilities = ?, last_ping = ? WHERE node = ?'),
    };
    for (const row of db.prepare<[], { node: string; name: string; status: string | null }>('SELECT node, name, status FROM workers ORDER BY rowid').all()) {
      // Everyone is offline from the coordinator's start until it hears from them.
      // A stored status is checked like a fresh one: a row written before the checks existed may hold anything.
      let status: AgentStatus | null = null;
      try {
        const parsed = agentStatusSchema.safeParse(row.status ? JSON.parse(row.status) : null);
        status = parsed.success ? parsed.data : null;
      } catch {
        status = null;
      }
      // Named again from the node: a name a status once gave (another worker's, say) is not kept.
      this.agents.set(row.node, { node: row.node, name: this.nameOf(row.node), online: false, status, lastContact: 0, offlineSince: this.clock(), lastPing: null });
    }
    db.prepare('UPDATE workers SET online = 0').run();
  }

  get(node: string): AgentEntry | undefined {
    return this.agents.get(node);
  }

  /** A worker by its node, else by its name (GET/DELETE /workers/{name}): a node is never mistaken for another worker's name. */
  find(nameOrNode: string): AgentEntry | undefined {
    return this.agents.get(nameOrNode) ?? this.list().find((a) => a.name === nameOrNode);
  }

  list(): AgentEntry[] {
    return [...this.agents.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  online(): AgentEntry[] {
    return this.list().filter((a) => a.online);
  }

  touch(node: string): void {
    const a = this.agents.get(node);
    if (a) a.lastContact = this.clock();
  }

  /**
   * Applies a status message; returns the previous online state. The entry in memory takes every
   * status. The row is written when what a restart needs changed (storedPart), and otherwise at most
   * every STATUS_STORE_EVERY_MS: a worker sends one with each job it starts or ends, and writing a
   * few KB of capabilities each time was a commit per status on the event loop.
   */
  applyStatus(status: AgentStatus): { wasOnline: boolean; entry: AgentEntry } {
    const now = this.clock();
    let entry = this.agents.get(status.node);
    const wasOnline = entry?.online ?? false;
    const online = status.state === 'online';
    if (!entry) {
      entry = { node: status.node, name: this.nameOf(status.node), online, status: null, lastContact: now, offlineSince: null, lastPing: null };
      this.agents.set(status.node, entry);
    }
    entry.online = online;
    entry.lastContact = now;
    if (online) {
      entry.status = status;
      entry.offlineSince = null;
    } else if (wasOnline || entry.offlineSince === null) {
      entry.offlineSince = now;
    }
    const part = storedPart(status);
    const last = this.stored.get(status.node);
    if (last && last.part === part && now - last.at < STATUS_STORE_EVERY_MS) return { wasOnline, entry };
    this.stored.set(status.node, { part, at: now });
    this.stmts.upsert.run({
        node: status.node,
        name: entry.name,
        host: status.host ?? null,
        ip: status.ip ?? null,
        online: online ? 1 : 0,
        status: online ? JSON.stringify(status) : null,
        caps: status.capabilities ? JSON.stringify(status.capabilities) : null,
        seen: online ? new Date(now).toISOString() : null,
      });
    return { wasOnline, entry };
  }

  markOffline(node: string): void {
    const a = this.agents.get(node);
    if (!a || !a.online) return;
    a.online = false;
    a.offlineSince = this.clock();
    // The row no longer holds what the last status stored: the next one is written whatever it says.
    this.stored.delete(node);
    this.db.prepare('UPDATE workers SET online = 0 WHERE node = ?').run(node);
  }

  recordPong(node: string, capabilities: Capabilities): void {
    this.touch(node);
    const a = this.agents.get(node);
    if (a) a.lastPing = this.clock();
    this.stmts.pong.run(JSON.stringify(capabilities), new Date().toISOString(), node);
  }

  /** Removes a worker record and its drives (DELETE /workers/{name}); its name is free again. */
  remove(node: string): void {
    this.agents.delete(node);
    this.names.delete(node);
    this.stored.delete(node);
    for (const [name, d] of this.drives) if (d.state.node === node) this.drives.delete(name);
    this.db.prepare('DELETE FROM workers WHERE node = ?').run(node);
  }

  /**
   * The name a node goes by, from the node alone (for a worker with own credentials its user name;
   * the status's `name` counts for nothing, so a worker cannot name itself like another one): the
   * part before @, or, when another known node goes by that already, the whole node (then with a
   * number). Kept for the node from its first message on, and across restarts (the workers table).
   */
  nameOf(node: string): string {
    const known = this.names.get(node);
    if (known) return known;
    const taken = new Set(this.names.values());
    const short = node.split('@')[0] || node;
    let name = !taken.has(short) ? short : node;
    for (let n = 2; taken.has(name); n++) name = `${node}-${n}`;
    this.names.set(node, name);
    return name;
  }

  deviceName(state: Pick<DriveState, 'node' | 'drive'>): string {
    return `${this.nameOf(state.node)}-${state.drive}`;
  }

  /** Records a drive's state; null when its device name belongs to a drive of another node (names like "a-b" + "c" and "a" + "b-c"): the first keeps it. */
  applyDrive(state: DriveState): DeviceEntry | null {
    const entry = { name: this.deviceName(state), state };
    const held = this.drives.get(entry.name);
    if (held && held.state.node !== state.node) return null;
    this.drives.set(entry.name, entry);
    return entry;
  }

  device(name: string): DeviceEntry | undefined {
    return this.drives.get(name);
  }

  devices(): DeviceEntry[] {
    return [...this.drives.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}
