import type { Device, Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { api, dvdImage, insertDisc, sleep, startAllInOne, stopAll, waitFor, waitForStatus, world, type Job } from './harness.js';

interface LogEntry { source: string; level: string; message: string; job_id: string | null }

describe('all-in-one process (npm start)', () => {
  after(stopAll);

  it('rips a disc end to end and keeps the local agent\'s log lines in GET /logs', async () => {
    const w = world();
    const c = await startAllInOne(w, 'home');
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' })).status, 200);
    insertDisc(c.driveDir, dvdImage('HOME_MOVIE', [6]));
    const device = 'home-drive-home';
    await waitFor('the disc', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device && d.disc), 30_000);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    await waitForStatus(c.url, created.body.id, ['completed']);
    const logs = (await api<LogEntry[]>(c.url, 'GET', '/logs?limit=500')).body;
    assert.ok(logs.some((l) => l.source === 'agent' && /drive drive-home: disc present at start|drive drive-home: disc inserted: "Home Movie"/.test(l.message)), logs.map((l) => `${l.source}: ${l.message}`).join('\n'));
    assert.ok(logs.some((l) => l.source === 'agent' && l.job_id === created.body.id && /accepted worker.tasks.rip_disc/.test(l.message)));
    assert.ok(logs.some((l) => l.source === 'dispatcher' && l.job_id === created.body.id && /^finished: 1 file\(s\)/.test(l.message)));
    // Coordinator and local agent reach the embedded broker in memory, not over a loopback socket.
    assert.ok(logs.some((l) => l.source === 'dispatcher' && /^connected to MQTT broker \S+ in-process$/.test(l.message)), 'the coordinator\'s client is in-process');
    assert.ok(logs.some((l) => l.source === 'agent' && /^connected to MQTT broker \S+ in-process \(session present: (true|false)\)$/.test(l.message)), 'the local agent is in-process');

    // The local agent's identity is this process's own: the API neither re-issues nor removes it.
    const node = (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'home')?.node;
    assert.ok(node?.startsWith('home@'), node);
    for (const [method, p] of [['POST', '/workers/home/credentials'], ['POST', `/workers/${node}/credentials`], ['DELETE', '/workers/home'], ['DELETE', `/workers/${node}`]] as const) {
      const r = await api(c.url, method, p);
      assert.equal(r.status, 409, `${method} ${p}: ${r.text}`);
      assert.equal(r.text.trimEnd(), `the worker ${node} is the local agent of this process: its credentials are issued at every start and cannot be replaced or removed through the API`);
    }
    await sleep(1500);
    const again = (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.node === node);
    assert.equal(again?.online, true);
    assert.ok(!c.proc.lines.some((l) => /\[agent\] MQTT broker .* unreachable/.test(l)), 'the local agent kept its connection');
  });
});
