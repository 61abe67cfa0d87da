import type { Device, Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import mqtt, { type MqttClient } from 'mqtt';
import { TASKS, topics } from '../../shared/protocol.js';
import { REPO_DIR } from '../fixtures/tools-samples.js';
import { api, dvdImage, insertDisc, sleep, smallMkv, startAgent, startCoordinator, stopAll, waitFor, waitForDisc, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';

interface Login {
  username: string;
  password: string;
}
interface LogRow {
  message: string;
}

function connect(url: string, opts: mqtt.IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
    client.once('connect', () => resolve(client));
    client.once('error', (err) => {
      client.end(true);
      reject(err);
    });
  });
}

/** The CONNACK code a login gets (0 = accepted). */
async function connackCode(url: string, opts: mqtt.IClientOptions): Promise<number> {
  try {
    const client = await connect(url, opts);
    client.end(true);
    return 0;
  } catch (err) {
    return Number((err as { code?: number }).code ?? -1);
  }
}

/** Publishes and resolves true when the broker closed the connection for it (a publish outside the client's rights). */
async function publishGetsCut(client: MqttClient, topic: string, payload: string): Promise<boolean> {
  const closed = new Promise<boolean>((resolve) => client.once('close', () => resolve(true)));
  client.publish(topic, payload, { qos: 1 });
  return Promise.race([closed, sleep(3000).then(() => false)]);
}

/** An MQTT 3.1.1 CONNECT with user name and password (section 3.1), clean session, keepalive 30 s. */
function connectPacket(clientId: string, username: string, password: string): Buffer {
  const str = (v: string): Buffer => {
    const b = Buffer.from(v);
    return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
  };
  const body = Buffer.concat([str('MQTT'), Buffer.from([4, 0xc2, 0, 30]), str(clientId), str(username), str(password)]);
  assert.ok(body.length < 128);
  return Buffer.concat([Buffer.from([0x10, body.length]), body]);
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

/** A raw TCP client that declares a packet of `declared` bytes and then streams zeros: resolves with how many bytes went out before the broker cut it. */
function declareHugePacket(port: number, head: Buffer[], type: number, declared: number, afterReply = false): Promise<{ sent: number; cut: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let sent = 0;
    let done = false;
    const finish = (cut: boolean): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ sent, cut });
    };
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    const start = (): void => {
      // the fixed header: type and a 4-byte variable length (MQTT 3.1.1 section 2.2.3)
      const len = remainingLength(declared);
      socket.write(Buffer.from([type << 4 | (type === 3 ? 2 : 0), ...len]));
      const chunk = Buffer.alloc(256 * 1024);
      const pump = (): void => {
        while (!done && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
      setTimeout(() => finish(false), 8000);
    };
    socket.on('connect', () => {
      for (const b of head) socket.write(b);
      // After a login the header goes out once the broker answered (CONNACK): the limit of the credential applies then.
      if (afterReply) socket.once('data', start);
      else start();
    });
  });
}

describe('MQTT trust boundaries (embedded broker)', () => {
  let w: World;
  let c: CoordinatorHandle;
  let keller: AgentHandle;
  let kellerLogin: Login;
  let malloryLogin: Login;
  let admin: MqttClient;
  const events: { topic: string; body: Record<string, unknown> }[] = [];

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    const issued = await api<Login & { node: string; replaced: boolean; hint: string }>(c.url, 'POST', '/workers/keller/credentials');
    assert.equal(issued.status, 201, issued.text);
    assert.equal(issued.body.username, 'keller');
    assert.equal(issued.body.node, 'keller');
    assert.equal(issued.body.replaced, false);
    assert.match(issued.body.hint, /MQTT_USERNAME=keller/);
    kellerLogin = { username: issued.body.username, password: issued.body.password };
    const agent = await startAgent(w, c.mqttUrl, 'keller', {
      makemkv: true,
      extra: { RIPWERK_BROKER_SECRET: '', MQTT_USERNAME: kellerLogin.username, MQTT_PASSWORD: kellerLogin.password, FAKE_MAKEMKV_SOURCE_MKV: smallMkv(), FAKE_MAKEMKV_TITLES: '20,75,8' },
    });
    keller = { ...agent, node: 'keller' };
    const m = await api<Login>(c.url, 'POST', '/workers/mallory/credentials');
    malloryLogin = { username: m.body.username, password: m.body.password };
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' })).status, 200);
    admin = await connect(c.mqttUrl, { username: 'ripwerk-coordinator', password: w.secret, clientId: 'test-admin' });
    admin.on('message', (topic, payload) => {
      try {
        const body: unknown = JSON.parse(payload.toString('utf8'));
        if (body && typeof body === 'object') events.push({ topic, body: body as Record<string, unknown> });
      } catch {
        // not JSON: not an event
      }
    });
    await admin.subscribeAsync(topics.eventAll, { qos: 1 });
    await waitFor('keller online', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.node === 'keller' && x.online));
  });
  after(async () => {
    await admin?.endAsync();
    await stopAll();
  });

  it('stores only a scrypt hash of a worker password and never logs it', async () => {
    const db = new Database(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'), { readonly: true });
    const rows = db.prepare('SELECT username, role, hash FROM mqtt_credentials ORDER BY username').all() as { username: string; role: string; hash: string }[];
    db.close();
    assert.deepEqual(rows.map((r) => [r.username, r.role]), [['keller', 'agent'], ['mallory', 'agent']]);
    for (const r of rows) assert.match(r.hash, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    const all = JSON.stringify(rows) + JSON.stringify((await api<LogRow[]>(c.url, 'GET', '/logs?limit=1000')).body) + keller.proc.lines.join('\n') + c.proc.lines.join('\n');
    assert.ok(!all.includes(kellerLogin.password) && !all.includes(malloryLogin.password), 'no password in the database, the API or a log');
  });

  it('drops the status messages that took the coordinator down, with one log line per topic and minute', async () => {
    const legacy = await connect(c.mqttUrl, { username: 'x', password: w.secret });
    for (let i = 0; i < 20; i++) legacy.publish(topics.agentStatus('x'), JSON.stringify({ node: 'x', state: 'online', name: 7 }), { qos: 1 });
    legacy.publish(topics.agentStatus('x'), JSON.stringify({ node: 'x', state: 'online', capabilities: {} }), { qos: 1, retain: true });
    await legacy.endAsync();
    await sleep(1500);
    const caps = await api<{ node: string }[]>(c.url, 'GET', '/capabilities');
    assert.equal(caps.status, 200);
    assert.deepEqual(caps.body.map((x) => x.node).sort(), ['keller']);
    const dropped = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=1000')).body.filter((l) => l.message.startsWith('dropped a message on ripwerk/agent/x/status'));
    assert.deepEqual(dropped.map((l) => l.message), ['dropped a message on ripwerk/agent/x/status: name: Invalid input: expected string, received number']);
  });

  it('survives every message type with wrong types, missing fields and huge values, and still completes a job', async () => {
    const huge = 'x'.repeat(300_000);
    const ts = new Date().toISOString();
    const templates: Record<string, [string, Record<string, unknown>][]> = {
      coordinator: [
        [topics.agentStatus('keller'), { node: 'keller', state: 'online', name: 'keller', slots: 4, tasks: [], capabilities: { encoders: ['software'], tools: {}, key_source: 'none', schluessel: 0, rip_backend: 'none', transcode_only: false, native: false } }],
        [topics.driveState('keller', 'sr9'), { node: 'keller', drive: 'sr9', kind: 'image', path: '/x', vendor: null, model: null, status: 'no_disc', disc: null }],
        ...(
          [
            ['accepted', {}],
            ['rejected', { reason: 'r' }],
            ['progress', { phase: 'rip', progress: 5 }],
            ['log', { level: 'info', message: 'm' }],
            ['rip_started', { raw_dir: '/tmp' }],
            ['rip_done', { raw_dir: '/etc', files: ['/etc/passwd'] }],
            ['transcode_started', {}],
            ['transcode_ending', {}],
            ['transcode_encoded', {}],
            ['job_done', { output_path: '/etc', files: [], raw_removed: true }],
            ['job_failed', { phase: 'transcode', reason: 'r' }],
            ['job_canceled', { phase: 'rip' }],
            ['tracks', { drive: 'sr0', tracks: [{ number: 1, seconds: 1, size_bytes: 1, chapters: 1 }] }],
            ['command_failed', { reason: 'r' }],
            ['ejected', { drive: 'sr0' }],
            ['pong', { capabilities: { encoders: [], tools: {}, key_source: 'none', schluessel: 0, rip_backend: 'none', transcode_only: true, native: false } }],
            ['aacs_dump', { name: 'MKB_v4_X.tgz', data_base64: 'AAAA' }],
          ] as [string, Record<string, unknown>][]
        ).map(([type, extra]): [string, Record<string, unknown>] => [topics.event('keller'), { event_id: `fuzz-${type}`, node: 'keller', ts, command_id: 'no-such-command', job_id: 'no-such-job', type, ...extra }]),
      ],
      agent: [
        [topics.command('keller'), { id: 'f1', task: TASKS.ripDisc, job_id: 'j', args: { job_id: 'j', drive: 'sr0', titles: [1], main_feature_only: false, raw_dir: '/etc/x', target_dir: '/etc', title: 'T', year: null, series: null, season: null, transcode: false, keep_original: false, auto_eject: true } }],
        [topics.command('keller'), { id: 'f2', task: TASKS.transcodeFiles, job_id: 'j', args: { job_id: 'j', raw_dir: '/etc', files: ['/etc/passwd'], target_dir: '/etc', title: 'T', year: null, series: null, season: null, preset: 'p', keep_original: false } }],
        [topics.command('keller'), { id: 'f3', task: TASKS.scanTracks, args: { drive: 'sr0' } }],
        [topics.command('keller'), { id: 'f4', task: TASKS.cancel, job_id: 'j', args: { command_id: 'c' } }],
        [topics.command('keller'), { id: 'f5', task: TASKS.eject, args: { drive: 'sr0' } }],
        [topics.ack('keller'), { event_ids: ['a'] }],
        [topics.keystore, { sha256: null, installed_at: null, files: [] }],
        [topics.keydb, { content: null }],
        [topics.appKey, { key: null }],
      ],
    };
    const wrong = (v: unknown): unknown => (typeof v === 'string' ? 7 : typeof v === 'number' ? '7' : typeof v === 'boolean' ? 'yes' : Array.isArray(v) ? {} : v === null ? {} : []);
    const hugeOf = (v: unknown): unknown => (typeof v === 'string' ? huge : typeof v === 'number' ? 1e308 : Array.isArray(v) ? Array.from({ length: 20_000 }, () => v[0] ?? 'x') : v);
    let sent = 0;
    for (const [topic, template] of [...templates.coordinator, ...templates.agent]) {
      const variants: unknown[] = ['not json', '', '[]', 'null', '7'];
      for (const key of Object.keys(template)) {
        const { [key]: _gone, ...missing } = template;
        variants.push(missing, { ...template, [key]: wrong(template[key]) }, { ...template, [key]: hugeOf(template[key]) });
        const inner = template[key];
        if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
          for (const k of Object.keys(inner)) {
            const { [k]: _g, ...innerMissing } = inner as Record<string, unknown>;
            variants.push({ ...template, [key]: innerMissing }, { ...template, [key]: { ...inner, [k]: wrong((inner as Record<string, unknown>)[k]) } });
          }
        }
      }
      for (const v of variants) {
        await admin.publishAsync(topic, typeof v === 'string' ? v : JSON.stringify(v), { qos: 1 });
        sent++;
      }
    }
    assert.ok(sent > 400, `sent ${sent} bad messages`);
    await sleep(1000);
    const health = await api<{ ok: boolean; mqtt: boolean; workers_online: number }>(c.url, 'GET', '/health');
    assert.deepEqual(health.body, { ok: true, mqtt: true, workers_online: 1 });
    assert.ok(keller.proc.alive, 'the agent is still running');
    // A real job still runs end to end on the same coordinator and agent.
    insertDisc(keller.driveDir, dvdImage('FUZZ_MOVIE', [12, 6]));
    const device = await waitForDisc(c.url, keller);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [1] });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed', 'failed']);
    assert.equal(done.status, 'completed', done.error ?? '');
    assert.ok(fs.existsSync('/etc/passwd'));
    const lines = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=5000')).body.map((l) => l.message);
    assert.ok(lines.some((l) => l.startsWith('dropped a message on ripwerk/event/keller: ')));
    assert.ok(keller.proc.lines.some((l) => /dropped a message on ripwerk\/cmd\/keller: /.test(l)));
    // at most one line per topic and minute: the many drops on the event topic made few lines
    assert.ok(lines.filter((l) => l.startsWith('dropped a message on ripwerk/event/keller')).length <= 3);
  });

  it('refuses a late job_failed for a completed job, and events for a job from a node without its command', async () => {
    const jobs = await api<Job[]>(c.url, 'GET', '/jobs');
    const completed = jobs.body.find((j) => j.status === 'completed')!;
    const cmd = events.find((e) => e.body.job_id === completed.id && e.body.type === 'job_done')!;
    assert.ok(cmd, 'the job_done event of the completed job was seen');
    const forged = (node: string, id: string) => JSON.stringify({ event_id: id, node, ts: new Date().toISOString(), command_id: cmd.body.command_id, job_id: completed.id, type: 'job_failed', phase: 'transcode', reason: 'forged' });
    // from the node that held the command, but the command has ended: no transition from completed
    await admin.publishAsync(topics.event('keller'), forged('keller', 'forged-1'), { qos: 1 });
    // from another node's own topic (mallory's credentials): not the node holding the command
    const mallory = await connect(c.mqttUrl, { ...malloryLogin, clientId: 'mallory-1' });
    await mallory.publishAsync(topics.event('mallory'), forged('mallory', 'forged-2'), { qos: 1 });
    await mallory.endAsync();
    await sleep(800);
    const after = await api<Job>(c.url, 'GET', `/jobs/${completed.id}`);
    assert.equal(after.body.status, 'completed');
    assert.equal(after.body.error, null);
    const lines = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=5000')).body.map((l) => l.message);
    assert.ok(lines.includes(`dropped a message on ripwerk/event/mallory: job_failed for a command of keller came from mallory`), lines.filter((l) => l.includes('mallory')).join('\n'));
  });

  it("cuts a worker that publishes under another node's topics, and refuses its subscription to another node's commands", async () => {
    const mallory = await connect(c.mqttUrl, { ...malloryLogin, clientId: 'mallory-2' });
    const granted = await new Promise<number>((resolve) => mallory.subscribe(topics.command('keller'), { qos: 1 }, (err, g) => resolve(err ? 128 : (g?.[0]?.qos ?? -1))));
    assert.equal(granted, 128);
    assert.equal(await publishGetsCut(mallory, topics.agentStatus('keller'), JSON.stringify({ node: 'keller', state: 'offline' })), true);
    mallory.end(true);
    const again = await connect(c.mqttUrl, { ...malloryLogin, clientId: 'mallory-3' });
    assert.equal(await publishGetsCut(again, topics.command('keller'), JSON.stringify({ id: 'x', task: TASKS.eject, args: { drive: 'sr0' } })), true);
    again.end(true);
    await sleep(500);
    const keller = (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.node === 'keller');
    assert.equal(keller?.online, true, 'the forged offline status never arrived');
  });

  it("does not let another credential take over a connected worker's client id", async () => {
    assert.equal(await connackCode(c.mqttUrl, { ...malloryLogin, clientId: 'ripwerk-agent-keller' }), 2);
    await sleep(1500);
    assert.ok(!keller.proc.lines.some((l) => /MQTT broker .* unreachable/.test(l)), 'keller kept its connection');
    const lines = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=5000')).body.map((l) => l.message);
    assert.ok(lines.includes('MQTT login from 127.0.0.1 refused: the client id ripwerk-agent-keller belongs to user keller (client ripwerk-agent-keller, user mallory); further refusals from this address are counted and summed up once a minute'), lines.filter((l) => l.startsWith('MQTT')).join('\n'));
  });

  it('the agent refuses a transcode command with paths outside its folders, whoever sends it', async () => {
    const victim = path.join(w.root, 'victim');
    fs.mkdirSync(victim);
    fs.writeFileSync(path.join(victim, 'precious.txt'), 'keep me');
    const outside = path.join(w.root, 'outside-media');
    const cmd = { id: 'forged-transcode', task: TASKS.transcodeFiles, job_id: 'forged-job', args: { job_id: 'forged-job', raw_dir: victim, files: [path.join(victim, 'precious.txt')], target_dir: outside, title: 'T', year: null, series: null, season: null, preset: 'Very Fast 480p30', keep_original: false } };
    await admin.publishAsync(topics.command('keller'), JSON.stringify(cmd), { qos: 1 });
    const answer = await waitFor('the refusal', async () => events.find((e) => e.body.command_id === 'forged-transcode')?.body, 10_000);
    assert.equal(answer.type, 'rejected');
    assert.equal(answer.reason, `the raw folder ${victim} is not inside this worker's folders (${w.media}, ${w.raw}): refused`);
    await sleep(500);
    assert.equal(fs.readFileSync(path.join(victim, 'precious.txt'), 'utf8'), 'keep me');
    assert.ok(!fs.existsSync(outside));
  });

  it('cuts an unauthenticated 250 MB CONNECT and an authenticated 200 MB publish while the memory stays flat', async () => {
    const before = rssKb(c.proc.child.pid!);
    const [a, b] = await Promise.all([declareHugePacket(c.mqttPort, [], 1, 250 * 1024 * 1024), declareHugePacket(c.mqttPort, [], 1, 250 * 1024 * 1024)]);
    assert.equal(a.cut && b.cut, true, 'both connections were cut');
    const big = await declareHugePacket(c.mqttPort, [connectPacket('mallory-big', malloryLogin.username, malloryLogin.password)], 3, 200 * 1024 * 1024, true);
    assert.equal(big.cut, true, 'the 200 MB publish was cut');
    await sleep(500);
    const grown = rssKb(c.proc.child.pid!) - before;
    assert.ok(grown < 8 * 1024, `the coordinator grew by ${grown} kB`);
    const lines = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=5000')).body.map((l) => l.message);
    assert.ok(lines.some((l) => /^MQTT client from 127\.0\.0\.1 before logging in announced a packet of 262144000 bytes \(type 1\); the limit is 65536: disconnected$/.test(l)));
    assert.ok(lines.some((l) => /^MQTT client from 127\.0\.0\.1 \(worker mallory\) announced a packet of 209715200 bytes \(type 3\); the limit is 1048576: disconnected$/.test(l)), lines.filter((l) => l.includes('announced')).join('\n'));
  });

  it("names a worker's drives from its own credential: another worker reporting that name in its status takes over nothing", async () => {
    const devicesBefore = (await api<Device[]>(c.url, 'GET', '/devices')).body;
    const kellers = devicesBefore.find((d) => d.name === 'keller-drive-keller');
    assert.equal(kellers?.node, 'keller');
    const mallory = await connect(c.mqttUrl, { ...malloryLogin, clientId: 'mallory-name' });
    const caps = { encoders: ['software'], tools: {}, key_source: 'none', schluessel: 0, rip_backend: 'makemkv', transcode_only: false, native: false };
    await mallory.publishAsync(topics.agentStatus('mallory'), JSON.stringify({ node: 'mallory', state: 'online', name: 'keller', host: 'evil', slots: 4, tasks: [], capabilities: caps }), { qos: 1 });
    await mallory.publishAsync(topics.driveState('mallory', 'drive-keller'), JSON.stringify({ node: 'mallory', drive: 'drive-keller', kind: 'image', path: '/x', vendor: null, model: null, status: 'no_disc', disc: null }), { qos: 1 });
    await sleep(800);
    const devices = (await api<Device[]>(c.url, 'GET', '/devices')).body;
    assert.equal(devices.find((d) => d.name === 'keller-drive-keller')?.node, 'keller', devices.map((d) => `${d.name} ${d.node}`).join(', '));
    assert.ok(devices.some((d) => d.name === 'mallory-drive-keller' && d.node === 'mallory'));
    const workers = (await api<Worker[]>(c.url, 'GET', '/capabilities')).body;
    assert.deepEqual(workers.filter((x) => x.name === 'keller').map((x) => x.node), ['keller']);
    await mallory.publishAsync(topics.agentStatus('mallory'), JSON.stringify({ node: 'mallory', state: 'offline' }), { qos: 1, retain: true });
    await mallory.endAsync();
  });

  it('stores no AACS dump from a worker that holds no command, and answers 400 for a NUL in a dump name', async () => {
    const issued = await api<Login>(c.url, 'POST', '/workers/dumper/credentials');
    const dumper = await connect(c.mqttUrl, { username: issued.body.username, password: issued.body.password, clientId: 'dumper-1' });
    for (let i = 0; i < 5; i++) {
      await dumper.publishAsync(topics.event('dumper'), JSON.stringify({ event_id: `dump-${i}`, node: 'dumper', ts: new Date().toISOString(), type: 'aacs_dump', name: `MKB_${i}.tgz`, data_base64: Buffer.alloc(1000, i).toString('base64') }), { qos: 1 });
    }
    await dumper.endAsync();
    await sleep(800);
    assert.deepEqual((await api<unknown[]>(c.url, 'GET', '/system/aacs-dumps')).body, []);
    const lines = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=2000')).body.map((l) => l.message);
    assert.ok(lines.includes('dropped a message on ripwerk/event/dumper: aacs_dump MKB_0.tgz from dumper, which holds no rip'), lines.filter((l) => l.includes('aacs') || l.includes('dumper')).join('\n'));
    const nul = await api(c.url, 'GET', '/system/aacs-dumps/MKB%00.bin');
    assert.equal(nul.status, 400, nul.text);
    assert.equal(nul.text.trimEnd(), 'an AACS dump name is a bare file name: no NUL, slash or backslash, no leading dot');
  });

  it("refuses a Home Assistant prefix inside Ripwerk's own tree, and gives Home Assistant's credential its real filters but never the keys", async () => {
    for (const prefix of ['ripwerk', 'ripwerk/agent/keller']) {
      const r = await api(c.url, 'PUT', '/settings', { homeAssistantPrefix: prefix });
      assert.equal(r.status, 400, `${prefix}: ${r.text}`);
      assert.equal(r.text.trimEnd(), "homeAssistantPrefix must not be ripwerk or lie under it: that is Ripwerk's own topic tree (commands, keys, worker status)");
    }
    assert.equal((await api(c.url, 'PUT', '/settings', { ripperAppKey: 'T-app-key-for-workers-only' })).status, 200);
    const issued = await api<Login>(c.url, 'POST', '/home-assistant/credentials');
    const ha = await connect(c.mqttUrl, { username: issued.body.username, password: issued.body.password, clientId: 'home-assistant-test' });
    const got: string[] = [];
    ha.on('message', (topic, payload) => got.push(`${topic} ${payload.toString('utf8').slice(0, 80)}`));
    const grant = (filter: string): Promise<number> => new Promise((resolve) => ha.subscribe(filter, { qos: 1 }, (err, g) => resolve(err ? 128 : (g?.[0]?.qos ?? -1))));
    assert.equal(await grant('homeassistant/+/+/config'), 1);
    assert.equal(await grant('homeassistant/+/+/+/config'), 1);
    for (const filter of ['#', 'ripwerk/#', 'ripwerk/keys/+', topics.appKey]) assert.equal(await grant(filter), 128, filter);
    await sleep(500);
    assert.ok(!got.some((m) => m.includes('T-app-key')), got.join('\n'));
    await ha.endAsync();
  });

  it('lets a revocation win over 100 logins in flight, and a second DELETE finds nothing left', async () => {
    const issued = await api<Login>(c.url, 'POST', '/workers/racer/credentials');
    // From 20 loopback addresses (5 logins each): the limits before login per address leave them all in flight.
    const clients = Array.from({ length: 100 }, (_, i) => new mqtt.MqttClient(() => net.connect({ port: c.mqttPort, host: '127.0.0.1', localAddress: `127.0.1.${1 + (i % 20)}` }), { username: 'racer', password: issued.body.password, clientId: `racer-${i}`, reconnectPeriod: 0, connectTimeout: 10_000, protocolVersion: 4 }));
    for (const cl of clients) cl.on('error', () => undefined);
    await sleep(80);
    const removed = await api<{ removed: string; credentials_revoked: boolean }>(c.url, 'DELETE', '/workers/racer');
    assert.equal(removed.status, 200, removed.text);
    await sleep(4000);
    const alive = clients.filter((cl) => cl.connected);
    for (const cl of alive) cl.publish(topics.agentStatus('racer'), JSON.stringify({ node: 'racer', state: 'online', capabilities: { encoders: [], tools: {}, key_source: 'none', schluessel: 0, rip_backend: 'none', transcode_only: true, native: false } }), { qos: 1 });
    await sleep(500);
    const again = await api(c.url, 'DELETE', '/workers/racer');
    for (const cl of clients) cl.end(true);
    process.stdout.write(`# DELETE during 100 logins in flight: ${alive.length} sessions alive, a second DELETE answered ${again.status}\n`);
    assert.equal(alive.length, 0, `${alive.length} sessions survived the revocation`);
    assert.equal(again.status, 404, again.text);
  });

  it('DELETE /workers revokes the credentials: the worker is disconnected at once and refused afterwards', async () => {
    const removed = await api<{ removed: string; credentials_revoked: boolean }>(c.url, 'DELETE', '/workers/keller');
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body, { removed: 'keller', credentials_revoked: true });
    await keller.proc.waitForLine(/MQTT broker .* unreachable/, 10_000);
    assert.equal(await connackCode(c.mqttUrl, { ...kellerLogin, clientId: 'keller-again' }), 4);
    await sleep(2500);
    const caps = await api<{ node: string }[]>(c.url, 'GET', '/capabilities');
    assert.ok(!caps.body.some((x) => x.node === 'keller'), 'the worker does not come back (no last will, its retained status cleared)');
    const gone = await api(c.url, 'DELETE', '/workers/keller');
    assert.equal(gone.status, 404);
    assert.equal(gone.text.trimEnd(), 'no worker named "keller"');
  });
});

describe('MQTT trust boundaries on an external Mosquitto with the ACL of docs/mqtt.md', () => {
  let w: World;
  let broker: import('node:child_process').ChildProcess;
  let url: string;
  const logins: Record<string, string> = { 'ripwerk-coordinator': 'coord-secret-1', keller: 'keller-pw-1', mallory: 'mallory-pw-1', homeassistant: 'ha-pw-1' };
  let c: CoordinatorHandle;

  before(async () => {
    w = world();
    const { spawn, execFileSync } = await import('node:child_process');
    const { freePort, tempDir } = await import('./harness.js');
    const dir = tempDir('ripwerk-mosquitto-');
    fs.chmodSync(dir, 0o755);
    const doc = fs.readFileSync(path.join(REPO_DIR, 'docs', 'mqtt.md'), 'utf8');
    const acl = /```text\n(# Ripwerk ACL for Mosquitto[\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(acl, 'docs/mqtt.md holds the ACL file');
    fs.writeFileSync(path.join(dir, 'acl'), acl);
    for (const [user, pw] of Object.entries(logins)) execFileSync('mosquitto_passwd', [...(fs.existsSync(path.join(dir, 'passwd')) ? [] : ['-c']), '-b', path.join(dir, 'passwd'), user, pw]);
    for (const f of ['acl', 'passwd']) fs.chmodSync(path.join(dir, f), 0o644);
    const port = await freePort();
    fs.writeFileSync(path.join(dir, 'mosquitto.conf'), `per_listener_settings false\nlistener ${port} 127.0.0.1\nallow_anonymous false\npassword_file ${dir}/passwd\nacl_file ${dir}/acl\npersistence false\nlog_dest stderr\n`);
    broker = spawn(fs.existsSync('/usr/sbin/mosquitto') ? '/usr/sbin/mosquitto' : 'mosquitto', ['-c', path.join(dir, 'mosquitto.conf')], { stdio: 'ignore' });
    url = `mqtt://127.0.0.1:${port}`;
    await waitFor('mosquitto', async () => (await connackCode(url, { username: 'keller', password: logins.keller })) === 0, 10_000);
  });
  after(async () => {
    broker?.kill();
    await stopAll();
  });

  it('lets the coordinator and a worker with its own user work, and keeps a worker off other nodes\' topics', async () => {
    c = await startCoordinator(w, { MQTT_URL: url, RIPWERK_BROKER_SECRET: logins['ripwerk-coordinator'] });
    await startAgent(w, url, 'keller', { drive: false, extra: { RIPWERK_BROKER_SECRET: '', MQTT_USERNAME: 'keller', MQTT_PASSWORD: logins.keller } });
    await waitFor('keller online via Mosquitto', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.node === 'keller' && x.online), 20_000);

    const seen: string[] = [];
    const watcher = await connect(url, { username: 'ripwerk-coordinator', password: logins['ripwerk-coordinator'], clientId: 'watcher' });
    watcher.on('message', (topic, payload) => seen.push(`${topic} ${payload.toString('utf8')}`));
    await watcher.subscribeAsync('ripwerk/#', { qos: 1 });
    const mallory = await connect(url, { username: 'mallory', password: logins.mallory, clientId: 'mallory' });
    const grant = await new Promise<number>((resolve) => mallory.subscribe(topics.command('keller'), { qos: 1 }, (err, g) => resolve(err ? 128 : (g?.[0]?.qos ?? -1))));
    mallory.on('message', (topic) => seen.push(`mallory got ${topic}`));
    await mallory.publishAsync(topics.event('keller'), 'forged-event', { qos: 1 });
    await mallory.publishAsync(topics.agentStatus('keller'), 'forged-status', { qos: 1 });
    await mallory.publishAsync(topics.command('keller'), 'forged-command', { qos: 1 });
    await mallory.publishAsync(topics.event('mallory'), 'own-event', { qos: 1 });
    await watcher.publishAsync(topics.command('keller'), JSON.stringify({ id: 'p', task: TASKS.pingWorker, args: {} }), { qos: 1 });
    await sleep(1500);
    assert.ok(seen.includes('ripwerk/event/mallory own-event'), seen.join('\n'));
    assert.ok(!seen.some((s) => s.includes('forged')), seen.join('\n'));
    assert.ok(!seen.some((s) => s.startsWith('mallory got')), `mallory received another node's command (SUBACK ${grant})`);
    const online = (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.node === 'keller');
    assert.equal(online?.online, true);
    await mallory.endAsync();
    await watcher.endAsync();
  });

  it('delivers the discovery configs to Home Assistant subscribed with its own two filters, under the ACL of docs/mqtt.md (issue 39)', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { homeAssistantDiscovery: true })).status, 200);
    const ha = await connect(url, { username: 'homeassistant', password: logins.homeassistant, clientId: 'home-assistant-mosquitto' });
    const configs = new Map<string, Record<string, unknown>>();
    ha.on('message', (topic, payload) => {
      if (payload.length) configs.set(topic, JSON.parse(payload.toString('utf8')) as Record<string, unknown>);
    });
    // Exactly the subscriptions Home Assistant's MQTT integration makes for discovery.
    const granted = await ha.subscribeAsync(['homeassistant/+/+/config', 'homeassistant/+/+/+/config'], { qos: 1 });
    assert.deepEqual(granted.map((g) => g.qos), [1, 1]);
    const keller = await waitFor('keller\'s discovery configs', async () => ([...configs.keys()].some((t) => t.includes('keller')) ? [...configs.entries()] : undefined), 15_000);
    for (const [topic, p] of keller) {
      assert.match(topic, /^homeassistant\/(binary_sensor|sensor|button|event)\/[a-z0-9_-]+(\/[a-z0-9_-]+)?\/config$/i, topic);
      assert.equal(p.object_id, undefined, topic);
      assert.match(String(p.default_entity_id), /^(binary_sensor|sensor|button|event)\.ripwerk_[a-z0-9_]+$/, topic);
    }
    await ha.endAsync();
    assert.equal((await api(c.url, 'PUT', '/settings', { homeAssistantDiscovery: false })).status, 200);
  });
});

/** An MQTT 3.1.1 CONNECT without user name and password (clean session, keepalive 30 s). */
function connectPacketNoLogin(clientId: string): Buffer {
  const str = (v: string): Buffer => {
    const b = Buffer.from(v);
    return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
  };
  const body = Buffer.concat([str('MQTT'), Buffer.from([4, 0x02, 0, 30]), str(clientId)]);
  return Buffer.concat([Buffer.from([0x10, body.length]), body]);
}

/**
 * One raw TCP connection per CONNECT, `parallel` at a time, from `from(i)` (any 127/8 address is this
 * machine): resolves with how many got each CONNACK return code (-1: closed without one).
 */
async function loginFlood(port: number, count: number, parallel: number, packet: (i: number) => Buffer, from: (i: number) => string = () => '127.0.0.1'): Promise<Record<string, number>> {
  const codes: Record<string, number> = {};
  let next = 0;
  const one = (i: number): Promise<number> =>
    new Promise((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1', localAddress: from(i) });
      let got = Buffer.alloc(0);
      const timer = setTimeout(() => finish(-2), 5000);
      function finish(code: number): void {
        clearTimeout(timer);
        socket.destroy();
        resolve(code);
      }
      socket.on('connect', () => socket.write(packet(i)));
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 4 && got[0] === 0x20) finish(got[3]!);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => finish(-1));
    });
  const worker = async (): Promise<void> => {
    while (next < count) {
      const code = await one(next++);
      codes[code] = (codes[code] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return codes;
}

/** A connection that announces a CONNECT of `declared` bytes and sends `send` of them, then waits: resolves once written or cut. */
function halfConnect(port: number, from: string, declared: number, send: number): Promise<{ socket: net.Socket; cut: () => boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    let closed = false;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolve({ socket, cut: () => closed });
    });
    socket.on('connect', () => {
      const len = remainingLength(declared);
      socket.write(Buffer.concat([Buffer.from([0x10, ...len]), Buffer.alloc(send, 0x61)]), () => resolve({ socket, cut: () => closed }));
    });
  });
}

/** An MQTT packet's remaining length as its variable-length bytes (MQTT 3.1.1 section 2.2.3). */
function remainingLength(n: number): number[] {
  const out: number[] = [];
  let x = n;
  do {
    let byte = x % 128;
    x = Math.floor(x / 128);
    if (x > 0) byte |= 0x80;
    out.push(byte);
  } while (x > 0);
  return out;
}

function logRows(w: World): { count: number; minId: number; maxId: number } {
  const db = new Database(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'), { readonly: true });
  const row = db.prepare('SELECT COUNT(*) AS count, MIN(id) AS minId, MAX(id) AS maxId FROM logs').get() as { count: number; minId: number; maxId: number };
  db.close();
  return row;
}

describe('MQTT before login: floods of refused logins and half-sent CONNECTs (embedded broker)', () => {
  let w: World;
  let c: CoordinatorHandle;
  let login: Login;

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    const issued = await api<Login>(c.url, 'POST', '/workers/steady/credentials');
    login = { username: issued.body.username, password: issued.body.password };
  });
  after(() => stopAll());

  it('counts refused logins and sums them up per address and minute, never a log row each, and keeps the log', async () => {
    await sleep(500);
    const before = logRows(w);
    const anonymous = await loginFlood(c.mqttPort, 2000, 8, (i) => connectPacketNoLogin(`flood-${i}`));
    const named = await loginFlood(c.mqttPort, 2000, 8, (i) => connectPacket(`flood-u-${i}`, `user-${i}`, 'guess'));
    assert.equal(anonymous['4'], 2000, JSON.stringify(anonymous));
    assert.equal(named['4'], 2000, JSON.stringify(named));
    await sleep(1000);
    const afterFlood = logRows(w);
    const written = afterFlood.maxId - before.maxId;
    process.stdout.write(`# 4,000 refused logins wrote ${written} log rows\n`);
    assert.ok(written <= 6, `4,000 refused logins wrote ${written} log rows`);
    assert.equal(afterFlood.minId, before.minId, 'no earlier row was pushed out');
    const lines = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=100')).body.map((l) => l.message);
    assert.ok(lines.some((l) => /^MQTT login from 127\.0\.0\.1 refused: no user name \(client flood-0, user -\); further refusals from this address are counted and summed up once a minute$/.test(l)), lines.join('\n'));
    const metrics = await api<string>(c.url, 'GET', '/metrics');
    assert.match(metrics.text, /^ripwerk_mqtt_refused_logins_total 4000$/m);
    assert.deepEqual((await api(c.url, 'GET', '/health')).body, { ok: true, mqtt: true, workers_online: 0 });
    assert.equal(await connackCode(c.mqttUrl, { ...login, clientId: 'steady-1' }), 0, 'a worker with its credentials still logs in');
  });

  it('limits connections and bytes before login per address and in total, so 2,000 half-sent CONNECTs cost no memory', async () => {
    const pid = c.proc.child.pid!;
    const rssBefore = rssKb(pid);
    const held: { socket: net.Socket; cut: () => boolean }[] = [];
    // 40 addresses with 50 connections each, every one announcing a CONNECT of 65,000 bytes and sending 64,000 of them.
    for (let a = 0; a < 40; a++) held.push(...(await Promise.all(Array.from({ length: 50 }, () => halfConnect(c.mqttPort, `127.0.${10 + Math.floor(a / 200)}.${2 + (a % 200)}`, 65_000, 64_000)))));
    await sleep(1500);
    const rssAfter = rssKb(pid);
    const open = held.filter((h) => !h.cut()).length;
    process.stdout.write(`# 2,000 half-sent CONNECTs: ${open} still open, the coordinator grew from ${Math.round(rssBefore / 1024)} to ${Math.round(rssAfter / 1024)} MB\n`);
    for (const h of held) h.socket.destroy();
    assert.ok(rssAfter - rssBefore < 40 * 1024, `the coordinator grew by ${Math.round((rssAfter - rssBefore) / 1024)} MB`);
    assert.ok(open <= 40 * 8, `${open} half-sent CONNECTs were kept`);
    await sleep(300);
    assert.equal(await connackCode(c.mqttUrl, { ...login, clientId: 'steady-2' }), 0, 'a worker still logs in afterwards');
    const lines = (await api<LogRow[]>(c.url, 'GET', '/logs?limit=200')).body.map((l) => l.message);
    assert.ok(lines.some((l) => /^MQTT connection from 127\.0\.10\.\d+ cut before login: /.test(l)), lines.join('\n'));
  });
});
