import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { CONNECT_LIMIT_BYTES, guardPacketSizes, type PacketLimitExceeded } from '../../../../coordinator/mqtt/packet-guard.js';
import { COORDINATOR_USERNAME, hashPassword, passwordMatches } from '../../../../coordinator/mqtt/credentials.js';
import { Logger } from '../../../../shared/log.js';
import { topics } from '../../../../shared/protocol.js';
import { startTestBroker } from '../../../fixtures/mqtt-broker-fixture.js';

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
    assert.equal(await code('old@host', pw), 0);
    assert.equal(await code('old@host', 'unit-secret'), 4, 'the secret no longer works for a node with own credentials');
    assert.equal(await code('a/b', 'unit-secret'), 4, 'no topic characters in a legacy user name');
    const again = await t.credentials.issue('old@host', 'agent');
    assert.equal(await code('old@host', pw), 4, 'a replaced password is refused');
    assert.equal(await code('old@host', again), 0);
    t.credentials.revoke('old@host');
    assert.equal(await code('old@host', again), 4, 'a revoked credential is refused');
  });

  it('disconnects every session of a revoked user', async () => {
    const pw = await t.credentials.issue('gone@host', 'agent');
    const c = await mqtt.connectAsync(t.broker.url, { username: 'gone@host', password: pw, reconnectPeriod: 0 });
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
      const agent = await mqtt.connectAsync(t.broker.url, { username: 'box@host', password: pw, reconnectPeriod: 0 });
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
