import type { Device, Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import unzipper from 'unzipper';
import { nativeWorkerRefusal } from '../../shared/native-worker.js';
import { TASKS, topics, type AgentEvent, type Command } from '../../shared/protocol.js';
import {
  api, dvdImage, insertDisc, Proc, startAgent, startCoordinator, stopAll, tempDir, waitFor, waitForDisc, waitForStatus, world,
  type AgentHandle, type CoordinatorHandle, type Job, type World,
} from './harness.js';


/** GET with a Host header of our choice (fetch does not let a caller set it). */
function getWithHost(port: number, p: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('native worker from the worker-setup zip: registers as native, transcodes, refuses rips', () => {
  let w: World;
  let c: CoordinatorHandle;
  let ripper: AgentHandle;
  let unpacked: string;
  let worker: Proc;
  const nodeName = `nativ@${os.hostname()}`;

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    ripper = await startAgent(w, c.mqttUrl, 'wohnzimmer');
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' })).status, 200);
  });
  after(stopAll);

  it('serves the zip: the bundled worker, package.json, README, start scripts and the broker, never the secret', async () => {
    const res = await fetch(`${c.url}/worker-setup/paket`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/zip');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="?ripwerk-worker\.zip"?$/);
    const zip = Buffer.from(await res.arrayBuffer());
    assert.ok(!zip.includes(Buffer.from(w.secret)), 'the broker secret is not in the zip');
    const dir = await unzipper.Open.buffer(zip);
    assert.deepEqual(dir.files.map((f) => f.path).sort(), [
      'ripwerk-worker/README.txt',
      'ripwerk-worker/config/worker.json',
      'ripwerk-worker/package.json',
      'ripwerk-worker/ripwerk-worker.cjs',
      'ripwerk-worker/start-worker.cmd',
      'ripwerk-worker/start-worker.sh',
    ]);
    unpacked = tempDir('ripwerk-paket-');
    await dir.extract({ path: unpacked });
    const home = path.join(unpacked, 'ripwerk-worker');
    const config = JSON.parse(fs.readFileSync(path.join(home, 'config', 'worker.json'), 'utf8')) as Record<string, string>;
    assert.equal(config.MQTT_URL, `mqtt://127.0.0.1:${c.mqttPort}`, 'the broker as seen from the request host');
    assert.equal(config.RIPWERK_BROKER_SECRET, undefined, 'no broker secret field: the worker gets own credentials');
    assert.equal(config.MQTT_USERNAME, '');
    assert.equal(config.MQTT_PASSWORD, '');
    assert.equal(config.MEDIA_ROOT, w.media);
    assert.equal(config.RAW_DIR, w.raw);
    assert.equal(config.ENCODER_NICE, '', 'the encoder priority is there to set; empty means the default, 10');
    const pkg = JSON.parse(fs.readFileSync(path.join(home, 'package.json'), 'utf8')) as { main: string; engines: { node: string } };
    assert.equal(pkg.main, 'ripwerk-worker.cjs');
    assert.equal(pkg.engines.node, '>=20.19');
    const readme = fs.readFileSync(path.join(home, 'README.txt'), 'utf8');
    assert.match(readme, /DATA_DIR\/broker-secret/);
    assert.match(readme, /api\/workers\/<worker name>\/credentials/);
    assert.match(readme, /RIPWERK_BROKER_SECRET/);
    assert.match(fs.readFileSync(path.join(home, 'start-worker.cmd'), 'utf8'), /\r\nnode "%HERE%ripwerk-worker\.cjs" --config "%HERE%config\\worker\.json" %\*\r\n/);
    const sh = dir.files.find((f) => f.path.endsWith('start-worker.sh'));
    assert.equal(((sh?.externalFileAttributes ?? 0) >>> 16) & 0o777, 0o755, 'start-worker.sh is executable once unzipped');
    const bundle = fs.readFileSync(path.join(home, 'ripwerk-worker.cjs'), 'utf8');
    assert.ok(!bundle.includes('better-sqlite3') && !bundle.includes('better_sqlite3'), 'no SQLite addon in the bundle');
  });

  it('runs with node from the unpacked folder (secret from the environment) and registers as a native worker', async () => {
    const home = path.join(unpacked, 'ripwerk-worker');
    const child = spawn('sh', [path.join(home, 'start-worker.sh')], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: w.root, RIPWERK_BROKER_SECRET: w.secret, WORKER_NAME: 'nativ' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker = new Proc('native-worker', child);
    await worker.waitForLine(/native worker nativ@.* starting: transcode queue only, no drives/);
    await worker.waitForLine(/connected to MQTT broker/);
    const native = await waitFor('the native worker in GET /capabilities', async () => {
      const r = await api<Worker[]>(c.url, 'GET', '/capabilities');
      return r.body.find((x) => x.name === 'nativ' && x.online);
    }, 20_000);
    assert.equal(native.node, nodeName);
    assert.equal(native.native, true);
    assert.equal(native.transcode_only, true);
    assert.equal(native.rip_backend, 'none');
    assert.ok(native.encoders.includes('software'));
    assert.deepEqual(Object.keys(native.tools), ['HandBrakeCLI']);
    const other = (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'wohnzimmer');
    assert.equal(other?.native, false);
    assert.ok(fs.existsSync(path.join(home, 'state')), 'the state lives next to the start script');
    const devices = await api<Device[]>(c.url, 'GET', '/devices');
    assert.ok(!devices.body.some((d) => d.node === nodeName), 'a native worker has no drives');
  });

  it('takes the transcode of a job ripped on another worker', async () => {
    insertDisc(ripper.driveDir, dvdImage('NATIVE_MOVIE', [8]));
    const device = await waitForDisc(c.url, ripper);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [1], transcode_node: 'nativ', year: 2024 });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed'], 60_000);
    assert.equal(done.node, ripper.node, 'ripped on the worker with the drive');
    assert.equal(done.transcode_node, nodeName, 'transcoded on the native worker');
    const out = path.join(w.media, 'Filme', 'Native Movie (2024)', 'Native Movie (2024).mkv');
    assert.ok(fs.statSync(out).size > 10_000, 'HandBrakeCLI wrote the output');
    await worker.waitForLine(/accepted worker\.tasks\.transcode_files/);
    // the outbox drains: the state file holds the finished task and no unacknowledged events
    await waitFor('an empty outbox', async () => {
      const state = JSON.parse(fs.readFileSync(path.join(unpacked, 'ripwerk-worker', 'state', 'agent-nativ.json'), 'utf8')) as { outbox: unknown[]; tasks: { state: string }[] };
      return state.outbox.length === 0 && state.tasks.some((t) => t.state === 'done');
    }, 10_000);
  });

  it('refuses a rip and a title scan with the plain error, at once', async () => {
    const client = await mqtt.connectAsync(c.mqttUrl, { username: 'ripwerk-coordinator', password: w.secret, reconnectPeriod: 0 });
    const answers: AgentEvent[] = [];
    client.on('message', (_t, p) => answers.push(JSON.parse(p.toString('utf8')) as AgentEvent));
    await client.subscribeAsync(topics.event(nodeName), { qos: 1 });
    const rip: Command = {
      id: 'rip-to-native',
      task: TASKS.ripDisc,
      job_id: 'no-such-job',
      args: { drive: 'sr0', titles: [], main_feature_only: false, raw_dir: path.join(w.raw, 'x'), target_dir: path.join(w.media, 'Filme'), title: 'X', year: null, series: null, season: null, transcode: true, keep_original: false, auto_eject: false },
    };
    const scan: Command = { id: 'scan-on-native', task: TASKS.scanTracks, args: { drive: 'sr0' } };
    for (const cmd of [rip, scan]) await client.publishAsync(topics.command(nodeName), JSON.stringify(cmd), { qos: 1 });
    const got = await waitFor('both answers', async () => {
      const r = answers.find((a) => a.command_id === rip.id);
      const s = answers.find((a) => a.command_id === scan.id);
      return r && s ? [r, s] : undefined;
    }, 10_000);
    await client.endAsync();
    for (const answer of got) {
      assert.equal(answer.type, 'rejected');
      assert.equal(answer.type === 'rejected' ? answer.reason : '', nativeWorkerRefusal('nativ'));
    }
    assert.match(nativeWorkerRefusal('nativ'), /nativer Worker ohne Laufwerke und nimmt nur Transcode-Aufträge an \(Warteschlange transcode\)/);
    await worker.waitForLine(/refused worker\.tasks\.rip_disc \(command rip-to-native\)/);
    assert.ok(!worker.lines.some((l) => /accepted worker\.tasks\.rip_disc/.test(l)));
  });
});

describe('worker-setup: the Windows installer script', () => {
  let w: World;
  let c: CoordinatorHandle;
  before(async () => {
    w = world();
    // Any Host: these tests call the coordinator by made-up names (setupOrigin's own checks are the subject).
    c = await startCoordinator(w, { ALLOWED_HOSTS: '*' });
  });
  after(stopAll);

  it('fills in the coordinator and broker as the client called them, asks for the secret, and never holds it', async () => {
    const r = await getWithHost(c.port, '/api/worker-setup/desktop', 'ripwerk.lan:8080');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(r.headers['content-disposition'] ?? '', /^attachment; filename="?install-ripwerk-worker\.ps1"?$/);
    const script = r.body;
    assert.ok(script.includes(`$CoordinatorUrl = 'http://ripwerk.lan:8080'`));
    assert.ok(script.includes(`$MqttUrl = 'mqtt://ripwerk.lan:${c.mqttPort}'`));
    assert.ok(script.includes(`$ExeUrl = 'http://ripwerk.lan:8080/api/worker-setup/desktop-exe'`));
    assert.ok(!script.includes(w.secret), 'the broker secret is not in the script');
    assert.ok(!script.includes('127.0.0.1'), 'no loopback address for another host');
    assert.match(script, /IsInRole\(\[Security\.Principal\.WindowsBuiltInRole\]::Administrator\)/);
    assert.match(script, /Read-Host -AsSecureString/);
    assert.match(script, /\[SecureString\] \$BrokerSecret/);
    assert.match(script, /\[string\] \$MqttUsername = ''/);
    assert.match(script, /\[SecureString\] \$MqttPassword/);
    assert.match(script, /if \(\$MqttUsername\) \{ \$workerConfig\.MQTT_USERNAME = \$MqttUsername; \$workerConfig\.MQTT_PASSWORD = \$secret \} else \{ \$workerConfig\.RIPWERK_BROKER_SECRET = \$secret \}/);
    assert.match(script, /Join-Path \$env:ProgramFiles 'Ripwerk'/);
    assert.match(script, /Join-Path \$env:ProgramData 'Ripwerk'/);
    assert.match(script, /New-ScheduledTaskTrigger -AtStartup/);
    assert.match(script, /-ExecutionTimeLimit \(\[TimeSpan\]::Zero\) -RestartCount 999/);
    assert.match(script, /DATA_DIR\/broker-secret/);
    assert.doesNotMatch(script, /sc\.exe/);
    assert.ok(/^[\x00-\x7f]*$/.test(script), 'ASCII only (PowerShell 5.1 reads BOM-less files as ANSI)');
    assert.ok(script.split('\n').slice(0, -1).every((l) => l.endsWith('\r')), 'CRLF line ends');
  });

  it('takes https and the host from a trusted reverse proxy, and refuses a Host header that is no host', async () => {
    const proxied = await getWithHost(c.port, '/api/worker-setup/desktop', 'internal:8080', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'ripwerk.example.org' });
    assert.ok(proxied.body.includes(`$CoordinatorUrl = 'https://ripwerk.example.org'`));
    assert.ok(proxied.body.includes(`$MqttUrl = 'mqtt://ripwerk.example.org:${c.mqttPort}'`));
    // A Host that is no host name never reaches the route: the request guard refuses it first (even with ALLOWED_HOSTS=*).
    const bad = await getWithHost(c.port, '/api/worker-setup/desktop', "evil';calc;'");
    assert.equal(bad.status, 403);
    assert.match(bad.body, /does not answer to the host name/);
  });
});
