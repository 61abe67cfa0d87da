import net from 'node:net';
import type { Duplex } from 'node:stream';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import type { Logger } from '../../shared/log.js';
import { mayPublish, maySubscribe, topicRights, type MqttIdentity } from './topic-rights.js';
import { secretMatches } from './broker-secret.js';
import { COORDINATOR_USERNAME, type MqttCredentials } from './credentials.js';
import { AGENT_CLIENT_ID_MAX, AGENT_CLIENT_ID_PREFIX, claimAgentNode } from './agent-node.js';
import { duplexPair } from './duplex-pair.js';
import { guardPacketSizes } from './packet-guard.js';
import { PRELOGIN_LIMITS, PasswordChecks, PreLoginBudget, RefusalLog, type CutReason, type PreLoginLimits, type PreLoginTicket } from './login-guard.js';

/** Client ids that kept a session (clean: false) remembered with their credential; beyond this many new ones are not bound. */
const MAX_BOUND_CLIENT_IDS = 10_000;
/** The refusal of a login that found too many others waiting for their password check (CONNACK 3: the client tries again). */
const BUSY = 'too many logins waiting for their password check';

export interface BrokerStats {
  /** Logins answered with a refusal (wrong or no credentials, a client id of another credential). */
  refusedLogins: number;
  /** Connections cut before they logged in, by reason. */
  cutBeforeLogin: Record<CutReason | 'packetSize', number>;
}

export interface EmbeddedBroker {
  port: number;
  url: string;
  /**
   * A new connection to the broker inside this process, for the coordinator's own client and the
   * all-in-one process's local agent: an in-memory stream instead of a loopback TCP connection. It
   * logs in and is checked like any other; only the kernel is left out (for the coordinator's client,
   * two socket writes and two reads fewer per agent event).
   */
  connectInProcess(): Duplex;
  /**
   * Cuts every connection logged in with this user name or acting as this node (no last will), also
   * those still in the middle of their CONNECT: they get nothing delivered and are closed once
   * registered. Returns how many.
   */
  disconnect(usernameOrNode: string): number;
  /** The sessions logged in with this user name or acting as this node now, and whether any of them used the broker secret (legacy). */
  sessionsOf(usernameOrNode: string): { count: number; legacy: boolean };
  /** Counters of refused logins and of connections cut before login (GET /metrics). */
  stats(): BrokerStats;
  close(): Promise<void>;
}

export interface BrokerOptions {
  port: number;
  /** The broker secret: the coordinator's own password, and the legacy password of agents without own credentials. */
  secret: string;
  credentials: MqttCredentials;
  /** Largest packet a worker or Home Assistant may send (MQTT_MAX_PACKET_SIZE). */
  maxPacketBytes: number;
  /** Largest packet the coordinator's own client may send: the key-store hand-over is larger than the rest. */
  coordinatorMaxPacketBytes: number;
  /** Home Assistant's discovery prefix (the setting homeAssistantPrefix), read at each check. */
  haPrefix: () => string;
  /** The address to listen on (MQTT_BIND_ADDRESS); null: every interface. */
  host?: string | null;
  /** The limits before login (login-guard.ts); tests shorten them. */
  limits?: Partial<PreLoginLimits>;
  /**
   * Called when a worker credential was bound to the node of its first login (agent-node.ts), before
   * the login is answered: the coordinator retires the bare node `username` an agent before the update used.
   */
  onBind?: (username: string, node: string) => void;
}

interface Session {
  username: string;
  who: MqttIdentity;
  /** Revoked (disconnect()) while its CONNECT was still being handled: it gets nothing and is closed once registered. */
  revoked: boolean;
}

interface PreLogin {
  address: string;
  ticket: PreLoginTicket;
  timer: NodeJS.Timeout;
}

const CUT_TEXT: Record<CutReason, (l: PreLoginLimits) => string> = {
  connectionsPerAddress: (l) => `more than ${l.connectionsPerAddress} connections from this address have not logged in`,
  connectionsTotal: (l) => `more than ${l.connectionsTotal} connections have not logged in`,
  bytesPerAddress: (l) => `the connections from this address sent more than ${l.bytesPerAddress} bytes before logging in`,
  bytesTotal: (l) => `the connections not logged in sent more than ${l.bytesTotal} bytes`,
  timeout: (l) => `no login within ${Math.round(l.connectTimeoutMs / 1000)} s`,
};

function describe(who: MqttIdentity): string {
  return who.kind === 'agent' ? `worker ${who.node}${who.legacy ? ' (legacy: broker secret)' : ''}` : who.kind === 'home-assistant' ? 'Home Assistant' : 'the coordinator';
}

/** Whether a session is the one of this user name or acts as this node. */
const sessionIs = (session: Session | undefined, usernameOrNode: string): boolean => session !== undefined && (session.username === usernameOrNode || (session.who.kind === 'agent' && session.who.node === usernameOrNode));

/**
 * Starts the embedded aedes broker on the given port (0 = a free one). Who may log in: the coordinator
 * (user ripwerk-coordinator, the broker secret), each worker with its own credentials (as the node
 * its client id names, within what agent-node.ts allows the credential), Home Assistant with its
 * own, and, for installs from before the own credentials, a worker with its node as user name and
 * the broker secret (logged as legacy; refused once that node has own credentials). Each may publish and subscribe only where coordinator/mqtt/topic-rights.ts says, and send
 * packets up to its limit. A client id in use cannot be taken over by another user.
 */
export async function startEmbeddedBroker(opts: BrokerOptions, log: Logger): Promise<EmbeddedBroker> {
  const limits: PreLoginLimits = { ...PRELOGIN_LIMITS, ...opts.limits };
  const broker = await Aedes.createBroker({ heartbeatInterval: 60_000 });
  // aedes keeps the connected clients by id (not in its type declarations).
  const clients = (): Record<string, Client | undefined> => (broker as unknown as { clients: Record<string, Client | undefined> }).clients;
  const sessions = new WeakMap<Client, Session>();
  const byConnection = new WeakMap<object, Session>();
  /** Every client that logged in and has not closed yet, registered or still in its CONNECT. */
  const live = new Set<Client>();
  /** Clients whose login was refused here: their connection's end is no error worth a line. */
  const refused = new WeakSet<Client>();
  /** Client ids that kept a session (clean: false), with the user name that has them. */
  const idOwners = new Map<string, string>();
  const preLogin = new WeakMap<object, PreLogin>();
  const budget = new PreLoginBudget(limits);
  const passwordChecks = new PasswordChecks(limits);
  const refusals = new RefusalLog(log, limits.summaryWindowMs);
  const clientErrors = new RefusalLog(log, limits.summaryWindowMs);
  const stats: BrokerStats = { refusedLogins: 0, cutBeforeLogin: { connectionsPerAddress: 0, connectionsTotal: 0, bytesPerAddress: 0, bytesTotal: 0, timeout: 0, packetSize: 0 } };
  const noted = new Set<string>();
  /** Logs a line once per key (a reconnecting client would otherwise repeat it every second). */
  const once = (key: string, line: () => string): void => {
    if (noted.has(key)) return;
    // A flood of made-up names must not silence the log for good: the memory starts over instead.
    if (noted.size >= 10_000) noted.clear();
    noted.add(key);
    log.warn(line());
  };
  /** The peer's address without the IPv4-in-IPv6 prefix (::ffff:127.0.0.1 is 127.0.0.1). */
  const address = (conn: unknown): string => ((conn as { remoteAddress?: string }).remoteAddress ?? '?').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  const from = (client: Client): string => address(client.conn);
  const cut = (addr: string, reason: CutReason | 'packetSize', text: string, line?: () => string): void => {
    stats.cutBeforeLogin[reason]++;
    refusals.note(addr, 'connections cut before login', text, line ?? (() => `MQTT connection from ${addr} cut before login: ${text}; further cuts from this address are counted and summed up once a minute`));
  };
  /** A refused login: counted, and logged in summary per address and minute (RefusalLog). */
  const refuse = (client: Client, username: string | undefined, reason: string, returnCode: 2 | 3 | 4, cb: (err: AuthenticateError, ok: false) => void): void => {
    stats.refusedLogins++;
    refused.add(client);
    const addr = from(client);
    refusals.note(addr, 'logins refused', reason, () => `MQTT login from ${addr} refused: ${reason} (client ${String(client.id).slice(0, 120)}, user ${String(username ?? '-').slice(0, 120)}); further refusals from this address are counted and summed up once a minute`);
    cb(Object.assign(new Error(returnCode === 2 ? 'client id rejected' : returnCode === 3 ? 'server unavailable' : 'bad user name or password'), { returnCode }), false);
  };

  /** Who logs in, and for a worker credential whether this login binds it to its node; or why it is refused. */
  async function identify(username: string | undefined, password: Buffer | undefined, addr: string, clientId: string): Promise<{ who: MqttIdentity; bind: boolean } | { claimRefused: string } | string> {
    if (!username) return 'no user name';
    if (username === COORDINATOR_USERNAME) return secretMatches(opts.secret, password) ? { who: { kind: 'coordinator' }, bind: false } : 'wrong password';
    const epoch = opts.credentials.epoch(username);
    // Only a user name with a credential costs a password check (scrypt): those wait their turn.
    const check = opts.credentials.has(username) ? passwordChecks.run(addr, () => opts.credentials.verify(username, password)) : Promise.resolve(null);
    if (check === null) return BUSY;
    const role = await check;
    // Issued anew or revoked while the password was being checked: the old password no longer counts.
    if (opts.credentials.epoch(username) !== epoch) return 'the credentials changed during the login';
    if (role === 'agent') {
      const claim = claimAgentNode(username, clientId, opts.credentials.boundNode(username), (node) => opts.credentials.holderOf(node));
      if ('refused' in claim) {
        once(`claim ${username} ${clientId}`, () => `MQTT login of worker credential ${username.slice(0, 120)} refused: ${claim.refused.slice(0, 400)}`);
        return { claimRefused: claim.refused };
      }
      return { who: { kind: 'agent', node: claim.node, legacy: false }, bind: claim.bind };
    }
    if (role === 'home-assistant') return { who: { kind: 'home-assistant' }, bind: false };
    if (secretMatches(opts.secret, password)) {
      if (opts.credentials.has(username) || opts.credentials.holderOf(username) !== null) return 'the broker secret, but this user has own credentials';
      if (!/^[A-Za-z0-9._@-]{1,120}$/.test(username)) return 'the broker secret with a user name that is no node name';
      return { who: { kind: 'agent', node: username, legacy: true }, bind: false };
    }
    return 'wrong or unknown credentials';
  }

  /**
   * Who a client id belongs to, for a login as `key` (a worker: its node; anyone else: its user
   * name): an agent's fixed id to the node in it (the agent cuts its id to 120 characters: a cut id
   * belongs to the node it begins), an id that kept a session to the user name that had it.
   */
  const idOwner = (id: string, key: string, user: string): { owner: string; mine: boolean } | undefined => {
    if (id.startsWith(AGENT_CLIENT_ID_PREFIX) && id.length > AGENT_CLIENT_ID_PREFIX.length) {
      const named = id.slice(AGENT_CLIENT_ID_PREFIX.length);
      const owner = id.length >= AGENT_CLIENT_ID_MAX && key.startsWith(named) ? key : named;
      return { owner, mine: owner === key };
    }
    const owner = idOwners.get(id);
    return owner === undefined ? undefined : { owner, mine: owner === user };
  };

  broker.authenticate = (client, username, password, cb) => {
    identify(username, password, from(client), String(client.id)).then(
      (found) => {
        if (typeof found === 'string') return refuse(client, username, found, found === BUSY ? 3 : 4, cb);
        // The password was right, the client id names a node the credential may not act as: identifier rejected.
        if ('claimRefused' in found) return refuse(client, username, found.claimRefused, 2, cb);
        const { who } = found;
        // Gone while its password was checked (cut by the time limit, say): aedes drops the answer, and no session may stay behind.
        if ((client as unknown as { closed?: boolean }).closed || client.conn.destroyed) return cb(Object.assign(new Error('connection closed'), { returnCode: 3 as const }), false);
        const user = username as string;
        // A client id belongs to one credential: its session (queued commands) goes to nobody else, connected or not.
        const owner = idOwner(client.id, who.kind === 'agent' ? who.node : user, user);
        if (owner !== undefined && !owner.mine) return refuse(client, username, `the client id ${String(client.id).slice(0, 120)} belongs to ${who.kind === 'agent' && !who.legacy ? 'node' : 'user'} ${owner.owner.slice(0, 120)}`, 2, cb);
        // A client id in use by another user stays with it: no session takeover with other credentials.
        const existing = clients()[client.id];
        const holder = existing && existing !== client ? sessions.get(existing) : undefined;
        if (holder && !holder.revoked && holder.username !== user) return refuse(client, username, `the client id ${String(client.id).slice(0, 120)} is in use by ${describe(holder.who)}`, 2, cb);
        if (found.bind && who.kind === 'agent') {
          // Two first logins at once as two nodes: the first one binds, the other is refused.
          if (!opts.credentials.bind(user, who.node)) return refuse(client, username, `the credential ${user} was bound to node ${opts.credentials.boundNode(user) ?? '?'} during the login`, 2, cb);
          log.info(`MQTT credential ${user} bound to node ${who.node} (its first login)`);
          // A session of an agent from before the update (the bare node) has no place beside it any more.
          for (const other of live) {
            const s = sessions.get(other);
            if (other !== client && s?.username === user && s.who.kind === 'agent' && s.who.node !== who.node) revoke(other, s);
          }
          opts.onBind?.(user, who.node);
        }
        if (!client.clean && owner === undefined && idOwners.size < MAX_BOUND_CLIENT_IDS) idOwners.set(client.id, user);
        const session: Session = { username: user, who, revoked: false };
        sessions.set(client, session);
        byConnection.set(client.conn, session);
        live.add(client);
        client.conn.once('close', () => live.delete(client));
        // Logged in: its connection no longer counts against the budget before login.
        const pending = preLogin.get(client.conn);
        if (pending) {
          clearTimeout(pending.timer);
          pending.ticket.release();
          preLogin.delete(client.conn);
        }
        if (who.kind === 'agent' && who.legacy) once(`legacy ${user}`, () => `worker ${who.node} logged in with the shared broker secret (legacy): issue it own credentials with POST /api/workers/{name}/credentials`);
        cb(null, true);
      },
      (err: Error) => cb(Object.assign(new Error(err.message), { returnCode: 3 as const }), false),
    );
  };

  /** Ends a session: nothing more reaches it, no last will (it would bring a removed worker back to the list). */
  function revoke(client: Client, session: Session): void {
    session.revoked = true;
    (client as unknown as { will: unknown; _will: unknown }).will = null;
    (client as unknown as { _will: unknown })._will = null;
    // One still in its CONNECT is closed once registered (clientReady): closing it now would leave it in aedes' list.
    if (clients()[client.id] === client) client.close();
  }

  // A session revoked during its CONNECT is closed as soon as aedes has registered it.
  broker.on('clientReady', (client) => {
    if (sessions.get(client)?.revoked) client.close();
  });

  // Nothing reaches a revoked session: no queued command, no retained key, while it is being closed.
  broker.authorizeForward = (client, packet) => (sessions.get(client)?.revoked ? null : packet);

  broker.authorizePublish = (client, packet, cb) => {
    // A will published for a gone client comes with client null in some versions: it was checked when set.
    if (!client) return cb(null);
    const session = sessions.get(client);
    if (session && !session.revoked && mayPublish(topicRights(session.who, opts.haPrefix()), packet.topic)) return cb(null);
    once(`publish ${session?.username} ${packet.topic}`, () => `MQTT ${session ? describe(session.who) : `client ${client.id}`} may not publish to ${packet.topic.slice(0, 200)}: disconnected`);
    cb(new Error(`not allowed to publish to ${packet.topic}`));
  };

  broker.authorizeSubscribe = (client, sub, cb) => {
    const session = sessions.get(client);
    if (session && !session.revoked && maySubscribe(topicRights(session.who, opts.haPrefix()), sub.topic)) return cb(null, sub);
    once(`subscribe ${session?.username} ${sub.topic}`, () => `MQTT ${session ? describe(session.who) : `client ${client.id}`} may not subscribe to ${sub.topic.slice(0, 200)}: refused`);
    cb(null, null);
  };

  broker.on('clientError', (client, err) => {
    if (!client || refused.has(client)) return; // a refused login's end: counted where it was refused
    const session = sessions.get(client);
    const message = err.message.slice(0, 200);
    if (!session) {
      // Before login: a malformed CONNECT, a connection dropped half-way. Summed up like the refusals.
      refusals.note(from(client), 'connections ended before login', message, () => `MQTT connection from ${from(client)} ended before login: ${message}; further ones from this address are counted and summed up once a minute`);
      return;
    }
    clientErrors.note(describe(session.who), 'client errors', message, () => `MQTT client ${String(client.id).slice(0, 120)} (${describe(session.who)}) error: ${message}`);
  });

  /** Before login a connection holds a share of the budget (per address and in total) and has CONNECT_TIMEOUT_MS to log in. */
  const admit = (conn: Duplex): boolean => {
    const addr = address(conn);
    // The coordinator's own client and the all-in-one agent: code of this process, not a peer.
    if (addr === 'in-process') return true;
    const ticket = budget.admit(addr);
    if (typeof ticket === 'string') {
      cut(addr, ticket, CUT_TEXT[ticket](limits));
      conn.destroy();
      return false;
    }
    const timer = setTimeout(() => {
      if (!preLogin.has(conn)) return;
      cut(addr, 'timeout', CUT_TEXT.timeout(limits));
      conn.destroy();
    }, limits.connectTimeoutMs);
    preLogin.set(conn, { address: addr, ticket, timer });
    conn.once('close', () => {
      clearTimeout(timer);
      ticket.release();
      preLogin.delete(conn);
    });
    const read = conn.read.bind(conn);
    conn.read = (size?: number): unknown => {
      const chunk = read(size) as unknown;
      const pending = preLogin.get(conn);
      if (pending && Buffer.isBuffer(chunk)) {
        const over = pending.ticket.read(chunk.length);
        if (over) {
          preLogin.delete(conn);
          clearTimeout(timer);
          cut(addr, over, CUT_TEXT[over](limits));
          conn.destroy();
          return null;
        }
      }
      return chunk;
    };
    return true;
  };

  const handle = (conn: Duplex): void => {
    if (!admit(conn)) return;
    guardPacketSizes(
      conn,
      () => {
        const session = byConnection.get(conn);
        if (!session) return null;
        return session.who.kind === 'coordinator' ? opts.coordinatorMaxPacketBytes : opts.maxPacketBytes;
      },
      (e) => {
        const what = e.declared < 0 ? 'a malformed packet length' : `a packet of ${e.declared} bytes (type ${e.type})`;
        const line = (): string => `MQTT client from ${address(conn)} ${e.authenticated ? `(${describe(byConnection.get(conn)?.who ?? { kind: 'home-assistant' })})` : 'before logging in'} announced ${what}; the limit is ${e.limit}: disconnected`;
        if (e.authenticated) once(`size ${address(conn)}`, line);
        else cut(address(conn), 'packetSize', `a packet over ${e.limit} bytes`, line);
      },
    );
    broker.handle(conn);
  };

  // Small MQTT packets go out at once instead of waiting for the peer's ACK (Nagle: ~40 ms a hop).
  const server = net.createServer({ noDelay: true }, handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? undefined, () => resolve());
  });
  const actual = (server.address() as net.AddressInfo).port;
  log.info(`embedded MQTT broker listening on port ${actual}`);
  let closed = false;
  return {
    port: actual,
    url: `mqtt://127.0.0.1:${actual}`,
    connectInProcess() {
      const [client, serverSide] = duplexPair();
      // A closed broker takes no connection: the client sees it drop and tries again, as over TCP.
      if (closed) serverSide.destroy();
      else handle(serverSide);
      return client;
    },
    disconnect(usernameOrNode) {
      let n = 0;
      for (const client of [...live]) {
        const session = sessions.get(client);
        if (!session || !sessionIs(session, usernameOrNode)) continue;
        revoke(client, session);
        n++;
      }
      return n;
    },
    sessionsOf(usernameOrNode) {
      let count = 0;
      let legacy = false;
      for (const client of live) {
        const session = sessions.get(client);
        if (!session || !sessionIs(session, usernameOrNode) || session.revoked) continue;
        count++;
        if (session.who.kind === 'agent' && session.who.legacy) legacy = true;
      }
      return { count, legacy };
    },
    stats: () => ({ refusedLogins: stats.refusedLogins, cutBeforeLogin: { ...stats.cutBeforeLogin } }),
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        refusals.close();
        clientErrors.close();
        broker.close(() => server.close(() => resolve()));
      }),
  };
}
