/**
 * Memory after work (`npm run bench -- memory`): 1,000 short transcode jobs through one coordinator
 * and one agent, then a minute idle. RSS of both is read at idle before the work, at the peak while
 * it runs (sampled every 250 ms) and after the minute; the figure is after / idle (goal: within 20 %).
 *
 * The jobs are failed jobs with raw data (seeded into a stopped coordinator's database, each with
 * its own raw folder holding a 1 s Matroska file) that are transcoded again (POST
 * /jobs/{id}/retry-transcode): the full path of a transcode job (queue, command over MQTT, agent
 * task store, events, job log, job_done) with an encoder stand-in that copies its input, so the
 * figure is Ripwerk's own memory. Everything else of HandBrakeCLI (version, preset list) is the
 * real tool.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { api, smallMkv, sleep, startAgent, startCoordinator, stopAll, type Job, type Proc } from '../test/e2e/harness.js';
import { benchScript, cleanup, expectStatus, measures, newWorld, round, rssMb } from './bench-kit.js';

const JOBS = Number(process.env.BENCH_MEMORY_JOBS) || 1000;
const IDLE_BEFORE_MS = 10_000;
const IDLE_AFTER_MS = 60_000;
const SAMPLE_MS = 250;
const JOBS_TIMEOUT_MS = 30 * 60_000;

/** HandBrakeCLI whose encode copies the input to the output; every other call is the real tool. */
function copyingHandbrake(): string {
  return benchScript('ripwerk-bench-hbcopy-', 'HandBrakeCLI', () => [
    '#!/bin/sh',
    'case " $* " in',
    '  *" --scan "*) exec HandBrakeCLI "$@" ;;',
    '  *" -i "*" -o "*)',
    '    in=""; out=""',
    '    while [ $# -gt 0 ]; do case "$1" in -i) in="$2"; shift ;; -o) out="$2"; shift ;; esac; shift; done',
    '    exec cp -- "$in" "$out" ;;',
    'esac',
    'exec HandBrakeCLI "$@"',
  ]).file;
}

/** JOBS failed jobs, each with a raw folder holding a link to `mkv`; returns their ids. */
function seedFailedJobs(dbFile: string, rawRoot: string, targetDir: string, mkv: string): string[] {
  const db = new Database(dbFile);
  const insert = db.prepare(
    `INSERT INTO jobs (id, title, status, progress, target_dir, meta, device, node, error, phase, raw_state, raw_path, created_at, updated_at, finished_at)
     VALUES (@id, @title, 'failed', 100, @target_dir, @meta, 'bench-sr0', 'bench@host', 'HandBrake could not encode: exit code 3', 'transcode', 'present', @raw_path, @t, @t, @t)`,
  );
  const ids: string[] = [];
  const start = Date.UTC(2024, 0, 1);
  db.transaction(() => {
    for (let i = 0; i < JOBS; i++) {
      const id = `${(0x20000000 + i).toString(16)}-4b1e-4c2a-9d3f-${String(i).padStart(12, '0')}`;
      const raw = path.join(rawRoot, id);
      fs.mkdirSync(raw);
      fs.linkSync(mkv, path.join(raw, 'title_t00.mkv'));
      insert.run({
        id,
        title: `Kurzfilm ${i}`,
        target_dir: targetDir,
        meta: JSON.stringify({ titles: [], work_dir: rawRoot, main_feature_only: true, year: 2000 + (i % 25), rip_fertig: true }),
        raw_path: raw,
        t: new Date(start + i * 60_000).toISOString(),
      });
      ids.push(id);
    }
  })();
  db.close();
  return ids;
}

interface Reading {
  idle: number;
  peak: number;
  after: number;
}

export async function memory(): Promise<void> {
  const w = newWorld();
  const first = await startCoordinator(w);
  await first.proc.kill('SIGTERM');
  const mkv = smallMkv(1);
  cleanup.push(path.dirname(mkv));
  const targetDir = path.join(w.media, 'Filme');
  fs.mkdirSync(targetDir, { recursive: true });
  const ids = seedFailedJobs(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'), w.raw, targetDir, mkv);

  // 1,000 retries in a few seconds: above the default per-client request limit of 600 a minute.
  const c = await startCoordinator(w, { RATE_LIMIT_PER_MINUTE: '100000' }, { port: first.port, mqttPort: first.mqttPort });
  expectStatus(await api(c.url, 'PUT', '/settings', { keepOriginal: false, autoEject: false, transcodeEnabled: true }), 200, 'PUT /settings');
  const a = await startAgent(w, c.mqttUrl, 'memory', { drive: false, extra: { HANDBRAKE_CLI: copyingHandbrake() } });
  const procs: Proc[] = [c.proc, a.proc];
  const alive = (): void => {
    for (const p of procs) if (!p.alive) throw new Error(`${p.name} exited:\n${p.lines.slice(-10).join('\n')}`);
  };
  await sleep(IDLE_BEFORE_MS);
  alive();
  const coordinator: Reading = { idle: rssMb(c.proc.child.pid), peak: 0, after: 0 };
  const agent: Reading = { idle: rssMb(a.proc.child.pid), peak: 0, after: 0 };

  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      coordinator.peak = Math.max(coordinator.peak, rssMb(c.proc.child.pid));
      agent.peak = Math.max(agent.peak, rssMb(a.proc.child.pid));
      await sleep(SAMPLE_MS);
    }
  })();

  const t0 = Date.now();
  let done = 0;
  try {
    for (const id of ids) expectStatus(await api(c.url, 'POST', `/jobs/${id}/retry-transcode`), 202, `POST /jobs/${id}/retry-transcode`);
    for (;;) {
      alive();
      const list = await api<Job[]>(c.url, 'GET', '/jobs');
      expectStatus(list, 200, 'GET /jobs');
      const failed = list.body.filter((j) => j.status === 'failed' || j.status === 'canceled');
      done = list.body.filter((j) => j.status === 'completed').length;
      if (done + failed.length === ids.length && failed.length > 0) throw new Error(`${failed.length} of ${ids.length} jobs failed, e.g. ${failed[0].id}: ${failed[0].error}`);
      if (done === ids.length) break;
      if (Date.now() - t0 > JOBS_TIMEOUT_MS) throw new Error(`only ${done} of ${ids.length} jobs completed within ${JOBS_TIMEOUT_MS / 60_000} min`);
      await sleep(2000);
    }
  } finally {
    sampling = false;
    await sampler;
  }
  const workSeconds = (Date.now() - t0) / 1000;
  await sleep(IDLE_AFTER_MS);
  alive();
  coordinator.after = rssMb(c.proc.child.pid);
  agent.after = rssMb(a.proc.child.pid);
  coordinator.peak = Math.max(coordinator.peak, coordinator.after);
  agent.peak = Math.max(agent.peak, agent.after);

  const detail = (r: Reading): string =>
    `idle ${r.idle.toFixed(1)} MB, peak ${r.peak.toFixed(1)} MB, after ${IDLE_AFTER_MS / 1000} s idle ${r.after.toFixed(1)} MB; ${ids.length} jobs in ${workSeconds.toFixed(0)} s`;
  for (const [key, who, r] of [
    ['memory-coordinator', 'coordinator', coordinator],
    ['memory-agent', 'agent', agent],
  ] as const) {
    measures.push({
      key,
      name: `RSS ${who} after ${ids.length.toLocaleString('en')} short jobs and ${IDLE_AFTER_MS / 1000} s idle, against its idle RSS`,
      value: r.after / r.idle,
      unit: 'x',
      target: 1.2,
      detail: detail(r),
      samples: { idle_mb: [round(r.idle)], peak_mb: [round(r.peak)], after_mb: [round(r.after)] },
    });
  }
  await stopAll();
}
