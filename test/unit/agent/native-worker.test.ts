import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { probeCapabilities, startAgent, type RunningAgent } from '../../../agent/agent.js';
import { jsonTaskStoreOpener } from '../../../agent/store/json-task-store.js';
import type { EmbeddedBroker } from '../../../coordinator/mqtt/broker.js';
import { COORDINATOR_USERNAME } from '../../../coordinator/mqtt/credentials.js';
import { startTestBroker } from '../../fixtures/mqtt-broker-fixture.js';
import { ConfigError, nativeDefaultDataDir, readNativeWorkerConfig } from '../../../shared/config.js';
import { Logger } from '../../../shared/log.js';
import { nativeWorkerRefusal } from '../../../shared/native-worker.js';
import { TASKS, topics, type AgentEvent, type Command } from '../../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-native-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function configFile(body: unknown, raw?: string): string {
  const file = path.join(root, `worker-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, raw ?? JSON.stringify(body));
  return file;
}

describe('native worker configuration', () => {
  it('reads worker.json, lets non-empty environment values win, and has no drives whatever DRIVES says', () => {
    const file = configFile({ MQTT_URL: 'mqtt://server:1883', WORKER_NAME: 'buero', RIPWERK_BROKER_SECRET: 'from-file', HANDBRAKE_CLI: '/opt/hb/HandBrakeCLI' });
    const c = readNativeWorkerConfig({ HOME: root, WORKER_NAME: 'arbeitszimmer', RIPWERK_BROKER_SECRET: '', DRIVES: '/dev/sr0', DATA_DIR: path.join(root, 'state') }, file);
    assert.equal(c.native, true);
    assert.equal(c.mqttUrl, 'mqtt://server:1883');
    assert.equal(c.workerName, 'arbeitszimmer', 'the environment wins');
    assert.equal(c.brokerSecret, 'from-file', 'an empty environment value does not hide the file value');
    assert.equal(c.handbrakeCli, '/opt/hb/HandBrakeCLI');
    assert.deepEqual(c.drives, []);
    assert.equal(c.drivesAuto, false);
    assert.equal(c.dataDir, path.join(root, 'state'));
  });

  it('accepts a file written with a byte order mark (PowerShell 5 writes one)', () => {
    const file = configFile(null, '\uFEFF{"MQTT_URL":"mqtt://nas:1883"}');
    assert.equal(readNativeWorkerConfig({ HOME: root }, file).mqttUrl, 'mqtt://nas:1883');
  });

  it('keeps its state in ~/.ripwerk-worker, or %ProgramData%\\Ripwerk on Windows, unless DATA_DIR is set', () => {
    assert.equal(readNativeWorkerConfig({ HOME: root }, null).dataDir, path.join(root, '.ripwerk-worker'));
    assert.equal(nativeDefaultDataDir({ ProgramData: 'D:\\ProgramData' }, 'win32'), 'D:\\ProgramData\\Ripwerk');
    assert.equal(nativeDefaultDataDir({}, 'win32'), 'C:\\ProgramData\\Ripwerk');
  });

  it('refuses a missing file, bad JSON, unknown names and values that are not strings, in plain words', () => {
    const cases: [string, RegExp][] = [
      [path.join(root, 'nope.json'), /cannot be read: it does not exist/],
      [configFile(null, '{"MQTT_URL": '), /is not valid JSON/],
      [configFile(['MQTT_URL']), /must hold one JSON object/],
      [configFile({ DRIVES: '/dev/sr0' }), /names "DRIVES", which a native worker does not know/],
      [configFile({ MQTT_URL: 1883 }), /MQTT_URL must be a string/],
      [configFile({ MQTT_URL: 'not a url' }), /MQTT_URL must be a URL/],
    ];
    for (const [file, reason] of cases) assert.throws(() => readNativeWorkerConfig({ HOME: root }, file), (err: Error) => err instanceof ConfigError && reason.test(err.message), file);
  });
});

describe('native worker capabilities', () => {
  it('reports native, transcode only, no ripper, and probes the encoder alone', async () => {
    const config = readNativeWorkerConfig({ HOME: root, DATA_DIR: path.join(root, 'caps') }, null);
    const { capabilities, ripper } = await probeCapabilities(config);
    assert.equal(ripper, null);
    assert.equal(capabilities.native, true);
    assert.equal(capabilities.transcode_only, true);
    assert.equal(capabilities.rip_backend, 'none');
    assert.deepEqual(Object.keys(capabilities.tools), ['HandBrakeCLI']);
    assert.match(capabilities.tools.HandBrakeCLI ?? '', /HandBrake/);
    assert.deepEqual(capabilities.encoders.includes('software'), true);
  });
});

describe('native worker refusal over MQTT', () => {
  const secret = 'unit-secret-native';
  let broker: EmbeddedBroker;
  let closeBroker: () => Promise<void>;
  let agent: RunningAgent;
  let client: MqttClient;
  const events: AgentEvent[] = [];
  const quiet = new Logger('test', true);

  before(async () => {
    ({ broker, close: closeBroker } = await startTestBroker(secret, quiet));
    const config = readNativeWorkerConfig({ HOME: root, DATA_DIR: path.join(root, 'mqtt-state'), WORKER_NAME: 'nativ', MQTT_URL: broker.url, RIPWERK_BROKER_SECRET: secret }, null);
    client = await mqtt.connectAsync(broker.url, { username: COORDINATOR_USERNAME, password: secret, reconnectPeriod: 0 });
    await client.subscribeAsync(topics.eventAll, { qos: 1 });
    client.on('message', (_t, payload) => events.push(JSON.parse(payload.toString('utf8')) as AgentEvent));
    agent = await startAgent(config, quiet, jsonTaskStoreOpener(() => undefined));
    const deadline = Date.now() + 10_000;
    while (!(await isOnline(agent.node)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  });
  after(async () => {
    await agent?.stop();
    await client?.endAsync();
    await closeBroker?.();
  });

  async function isOnline(node: string): Promise<boolean> {
    return new Promise((resolve) => {
      const probe = mqtt.connect(broker.url, { username: COORDINATOR_USERNAME, clientId: `probe-${Math.random()}`, password: secret, reconnectPeriod: 0 });
      probe.on('connect', () => probe.subscribe(topics.agentStatus(node)));
      probe.on('message', (_t, p) => {
        probe.end(true);
        resolve((JSON.parse(p.toString('utf8')) as { state: string }).state === 'online');
      });
      setTimeout(() => {
        probe.end(true);
        resolve(false);
      }, 500);
    });
  }

  async function answerTo(cmd: Command): Promise<AgentEvent> {
    client.publish(topics.command(agent.node), JSON.stringify(cmd), { qos: 1 });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const hit = events.find((e) => e.command_id === cmd.id);
      if (hit) return hit;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no answer to ${cmd.task}`);
  }

  const refusal = nativeWorkerRefusal('nativ');

  it('answers a rip with "rejected" and the plain reason, and keeps no task for it', async () => {
    const cmd: Command = {
      id: 'rip-on-native',
      task: TASKS.ripDisc,
      job_id: 'job-n',
      args: { drive: 'sr0', titles: [], main_feature_only: false, raw_dir: '/raw/job-n', target_dir: '/media/Filme', title: 'X', year: null, series: null, season: null, transcode: true, keep_original: false, auto_eject: true },
    };
    const answer = await answerTo(cmd);
    assert.equal(answer.type, 'rejected');
    assert.equal(answer.job_id, 'job-n');
    assert.equal(answer.type === 'rejected' ? answer.reason : '', refusal);
    assert.match(refusal, /nativer Worker ohne Laufwerke und nimmt nur Transcode-Aufträge an \(Warteschlange transcode\)/);
    assert.match(refusal, /native worker without drives and takes transcode jobs only/);
    const state = JSON.parse(fs.readFileSync(path.join(root, 'mqtt-state', 'agent-nativ.json'), 'utf8')) as { tasks: unknown[] };
    assert.deepEqual(state.tasks, []);
  });

  it('answers a title scan and an eject with "rejected" too, so the coordinator does not wait for a timeout', async () => {
    for (const cmd of [
      { id: 'scan-on-native', task: TASKS.scanTracks, args: { drive: 'sr0' } },
      { id: 'eject-on-native', task: TASKS.eject, args: { drive: 'sr0' } },
    ] as Command[]) {
      const answer = await answerTo(cmd);
      assert.equal(answer.type, 'rejected', cmd.task);
      assert.equal(answer.type === 'rejected' ? answer.reason : '', refusal);
    }
  });

  it('still answers a capability ping, reporting native', async () => {
    const answer = await answerTo({ id: 'ping-native', task: TASKS.pingWorker, args: {} });
    assert.equal(answer.type, 'pong');
    assert.equal(answer.type === 'pong' ? answer.capabilities.native : null, true);
  });
});
