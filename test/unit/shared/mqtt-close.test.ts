import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { Aedes, type PublishPacket } from 'aedes';
import { connectMqtt, type MqttClient } from '../../../shared/mqtt-client.js';
import { closeWithLastWord } from '../../../shared/mqtt-close.js';

/** An aedes broker on a free loopback port; `takeRetained` false: it never acknowledges a retained publish (a frozen or dying broker). */
async function broker(takeRetained: boolean): Promise<{ url: string; retained: PublishPacket[]; wills: string[]; disconnects: string[]; close(): Promise<void> }> {
  const aedes = await Aedes.createBroker();
  const retained: PublishPacket[] = [];
  const wills: string[] = [];
  const disconnects: string[] = [];
  aedes.authorizePublish = (_client, packet, done) => {
    if (packet.retain && !takeRetained) return; // no answer: no PUBACK ever
    if (packet.retain) retained.push(packet);
    done(null);
  };
  aedes.on('clientDisconnect', (c) => disconnects.push(c.id));
  aedes.on('publish', (packet) => {
    if (packet.topic === 'test/will') wills.push(packet.payload.toString());
  });
  const server = net.createServer(aedes.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    retained,
    wills,
    disconnects,
    close: () => new Promise<void>((resolve) => aedes.close(() => server.close(() => resolve()))),
  };
}

function connected(url: string): Promise<MqttClient> {
  const client = connectMqtt(url, { clientId: `close-test-${Math.random()}`, reconnectPeriod: 200, will: { topic: 'test/will', payload: Buffer.from('offline'), qos: 1, retain: false } });
  return new Promise((resolve) => client.once('connect', () => resolve(client)));
}

describe('closeWithLastWord', () => {
  const brokers: { close(): Promise<void> }[] = [];
  after(async () => Promise.all(brokers.map((b) => b.close())));

  it('a broker that takes the word gets it retained and a clean disconnect (no will)', async () => {
    const b = await broker(true);
    brokers.push(b);
    const client = await connected(b.url);
    await closeWithLastWord(client, { topic: 'test/status', payload: '{"state":"offline"}' }, 2000);
    assert.equal(client.disconnected, true);
    assert.deepEqual(b.retained.map((p) => [p.topic, p.payload.toString()]), [['test/status', '{"state":"offline"}']]);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(b.disconnects.length, 1);
    assert.deepEqual(b.wills, [], 'a clean DISCONNECT sends no will');
  });

  it('a broker that never acknowledges lets the client go after the wait, and its will says offline', async () => {
    const b = await broker(false);
    brokers.push(b);
    const client = await connected(b.url);
    const t0 = Date.now();
    await closeWithLastWord(client, { topic: 'test/status', payload: '{"state":"offline"}' }, 300);
    const took = Date.now() - t0;
    assert.ok(took >= 250 && took < 1500, `closed after ${took} ms`);
    assert.equal(client.disconnected, true);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(b.wills, ['offline'], 'the dropped connection makes the broker publish the will');
    assert.equal(b.retained.length, 0);
  });

  it('a broker that went away: no word is tried, the client stops reconnecting and closes', async () => {
    const b = await broker(true);
    const client = await connected(b.url);
    await b.close();
    await new Promise<void>((resolve) => client.once('offline', () => resolve()));
    const t0 = Date.now();
    await closeWithLastWord(client, { topic: 'test/status', payload: 'x' }, 2000);
    assert.ok(Date.now() - t0 < 1000);
    assert.equal(client.disconnected, true);
    let reconnects = 0;
    client.on('reconnect', () => reconnects++);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(reconnects, 0);
  });
});
