import net from 'node:net';
import type { Duplex } from 'node:stream';
import { Aedes, type Client } from 'aedes';
import type { Logger } from '../../shared/log.js';
import { mayPublish, maySubscribe, topicRights, type MqttIdentity } from './topic-rights.js';
import { secretMatches } from './broker-secret.js';
import { COORDINATOR_USERNAME, type MqttCredentials } from './credentials.js';
import { duplexPair } from './duplex-pair.js';
import { guardPacketSizes } from './packet-guard.js';

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
  /** Cuts every connection logged in with this user name (no last will); returns how many. */
  disconnect(username: string): number;
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
}

interface Session {
  username: string;
  who: MqttIdentity;
}

function describe(who: MqttIdentity): string {
  return who.kind === 'agent' ? `worker ${who.node}${who.legacy ? ' (legacy: broker secret)' : ''}` : who.kind === 'home-assistant' ? 'Home Assistant' : 'the coordinator';
}

/**
 * Starts the embedded aedes broker on the given port (0 = a free one). Who may log in: the coordinator
 * (user ripwerk-coordinator, the broker secret), each worker with its own credentials (user = its
 * node), Home Assistant with its own, and, for installs from before the own credentials, a worker
 * with its node as user name and the broker secret (logged as legacy; refused once that node has
 * own credentials). Each may publish and subscribe only where coordinator/mqtt/topic-rights.ts says, and send
 * packets up to its limit. A client id in use cannot be taken over by another user.
 */
export async function startEmbeddedBroker(opts: BrokerOptions, log: Logger): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker({ heartbeatInterval: 60_000 });
  // aedes keeps the connected clients by id (not in its type declarations).
  const clients = (): Record<string, Client | undefined> => (broker as unknown as { clients: Record<string, Client | undefined> }).clients;
  const sessions = new WeakMap<Client, Session>();
  const byConnection = new WeakMap<object, Session>();
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

  async function identify(username: string | undefined, password: Buffer | undefined): Promise<MqttIdentity | string> {
    if (!username) return 'no user name';
    if (username === COORDINATOR_USERNAME) return secretMatches(opts.secret, password) ? { kind: 'coordinator' } : 'wrong password';
    const role = await opts.credentials.verify(username, password);
    if (role === 'agent') return { kind: 'agent', node: username, legacy: false };
    if (role === 'home-assistant') return { kind: 'home-assistant' };
    if (secretMatches(opts.secret, password)) {
      if (opts.credentials.has(username)) return 'the broker secret, but this user has own credentials';
      if (!/^[A-Za-z0-9._@-]{1,120}$/.test(username)) return 'the broker secret with a user name that is no node name';
      return { kind: 'agent', node: username, legacy: true };
    }
    return 'wrong or unknown credentials';
  }

  broker.authenticate = (client, username, password, cb) => {
    identify(username, password).then(
      (who) => {
        if (typeof who === 'string') {
          once(`refused ${username ?? ''} ${from(client)}`, () => `MQTT client ${String(client.id).slice(0, 120)} from ${from(client)} (user ${String(username ?? '-').slice(0, 120)}) refused: ${who}`);
          return cb(Object.assign(new Error('bad user name or password'), { returnCode: 4 as const }), false);
        }
        // A client id in use by another user stays with it: no session takeover with other credentials.
        const existing = clients()[client.id];
        const holder = existing && existing !== client ? sessions.get(existing) : undefined;
        if (holder && holder.username !== username) {
          once(`takeover ${client.id} ${username}`, () => `MQTT client id ${String(client.id).slice(0, 120)} is in use by ${describe(holder.who)}; refused for user ${username}`);
          return cb(Object.assign(new Error('client id in use'), { returnCode: 2 as const }), false);
        }
        const session: Session = { username: username as string, who };
        sessions.set(client, session);
        byConnection.set(client.conn, session);
        if (who.kind === 'agent' && who.legacy) once(`legacy ${username}`, () => `worker ${who.node} logged in with the shared broker secret (legacy): issue it own credentials with POST /api/workers/{name}/credentials`);
        cb(null, true);
      },
      (err: Error) => cb(Object.assign(new Error(err.message), { returnCode: 3 as const }), false),
    );
  };

  broker.authorizePublish = (client, packet, cb) => {
    // A will published for a gone client comes with client null in some versions: it was checked when set.
    if (!client) return cb(null);
    const session = sessions.get(client);
    if (session && mayPublish(topicRights(session.who, opts.haPrefix()), packet.topic)) return cb(null);
    once(`publish ${session?.username} ${packet.topic}`, () => `MQTT ${session ? describe(session.who) : `client ${client.id}`} may not publish to ${packet.topic.slice(0, 200)}: disconnected`);
    cb(new Error(`not allowed to publish to ${packet.topic}`));
  };

  broker.authorizeSubscribe = (client, sub, cb) => {
    const session = sessions.get(client);
    if (session && maySubscribe(topicRights(session.who, opts.haPrefix()), sub.topic)) return cb(null, sub);
    once(`subscribe ${session?.username} ${sub.topic}`, () => `MQTT ${session ? describe(session.who) : `client ${client.id}`} may not subscribe to ${sub.topic.slice(0, 200)}: refused`);
    cb(null, null);
  };

  broker.on('clientError', (client, err) => log.warn(`MQTT client ${client?.id ?? '?'} error: ${err.message}`));

  const handle = (conn: Duplex): void => {
    guardPacketSizes(
      conn,
      () => {
        const session = byConnection.get(conn);
        if (!session) return null;
        return session.who.kind === 'coordinator' ? opts.coordinatorMaxPacketBytes : opts.maxPacketBytes;
      },
      (e) => {
        const what = e.declared < 0 ? 'a malformed packet length' : `a packet of ${e.declared} bytes (type ${e.type})`;
        once(`size ${address(conn)} ${e.authenticated}`, () => `MQTT client from ${address(conn)} ${e.authenticated ? `(${describe(byConnection.get(conn)?.who ?? { kind: 'home-assistant' })})` : 'before logging in'} announced ${what}; the limit is ${e.limit}: disconnected`);
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
    disconnect(username) {
      let n = 0;
      for (const client of Object.values(clients())) {
        if (!client) continue;
        if (sessions.get(client)?.username !== username) continue;
        // Revoked: its last will ("offline", retained) would bring the removed worker back to the list.
        (client as unknown as { will: unknown }).will = null;
        client.close();
        n++;
      }
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        broker.close(() => server.close(() => resolve()));
      }),
  };
}
