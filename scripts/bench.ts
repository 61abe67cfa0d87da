/**
 * npm run bench: Ripwerk against the bare tools, measured in one run. Prints one line per measure
 * and writes .tmp/bench-results.json. Figures, not pass/fail gates: exit 0 unless a measure failed.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  api, dvdImage, FAKE_MAKEMKVCON, insertDisc, smallMkv, sleep, startAgent, startCoordinator, stopAll, waitForDisc, waitForStatus, world,
  type JobJson,
} from '../test/e2e/harness.js';
import { REPO_DIR } from '../test/fixtures/tools-samples.js';

const PRESET = 'Very Fast 480p30';

interface Result {
  name: string;
  value: number;
  unit: string;
  target: number;
  baseline?: string;
}
const results: Result[] = [];

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}
function rssMb(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? '';
  return Number(line.replace(/\D+/g, '')) / 1024;
}
function timeIt(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function logTime(base: string, id: string, pattern: RegExp): Promise<number> {
  const r = await api<{ logs: { ts: string; message: string }[] }>(base, 'GET', `/jobs/${id}/detail`);
  const line = r.body.logs.find((l) => pattern.test(l.message));
  if (!line) throw new Error(`job ${id} has no log line ${pattern}`);
  return Date.parse(line.ts);
}

/** Transcode stage through Ripwerk (queued → finished, from the job log) against bare HandBrakeCLI on the same raw file. */
async function transcodeOverhead(): Promise<void> {
  const w = world();
  const c = await startCoordinator(w);
  await api(c.url, 'PUT', '/settings', { transcodePreset: PRESET, keepOriginal: true, autoEject: false });
  const a = await startAgent(w, c.mqttUrl, 'bench');
  insertDisc(a.driveDir, dvdImage('BENCH', [60]));
  const device = await waitForDisc(c.url, a);
  const ripwerk: number[] = [];
  let raw = '';
  for (let i = 0; i < 3; i++) {
    const created = await api<JobJson>(c.url, 'POST', '/jobs', { device });
    if (created.status !== 201) throw new Error(created.text);
    await waitForStatus(c.url, created.body.id, ['completed'], 300_000);
    ripwerk.push((await logTime(c.url, created.body.id, /^finished:/)) - (await logTime(c.url, created.body.id, /^transcode queued/)));
    raw = path.join(w.raw, created.body.id, 'title_t01.mkv');
  }
  const bare: number[] = [];
  const out = path.join(w.root, 'bare.mkv');
  for (let i = 0; i < 3; i++) {
    fs.rmSync(out, { force: true });
    bare.push(timeIt(() => execFileSync('HandBrakeCLI', ['-i', raw, '-o', out, '-Z', PRESET, '--json'], { stdio: 'ignore' })));
  }
  const ratio = median(ripwerk) / median(bare);
  results.push({ name: 'transcode stage / bare HandBrakeCLI (median of 3, 60 s DVD title)', value: ratio, unit: 'x', target: 1.05, baseline: `ripwerk ${median(ripwerk).toFixed(0)} ms, bare ${median(bare).toFixed(0)} ms` });
  await stopAll();
}

/** POST /jobs until the ripper process starts (a wrapper in front of the MakeMKV stand-in notes the time). */
async function ripperStartLatency(): Promise<void> {
  const w = world();
  const stamps = path.join(w.root, 'stamps');
  const wrapper = path.join(w.root, 'makemkvcon');
  fs.writeFileSync(wrapper, `#!/bin/sh\n[ "$1" = "-r" ] && date +%s%3N >> ${stamps}\nexec ${FAKE_MAKEMKVCON} "$@"\n`, { mode: 0o755 });
  const c = await startCoordinator(w);
  await api(c.url, 'PUT', '/settings', { transcodeEnabled: false, autoEject: false });
  const a = await startAgent(w, c.mqttUrl, 'latency', { makemkv: true, extra: { MAKEMKVCON: wrapper, FAKE_MAKEMKV_SOURCE_MKV: smallMkv(1), FAKE_MAKEMKV_SECONDS: '0', FAKE_MAKEMKV_TITLES: '5' } });
  insertDisc(a.driveDir, dvdImage('LATENCY', [2]));
  const device = await waitForDisc(c.url, a);
  const samples: number[] = [];
  for (let i = 0; i < 21; i++) {
    fs.rmSync(stamps, { force: true });
    const t0 = Date.now();
    const created = await api<JobJson>(c.url, 'POST', '/jobs', { device });
    if (created.status !== 201) throw new Error(created.text);
    await waitForStatus(c.url, created.body.id, ['completed'], 60_000);
    const first = Number(fs.readFileSync(stamps, 'utf8').split('\n')[0]);
    if (i > 0) samples.push(first - t0); // the first one warms up
  }
  results.push({ name: 'POST /jobs → ripper started, p50 (20 jobs)', value: median(samples), unit: 'ms', target: 50, baseline: `p90 ${percentile(samples, 90)} ms` });
  await stopAll();
}

/** GET /jobs with 10,000 stored jobs against reading and serialising the same rows in-process. */
async function jobListLatency(): Promise<void> {
  const w = world();
  let c = await startCoordinator(w);
  await c.proc.kill('SIGTERM');
  const dbFile = path.join(w.root, 'coordinator-data', 'coordinator.sqlite');
  const db = new Database(dbFile);
  const insert = db.prepare(
    `INSERT INTO jobs (id, title, status, progress, output_path, target_dir, meta, device, node, transcode_node, error, phase, raw_state, created_at, updated_at, finished_at)
     VALUES (?, ?, ?, 100, ?, ?, ?, 'wohnzimmer-sr0', 'wohnzimmer@htpc', 'keller@nas', ?, 'transcode', 'absent', ?, ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < 10_000; i++) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const failed = i % 10 === 0;
      const ts = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString();
      const meta = JSON.stringify({ titles: [1, 2], work_dir: '/app/temp/raw', fingerprint: `fp${i}`, disc_label: `DISC_${i}`, disc_type: 'dvd', year: 2000 + (i % 25), rip_fertig: true });
      insert.run(id, `Film Nummer ${i}`, failed ? 'failed' : 'completed', `/app/media/Filme/Film Nummer ${i}`, '/app/media/Filme', meta, failed ? 'HandBrake: exit code 3' : null, ts, ts, ts);
    }
  })();
  const baseline: number[] = [];
  const select = db.prepare('SELECT * FROM jobs ORDER BY created_at DESC, id');
  for (let i = 0; i < 50; i++) baseline.push(timeIt(() => JSON.stringify(select.all())));
  db.close();
  c = await startCoordinator(w, {}, { port: c.port, mqttPort: c.mqttPort });
  for (let i = 0; i < 20; i++) await fetch(`${c.url}/jobs`).then((r) => r.arrayBuffer());
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = process.hrtime.bigint();
    await fetch(`${c.url}/jobs`).then((r) => r.arrayBuffer());
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const count = ((await fetch(`${c.url}/jobs`).then((r) => r.json())) as unknown[]).length;
  if (count !== 10_000) throw new Error(`GET /jobs returned ${count} jobs`);
  results.push({ name: 'GET /jobs with 10,000 jobs, p99 (200 requests)', value: percentile(samples, 99), unit: 'ms', target: 20, baseline: `p50 ${median(samples).toFixed(1)} ms; bare SELECT+JSON.stringify p50 ${median(baseline).toFixed(1)} ms` });
  await stopAll();
}

/** Resident memory after 10 s idle against a bare node process. */
async function idleMemory(): Promise<void> {
  const w = world();
  const c = await startCoordinator(w);
  const a = await startAgent(w, c.mqttUrl, 'idle');
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await sleep(10_000);
  const bareMb = rssMb(bare.pid as number);
  bare.kill();
  results.push({ name: 'idle RSS coordinator (embedded broker)', value: rssMb(c.proc.child.pid as number), unit: 'MB', target: 100, baseline: `bare node ${bareMb.toFixed(0)} MB` });
  results.push({ name: 'idle RSS agent', value: rssMb(a.proc.child.pid as number), unit: 'MB', target: 70, baseline: `bare node ${bareMb.toFixed(0)} MB` });
  await stopAll();
}

let failed = false;
const only = process.argv[2];
for (const measure of [transcodeOverhead, ripperStartLatency, jobListLatency, idleMemory]) {
  if (only && measure.name !== only) continue;
  try {
    await measure();
  } catch (err) {
    failed = true;
    console.error(`${measure.name} could not be measured: ${(err as Error).message}`);
    await stopAll();
  }
}
for (const r of results) {
  const verdict = r.value <= r.target ? 'PASS' : 'OVER';
  console.log(`${verdict}  ${r.name}: ${r.value.toFixed(r.unit === 'x' ? 3 : 1)} ${r.unit} (target ≤ ${r.target} ${r.unit})${r.baseline ? ` — ${r.baseline}` : ''}`);
}
fs.mkdirSync(path.join(REPO_DIR, '.tmp'), { recursive: true });
fs.writeFileSync(path.join(REPO_DIR, '.tmp', 'bench-results.json'), `${JSON.stringify(results, null, 2)}\n`);
process.exit(failed ? 1 : 0);
