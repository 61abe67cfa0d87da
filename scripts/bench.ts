/**
 * npm run bench: Ripwerk against the bare tools, every measure in one run, on real coordinator and
 * agent processes (the e2e harness). Prints one line per measure (Ripwerk's figure, the bare reference
 * measured in the same run and moments, their ratio, the ratio's target, PASS/OVER), then a pass/over
 * summary, and writes .tmp/bench-results.json with every sample. Every target bounds a ratio (or a
 * count that must be zero): on a shared host an absolute time says how busy the host was. It is a
 * report: exit 0 even when a figure is over its target, 1 when a measure could not be taken.
 * docs/benchmarks.md tells what each measure is, its reference and its target.
 *
 *   node dist/scripts/bench.js                      all measures
 *   node dist/scripts/bench.js latency joblist      some (transcode, latency, joblist, idle, download, rip, memory, scale, chunks)
 *   BENCH_KEEP=1 node dist/scripts/bench.js         keep the temp folders (printed at the end)
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  api,
  dvdImage,
  FAKE_MAKEMKVCON,
  insertDisc,
  multiLangImage,
  Proc,
  smallMkv,
  sleep,
  startAgent,
  startCoordinator,
  stopAll,
  waitFor,
  waitForDisc,
  waitForStatus,
  type Job,
} from '../test/e2e/harness.js';
import { REPO_DIR } from '../test/fixtures/tools-samples.js';
import { REFRESH_MS } from '../coordinator/jobs/raw-data.js';
import { originalsDir } from '../shared/originals.js';
import { download, rip } from './bench-files.js';
import { memory } from './bench-memory.js';
import { scale } from './bench-scale.js';
import { chunks } from './bench-chunks.js';
import { bareHttpServer, benchScript, cleanup, cpuBusy, expectStatus, failures, infoReplayBranch, logTime, logTimes, measures, median, ms, newWorld, pct, round, rssMb, timedRun, type Measure } from './bench-kit.js';

const PRESET = 'Very Fast 480p30';
const TRANSCODE_RUNS = Number(process.env.BENCH_TRANSCODE_RUNS) || 3;
const TRANSCODE_SECONDS = 60;
const LATENCY_SAMPLES = 20;
/**
 * POST /jobs → ripper started against the bare start of the same calls (see latency): Ripwerk adds an
 * HTTP route, a database write, a command through the broker and the agent's task setup to the two
 * process starts and the `info` run. Measured 2.17 (28.2 against 13.0 ms) in a single run of it; the
 * bench before had 42.4 ms in an hour when the bash replay of `info` alone took 6.2 ms against 2.7 ms
 * here, a host about twice as slow for both sides. 3 leaves a third of headroom over 2.2 and is over
 * when what Ripwerk adds (15 ms of the 28 here) grows by about 70 %.
 */
const LATENCY_TARGET = 3;
const JOB_ROWS = 10_000;
const LIST_REQUESTS = 200;
/** Raw-data sweeps sampled by joblist: about a second each on this host. */
const SWEEPS = 3;
const IDLE_MS = 10_000;

// ------------------------------------------------------------------ 1. transcode overhead

/**
 * The transcode stage through Ripwerk against bare HandBrakeCLI on the same raw file with the same
 * arguments. Each round runs a full job (open-dvd rip of the two-language DVD's title, then the
 * transcode with keepOriginal and the default language choice: two AC-3 streams passed through, one
 * subtitle track) and takes the time from the job entering `transcoding` ("transcode queued" job
 * log) to `completed` ("finished:"); then bare HandBrakeCLI runs the arguments Ripwerk gave it (the
 * wrapper records them) on that job's raw file, into another output. Ripwerk's window includes its
 * HandBrake scan of the raw file (the stream choice) and of the output (the stream list). Rounds alternate so drift
 * hits both sides alike; the medians are compared. HandBrakeCLI's own run-to-run spread is several
 * percent, so a bash wrapper (HANDBRAKE_CLI) also stamps when the encoder inside Ripwerk starts and
 * ends: the window minus that is Ripwerk's own share, free of the encoder's noise.
 */
async function transcode(): Promise<void> {
  const w = newWorld();
  const handbrake = execFileSync('bash', ['-c', 'command -v HandBrakeCLI'], { encoding: 'utf8' }).trim();
  if (!handbrake) throw new Error('HandBrakeCLI is not installed');
  const stamps = path.join(w.root, 'hb-stamps');
  const { file: wrapper } = benchScript('ripwerk-bench-hb-', 'HandBrakeCLI', () => [
    '#!/bin/bash',
    `stamps=${JSON.stringify(stamps)}`,
    `hb=${JSON.stringify(handbrake)}`,
    'case " $* " in',
    '  *" --scan "*) ;;',
    '  *" -i "*) printf "%s\\0" "$@" > "$stamps.args"; echo "start $EPOCHREALTIME" >> "$stamps"; "$hb" "$@"; rc=$?; echo "end $EPOCHREALTIME" >> "$stamps"; exit $rc ;;',
    'esac',
    'exec "$hb" "$@"',
  ]);
  const c = await startCoordinator(w);
  expectStatus(await api(c.url, 'PUT', '/settings', { keepOriginal: true, transcodePreset: PRESET, autoEject: false, transcodeEnabled: true }), 200, 'PUT /settings');
  const a = await startAgent(w, c.mqttUrl, 'bench', { extra: { HANDBRAKE_CLI: wrapper } });
  const iso = multiLangImage('BENCH', TRANSCODE_SECONDS);
  cleanup.push(path.dirname(iso));
  insertDisc(a.driveDir, iso);
  const device = await waitForDisc(c.url, a);

  const ripwerk: number[] = [];
  const dispatch: number[] = [];
  const inside: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < TRANSCODE_RUNS; i++) {
    fs.rmSync(stamps, { force: true });
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    expectStatus(created, 201, 'POST /jobs');
    const id = created.body.id;
    const done = await waitForStatus(c.url, id, ['completed'], 600_000);
    const logs = await logTimes(c.url, id);
    const queued = logTime(logs, /^transcode queued/, id);
    const started = logTime(logs, /^transcode started on/, id);
    const finished = logTime(logs, /^finished:/, id);
    ripwerk.push(finished - queued);
    dispatch.push(started - queued);
    const hb = Object.fromEntries(fs.readFileSync(stamps, 'utf8').trim().split('\n').map((l) => l.split(' ')).map(([k, v]) => [k, Number(v) * 1000]));
    if (!hb.start || !hb.end) throw new Error(`job ${id}: the HandBrakeCLI wrapper stamped ${JSON.stringify(hb)}`);
    inside.push(hb.end - hb.start);

    const rawFiles = done.meta?.raw_files;
    if (!Array.isArray(rawFiles) || rawFiles.length !== 1 || typeof rawFiles[0] !== 'string') throw new Error(`job ${id}: expected one raw file in meta.raw_files, got ${JSON.stringify(rawFiles)}`);
    // keepOriginal moved the raw file into MEDIA_ROOT/Originale/<output folder> after the encode.
    const raw = path.join(originalsDir(w.media, done.target_dir as string, done.output_path as string, done.id), path.basename(rawFiles[0]));
    if (!fs.existsSync(raw)) throw new Error(`job ${id}: the original ${raw} is missing although keepOriginal is set`);
    const out = path.join(w.root, `bare-${i}.mkv`);
    const given = fs.readFileSync(`${stamps}.args`, 'utf8').split('\0').slice(0, -1);
    const inAt = given.indexOf('-i');
    const outAt = given.indexOf('-o');
    if (given[inAt + 1] !== rawFiles[0] || outAt < 0 || !given.includes('--audio-copy-mask')) throw new Error(`job ${id}: unexpected encoder arguments ${JSON.stringify(given)}`);
    bare.push(await timedRun(handbrake, given.map((arg, k) => (k === inAt + 1 ? raw : k === outAt + 1 ? out : arg))));
    if (!(fs.statSync(out).size > 0)) throw new Error(`bare HandBrakeCLI wrote nothing to ${out}`);
    fs.rmSync(out, { force: true });
  }
  const ratio = median(ripwerk) / median(bare);
  const own = ripwerk.map((r, i) => r - inside[i]);
  const spread = (v: number[]): string => `${(Math.min(...v) / 1000).toFixed(2)}–${(Math.max(...v) / 1000).toFixed(2)} s`;
  measures.push({
    key: 'transcode',
    name: `transcode stage with passthrough, Ripwerk / bare HandBrakeCLI with the same arguments (median of ${TRANSCODE_RUNS}, ${TRANSCODE_SECONDS} s two-language DVD title, "${PRESET}")`,
    figure: median(ripwerk),
    reference: median(bare),
    referenceName: 'bare HandBrakeCLI',
    unit: 'ms',
    ratio,
    // 1.05, as set when the stage was first measured. The encoder's own run-to-run spread is in this
    // ratio (single rounds 0.98-1.19 in one hour), so a run over it is read with transcode-own beside it.
    target: 1.05,
    detail:
      `Ripwerk transcoding→completed median ${ms(median(ripwerk))} (${spread(ripwerk)}), bare HandBrakeCLI median ${ms(median(bare))} (${spread(bare)}); ` +
      `paired ratios ${ripwerk.map((r, i) => (r / bare[i]).toFixed(3)).join(', ')}; ` +
      `inside Ripwerk the encoder ran ${ms(median(inside))}, so Ripwerk's own share is ${ms(median(own))} per job ` +
      `(ratio window/encoder ${median(ripwerk.map((r, i) => r / inside[i])).toFixed(3)}), of which queued→"transcode started" ${ms(median(dispatch))}`,
    samples: { ripwerk_ms: ripwerk, bare_ms: bare, encoder_inside_ms: inside, ripwerk_own_ms: own, dispatch_ms: dispatch },
  });
  measures.push({
    key: 'transcode-own',
    name: `transcode stage, Ripwerk window / the same encoder run inside it (median of ${TRANSCODE_RUNS} paired ratios)`,
    figure: median(ripwerk),
    reference: median(inside),
    referenceName: 'encoder inside',
    unit: 'ms',
    ratio: median(ripwerk.map((r, i) => r / inside[i])),
    // 1.05: at most 5 % around the very encoder run (median of the paired ratios); measured 1.006.
    target: 1.05,
    detail: `Ripwerk adds ${ms(median(own))} per job around a ${ms(median(inside))} encode (not subject to the encoder's run-to-run spread)`,
  });
  await stopAll();
}

// ------------------------------------------------------------------ 2. POST /jobs → ripper start

/**
 * The reference of the latency measure: a bare Node server in its own process (as the agent is one)
 * that answers a POST with 201 at once, then does what any service must to start a rip: it starts
 * the ripper's `info` with the arguments Ripwerk gave it, reads its output to the end, and starts
 * `mkv` with Ripwerk's arguments (into a folder of its own). No HTTP routing, database, broker or
 * job logic. GET /wait answers once that `mkv` has ended.
 */
async function bareRipperStarter(bin: string, env: Record<string, string>): Promise<{ url: string; proc: Proc }> {
  const code = [
    "const { spawn } = require('child_process');",
    `const bin = ${JSON.stringify(bin)};`,
    'let running = false; const waiters = [];',
    'const run = (args, then) => { const c = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] }); c.stdout.resume(); c.stderr.resume(); c.on("close", then); };',
    "require('http').createServer((q, s) => {",
    "  let body = ''; q.on('data', (c) => (body += c));",
    "  q.on('end', () => {",
    "    if (q.url === '/wait') { if (running) waiters.push(s); else s.end('done'); return; }",
    '    const r = JSON.parse(body); running = true; s.statusCode = 201; s.end("{}");',
    '    run(r.info, () => run(r.mkv, () => { running = false; for (const w of waiters.splice(0)) w.end("done"); }));',
    '  });',
    "}).listen(0, '127.0.0.1', function () { console.log('port ' + this.address().port); });",
  ].join('\n');
  const proc = new Proc('bare-ripper-start', spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } }));
  const line = await proc.waitForLine(/^port \d+$/);
  return { url: `http://127.0.0.1:${line.split(' ')[1]}`, proc };
}

/** Waits for the stamps of a ripper start in `file` (polled every 2 ms, nothing else loaded meanwhile). */
async function ripperStamps(file: string): Promise<{ info: number; infoEnd: number; mkv: number }> {
  return waitFor(
    'the mkv stamp',
    async () => {
      const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
      const at = (kind: string): number | undefined => {
        const line = text.split('\n').find((l) => l.startsWith(`${kind} `));
        return line ? Number(line.split(' ')[1]) * 1000 : undefined;
      };
      const [info, infoEnd, mkvAt] = [at('info'), at('info-end'), at('mkv')];
      return info !== undefined && infoEnd !== undefined && mkvAt !== undefined ? { info, infoEnd, mkv: mkvAt } : undefined;
    },
    30_000,
    2,
  );
}

/**
 * POST /jobs until the ripper starts. A bash wrapper in front of the MakeMKV stand-in stamps the
 * wall clock ($EPOCHREALTIME, no fork) when `info` starts and ends and when `mkv` starts; `mkv` is
 * the ripper proper. The stand-in is a Node script whose start alone takes ~50 ms, so the wrapper
 * answers `info` itself: the first run (a warm-up) records the stand-in's robot-mode lines and exit
 * code for those arguments, later runs replay them byte for byte from bash. So the figure measures
 * Ripwerk, not a Node start; the info run is still reported apart.
 *
 * The reference, right after each job in the same moments: a POST to a bare Node server that starts
 * the same `info` and `mkv` calls through the same wrapper (bareRipperStarter), timed the same way
 * from before its POST to the `mkv` stamp. The ratio is what Ripwerk's HTTP route, database, broker
 * round trip and job logic add to the two process starts and the `info` run any ripper start costs.
 */
async function latency(): Promise<void> {
  const w = newWorld();
  const stamps = path.join(w.root, 'stamps');
  const calls = path.join(w.root, 'calls');
  const { file: wrapper } = benchScript('ripwerk-bench-wrap-', 'makemkvcon', (dir) => [
    '#!/bin/bash',
    // The bare reference names its own files; the agent's runs use these.
    `stamps=\${BENCH_STAMPS:-${JSON.stringify(stamps)}}; calls=\${BENCH_CALLS:-${JSON.stringify(calls)}}`,
    `fake=${JSON.stringify(FAKE_MAKEMKVCON)}`,
    "printf -v joined '%s\\x1f' \"$@\"; printf '%s\\n' \"$joined\" >> \"$calls\"",
    'case " $* " in',
    '  *" mkv "*) echo "mkv $EPOCHREALTIME" >> "$stamps"; exec "$fake" "$@" ;;',
    ...infoReplayBranch(path.join(dir, 'info-replay')),
    'esac',
    'exec "$fake" "$@"',
  ]);
  const mkv = smallMkv(1);
  cleanup.push(path.dirname(mkv));
  const c = await startCoordinator(w);
  expectStatus(await api(c.url, 'PUT', '/settings', { transcodeEnabled: false, autoEject: false }), 200, 'PUT /settings');
  const a = await startAgent(w, c.mqttUrl, 'latency', {
    makemkv: true,
    extra: { MAKEMKVCON: wrapper, FAKE_MAKEMKV_SOURCE_MKV: mkv, FAKE_MAKEMKV_SECONDS: '0', FAKE_MAKEMKV_TITLES: '60' },
  });
  const iso = dvdImage('LATENCY', [2]);
  cleanup.push(path.dirname(iso));
  insertDisc(a.driveDir, iso);
  const device = await waitForDisc(c.url, a);
  const bareStamps = path.join(w.root, 'bare-stamps');
  const bareOut = path.join(w.root, 'bare-rip');
  const bare = await bareRipperStarter(wrapper, { ...a.env, BENCH_STAMPS: bareStamps, BENCH_CALLS: path.join(w.root, 'bare-calls') });

  const total: number[] = [];
  const post: number[] = [];
  const toInfo: number[] = [];
  const infoRun: number[] = [];
  const infoToMkv: number[] = [];
  const bareTotal: number[] = [];
  const bareInfoRun: number[] = [];
  const warmups = 2;
  for (let i = 0; i < LATENCY_SAMPLES + warmups; i++) {
    fs.rmSync(stamps, { force: true });
    fs.rmSync(calls, { force: true });
    const t0 = Date.now();
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    const t1 = Date.now();
    expectStatus(created, 201, 'POST /jobs');
    // Wait on the stamp file, not the API, so nothing loads the coordinator while the job starts.
    const s = await ripperStamps(stamps);
    await waitForStatus(c.url, created.body.id, ['completed'], 60_000);

    // The bare start of the same two calls, right after.
    const given = fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean).map((l) => l.split('\x1f').slice(0, -1));
    const mkvArgs = given.find((g) => g.includes('mkv'));
    const infoArgs = given.filter((g) => g.includes('info')).pop();
    if (!mkvArgs || !infoArgs) throw new Error(`job ${created.body.id}: the wrapper saw no info and mkv call: ${JSON.stringify(given)}`);
    fs.rmSync(bareStamps, { force: true });
    fs.rmSync(bareOut, { recursive: true, force: true });
    fs.mkdirSync(bareOut);
    const b0 = Date.now();
    expectStatus(await api(bare.url, 'POST', '/', { info: infoArgs, mkv: [...mkvArgs.slice(0, -1), bareOut] }), 201, 'POST to the bare ripper start');
    const b = await ripperStamps(bareStamps);
    await api(bare.url, 'GET', '/wait');

    if (i < warmups) continue;
    total.push(s.mkv - t0);
    post.push(t1 - t0);
    toInfo.push(s.info - t0);
    infoRun.push(s.infoEnd - s.info);
    infoToMkv.push(s.mkv - s.infoEnd);
    bareTotal.push(b.mkv - b0);
    bareInfoRun.push(b.infoEnd - b.info);
  }
  await bare.proc.kill();
  const ripwerkOnly = total.map((t, i) => t - infoRun[i]);
  measures.push({
    key: 'latency',
    name: `POST /jobs → ripper (makemkvcon mkv) started, p50 of ${LATENCY_SAMPLES} / a bare Node server starting the same calls`,
    figure: median(total),
    reference: median(bareTotal),
    referenceName: 'bare start',
    unit: 'ms',
    ratio: median(total) / median(bareTotal),
    target: LATENCY_TARGET,
    detail:
      `p90 ${ms(pct(total, 90))}; medians: POST answered ${ms(median(post))}, POST→\`info\` spawned ${ms(median(toInfo))}, ` +
      `stand-in \`info\` run ${ms(median(infoRun))} (replayed from bash; not Ripwerk), \`info\` ended→\`mkv\` spawned ${ms(median(infoToMkv))}; ` +
      `without the stand-in's info run: p50 ${ms(median(ripwerkOnly))}; the bare start: p50 ${ms(median(bareTotal))}, p90 ${ms(pct(bareTotal, 90))}, its \`info\` run ${ms(median(bareInfoRun))}`,
    samples: { total_ms: total, post_ms: post, to_info_ms: toInfo, info_run_ms: infoRun, info_to_mkv_ms: infoToMkv, bare_total_ms: bareTotal, bare_info_run_ms: bareInfoRun },
  });
  await stopAll();
}

// ------------------------------------------------------------------ 3. GET /jobs with 10,000 jobs

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET over a kept-alive connection; the time is to the last byte. */
function timedGet(url: string, keepBody = false): Promise<{ status: number; ms: number; bytes: number; body: Buffer | null }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get(url, { agent: keepAlive }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (keepBody) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, bytes, body: keepBody ? Buffer.concat(chunks) : null }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const STATUSES = ['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'failed', 'canceled'] as const;
const ERRORS = [
  'HandBrake could not encode: exit code 3',
  'the worker keller@nas went offline during the rip (no contact for 120 s): retry the rip',
  'MakeMKV could not read the disc (exit code 11)',
];

/** Fills the jobs table of a stopped coordinator with rows shaped like real finished jobs. */
function seedJobs(dbFile: string): void {
  const db = new Database(dbFile);
  const insert = db.prepare(
    `INSERT INTO jobs (id, title, status, progress, output_path, target_dir, meta, device, node, transcode_node, error, phase, eta_points,
                       raw_state, raw_path, raw_size, raw_checked_at, created_at, updated_at, finished_at)
     VALUES (@id, @title, @status, @progress, @output_path, @target_dir, @meta, @device, @node, @transcode_node, @error, @phase, @eta_points,
             @raw_state, @raw_path, @raw_size, @raw_checked_at, @created_at, @updated_at, @finished_at)`,
  );
  const start = Date.UTC(2023, 0, 1);
  db.transaction(() => {
    for (let i = 0; i < JOB_ROWS; i++) {
      const id = `${(0x10000000 + i).toString(16)}-4b1e-4c2a-9d3f-${String(i).padStart(12, '0')}`;
      const status = STATUSES[i % STATUSES.length];
      const series = i % 7 === 0;
      const title = series ? `Serie ${i % 97} Staffel ${1 + (i % 5)}` : `Film Nummer ${i}`;
      const year = 1970 + (i % 55);
      const created = start + i * 3_600_000;
      const finished = created + 40 * 60_000 + (i % 13) * 60_000;
      const target = series ? '/srv/media/Serien' : '/srv/media/Filme';
      const rawDir = `/srv/raw/${id}`;
      const meta = {
        titles: series ? [1, 2, 3, 4] : [],
        work_dir: '/srv/raw',
        fingerprint: (i * 2654435761).toString(16).padStart(16, '0').slice(-16),
        disc_label: series ? `SERIE_${i % 97}_S${1 + (i % 5)}_D1` : `FILM_${i}`,
        disc_type: i % 4 === 0 ? 'bluray' : 'dvd',
        year: series ? null : year,
        series: series ? `Serie ${i % 97}` : null,
        season: series ? 1 + (i % 5) : null,
        main_feature_only: !series,
        rip_fertig: true,
        raw_files: series ? [1, 2, 3, 4].map((t) => `${rawDir}/title_t0${t}.mkv`) : [`${rawDir}/title_t01.mkv`],
        transcode_node: i % 3 === 0 ? 'keller@nas' : undefined,
      };
      insert.run({
        id,
        title,
        status,
        progress: status === 'completed' ? 100 : 37.5,
        output_path: status === 'completed' ? (series ? `${target}/Serie ${i % 97}/Season 0${1 + (i % 5)}` : `${target}/${title} (${year})`) : null,
        target_dir: target,
        meta: JSON.stringify(meta),
        device: 'wohnzimmer-sr0',
        node: 'wohnzimmer@htpc',
        transcode_node: status === 'completed' ? 'keller@nas' : null,
        error: status === 'failed' ? ERRORS[i % ERRORS.length] : null,
        phase: 'transcode',
        eta_points: JSON.stringify([{ t: finished - 60_000, p: 98 }, { t: finished, p: 100 }]),
        raw_state: status === 'completed' ? 'absent' : 'present',
        raw_path: rawDir,
        raw_size: status === 'completed' ? null : 4_700_000_000,
        raw_checked_at: new Date(finished).toISOString(),
        created_at: new Date(created).toISOString(),
        updated_at: new Date(finished).toISOString(),
        finished_at: new Date(finished).toISOString(),
      });
    }
  })();
  db.close();
}

/** Ripwerk's and the bare server's times of the same moments: request pairs, each at a wall-clock time. */
interface Paired {
  ripwerk: number[];
  bare: number[];
  at: number[];
}

/**
 * GET /jobs and the bare server alternately, `n` pairs or until `until` (epoch ms): the two are
 * compared under the same load of the host, which on a shared machine moves from second to second
 * (the bare server's p99 swung from 9 to 57 ms between runs here).
 */
async function pairedGets(url: string, bareUrl: string, n: number, until = Infinity): Promise<Paired> {
  const out: Paired = { ripwerk: [], bare: [], at: [] };
  while (out.ripwerk.length < n && Date.now() < until) {
    const r = await timedGet(url);
    if (r.status !== 200) throw new Error(`GET ${url}: HTTP ${r.status}`);
    // timedGet's agent keeps one connection per server: each has its own.
    const b = await timedGet(bareUrl);
    if (b.status !== 200) throw new Error(`GET ${bareUrl}: HTTP ${b.status}`);
    out.ripwerk.push(r.ms);
    out.bare.push(b.ms);
    out.at.push(Date.now());
  }
  return out;
}

/**
 * GET /jobs p99 against the bare server's p99 over the same request pairs. 1.5: a p99 of 200 pairs is
 * the second-slowest request, and one scheduler hiccup on either side moves it by tens of ms; the
 * recorded runs gave 0.86-1.41 (the last: 0.97 / 0.90 / 0.99 quiet / one job processing / during
 * the sweeps). A list that costs clearly more than sending its bytes is over: during the sweep before
 * its probes moved into shells it took 49-138 ms against about 20.
 */
const LIST_TARGET = 1.5;

const listRatio = (p: Paired): Pick<Measure, 'figure' | 'reference' | 'referenceName' | 'unit' | 'ratio' | 'target'> => ({
  figure: pct(p.ripwerk, 99),
  reference: pct(p.bare, 99),
  referenceName: 'bare server',
  unit: 'ms',
  ratio: pct(p.ripwerk, 99) / pct(p.bare, 99),
  target: LIST_TARGET,
});

/** "p50 … p99 …" of both servers' times in the same moments. */
const pairDetail = (p: Paired): string =>
  `p50 ${ms(median(p.ripwerk))}; the bare server in the same moments p50 ${ms(median(p.bare))} p99 ${ms(pct(p.bare, 99))}`;

/**
 * GET /jobs with 10,000 stored jobs: 200 requests once the coordinator is warm (no job processing),
 * each followed by one to a bare Node server sending the same bytes, so both are measured under the
 * same load of the host; and reading and serialising the same rows in-process. Two more conditions
 * of a real installation are measured the same way: while the 30 s raw-data sweep runs (it probes
 * every failed/canceled job and writes each row), and while one job is processing (its ETA is rendered
 * per request).
 */
async function joblist(): Promise<void> {
  const w = newWorld();
  const first = await startCoordinator(w);
  await first.proc.kill('SIGTERM');
  const dbFile = path.join(w.root, 'coordinator-data', 'coordinator.sqlite');
  seedJobs(dbFile);

  // In-process baseline: the same rows read with better-sqlite3 and serialised.
  const db = new Database(dbFile, { readonly: true });
  const select = db.prepare('SELECT * FROM jobs ORDER BY created_at DESC, id');
  const bareDb: number[] = [];
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now();
    JSON.stringify(select.all());
    if (i >= 10) bareDb.push(performance.now() - t0);
  }
  db.close();

  const ports = { port: first.port, mqttPort: first.mqttPort };
  // Sampling without pause asks more often than the 600 requests a minute one client may.
  const env = { RATE_LIMIT_PER_MINUTE: '1000000' };
  let c = await startCoordinator(w, env, ports);
  const startedAt = Date.now();
  const url = `${c.url}/jobs`;
  const cold = await timedGet(url, true);
  if (cold.status !== 200 || !cold.body) throw new Error(`GET /jobs: HTTP ${cold.status}`);
  const list = JSON.parse(cold.body.toString('utf8')) as Job[];
  if (list.length !== JOB_ROWS) throw new Error(`GET /jobs returned ${list.length} jobs, ${JOB_ROWS} were stored`);
  const bodyFile = path.join(w.root, 'jobs-body.json');
  fs.writeFileSync(bodyFile, cold.body);
  const bare = await bareHttpServer(bodyFile);
  await pairedGets(url, bare.url, 20);
  // The quiet samples end before the first raw-data sweep (30 s after the coordinator started its
  // timer, which was before it listened and this run's clock began): on a busy machine 200 pairs may
  // not fit, so the run stops at 27 s and counts what it took, rather than mixing in requests from
  // inside the sweep.
  const quiet = await pairedGets(url, bare.url, LIST_REQUESTS, startedAt + 27_000);
  if (quiet.ripwerk.length < 50) throw new Error(`only ${quiet.ripwerk.length} quiet samples fitted before the first raw-data sweep (30 s after start)`);

  // The raw-data sweep starts up to a second or two before 30 s on this clock and takes about a second
  // (batched probes): sample from before it until well after it, then read from the rows
  // (raw_checked_at) when it ran, to count the samples that fell inside it. It runs again 30 s after
  // its end; before that the bench puts the failed and canceled jobs' raw data back to "present"
  // behind the coordinator's back, so every sweep writes all 2,000 rows (SWEEPS of them, for a p99
  // of more than a handful of requests on a busy host).
  const probeRows = STATUSES.filter((s) => s !== 'completed').length * (JOB_ROWS / STATUSES.length);
  const during: Paired = { ripwerk: [], bare: [], at: [] };
  const sweepDetails: string[] = [];
  let since = startedAt;
  let sampleFrom = startedAt + 27_500;
  for (let n = 0; n < SWEEPS; n++) {
    await sleep(Math.max(0, sampleFrom - Date.now()));
    const sweeping = await pairedGets(url, bare.url, Infinity, sampleFrom + 5_500);
    const db2 = new Database(dbFile);
    const sweep = db2
      .prepare<[string], { n: number; first: string | null; last: string | null }>('SELECT COUNT(*) AS n, MIN(raw_checked_at) AS first, MAX(raw_checked_at) AS last FROM jobs WHERE raw_checked_at > ?')
      .get(new Date(since).toISOString());
    if (!sweep || sweep.n === 0 || !sweep.first || !sweep.last) {
      db2.close();
      sweepDetails.push('no raw-data sweep was seen');
      break;
    }
    const [from, to] = [Date.parse(sweep.first), Date.parse(sweep.last)];
    sweeping.at.forEach((at, i) => {
      // A pair counts when its Ripwerk request overlapped the sweep.
      if (at - sweeping.bare[i] >= from && at - sweeping.bare[i] - sweeping.ripwerk[i] <= to) {
        during.ripwerk.push(sweeping.ripwerk[i]);
        during.bare.push(sweeping.bare[i]);
        during.at.push(at);
      }
    });
    sweepDetails.push(`${sweep.n} of ${probeRows} jobs in ${((to - from) / 1000).toFixed(1)} s`);
    since = Date.now();
    db2.prepare(`UPDATE jobs SET raw_state = 'present', raw_size = 4700000000 WHERE status IN ('failed', 'canceled')`).run();
    db2.close();
    sampleFrom = to + REFRESH_MS - 2_500;
  }
  const sweepDetail = `${sweepDetails.length} sweeps, each probing the failed/canceled jobs and writing every row: ${sweepDetails.join(', ')}`;

  // One processing job: its ETA is rendered per request.
  await c.proc.kill('SIGTERM');
  const rw = new Database(dbFile);
  const now = Date.now();
  rw.prepare(`UPDATE jobs SET status = 'running', phase = 'rip', progress = 42, finished_at = NULL, eta_points = ? WHERE id = ?`).run(
    JSON.stringify([{ t: now - 60_000, p: 20 }, { t: now, p: 42 }]),
    list[0].id,
  );
  rw.close();
  c = await startCoordinator(w, env, ports);
  await pairedGets(url, bare.url, 20);
  const live = await pairedGets(url, bare.url, LIST_REQUESTS);
  await bare.proc.kill();

  measures.push({
    key: 'joblist',
    name: `GET /jobs with ${JOB_ROWS.toLocaleString('en')} jobs, p99 of ${quiet.ripwerk.length} / the bare server's in the same moments`,
    ...listRatio(quiet),
    detail:
      `${pairDetail(quiet)}; first request after start ${ms(cold.ms)}, body ${(cold.bytes / 1e6).toFixed(1)} MB; ` +
      `bare better-sqlite3 SELECT + JSON.stringify in-process p50 ${ms(median(bareDb))} p99 ${ms(pct(bareDb, 99))}`,
    samples: { ripwerk_ms: quiet.ripwerk, bare_http_ms: quiet.bare, bare_sqlite_ms: bareDb, first_ms: [cold.ms] },
  });
  if (during.ripwerk.length >= 10) {
    measures.push({
      key: 'joblist-sweep',
      name: `GET /jobs with ${JOB_ROWS.toLocaleString('en')} jobs during the raw-data sweep, p99 of ${during.ripwerk.length} / the bare server's`,
      ...listRatio(during),
      detail: `${pairDetail(during)}; ${sweepDetail}`,
      samples: { ripwerk_ms: during.ripwerk, bare_http_ms: during.bare },
    });
  } else {
    failures.push({ measure: 'joblist-sweep', error: `only ${during.ripwerk.length} requests fell inside the raw-data sweep: ${sweepDetail}` });
  }
  measures.push({
    key: 'joblist-live',
    name: `GET /jobs with ${JOB_ROWS.toLocaleString('en')} jobs, one of them processing, p99 of ${live.ripwerk.length} / the bare server's`,
    ...listRatio(live),
    detail: pairDetail(live),
    samples: { ripwerk_ms: live.ripwerk, bare_http_ms: live.bare },
  });
  await stopAll();
}

// ------------------------------------------------------------------ 4. idle memory

/**
 * Idle RSS of a coordinator and an agent against a bare `node` started beside them: what the same
 * Node binary holds on this host with nothing loaded (about 40 MB), so a Node upgrade or another
 * allocator moves the reference with the figure. RSS does not move with the host's load the way a
 * time does, but the bare node is a reference in the same run all the same, so the target is a ratio.
 */
async function idle(): Promise<void> {
  const w = newWorld();
  const c = await startCoordinator(w);
  const a = await startAgent(w, c.mqttUrl, 'idle');
  const bare = new Proc('bare-node', spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'pipe'] }));
  await sleep(IDLE_MS);
  for (const p of [c.proc, a.proc, bare]) if (!p.alive) throw new Error(`${p.name} exited while idle:\n${p.lines.slice(-10).join('\n')}`);
  const coordinator = rssMb(c.proc.child.pid);
  const agent = rssMb(a.proc.child.pid);
  const bareMb = rssMb(bare.child.pid);
  measures.push({
    key: 'idle-coordinator',
    name: `idle RSS coordinator (embedded MQTT broker, one agent), after ${IDLE_MS / 1000} s / a bare node beside it`,
    figure: coordinator,
    reference: bareMb,
    referenceName: 'bare node',
    unit: 'MB',
    ratio: coordinator / bareMb,
    // 2.5: the 100 MB this row had over a bare node of about 40 MB; measured 2.1-2.3 (84-91 MB).
    target: 2.5,
    detail: `bare \`node -e "setInterval(()=>{},1000)"\` ${bareMb.toFixed(1)} MB; above bare ${(coordinator - bareMb).toFixed(1)} MB`,
  });
  measures.push({
    key: 'idle-agent',
    name: `idle RSS agent (one image drive), after ${IDLE_MS / 1000} s / a bare node beside it`,
    figure: agent,
    reference: bareMb,
    referenceName: 'bare node',
    unit: 'MB',
    ratio: agent / bareMb,
    // 1.9 (75 MB over a 40 MB bare node): measured 1.5-1.75 (61-68.5 MB, scattering by several MB
    // between runs of unchanged code); the 70 MB it had left 1.5 MB of that scatter.
    target: 1.9,
    detail: `bare node ${bareMb.toFixed(1)} MB; above bare ${(agent - bareMb).toFixed(1)} MB`,
  });
  await stopAll();
}

// ------------------------------------------------------------------ main

const ALL: Record<string, () => Promise<void>> = { transcode, latency, joblist, idle, download, rip, memory, scale, chunks };
const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!ALL[name]) {
    console.error(`unknown measure "${name}"; known: ${Object.keys(ALL).join(', ')}`);
    process.exit(2);
  }
}

const startedAt = new Date().toISOString();
const load = os.loadavg();
const busy = await cpuBusy(1000);
console.log(`ripwerk bench: node ${process.version}, ${os.cpus().length} CPU(s), CPU ${(busy * 100).toFixed(0)} % busy before the start`);
if (busy > 0.2) console.log('warning: something else is using the CPU; timings will be noisy');

for (const [name, run] of Object.entries(ALL)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const t0 = Date.now();
  process.stdout.write(`measuring ${name} ... `);
  try {
    await run();
    console.log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  } catch (err) {
    console.log('FAILED');
    failures.push({ measure: name, error: (err as Error).stack ?? String(err) });
    console.error(`${name} could not be measured: ${(err as Error).message}`);
  } finally {
    await stopAll();
  }
}

const figureText = (m: Measure, v: number): string => (m.unit === 'jobs' ? String(v) : m.unit === 'cores' ? `${v.toFixed(3)} cores` : `${v.toFixed(1)} ${m.unit}`);
const passes = (m: Measure): boolean => m.ratio <= m.target;
const rows = measures.map((m) => ({
  name: m.name,
  figure: figureText(m, m.figure),
  reference: m.reference === null ? '—' : `${figureText(m, m.reference)} ${m.referenceName}`,
  ratio: m.reference === null ? '—' : `${m.ratio.toFixed(3)}×`,
  target: m.reference === null ? `= ${m.target}` : `≤ ${m.target.toFixed(2)}×`,
  verdict: passes(m) ? 'PASS' : 'OVER',
}));
type Column = 'name' | 'figure' | 'reference' | 'ratio' | 'target';
const head: Record<Column, string> = { name: 'measure', figure: 'figure', reference: 'reference (same moments)', ratio: 'ratio', target: 'target' };
const width = (k: Column): number => Math.max(head[k].length, ...rows.map((r) => r[k].length));
const line = (r: Record<Column, string> & { verdict: string }): string =>
  `${r.name.padEnd(width('name'))}  ${r.figure.padStart(width('figure'))}  ${r.reference.padEnd(width('reference'))}  ${r.ratio.padStart(width('ratio'))}  ${r.target.padEnd(width('target'))}  ${r.verdict}`;
console.log('');
console.log(line({ ...head, verdict: 'verdict' }));
for (const r of rows) console.log(line(r));
console.log('');
for (const m of measures) console.log(`${m.key}: ${m.detail}`);
for (const f of failures) console.log(`${f.measure}: NOT MEASURED: ${f.error.split('\n')[0]}`);
const over = measures.filter((m) => !passes(m));
console.log(`\n${measures.length - over.length} pass, ${over.length} over${over.length ? ` (${over.map((m) => m.key).join(', ')})` : ''}, ${failures.length} not measured`);

const outDir = path.join(REPO_DIR, '.tmp');
fs.mkdirSync(outDir, { recursive: true });
const outFile = path.join(outDir, 'bench-results.json');
fs.writeFileSync(
  outFile,
  `${JSON.stringify(
    {
      started_at: startedAt,
      finished_at: new Date().toISOString(),
      host: { node: process.version, cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null, loadavg_at_start: load.map((l) => round(l)), cpu_busy_at_start: round(busy) },
      measures: measures.map((m) => ({
        key: m.key,
        name: m.name,
        figure: round(m.figure, 3),
        reference: m.reference === null ? null : round(m.reference, 3),
        reference_name: m.reference === null ? null : m.referenceName,
        unit: m.unit,
        ratio: round(m.ratio, 3),
        target: m.target,
        verdict: passes(m) ? 'PASS' : 'OVER',
        detail: m.detail,
        samples: m.samples ? Object.fromEntries(Object.entries(m.samples).map(([k, v]) => [k, v.map((x) => round(x))])) : undefined,
      })),
      failures,
    },
    null,
    2,
  )}\n`,
);
console.log(`\nwrote ${path.relative(process.cwd(), outFile) || outFile}`);

if (process.env.BENCH_KEEP) console.log(`kept: ${cleanup.join(' ')}`);
else for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
keepAlive.destroy();
process.exit(failures.length ? 1 : 0);
