import type { Device, Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import { api, startAgent, startCoordinator, stopAll, waitFor, world, type CoordinatorHandle, type World } from './harness.js';

/** Connects once (no reconnect); resolves with the CONNACK outcome. */
function tryConnect(url: string, password?: string): Promise<{ ok: boolean; code?: number }> {
  return new Promise((resolve) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000, ...(password === undefined ? {} : { username: 'someone', password }) });
    client.once('connect', () => {
      client.end(true);
      resolve({ ok: true });
    });
    client.once('error', (err: Error & { code?: number }) => {
      client.end(true);
      resolve({ ok: false, code: err.code });
    });
  });
}


describe('capabilities: the background ping, and one ping now when the stored one is too old', () => {
  let w: World;
  let c: CoordinatorHandle;

  before(async () => {
    w = world();
    // Background pings once an hour: only the synchronous ping can fill last_ping in this test.
    c = await startCoordinator(w, { CAPABILITY_PING_SECONDS: '3600' });
    await startAgent(w, c.mqttUrl, 'dachboden', { drive: false });
  });
  after(() => stopAll());

  it('pings the workers before answering when no ping of the last 30 s is stored', async () => {
    await waitFor('the worker online', async () => (await api<Device[]>(c.url, 'GET', '/devices')).status === 200 && (await api<{ workers_online: number }>(c.url, 'GET', '/health')).body.workers_online === 1);
    const before = await api<{ ping: { alter_sekunden: number | null } }>(c.url, 'GET', '/health/vorraete');
    assert.equal(before.body.ping.alter_sekunden, null, 'no ping answered yet');
    const r = await api<Worker[]>(c.url, 'GET', '/capabilities');
    const worker = r.body.find((x) => x.name === 'dachboden')!;
    assert.equal(worker.online, true);
    assert.notEqual(worker.last_ping, null, 'the synchronous ping was answered before the reply');
    assert.deepEqual(worker.encoders, ['software']);
    const after = await api<{ ping: { alter_sekunden: number; mit_treffer: boolean } }>(c.url, 'GET', '/health/vorraete');
    assert.equal(after.body.ping.mit_treffer, true);
    assert.ok(after.body.ping.alter_sekunden <= 2);
  });
});

describe('the broker secret', () => {
  let w: World;
  let c: CoordinatorHandle;
  before(async () => {
    w = world();
    // No secret in the environment: the coordinator generates one at its first start.
    c = await startCoordinator(w, { RIPWERK_BROKER_SECRET: '' });
  });
  after(() => stopAll());

  it('refuses MQTT clients without the secret and lets the agents with it in', async () => {
    const file = path.join(w.root, 'coordinator-data', 'broker-secret');
    const secret = fs.readFileSync(file, 'utf8').trim();
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.ok(secret.length >= 24);
    assert.deepEqual(await tryConnect(c.mqttUrl), { ok: false, code: 4 });
    assert.deepEqual(await tryConnect(c.mqttUrl, 'guess'), { ok: false, code: 4 });
    assert.deepEqual(await tryConnect(c.mqttUrl, secret), { ok: true });
    await startAgent({ ...w, secret }, c.mqttUrl, 'keller', { drive: false });
    await waitFor('the agent online', async () => (await api<{ workers_online: number }>(c.url, 'GET', '/health')).body.workers_online === 1);
    const logs = await api<{ message: string }[]>(c.url, 'GET', '/logs?limit=500');
    assert.ok(logs.body.some((l) => /refused: (no user name|wrong or unknown credentials)/.test(l.message)));
    assert.ok(logs.body.some((l) => /broker secret generated into .*broker-secret/.test(l.message)));
    assert.ok(!JSON.stringify(logs.body).includes(secret), 'the secret is never logged');
  });

  it('keeps the generated secret across a restart', async () => {
    const file = path.join(w.root, 'coordinator-data', 'broker-secret');
    const before = fs.readFileSync(file, 'utf8');
    await c.proc.kill();
    c = await startCoordinator(w, { RIPWERK_BROKER_SECRET: '' }, { port: c.port, mqttPort: c.mqttPort });
    assert.equal(fs.readFileSync(file, 'utf8'), before);
    assert.deepEqual(await tryConnect(c.mqttUrl, before.trim()), { ok: true });
  });
});
