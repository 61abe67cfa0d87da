import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { Dispatcher } from '../../../../coordinator/dispatch/dispatcher.js';
import { Fleet } from '../../../../coordinator/workers/fleet.js';
import { agentConfigs, driveConfigs, driveHaState, HaDiscovery, objectId } from '../../../../coordinator/integrations/ha-discovery.js';
import { JobsStore, type JobRow } from '../../../../coordinator/jobs/jobs-store.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { SettingsStore } from '../../../../coordinator/system/settings-store.js';
import type { Logger } from '../../../../shared/log.js';
import { openDatabase } from '../../../../shared/sqlite.js';
import { topicMatches } from '../../../../shared/protocol.js';
import { sampleText } from '../../../fixtures/tools-samples.js';

/** The reference's constructed discovery samples (copied into test/fixtures/samples). */
const sample = (name: string): { topic: string; retain: boolean; qos: number; payload: Record<string, unknown> } => JSON.parse(sampleText(name));

const agent = { node: 'keller@nas.local', name: 'keller' };
const drive = { drive: 'sr0', vendor: 'HL-DT-ST', model: 'BD-RE BH16NS40', name: 'keller-sr0' };

describe('Home Assistant discovery payloads', () => {
  it('keeps node and object ids to [a-zA-Z0-9_-]', () => {
    assert.equal(objectId('keller@nas.local'), 'keller_nas_local');
    for (const m of [...agentConfigs('homeassistant', agent), ...driveConfigs('homeassistant', agent, drive)]) {
      const [, , node, obj] = m.topic.split('/');
      assert.match(node, /^[a-zA-Z0-9_-]+$/);
      assert.match(obj, /^[a-zA-Z0-9_-]+$/);
      assert.match(String(m.payload.unique_id), /^[a-zA-Z0-9_-]+$/);
    }
  });

  it('names each entity with default_entity_id, the full entity id Home Assistant wants since 2025.10, never the deprecated object_id', () => {
    // Home Assistant's valid_entity_id: <domain>.<object id>, each of [a-z0-9_], no leading, trailing or doubled "_".
    const validEntityId = /^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$/;
    const odd = { node: 'Keller-NAS@home.local', name: 'keller' };
    const msgs = [...agentConfigs('homeassistant', odd), ...driveConfigs('homeassistant', odd, { ...drive, drive: 'SR-0' })];
    for (const m of msgs) {
      const component = m.topic.split('/')[1];
      assert.equal('object_id' in m.payload, false, m.topic);
      assert.match(String(m.payload.default_entity_id), validEntityId, m.topic);
      assert.equal(String(m.payload.default_entity_id).split('.')[0], component, m.topic);
    }
    assert.deepEqual(msgs.map((m) => m.payload.default_entity_id), [
      'binary_sensor.ripwerk_keller_nas_home_local_online',
      'sensor.ripwerk_keller_nas_home_local_sr_0_disc_title',
      'sensor.ripwerk_keller_nas_home_local_sr_0_job_status',
      'sensor.ripwerk_keller_nas_home_local_sr_0_job_progress',
      'sensor.ripwerk_keller_nas_home_local_sr_0_job_eta',
      'button.ripwerk_keller_nas_home_local_sr_0_eject',
    ]);
  });

  it('describes the agent as a device with a connectivity sensor from its status topic', () => {
    const [online] = agentConfigs('homeassistant', agent);
    assert.equal(online.topic, 'homeassistant/binary_sensor/ripwerk_keller_nas_local/online/config');
    assert.equal(online.payload.state_topic, 'ripwerk/agent/keller@nas.local/status');
    assert.equal(online.payload.value_template, '{{ value_json.state }}');
    assert.deepEqual([online.payload.payload_on, online.payload.payload_off, online.payload.device_class], ['online', 'offline', 'connectivity']);
    assert.deepEqual((online.payload.device as { identifiers: string[] }).identifiers, ['ripwerk_keller_nas_local']);
    assert.equal(online.payload.availability, undefined, 'no availability on the same topic, or it turns unavailable instead of off');
  });

  it('describes a drive with disc, job, progress and ETA sensors and an eject button, available with its agent', () => {
    const msgs = driveConfigs('homeassistant', agent, drive);
    assert.deepEqual(
      msgs.map((m) => m.topic),
      [
        'homeassistant/sensor/ripwerk_keller_nas_local/sr0_disc_title/config',
        'homeassistant/sensor/ripwerk_keller_nas_local/sr0_job_status/config',
        'homeassistant/sensor/ripwerk_keller_nas_local/sr0_job_progress/config',
        'homeassistant/sensor/ripwerk_keller_nas_local/sr0_job_eta/config',
        'homeassistant/button/ripwerk_keller_nas_local/sr0_eject/config',
      ],
    );
    for (const m of msgs) {
      assert.deepEqual(m.payload.availability, [{ topic: 'ripwerk/agent/keller@nas.local/status', value_template: '{{ value_json.state }}', payload_available: 'online', payload_not_available: 'offline' }]);
      const device = m.payload.device as Record<string, unknown>;
      assert.equal(device.via_device, 'ripwerk_keller_nas_local');
      assert.deepEqual(device.identifiers, ['ripwerk_keller_nas_local_sr0']);
    }
    const progress = msgs[2].payload;
    assert.deepEqual([progress.unit_of_measurement, progress.state_class, progress.state_topic], ['%', 'measurement', 'ripwerk/ha/keller_nas_local/sr0/state']);
    assert.equal(msgs[3].payload.device_class, 'timestamp');
    const button = msgs[4].payload;
    assert.deepEqual([button.command_topic, button.payload_press, button.retain, button.qos], ['ripwerk/ha/keller_nas_local/sr0/eject', 'EJECT', false, 1]);
  });

  it('uses the key names of the reference samples', () => {
    const ref = sample('ha-sensor-job-progress.json');
    const refButton = sample('ha-button-eject.json');
    const ours = driveConfigs('homeassistant', agent, drive);
    for (const key of ['name', 'unique_id', 'state_topic', 'value_template', 'unit_of_measurement', 'state_class', 'availability', 'device']) assert.ok(key in ref.payload && key in ours[2].payload, key);
    for (const key of ['command_topic', 'payload_press', 'retain', 'qos', 'availability', 'device']) assert.ok(key in refButton.payload && key in ours[4].payload, key);
    assert.equal(ref.retain, true);
  });
});

describe('drive state for the sensors', () => {
  const job = (over: Partial<JobRow>): JobRow =>
    ({ id: 'j1', title: 'Heat', status: 'transcoding', progress: 42.04, output_path: null, target_dir: null, meta: null, device: 'keller-sr0', node: null, transcode_node: null, error: null, phase: 'transcode', eta_points: JSON.stringify([[0, 0], [10_000, 10], [20_000, 20]]), raw_state: null, raw_path: null, raw_size: null, raw_checked_at: null, created_at: '2026-11-23T10:00:00.000Z', updated_at: '2026-11-23T10:00:00.000Z', finished_at: null, ...over }) as JobRow;
  const disc = { label: 'HEAT', title: 'Heat', year: 1995, type: 'dvd' as const, size_bytes: 1, fingerprint: 'fp', source: '/x', audio_tracks: null };

  it('takes the disc and the active job of the drive', () => {
    const s = driveHaState({ name: 'keller-sr0', state: { node: 'n', drive: 'sr0', kind: 'image', path: '/x', vendor: null, model: null, status: 'disc_present', disc } }, 'Heat (Kinofassung)', [job({})], Date.parse('2026-11-23T10:00:30Z'));
    assert.equal(s.disc_title, 'Heat (Kinofassung)');
    assert.deepEqual([s.job_id, s.job_status, s.progress, s.disc_year], ['j1', 'transcoding', 42, 1995]);
    assert.ok(s.eta === null || /Z$/.test(s.eta), 'an ETA carries its time zone');
  });

  it('is idle without disc and jobs', () => {
    const s = driveHaState({ name: 'x', state: { node: 'n', drive: 'sr0', kind: 'image', path: '/x', vendor: null, model: null, status: 'no_disc', disc: null } }, null, [], Date.now());
    assert.deepEqual(s, { disc_title: null, disc_year: null, disc_type: null, job_id: null, job_status: null, progress: 0, eta: null });
  });
});

describe('MQTT topic filters', () => {
  it('matches + and # as MQTT does', () => {
    assert.ok(topicMatches('ripwerk/ha/+/+/eject', 'ripwerk/ha/a/sr0/eject'));
    assert.ok(!topicMatches('ripwerk/ha/+/+/eject', 'ripwerk/ha/a/sr0/state'));
    assert.ok(!topicMatches('ripwerk/ha/+/+/eject', 'ripwerk/ha/a/eject'));
    assert.ok(topicMatches('homeassistant/#', 'homeassistant/sensor/x/y/config'));
    assert.ok(topicMatches('homeassistant/status', 'homeassistant/status'));
  });
});

describe('the publishing class (without a broker)', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-ha-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Coordinator state on a fresh database and a dispatcher stand-in that records publishes and subscriptions. */
  function setup() {
    const db = openDatabase(path.join(root, `ha-${Math.random().toString(36).slice(2)}.sqlite`), coordinatorMigrations);
    const fleet = new Fleet(db);
    const jobs = new JobsStore(db);
    const settings = new SettingsStore(db);
    const sent: { topic: string; payload: string; retain: boolean }[] = [];
    const subs = new Map<string, (topic: string, payload: Buffer) => void>();
    const dispatcher = {
      publishRaw: (topic: string, payload: string, retain: boolean) => sent.push({ topic, payload, retain }),
      subscribeRaw: (filter: string, handler: (topic: string, payload: Buffer) => void) => subs.set(filter, handler),
    } as unknown as Dispatcher;
    const ejected: string[] = [];
    const ha = new HaDiscovery(dispatcher, fleet, jobs, settings, () => null, async (d) => void ejected.push(d.name), { info: () => undefined, warn: () => undefined } as unknown as Logger);
    fleet.applyStatus({ node: 'keller@nas', name: 'keller', state: 'online' });
    fleet.applyDrive({ node: 'keller@nas', drive: 'sr0', kind: 'image', path: '/x', vendor: null, model: null, status: 'no_disc', disc: null });
    return { db, fleet, jobs, settings, sent, subs, ejected, ha };
  }
  const live = (sent: { topic: string; payload: string }[]) => {
    const last = new Map<string, string>();
    for (const m of sent) last.set(m.topic, m.payload);
    return [...last].filter(([, p]) => p !== '').map(([t]) => t);
  };

  it('publishes nothing while off, retained configs and the state when on, and removes all when off again', () => {
    const { settings, sent, ha } = setup();
    ha.tick();
    assert.equal(sent.length, 0);
    settings.set({ homeAssistantDiscovery: true });
    ha.tick();
    assert.ok(sent.every((m) => m.retain));
    const topics = live(sent);
    assert.equal(topics.filter((t) => t.endsWith('/config')).length, 6);
    assert.ok(topics.includes('ripwerk/ha/keller_nas/sr0/state'));
    for (const m of sent) if (m.topic.endsWith('/config')) assert.doesNotThrow(() => JSON.parse(m.payload));
    const before = sent.length;
    ha.tick();
    assert.equal(sent.length, before, 'unchanged configs and states are not sent again');
    settings.set({ homeAssistantDiscovery: false });
    ha.tick();
    assert.deepEqual(live(sent), [], 'every config and state topic got an empty retained payload');
  });

  it('publishes everything again on the birth message of Home Assistant, under its prefix', () => {
    const { settings, sent, subs, ha } = setup();
    settings.set({ homeAssistantDiscovery: true, homeAssistantPrefix: 'ha2' });
    ha.tick();
    assert.ok(live(sent).every((t) => t.startsWith('ha2/') || t.startsWith('ripwerk/ha/')));
    const n = sent.length;
    subs.get('ha2/status')?.('ha2/status', Buffer.from('offline'));
    assert.equal(sent.length, n);
    subs.get('ha2/status')?.('ha2/status', Buffer.from('online'));
    assert.equal(sent.length, 2 * n);
  });

  it('removes the entities and the state of a deleted worker', () => {
    const { fleet, settings, sent, ha } = setup();
    settings.set({ homeAssistantDiscovery: true });
    ha.tick();
    fleet.markOffline('keller@nas');
    fleet.remove('keller@nas');
    ha.tick();
    assert.deepEqual(live(sent), []);
  });

  it('turns EJECT on a button topic into an eject only when a disc is in the drive', async () => {
    const { fleet, settings, subs, ejected, ha } = setup();
    ha.start();
    ha.stop();
    const press = subs.get('ripwerk/ha/+/+/eject')!;
    press('ripwerk/ha/keller_nas/sr0/eject', Buffer.from('EJECT'));
    settings.set({ homeAssistantDiscovery: true });
    ha.tick();
    press('ripwerk/ha/keller_nas/sr0/eject', Buffer.from('EJECT'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(ejected, [], 'off, or no disc: nothing to eject');
    const disc = { label: 'HEAT', title: 'Heat', year: 1995, type: 'dvd' as const, size_bytes: 1, fingerprint: 'fp', source: '/x', audio_tracks: null };
    fleet.applyDrive({ node: 'keller@nas', drive: 'sr0', kind: 'image', path: '/x', vendor: null, model: null, status: 'disc_present', disc });
    press('ripwerk/ha/keller_nas/sr0/eject', Buffer.from('EJECT'));
    press('ripwerk/ha/keller_nas/sr1/eject', Buffer.from('EJECT'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(ejected, ['keller-sr0']);
  });
});
