import type { Device } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { api, dvdImage, insertDisc, startAgent, startCoordinator, stopAll, waitFor, world, type AgentHandle, type CoordinatorHandle, type World } from './harness.js';

/** A Home Assistant stand-in on the MQTT side: subscribes like HA does and keeps the last payload per topic. */
interface Login {
  username: string;
  password: string;
}

async function subscriber(url: string, login: Login, filters: string[]): Promise<{ client: MqttClient; last: Map<string, { payload: string; retain: boolean }> }> {
  const last = new Map<string, { payload: string; retain: boolean }>();
  const client = mqtt.connect(url, { ...login, reconnectPeriod: 0 });
  client.on('message', (topic, payload, packet) => last.set(topic, { payload: payload.toString('utf8'), retain: packet.retain }));
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  await client.subscribeAsync(filters, { qos: 1 });
  return { client, last };
}

describe('Home Assistant MQTT discovery', () => {
  let w: World;
  let c: CoordinatorHandle;
  let agent: AgentHandle;
  let ha: Awaited<ReturnType<typeof subscriber>>;
  let login: Login;
  const configs = () => [...ha.last.entries()].filter(([t, m]) => t.startsWith('homeassistant/') && t.endsWith('/config') && m.payload !== '');

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    agent = await startAgent(w, c.mqttUrl, 'wohnzimmer');
    await waitFor('the drive', async () => (await api<unknown[]>(c.url, 'GET', '/devices')).body.length === 1);
    // Home Assistant gets its own credential, limited to its topics (not the broker secret).
    const issued = await api<Login & { rights: { publish: string[]; subscribe: string[] } }>(c.url, 'POST', '/home-assistant/credentials');
    assert.equal(issued.status, 201);
    assert.equal(issued.body.username, 'homeassistant');
    assert.ok(issued.body.password.length >= 24);
    assert.deepEqual(issued.body.rights, { publish: ['ripwerk/ha/+/+/eject', 'homeassistant/status'], subscribe: ['ripwerk/ha/#', 'ripwerk/agent/+/status', 'homeassistant/#'] });
    login = { username: issued.body.username, password: issued.body.password };
    ha = await subscriber(c.mqttUrl, login, ['homeassistant/#', 'ripwerk/ha/#']);
  });
  after(async () => {
    await ha?.client.endAsync();
    await stopAll();
  });

  it('publishes nothing while the setting is off (the default)', async () => {
    const settings = await api<Record<string, unknown>>(c.url, 'GET', '/settings');
    assert.equal(settings.body.homeAssistantDiscovery, false);
    await new Promise((r) => setTimeout(r, 3500));
    assert.equal(configs().length, 0);
  });

  it('publishes retained configs for the agent, its drive and the box-set session when turned on, and the drive state with the disc', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { homeAssistantPrefix: 'bad prefix' })).status, 400);
    assert.equal((await api(c.url, 'PUT', '/settings', { homeAssistantDiscovery: true, autoEject: false })).status, 200);
    // Six of the agent and its drive, two of the coordinator's box-set session (sensor and event, issue 40).
    await waitFor('eight configs', async () => configs().length === 8 || undefined, 15_000);
    const dev = (await api<Device[]>(c.url, 'GET', '/devices')).body[0];
    const node = dev.node.replace(/[^a-zA-Z0-9_-]/g, '_');
    const drive = dev.drive.replace(/[^a-zA-Z0-9_-]/g, '_');
    const topics = configs().map(([t]) => t).sort();
    assert.deepEqual(topics, [
      `homeassistant/binary_sensor/ripwerk_${node}/online/config`,
      `homeassistant/button/ripwerk_${node}/${drive}_eject/config`,
      'homeassistant/event/ripwerk_coordinator/next_disc/config',
      'homeassistant/sensor/ripwerk_coordinator/session/config',
      `homeassistant/sensor/ripwerk_${node}/${drive}_disc_title/config`,
      `homeassistant/sensor/ripwerk_${node}/${drive}_job_eta/config`,
      `homeassistant/sensor/ripwerk_${node}/${drive}_job_progress/config`,
      `homeassistant/sensor/ripwerk_${node}/${drive}_job_status/config`,
    ].sort());
    for (const [, m] of configs()) {
      const p = JSON.parse(m.payload) as Record<string, unknown>;
      assert.ok(p.unique_id && p.device && p.name);
      assert.equal('object_id' in p, false, 'object_id is ignored from Home Assistant 2026.4');
      assert.match(String(p.default_entity_id), /^(binary_sensor|sensor|button|event)\.ripwerk_[a-z0-9_]+$/);
    }
    // A late subscriber (Home Assistant restarting) gets them as retained messages.
    const late = await subscriber(c.mqttUrl, login, ['homeassistant/#']);
    await waitFor('retained configs', async () => [...late.last.values()].filter((m) => m.retain && m.payload).length === 8 || undefined, 5000);
    await late.client.endAsync();

    insertDisc(agent.driveDir, dvdImage('HA_MOVIE', [4]));
    const stateTopic = `ripwerk/ha/${node}/${drive}/state`;
    const state = await waitFor('the disc title in the state', async () => {
      const m = ha.last.get(stateTopic);
      const s = m ? (JSON.parse(m.payload) as { disc_title: string | null }) : null;
      return s?.disc_title === 'Ha Movie' ? s : undefined;
    }, 20_000);
    assert.deepEqual(state, { disc_title: 'Ha Movie', disc_year: null, disc_type: 'dvd', job_id: null, job_status: null, progress: 0, eta: null });
  });

  it('ejects the disc when the button is pressed', async () => {
    const button = configs().find(([t]) => t.includes('/button/'))!;
    const { command_topic, payload_press } = JSON.parse(button[1].payload) as { command_topic: string; payload_press: string };
    await ha.client.publishAsync(command_topic, payload_press, { qos: 1 });
    await waitFor('the image ejected', async () => fs.existsSync(path.join(agent.driveDir, 'ejected', 'HA_MOVIE.iso')), 15_000);
    // The line is written once the agent's answer is back, a moment after the image has moved.
    await waitFor('the eject in the log', async () => (await api<{ message: string }[]>(c.url, 'GET', '/logs?limit=200')).body.some((l) => /Home Assistant ejected wohnzimmer-/.test(l.message)) || undefined, 10_000);
  });

  it('removes every config it published when the setting is turned off', async () => {
    const published = configs().map(([t]) => t);
    assert.equal((await api(c.url, 'PUT', '/settings', { homeAssistantDiscovery: false })).status, 200);
    await waitFor('empty retained payloads', async () => published.every((t) => ha.last.get(t)?.payload === '') || undefined, 15_000);
    const late = await subscriber(c.mqttUrl, login, ['homeassistant/#']);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal([...late.last.values()].filter((m) => m.payload !== '').length, 0, 'no retained config is left on the broker');
    await late.client.endAsync();
  });

  it("keeps Home Assistant's credential to its topics: no commands, no events, no other subscriptions", async () => {
    // mqtt.js reports a SUBACK of 128 (refused) as an error carrying the SUBACK.
    const grant = (filter: string): Promise<number> =>
      new Promise((resolve) => ha.client.subscribe(filter, { qos: 1 }, (err, granted) => resolve(err ? ((err as Error & { packet?: { granted?: number[] } }).packet?.granted?.[0] ?? -1) : (granted?.[0]?.qos ?? -1))));
    assert.deepEqual([await grant('ripwerk/#'), await grant('ripwerk/keys/keystore'), await grant('ripwerk/agent/+/status')], [128, 128, 1]);
    const probe = mqtt.connect(c.mqttUrl, { ...login, reconnectPeriod: 0 });
    await new Promise<void>((resolve) => probe.once('connect', () => resolve()));
    const closed = new Promise<void>((resolve) => probe.once('close', () => resolve()));
    probe.publish(`ripwerk/cmd/${agent.node}`, JSON.stringify({ id: 'x', task: 'worker.tasks.eject', args: { drive: 'sr0' } }), { qos: 1 });
    await closed; // a publish outside its rights ends the connection (MQTT-3.3.5-2)
    probe.end(true);
    const logs = await api<{ message: string }[]>(c.url, 'GET', '/logs?limit=300');
    assert.ok(logs.body.some((l) => l.message === `MQTT Home Assistant may not publish to ripwerk/cmd/${agent.node}: disconnected`));
    assert.ok(!JSON.stringify(logs.body).includes(login.password), 'the password is never logged');
  });
});
