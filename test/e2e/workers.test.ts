import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startAgent, startCoordinator, stopAll, waitFor, world, type CoordinatorHandle, type World } from './harness.js';

interface WorkerJson { name: string; online: boolean; last_ping: string | null; encoders: string[] }

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
    await waitFor('the worker online', async () => (await api<{ node: string; state: string }[]>(c.url, 'GET', '/devices')).status === 200 && (await api<{ workers_online: number }>(c.url, 'GET', '/health')).body.workers_online === 1);
    const before = await api<{ ping: { alter_sekunden: number | null } }>(c.url, 'GET', '/health/vorraete');
    assert.equal(before.body.ping.alter_sekunden, null, 'no ping answered yet');
    const r = await api<WorkerJson[]>(c.url, 'GET', '/capabilities');
    const worker = r.body.find((x) => x.name === 'dachboden')!;
    assert.equal(worker.online, true);
    assert.notEqual(worker.last_ping, null, 'the synchronous ping was answered before the reply');
    assert.deepEqual(worker.encoders, ['software']);
    const after = await api<{ ping: { alter_sekunden: number; mit_treffer: boolean } }>(c.url, 'GET', '/health/vorraete');
    assert.equal(after.body.ping.mit_treffer, true);
    assert.ok(after.body.ping.alter_sekunden <= 2);
  });
});
