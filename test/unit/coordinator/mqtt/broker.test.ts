import assert from 'node:assert/strict';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { CONNECT_LIMIT_BYTES, guardPacketSizes, type PacketLimitExceeded } from '../../../../coordinator/mqtt/packet-guard.js';
import { COORDINATOR_USERNAME, hashPassword, passwordMatches } from '../../../../coordinator/mqtt/credentials.js';
import { addressKey } from '../../../../coordinator/mqtt/login-guard.js';
import { Logger } from '../../../../shared/log.js';
import { linkConnectOptions, topics } from '../../../../shared/protocol.js';
import { startTestBroker } from '../../../fixtures/mqtt-broker-fixture.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../../../coordinator/mqtt/broker.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { MqttCredentials } from '../../../../coordinator/mqtt/credentials.js';
import { openDatabase, type Db } from '../../../../shared/sqlite.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Feeds chunks through the guard the way aedes reads them (read(null) after each write). */
function feed(chunks: Buffer[], limitAfterAuth: () => number | null): { passed: number; exceeded: PacketLimitExceeded | null; destroyed: boolean } {
  const conn = new PassThrough();
  let exceeded: PacketLimitExceeded | null = null;
  guardPacketSizes(conn, limitAfterAuth, (e) => (exceeded = e));
  let passed = 0;
  for (const c of chunks) {
    conn.write(c);
    const got = conn.read() as Buffer | null;
    if (got) passed += got.length;
  }
  return { passed, exceeded, destroyed: conn.destroyed };
}

describe('MQTT packet size guard', () => {
  it('passes packets whose length bytes are split across reads, several in one read', () => {
    const publish = Buffer.concat([Buffer.from([0x32, 0x80, 0x01]), Buffer.alloc(128)]); // remaining length 128 in two bytes
    const ping = Buffer.from([0xc0, 0x00]);
    const all = Buffer.concat([publish, ping, publish]);
    const r = feed([all.subarray(0, 2), all.subarray(2, 50), all.subarray(50)], () => 1024);
    assert.deepEqual(r, { passed: all.length, exceeded: null, destroyed: false });
  });

  it('cuts a CONNECT announcing more than the limit before login, at the header', () => {
    const header = Buffer.from([0x10, 0xff, 0xff, 0xff, 0x77]); // 250,000,000-ish remaining length
    const r = feed([header.subarray(0, 3), header.subarray(3)], () => null);
    assert.equal(r.destroyed, true);
    assert.deepEqual(r.exceeded, { declared: 0x7f + 0x7f * 128 + 0x7f * 128 ** 2 + 0x77 * 128 ** 3, limit: CONNECT_LIMIT_BYTES, type: 1, authenticated: false });
  });

  it('cuts a length of more than 4 bytes (malformed) and a publish over the limit after login', () => {
    assert.equal(feed([Buffer.from([0x30, 0x80, 0x80, 0x80, 0x80, 0x01])], () => 1024).exceeded?.declared, -1);
    const r = feed([Buffer.from([0x30, 0x81, 0x08])], () => 1024); // 1025 bytes
    assert.deepEqual(r.exceeded, { declared: 1025, limit: 1024, type: 3, authenticated: true });
  });
});

describe('MQTT credentials in the embedded broker', () => {
  const quiet = new Logger('test', true);
  let t: Awaited<ReturnType<typeof startTestBroker>>;
  before(async () => {
    t = await startTestBroker('unit-secret', quiet);
  });
  after(() => t.close());

  const code = async (username: string, password: string, clientId = `c-${Math.random()}`): Promise<number> => {
    try {
      const c = await mqtt.connectAsync(t.broker.url, { username, password, clientId, reconnectPeriod: 0, connectTimeout: 3000 });
      await c.endAsync();
      return 0;
    } catch (err) {
      return Number((err as { code?: number }).code ?? -1);
    }
  };

  it('hashes with scrypt and checks in constant time', async () => {
    const hash = await hashPassword('pw');
    assert.match(hash, /^scrypt\$16384\$8\$1\$/);
    assert.equal(await passwordMatches(hash, Buffer.from('pw')), true);
    assert.equal(await passwordMatches(hash, Buffer.from('pW')), false);
  });

  it('admits the coordinator with the secret, a worker with its own password, and a legacy worker with the secret until it has own credentials', async () => {
    assert.equal(await code(COORDINATOR_USERNAME, 'unit-secret'), 0);
    assert.equal(await code(COORDINATOR_USERNAME, 'wrong'), 4);
    assert.equal(await code('old@host', 'unit-secret'), 0, 'legacy: node name and the broker secret');
    const pw = await t.credentials.issue('old@host', 'agent');
    const id = 'ripwerk-agent-old@host';
    assert.equal(await code('old@host', pw, id), 0);
    assert.equal(await code('old@host', 'unit-secret'), 4, 'the secret no longer works for a node with own credentials');
    assert.equal(await code('a/b', 'unit-secret'), 4, 'no topic characters in a legacy user name');
    const again = await t.credentials.issue('old@host', 'agent');
    assert.equal(await code('old@host', pw, id), 4, 'a replaced password is refused');
    assert.equal(await code('old@host', again, id), 0);
    t.credentials.revoke('old@host');
    assert.equal(await code('old@host', again, id), 4, 'a revoked credential is refused');
  });

  it('disconnects every session of a revoked user', async () => {
    const pw = await t.credentials.issue('gone@host', 'agent');
    const c = await mqtt.connectAsync(t.broker.url, { username: 'gone@host', password: pw, clientId: 'ripwerk-agent-gone@host', reconnectPeriod: 0 });
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    assert.equal(t.broker.disconnect('gone@host'), 1);
    await closed;
    c.end(true);
  });
});

describe('the coordinator\'s in-process connection to the embedded broker', () => {
  const quiet = new Logger('test', true);

  it('logs in like a TCP client, exchanges QoS 1 messages both ways with a TCP client, and is refused a wrong password', async () => {
    const t = await startTestBroker('unit-secret', quiet);
    const clients: mqtt.MqttClient[] = [];
    try {
      const inner = new mqtt.MqttClient(() => t.broker.connectInProcess(), { username: COORDINATOR_USERNAME, password: 'unit-secret', clientId: 'coord-in-process', reconnectPeriod: 0, protocolVersion: 4 });
      clients.push(inner);
      await new Promise<void>((resolve, reject) => {
        inner.once('connect', () => resolve());
        inner.once('error', reject);
      });
      const pw = await t.credentials.issue('box@host', 'agent');
      const agent = await mqtt.connectAsync(t.broker.url, { username: 'box@host', password: pw, clientId: 'ripwerk-agent-box@host', reconnectPeriod: 0 });
      clients.push(agent);
      await inner.subscribeAsync(topics.eventAll, { qos: 1 });
      await agent.subscribeAsync(topics.command('box@host'), { qos: 1 });
      const got: string[] = [];
      const innerGot = new Promise<void>((resolve) => inner.on('message', (topic, payload) => (got.push(`${topic} ${payload.toString()}`), got.length === 3 && resolve())));
      for (let i = 0; i < 3; i++) await agent.publishAsync(topics.event('box@host'), `e${i}`, { qos: 1 });
      await innerGot;
      assert.deepEqual(got, [0, 1, 2].map((i) => `${topics.event('box@host')} e${i}`), 'in order, each once');
      const command = new Promise<string>((resolve) => agent.once('message', (_t, payload) => resolve(payload.toString())));
      await inner.publishAsync(topics.command('box@host'), 'go', { qos: 1 });
      assert.equal(await command, 'go');

      const wrong = new mqtt.MqttClient(() => t.broker.connectInProcess(), { username: COORDINATOR_USERNAME, password: 'nope', clientId: 'coord-wrong', reconnectPeriod: 0, protocolVersion: 4 });
      clients.push(wrong);
      const refused = await new Promise<number>((resolve) => wrong.once('error', (err) => resolve(Number((err as { code?: number }).code))));
      assert.equal(refused, 4);
    } finally {
      for (const c of clients) c.end(true);
      await t.close();
    }
  });

  it('drops the connection when the broker closes, and a closed broker takes no new one', async () => {
    const t = await startTestBroker('unit-secret', quiet);
    const inner = new mqtt.MqttClient(() => t.broker.connectInProcess(), { username: COORDINATOR_USERNAME, password: 'unit-secret', clientId: 'coord-close', reconnectPeriod: 0, protocolVersion: 4 });
    try {
      await new Promise<void>((resolve) => inner.once('connect', () => resolve()));
      const closed = new Promise<void>((resolve) => inner.once('close', () => resolve()));
      await t.close();
      await closed;
      assert.equal(inner.connected, false);
      const late = t.broker.connectInProcess();
      await new Promise<void>((resolve) => late.once('close', () => resolve()));
      assert.equal(late.destroyed, true);
    } finally {
      inner.end(true);
    }
  });
});

/** A raw connection that sends `bytes` and resolves with the CONNACK code, or -1 when it is closed without one, and how long that took. */
function rawLogin(port: number, bytes: Buffer, from = '127.0.0.1', waitMs = 3000): Promise<{ code: number; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => finish(-2), waitMs);
    function finish(code: number): void {
      clearTimeout(timer);
      socket.destroy();
      resolve({ code, ms: Date.now() - started });
    }
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 4 && got[0] === 0x20) finish(got[3]!);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(-1));
  });
}

/** An MQTT 3.1.1 CONNECT (clean session, keepalive 30 s), with user name and password when given. */
function connectBytes(clientId: string, username?: string, password?: string): Buffer {
  const str = (v: string): Buffer => Buffer.concat([Buffer.from([Buffer.byteLength(v) >> 8, Buffer.byteLength(v) & 0xff]), Buffer.from(v)]);
  const flags = 0x02 | (username !== undefined ? 0x80 : 0) | (password !== undefined ? 0x40 : 0);
  const body = Buffer.concat([str('MQTT'), Buffer.from([4, flags, 0, 30]), str(clientId), ...(username !== undefined ? [str(username)] : []), ...(password !== undefined ? [str(password)] : [])]);
  return Buffer.concat([Buffer.from([0x10, body.length]), body]);
}

function recordingLog(): { log: Logger; lines: string[] } {
  const log = new Logger('broker', true);
  const lines: string[] = [];
  log.addSink((e) => lines.push(e.message));
  return { log, lines };
}

describe('the embedded broker before login', () => {
  it('sums up refused logins per address and window: one line at the first, one summary with the count at the end', async () => {
    const { log, lines } = recordingLog();
    const t = await startTestBroker('unit-secret', log, { limits: { summaryWindowMs: 1500 } });
    try {
      for (let i = 0; i < 30; i++) assert.equal((await rawLogin(t.broker.port, connectBytes(`anon-${i}`))).code, 4);
      for (let i = 0; i < 20; i++) assert.equal((await rawLogin(t.broker.port, connectBytes(`named-${i}`, `user-${i}`, 'guess'))).code, 4);
      const mqttLines = (): string[] => lines.filter((l) => l.startsWith('MQTT'));
      assert.deepEqual(mqttLines(), ['MQTT login from 127.0.0.1 refused: no user name (client anon-0, user -); further refusals from this address are counted and summed up once a minute']);
      for (let i = 0; i < 40 && mqttLines().length < 2; i++) await sleep(100);
      assert.deepEqual(mqttLines().slice(1), ['MQTT logins refused from 127.0.0.1 in the last minute: 49 more (no user name: 29, wrong or unknown credentials: 20)']);
      assert.equal(t.broker.stats().refusedLogins, 50);
    } finally {
      await t.close();
    }
  });

  it('counts an IPv6 address by its /64 network, an IPv4 address by itself', () => {
    assert.equal(addressKey('192.168.1.5'), '192.168.1.5');
    assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:ffff::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
  });

  it('checks passwords a few at once and refuses at once (CONNACK 3) the logins of an address with too many waiting', async () => {
    const t = await startTestBroker('unit-secret', new Logger('test', true), { limits: { passwordChecksAtOnce: 1, passwordChecksWaitingPerAddress: 2 } });
    try {
      const pw = await t.credentials.issue('box', 'agent');
      const guesses = await Promise.all(Array.from({ length: 10 }, (_, i) => rawLogin(t.broker.port, connectBytes(`guess-${i}`, 'box', `wrong-${i}`), '127.0.0.5')));
      const codes = guesses.map((g) => g.code).sort();
      assert.deepEqual(codes, [3, 3, 3, 3, 3, 3, 3, 4, 4, 4], 'one checked, two waiting, seven refused without a check');
      assert.ok(Math.max(...guesses.filter((g) => g.code === 3).map((g) => g.ms)) < 200, 'the refused ones cost no check');
      assert.equal((await rawLogin(t.broker.port, connectBytes('ripwerk-agent-box@h', 'box', pw), '127.0.0.6')).code, 0, 'another address gets its turn');
    } finally {
      await t.close();
    }
  });

  it('cuts a connection that does not finish its CONNECT in time', async () => {
    const t = await startTestBroker('unit-secret', new Logger('test', true), { limits: { connectTimeoutMs: 300 } });
    try {
      const half = connectBytes('slow', COORDINATOR_USERNAME, 'unit-secret');
      const r = await rawLogin(t.broker.port, half.subarray(0, half.length - 5));
      assert.equal(r.code, -1);
      assert.ok(r.ms >= 250 && r.ms < 2000, `cut after ${r.ms} ms`);
      assert.equal(t.broker.stats().cutBeforeLogin.timeout, 1);
    } finally {
      await t.close();
    }
  });

  it('cuts connections over the per-address and the total limit before login, and takes the address again once they are gone', async () => {
    const t = await startTestBroker('unit-secret', new Logger('test', true), { limits: { connectionsPerAddress: 4, connectionsTotal: 6, bytesPerAddress: 1000, bytesTotal: 10_000 } });
    const sockets: net.Socket[] = [];
    try {
      const open = (from: string): Promise<boolean> =>
        new Promise((resolve) => {
          const s = net.connect({ port: t.broker.port, host: '127.0.0.1', localAddress: from });
          sockets.push(s);
          s.on('error', () => undefined);
          s.on('close', () => resolve(false));
          s.on('connect', () => setTimeout(() => resolve(!s.destroyed), 150));
        });
      const first = await Promise.all(Array.from({ length: 6 }, () => open('127.0.0.1')));
      assert.equal(first.filter(Boolean).length, 4, 'four idle connections per address');
      const second = await Promise.all(Array.from({ length: 4 }, () => open('127.0.0.2')));
      assert.equal(second.filter(Boolean).length, 2, 'six in total');
      assert.equal((await rawLogin(t.broker.port, connectBytes('c', COORDINATOR_USERNAME, 'unit-secret'), '127.0.0.3')).code, -1, 'the total is reached');
      for (const s of sockets) s.destroy();
      await sleep(100);
      assert.equal((await rawLogin(t.broker.port, connectBytes('c', COORDINATOR_USERNAME, 'unit-secret'))).code, 0, 'the address is taken again');
      // bytes: a CONNECT announcing 900 bytes passes; two of them from one address are over its 1000 bytes
      const big = (): Buffer => {
        const body = Buffer.alloc(897, 0x61);
        return Buffer.concat([Buffer.from([0x10, 0x84, 0x07]), body]); // announces 900 bytes, sends 897
      };
      const a = net.connect({ port: t.broker.port, host: '127.0.0.1', localAddress: '127.0.0.4' });
      const b = net.connect({ port: t.broker.port, host: '127.0.0.1', localAddress: '127.0.0.4' });
      sockets.push(a, b);
      const closed = (s: net.Socket): Promise<boolean> => new Promise((resolve) => { s.on('error', () => undefined); s.on('close', () => resolve(true)); setTimeout(() => resolve(false), 500); });
      a.write(big());
      await sleep(100);
      b.write(big());
      assert.deepEqual(await Promise.all([closed(a), closed(b)]), [false, true]);
      const stats = t.broker.stats().cutBeforeLogin;
      assert.deepEqual([stats.connectionsPerAddress > 0, stats.connectionsTotal > 0, stats.bytesPerAddress], [true, true, 1]);
    } finally {
      for (const s of sockets) s.destroy();
      await t.close();
    }
  });
});

describe('the embedded broker: who a session and a client id belong to', () => {
  const quiet = new Logger('test', true);

  it('lets a revocation win over logins in flight: none of 100 survives it', async () => {
    const t = await startTestBroker('unit-secret', quiet, { limits: { connectionsPerAddress: 1000, passwordChecksWaitingPerAddress: 1000 } });
    try {
      const pw = await t.credentials.issue('racer', 'agent');
      // One client id per credential (ripwerk-agent-<node>): without the revocation the last one in would stay.
      const clients = Array.from({ length: 100 }, () => mqtt.connect(t.broker.url, { username: 'racer', password: pw, clientId: 'ripwerk-agent-racer@h', reconnectPeriod: 0, connectTimeout: 10_000 }));
      for (const c of clients) c.on('error', () => undefined);
      await sleep(60);
      t.credentials.revoke('racer');
      t.broker.disconnect('racer');
      await sleep(4000);
      const alive = clients.filter((c) => c.connected).length;
      for (const c of clients) c.end(true);
      assert.equal(alive, 0, `${alive} sessions survived the revocation`);
    } finally {
      await t.close();
    }
  });

  it('lets a refused agent or coordinator link try again (linkConnectOptions), so a refusal is not for ever', async () => {
    const t = await startTestBroker('unit-secret', quiet);
    try {
      await t.credentials.issue('late@host', 'agent');
      const options = linkConnectOptions({ clientId: 'ripwerk-agent-late@host', login: { username: 'late@host', password: 'unit-secret' }, clean: false, will: { topic: topics.agentStatus('late@host'), state: { node: 'late@host', state: 'offline' } } });
      const client = mqtt.connect(t.broker.url, { ...options, reconnectPeriod: 100 });
      const refusals: number[] = [];
      client.on('error', (err) => refusals.push(Number((err as { code?: number }).code)));
      try {
        for (let i = 0; i < 30 && refusals.length === 0; i++) await sleep(50);
        assert.equal(refusals[0], 4, 'the secret is refused while the node has own credentials');
        t.credentials.revoke('late@host');
        const connected = await new Promise<boolean>((resolve) => {
          client.once('connect', () => resolve(true));
          setTimeout(() => resolve(client.connected), 3000);
        });
        assert.equal(connected, true, 'it tried again and got in');
      } finally {
        client.end(true);
      }
    } finally {
      await t.close();
    }
  });

  it('takes an agent\'s client id cut to 120 characters as its own', async () => {
    const t = await startTestBroker('unit-secret', quiet);
    try {
      const node = `${'n'.repeat(115)}@host`;
      const pw = await t.credentials.issue(node, 'agent');
      const c = await mqtt.connectAsync(t.broker.url, { username: node, password: pw, clientId: `ripwerk-agent-${node}`.slice(0, 120), reconnectPeriod: 0 });
      await c.endAsync();
    } finally {
      await t.close();
    }
  });

  it('keeps a client id with the credential that had it: no other worker takes its queued commands, connected or not', async () => {
    const t = await startTestBroker('unit-secret', quiet);
    const clients: mqtt.MqttClient[] = [];
    try {
      const sleeperPw = await t.credentials.issue('sleeper', 'agent');
      const malloryPw = await t.credentials.issue('mallory', 'agent');
      const sleeper = await mqtt.connectAsync(t.broker.url, { username: 'sleeper', password: sleeperPw, clientId: 'ripwerk-agent-sleeper@h', clean: false, reconnectPeriod: 0 });
      await sleeper.subscribeAsync(topics.command('sleeper@h'), { qos: 1 });
      await sleeper.endAsync();
      const coordinator = await mqtt.connectAsync(t.broker.url, { username: COORDINATOR_USERNAME, password: 'unit-secret', reconnectPeriod: 0 });
      clients.push(coordinator);
      await coordinator.publishAsync(topics.command('sleeper@h'), 'queued-for-sleeper', { qos: 1 });
      const code = async (username: string, password: string, clientId: string, clean: boolean): Promise<number> => {
        try {
          const c = await mqtt.connectAsync(t.broker.url, { username, password, clientId, clean, reconnectPeriod: 0, connectTimeout: 3000 });
          const got: string[] = [];
          c.on('message', (_t, p) => got.push(p.toString()));
          await sleep(200);
          await c.endAsync();
          assert.deepEqual(got, [], `${username} received ${got.join(', ')}`);
          return 0;
        } catch (err) {
          return Number((err as { code?: number }).code ?? -1);
        }
      };
      assert.equal(await code('mallory', malloryPw, 'ripwerk-agent-sleeper@h', false), 2, 'the fixed client id of another worker');
      assert.equal(await code('mallory', malloryPw, 'ripwerk-agent-sleeper@h', true), 2, 'a clean session would throw the queued command away');
      assert.equal(await code('ripwerk-agent-sleeper@h', 'unit-secret', 'ripwerk-agent-sleeper@h', true), 2, 'a legacy login named like the id');
      assert.equal(await code('sleeper@h', 'unit-secret', 'ripwerk-agent-sleeper@h', true), 4, 'a legacy login as the node its credential is bound to');
      // an id of no fixed form belongs to the first user that kept a session under it (legacy logins; a worker credential uses its fixed id only)
      const own = await mqtt.connectAsync(t.broker.url, { username: 'a@h', password: 'unit-secret', clientId: 'box-7', clean: false, reconnectPeriod: 0 });
      await own.endAsync();
      assert.equal(await code('b@h', 'unit-secret', 'box-7', false), 2);
      assert.equal(await code('mallory', malloryPw, 'box-7', false), 2);
      const back = await mqtt.connectAsync(t.broker.url, { username: 'sleeper', password: sleeperPw, clientId: 'ripwerk-agent-sleeper@h', clean: false, reconnectPeriod: 0 });
      clients.push(back);
      const queued = await new Promise<string>((resolve) => back.once('message', (_t, p) => resolve(p.toString())));
      assert.equal(queued, 'queued-for-sleeper', 'the real worker gets its command');
    } finally {
      for (const c of clients) c.end(true);
      await t.close();
    }
  });
});

describe('a worker credential issued as its worker name acts as node <name>@<host> (issue 38)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-bind-'));
  let db: Db;
  let credentials: MqttCredentials;
  let broker: EmbeddedBroker;
  const { log, lines } = recordingLog();
  const binds: string[] = [];
  const clients: mqtt.MqttClient[] = [];
  const start = async (): Promise<void> => {
    db = openDatabase(path.join(dir, 'coordinator.sqlite'), coordinatorMigrations);
    credentials = new MqttCredentials(db);
    broker = await startEmbeddedBroker({ port: 0, secret: 'unit-secret', credentials, maxPacketBytes: 1024 * 1024, coordinatorMaxPacketBytes: 1024 * 1024, haPrefix: () => 'homeassistant', onBind: (u, n) => binds.push(`${u} ${n}`) }, log);
  };
  const stop = async (): Promise<void> => {
    for (const c of clients.splice(0)) c.end(true);
    await broker.close();
    db.close();
  };
  before(start);
  after(async () => {
    await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const login = async (username: string, password: string, clientId: string): Promise<mqtt.MqttClient | number> => {
    try {
      const c = await mqtt.connectAsync(broker.url, { username, password, clientId, clean: false, reconnectPeriod: 0, connectTimeout: 3000 });
      clients.push(c);
      return c;
    } catch (err) {
      return Number((err as { code?: number }).code ?? -1);
    }
  };
  const code = async (username: string, password: string, clientId: string): Promise<number> => {
    const c = await login(username, password, clientId);
    if (typeof c === 'number') return c;
    await c.endAsync();
    return 0;
  };
  /** The SUBACK code of one subscription (128: refused; the client library reports it as an error). */
  const granted = (c: mqtt.MqttClient, filter: string): Promise<number> => new Promise((resolve) => c.subscribe(filter, { qos: 1 }, (err, g) => resolve(err ? 128 : (g?.[0]?.qos ?? -1))));

  it('logs in with the client id ripwerk-agent-keller@nas, gets exactly the topics of that node with the filters the agent uses, and is bound to it', async () => {
    const pw = await credentials.issue('keller', 'agent');
    const agent = await login('keller', pw, 'ripwerk-agent-keller@nas');
    assert.ok(typeof agent !== 'number', `refused with ${String(agent)}`);
    assert.equal(credentials.boundNode('keller'), 'keller@nas');
    assert.deepEqual(binds, ['keller keller@nas']);
    assert.ok(lines.includes('MQTT credential keller bound to node keller@nas (its first login)'), lines.join('\n'));
    // the agent's own subscriptions (agent/mqtt/link.ts)
    for (const filter of [topics.command('keller@nas'), topics.ack('keller@nas'), 'ripwerk/keys/+', topics.coordinatorStatus]) assert.equal(await granted(agent, filter), 1, filter);
    for (const filter of ['#', 'ripwerk/#', 'ripwerk/cmd/+', topics.command('keller'), topics.command('keller@pc'), topics.command('mallory@nas')]) assert.equal(await granted(agent, filter), 128, filter);
    await agent.publishAsync(topics.agentStatus('keller@nas'), '{}', { qos: 1 });
    await agent.publishAsync(topics.event('keller@nas'), '{}', { qos: 1 });
    assert.equal(agent.connected, true);
    const cut = new Promise<void>((resolve) => agent.once('close', () => resolve()));
    agent.publish(topics.agentStatus('keller'), '{}', { qos: 1 });
    await cut;
  });

  it("gets nothing of other nodes with a subscription to '#' (mosquitto_sub -t '#' with the worker's credential)", async () => {
    const pw = await credentials.issue('snoop', 'agent');
    const snoop = await login('snoop', pw, 'ripwerk-agent-snoop@nas');
    assert.ok(typeof snoop !== 'number');
    const got: string[] = [];
    snoop.on('message', (topic) => got.push(topic));
    assert.equal(await granted(snoop, '#'), 128);
    const coordinator = await login(COORDINATOR_USERNAME, 'unit-secret', 'coord-1');
    assert.ok(typeof coordinator !== 'number');
    await coordinator.publishAsync(topics.command('keller@nas'), 'for keller', { qos: 1 });
    await coordinator.publishAsync(topics.agentStatus('keller@nas'), 'keller status', { qos: 1, retain: true });
    await coordinator.publishAsync(topics.command('snoop'), 'bare node', { qos: 1 });
    await sleep(300);
    assert.deepEqual(got, []);
    await coordinator.publishAsync(topics.agentStatus('keller@nas'), '', { qos: 1, retain: true });
  });

  it('refuses the same credential as another node (another host or name), and any other client id, with the reason in the log; also after a restart', async () => {
    const pw = await credentials.issue('mover', 'agent');
    assert.equal(await code('mover', pw, 'ripwerk-agent-mover@nas'), 0);
    assert.equal(await code('mover', pw, 'ripwerk-agent-mover@pc'), 2, 'another host');
    assert.ok(lines.includes('MQTT login of worker credential mover refused: the credential mover is bound to node mover@nas since its first login; a login as mover@pc (another host or name) needs the credential issued anew: POST /api/workers/mover/credentials'), lines.filter((l) => l.includes('mover')).join('\n'));
    assert.equal(await code('mover', pw, 'ripwerk-agent-mallory@nas'), 2, 'another worker name');
    assert.equal(await code('mover', pw, 'ripwerk-agent-mover'), 2, 'the bare node once bound');
    assert.equal(await code('mover', pw, 'debug-1'), 2, 'no other client id');
    assert.equal(await code('mover', pw, 'ripwerk-agent-mover@a/b'), 2, 'no topic levels in the host');
    await stop();
    await start();
    assert.equal(await code('mover', pw, 'ripwerk-agent-mover@pc'), 2, 'the binding survives a restart');
    assert.equal(await code('mover', pw, 'ripwerk-agent-mover@nas'), 0);
    const again = await credentials.issue('mover', 'agent');
    assert.equal(credentials.boundNode('mover'), null, 'issuing anew clears the binding');
    assert.equal(credentials.credentialFor('mover@nas'), 'mover', 'an unbound credential of the worker name may act as its node (DELETE /workers finds it)');
    assert.equal(credentials.credentialFor('other@nas'), null);
    assert.equal(await code('mover', again, 'ripwerk-agent-mover@pc'), 0);
    assert.equal(credentials.boundNode('mover'), 'mover@pc');
    assert.equal(await code('mover', again, 'ripwerk-agent-mover@nas'), 2);
    assert.deepEqual([credentials.credentialFor('mover@pc'), credentials.credentialFor('mover@nas')], ['mover', null], 'once bound, only for its node');
  });

  it('lets a credential that is a whole node act as exactly that node, and gives a node one credential only', async () => {
    const pw = await credentials.issue('box@nas', 'agent');
    assert.equal(await code('box@nas', pw, 'ripwerk-agent-box@pc'), 2);
    assert.equal(await code('box@nas', pw, 'ripwerk-agent-box@nas'), 0);
    const bare = await credentials.issue('box', 'agent');
    assert.equal(await code('box', bare, 'ripwerk-agent-box@nas'), 2, 'node box@nas has its own credential box@nas');
    assert.equal(credentials.boundNode('box'), null);
    assert.equal(await code('box@nas', 'unit-secret', 'ripwerk-agent-box@nas'), 4, 'no legacy login as a node with own credentials');
  });

  it("keeps an agent from before the update working on its bare node, binds at the updated agent's first login and cuts the old session", async () => {
    const pw = await credentials.issue('old', 'agent');
    const before = await login('old', pw, 'ripwerk-agent-old');
    assert.ok(typeof before !== 'number', 'the bare node of an agent before the update');
    assert.equal(await granted(before, topics.command('old')), 1);
    assert.equal(credentials.boundNode('old'), null, 'the bare node binds nothing');
    const cut = new Promise<void>((resolve) => before.once('close', () => resolve()));
    const updated = await login('old', pw, 'ripwerk-agent-old@nas');
    assert.ok(typeof updated !== 'number');
    await cut;
    assert.ok(binds.includes('old old@nas'));
    assert.equal(await code('old', pw, 'ripwerk-agent-old'), 2, 'the bare node is refused once bound');
    assert.equal(broker.sessionsOf('old@nas').count, 1);
    assert.equal(broker.sessionsOf('old').count, 1, 'by user name too');
    assert.equal(broker.disconnect('old@nas'), 1, 'cut by its node');
  });
});
