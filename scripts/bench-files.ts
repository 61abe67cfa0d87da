/**
 * Two measures of issue 18's "not yet measured": a file download through GET /jobs/{id}/files/{name}
 * against nginx serving the same file from the same disk (sendfile on), and the rip stage through
 * Ripwerk against the bare ripper stand-in at a fixed speed. Both use a bash MakeMKV stand-in that
 * writes its title at a fixed rate (fixedSpeedRipper), so the rip takes a known time and the figure
 * is Ripwerk's own cost around it.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  api,
  dvdImage,
  FAKE_MAKEMKVCON,
  freePort,
  insertDisc,
  Proc,
  startAgent,
  startCoordinator,
  stopAll,
  tempDir,
  waitFor,
  waitForDisc,
  waitForStatus,
  type CoordinatorHandle,
  type Job,
} from '../test/e2e/harness.js';
import { benchScript, cleanup, expectStatus, infoReplayBranch, logTime, logTimes, measures, median, ms, newWorld, timedRun } from './bench-kit.js';

const RIP_ROUNDS = Number(process.env.BENCH_RIP_ROUNDS) || 3;
const RIP_MB = 150;
const RIP_SECONDS = 15;
const DOWNLOAD_MB = 512;
const DOWNLOAD_ROUNDS = Number(process.env.BENCH_DOWNLOAD_ROUNDS) || 5;
const RANGE_REQUESTS = 40;
const RANGE_MB = 16;
const NGINX_INSTALL = 'apt-get install -y nginx-light';

// ------------------------------------------------------------------ the fixed-speed ripper

interface FixedRipper {
  /** The makemkvcon to give the agent (MAKEMKVCON). */
  bin: string;
  /** "<kind> <epoch seconds>" lines: info, info-end, mkv, mkv-end. */
  stamps: string;
  /** One line per call: its arguments, each followed by \x1f. */
  calls: string;
}

/**
 * A bash makemkvcon. `info` replays the robot-mode lines the Node stand-in (test/fixtures/makemkvcon)
 * printed for the same arguments on the first call, as the latency bench does, so no Node start is
 * timed. `mkv <source> <title> <dir>` prints the same opening lines, then writes `mb` MB of the
 * title's file (TINFO 27 of the info lines) into <dir> on a fixed schedule over `seconds`, with a
 * PRGV pair after each of `steps` pieces (zeros, or random bytes with fill /dev/urandom) as the real tool prints them while "Saving to MKV file",
 * and the closing 5005/5036 messages. The schedule is absolute, so forks do not add up: run bare,
 * it takes `seconds` plus its own start.
 */
export function fixedSpeedRipper(opts: { mb: number; seconds: number; steps: number; fill?: '/dev/zero' | '/dev/urandom' }): FixedRipper {
  const chunk = Math.ceil((opts.mb * 1024 * 1024) / opts.steps);
  const stepUs = Math.round((opts.seconds * 1e6) / opts.steps);
  const { file: bin, dir } = benchScript('ripwerk-bench-ripper-', 'makemkvcon', (dir) => [
    '#!/bin/bash',
    `stamps=${JSON.stringify(path.join(dir, 'stamps'))}; calls=${JSON.stringify(path.join(dir, 'calls'))}; fake=${JSON.stringify(FAKE_MAKEMKVCON)}`,
    `cache=${JSON.stringify(path.join(dir, 'info-replay'))}`,
    `chunk=${chunk}; steps=${opts.steps}; step_us=${stepUs}; fill=${opts.fill ?? '/dev/zero'}`,
    "printf -v joined '%s\\x1f' \"$@\"; printf '%s\\n' \"$joined\" >> \"$calls\"",
    'args=("$@"); n=${#args[@]}',
    'case " $* " in',
    ...infoReplayBranch(path.join(dir, 'info-replay')),
    '  *" mkv "*) ;;',
    '  *) exec "$fake" "$@" ;;',
    'esac',
    'echo "mkv $EPOCHREALTIME" >> "$stamps"',
    'source=${args[n-3]}; title=${args[n-2]}; dir=${args[n-1]}',
    'if [[ ! -f "$cache.rc" ]]; then echo "no info replay: run info first" >&2; exit 2; fi',
    'name=""',
    'while IFS= read -r line; do',
    '  if [[ $line == TCOUNT:* ]]; then break; fi',
    "  printf '%s\\n' \"$line\"",
    'done < "$cache"',
    'while IFS= read -r line; do',
    '  if [[ $line == "TINFO:$title,27,0,"* ]]; then name=${line#*,27,0,\\"}; name=${name%\\"}; break; fi',
    'done < "$cache"',
    'if [[ -z $name ]]; then echo "title $title is not on $source" >&2; exit 1; fi',
    'url="file://$dir"',
    'printf \'%s\\n\' \'PRGV:0,22279,65536\' \'PRGV:0,0,65536\' \'PRGT:5024,0,"Saving all titles to MKV files"\'',
    'printf \'MSG:5014,131072,2,"Saving 1 titles into directory %s","Saving %%1 titles into directory %%2","1","%s"\\n\' "$url" "$url"',
    'printf \'%s\\n\' \'PRGC:5057,0,"Analyzing seamless segments"\' \'PRGV:0,0,65536\' \'PRGV:16384,0,65536\' \'PRGV:49152,0,65536\' \'PRGC:5017,0,"Saving to MKV file"\' \'PRGV:0,0,65536\'',
    'out="$dir/$name"; : > "$out" || exit 1',
    'start=${EPOCHREALTIME/./}; prev=0',
    'for ((i = 1; i <= steps; i++)); do',
    '  dd if=$fill bs=$chunk count=1 iflag=fullblock status=none >> "$out" || exit 1',
    '  now=${EPOCHREALTIME/./}; wait_us=$((start + i * step_us - now))',
    "  if ((wait_us > 0)); then sleep \"$(printf '%d.%06d' $((wait_us / 1000000)) $((wait_us % 1000000)))\"; fi",
    '  v=$((65536 * i / steps)); printf \'PRGV:%d,%d,65536\\nPRGV:%d,%d,65536\\n\' $v $prev $v $v; prev=$v',
    'done',
    'printf \'%s\\n\' \'MSG:5005,128,1,"1 titles saved","%1 titles saved","1"\' \'MSG:5036,260,1,"Copy complete. 1 titles saved.","Copy complete. %1 titles saved.","1"\'',
    'echo "mkv-end $EPOCHREALTIME" >> "$stamps"',
  ]);
  return { bin, stamps: path.join(dir, 'stamps'), calls: path.join(dir, 'calls') };
}

function readStamps(file: string): { kind: string; at: number }[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '))
    .map(([kind, v]) => ({ kind, at: Number(v) * 1000 }));
}

function readCalls(file: string): string[][] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\x1f').slice(0, -1));
}

/** A coordinator and one MakeMKV agent with the fixed-speed ripper, a one-title disc in its drive, no transcode stage. */
async function ripSetup(ripper: FixedRipper, titleSeconds: number): Promise<{ c: CoordinatorHandle; device: string }> {
  const w = newWorld();
  const c = await startCoordinator(w);
  expectStatus(await api(c.url, 'PUT', '/settings', { transcodeEnabled: false, autoEject: false }), 200, 'PUT /settings');
  const a = await startAgent(w, c.mqttUrl, 'ripbench', { makemkv: true, extra: { MAKEMKVCON: ripper.bin, FAKE_MAKEMKV_TITLES: String(titleSeconds) } });
  const iso = dvdImage('RIPBENCH', [2]);
  cleanup.push(path.dirname(iso));
  insertDisc(a.driveDir, iso);
  return { c, device: await waitForDisc(c.url, a) };
}

async function ripJob(c: CoordinatorHandle, device: string): Promise<{ id: string; posted: number; done: Job }> {
  const posted = Date.now();
  const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [0] });
  expectStatus(created, 201, 'POST /jobs');
  const done = await waitForStatus(c.url, created.body.id, ['completed'], 600_000);
  return { id: created.body.id, posted, done };
}

// ------------------------------------------------------------------ rip stage

/**
 * The rip stage through Ripwerk against the bare stand-in with the same arguments. Each round: a job
 * (POST /jobs, title 0, no transcode stage) whose window runs from the POST to the "finished:" job log
 * line (the file moved into the output folder), then the calls Ripwerk made to the stand-in in that
 * job (`info`, then `mkv` into the job's raw folder) run bare one after the other, their stdout read
 * through a pipe. Rounds alternate; the medians are compared. The stand-in stamps its own runs, so
 * the part of the window that is Ripwerk's (before, between and after the calls) is reported too.
 */
export async function rip(): Promise<void> {
  const steps = RIP_SECONDS * 40;
  const ripper = fixedSpeedRipper({ mb: RIP_MB, seconds: RIP_SECONDS, steps });
  const { c, device } = await ripSetup(ripper, 3600);
  await ripJob(c, device); // warm-up: the info replay is recorded, the agent's modules are loaded

  const ripwerk: number[] = [];
  const bare: number[] = [];
  const own: number[] = [];
  const toInfo: number[] = [];
  const between: number[] = [];
  const after: number[] = [];
  const mkvInside: number[] = [];
  const mkvBare: number[] = [];
  for (let i = 0; i < RIP_ROUNDS; i++) {
    fs.rmSync(ripper.stamps, { force: true });
    fs.rmSync(ripper.calls, { force: true });
    const { id, posted, done } = await ripJob(c, device);
    const finished = logTime(await logTimes(c.url, id), /^finished:/, id);
    const s = readStamps(ripper.stamps);
    const at = (kind: string): number => {
      const hit = s.find((x) => x.kind === kind);
      if (!hit) throw new Error(`job ${id}: the stand-in stamped no "${kind}" (${JSON.stringify(s)})`);
      return hit.at;
    };
    const calls = readCalls(ripper.calls);
    const kinds = calls.map((a) => (a.includes('mkv') ? 'mkv' : a.includes('info') ? 'info' : '?'));
    if (kinds.join(',') !== 'info,mkv') throw new Error(`job ${id}: expected an info and an mkv call, got ${kinds.join(',')}`);
    const outFile = path.join(done.output_path as string, fs.readdirSync(done.output_path as string).find((n) => n.endsWith('.mkv')) ?? '');
    const size = fs.statSync(outFile).size;
    if (size < RIP_MB * 1024 * 1024) throw new Error(`job ${id}: the output ${outFile} has ${size} bytes, the stand-in wrote ${RIP_MB} MB`);
    fs.rmSync(outFile, { force: true });
    ripwerk.push(finished - posted);
    const inside = at('info-end') - at('info') + (at('mkv-end') - at('mkv'));
    own.push(finished - posted - inside);
    toInfo.push(at('info') - posted);
    between.push(at('mkv') - at('info-end'));
    after.push(finished - at('mkv-end'));
    mkvInside.push(at('mkv-end') - at('mkv'));

    // Bare: the same calls with the same arguments, into the same raw folder.
    const rawDir = calls[1][calls[1].length - 1];
    fs.mkdirSync(rawDir, { recursive: true });
    const t0 = performance.now();
    for (const args of calls) {
      const took = await timedRun(ripper.bin, args, { pipeStdout: true });
      if (args.includes('mkv')) mkvBare.push(took);
    }
    bare.push(performance.now() - t0);
    fs.rmSync(rawDir, { recursive: true, force: true });
  }
  const spread = (v: number[]): string => `${(Math.min(...v) / 1000).toFixed(2)}–${(Math.max(...v) / 1000).toFixed(2)} s`;
  measures.push({
    key: 'rip',
    name: `rip stage, Ripwerk POST /jobs→finished / bare stand-in info+mkv with the same arguments (median of ${RIP_ROUNDS}, ${RIP_MB} MB at ${RIP_MB / RIP_SECONDS} MB/s)`,
    figure: median(ripwerk),
    reference: median(bare),
    referenceName: 'bare stand-in',
    unit: 'ms',
    ratio: median(ripwerk) / median(bare),
    // 1.02: a 15 s rip may take 300 ms more than the bare tool; measured 1.003-1.004 (Ripwerk's own 50-90 ms).
    target: 1.02,
    detail:
      `Ripwerk median ${ms(median(ripwerk))} (${spread(ripwerk)}), bare median ${ms(median(bare))} (${spread(bare)}); paired ratios ${ripwerk.map((r, i) => (r / bare[i]).toFixed(3)).join(', ')}; ` +
      `Ripwerk's own share ${ms(median(own))} per job: POST→info spawned ${ms(median(toInfo))}, info ended→mkv spawned ${ms(median(between))}, mkv ended→"finished:" ${ms(median(after))}; ` +
      `the stand-in's \`mkv\` (${steps * 2} PRGV lines) ran ${ms(median(mkvInside))} inside Ripwerk (its own stamps) and ${ms(median(mkvBare))} bare (spawn to exit)`,
    samples: { ripwerk_ms: ripwerk, bare_ms: bare, mkv_inside_ms: mkvInside, mkv_bare_ms: mkvBare, ripwerk_own_ms: own, post_to_info_ms: toInfo, info_to_mkv_ms: between, mkv_end_to_finished_ms: after },
  });
  await stopAll();
}

// ------------------------------------------------------------------ download

function nginxBinary(): string | null {
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(candidate)) return candidate;
  try {
    return execFileSync('bash', ['-c', 'command -v nginx'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** nginx on a free loopback port serving `root` (sendfile on), everything in a temp folder, in the foreground. */
async function startNginx(bin: string, root: string): Promise<{ url: string; proc: Proc }> {
  const dir = tempDir('ripwerk-bench-nginx-');
  cleanup.push(dir);
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  const q = (p: string): string => JSON.stringify(p);
  fs.writeFileSync(
    conf,
    [
      'daemon off;',
      // One process: as root a master would hand the work to `nobody`, who may not read a temp folder.
      'master_process off;',
      'worker_processes 1;',
      `pid ${q(path.join(dir, 'nginx.pid'))};`,
      `error_log ${q(path.join(dir, 'error.log'))} warn;`,
      'events { worker_connections 64; }',
      'http {',
      '  access_log off;',
      '  sendfile on;',
      '  tcp_nopush on;',
      '  default_type application/octet-stream;',
      `  client_body_temp_path ${q(path.join(dir, 'body'))};`,
      `  proxy_temp_path ${q(path.join(dir, 'proxy'))};`,
      `  fastcgi_temp_path ${q(path.join(dir, 'fastcgi'))};`,
      `  server { listen 127.0.0.1:${port}; root ${q(root)}; location / { } }`,
      '}',
      '',
    ].join('\n'),
  );
  const proc = new Proc('nginx', spawn(bin, ['-e', 'stderr', '-p', dir, '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const ready = waitFor(
    'nginx to listen',
    async () => {
      if (!proc.alive) throw new Error(`nginx exited: ${proc.lines.slice(-5).join(' | ')}`);
      const r = await fetch(`http://127.0.0.1:${port}/`).catch(() => null);
      return r !== null;
    },
    10_000,
    50,
  );
  await ready.catch(async (err: unknown) => {
    await proc.kill();
    throw err;
  });
  return { url: `http://127.0.0.1:${port}`, proc };
}

/** What Node alone does: a plain http server piping a read stream of the file (1 MiB pieces) into the response. */
async function bareNodeFileServer(file: string): Promise<{ url: string; proc: Proc }> {
  const code = `const fs=require('fs'),f=${JSON.stringify(file)},n=fs.statSync(f).size;require('http').createServer((q,s)=>{s.setHeader('content-length',n);fs.createReadStream(f,{highWaterMark:1<<20}).pipe(s)}).listen(0,'127.0.0.1',function(){console.log('port '+this.address().port)})`;
  const proc = new Proc('bare-node-files', spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const line = await proc.waitForLine(/^port \d+$/);
  return { url: `http://127.0.0.1:${line.split(' ')[1]}/`, proc };
}

interface Fetched {
  status: number;
  seconds: number;
  bytes: number;
  contentRange: string;
}

/** One GET with curl (the same client for both servers), body to /dev/null unless `out` is given. */
function curlGet(url: string, range?: string, out = '/dev/null'): Fetched {
  const args = ['-s', '-g', '-o', out, '-D', '-', '-w', '\n%{http_code} %{time_total} %{size_download}\n'];
  if (range) args.push('-H', `Range: ${range}`);
  const text = execFileSync('curl', [...args, url], { encoding: 'utf8', maxBuffer: 1024 * 1024 });
  const lines = text.trim().split('\n');
  const [status, seconds, bytes] = (lines[lines.length - 1] ?? '').split(' ').map(Number);
  const contentRange = lines.find((l) => /^content-range:/i.test(l))?.split(':')[1]?.trim() ?? '';
  return { status, seconds, bytes, contentRange };
}

/**
 * GET /jobs/{id}/files/{name} against nginx serving the output folder of the same job (sendfile on):
 * the whole file (512 MB, in the page cache after the rip wrote it) fetched by curl, rounds
 * alternating, medians compared; then 16 MB ranges at spread offsets (a player seeking). Before
 * timing, both servers must answer the same Range requests alike: the same status, Content-Range
 * and bytes for a first-100-bytes, a suffix, an open-ended and an unsatisfiable range.
 */
export async function download(): Promise<void> {
  const nginx = nginxBinary();
  if (!nginx) throw new Error(`nginx is not installed: ${NGINX_INSTALL} (npm run bench installs it)`);
  const ripper = fixedSpeedRipper({ mb: DOWNLOAD_MB, seconds: 2, steps: 64, fill: '/dev/urandom' });
  const { c, device } = await ripSetup(ripper, 3600);
  const { id, done } = await ripJob(c, device);
  const files = await api<{ name: string; size: number }[]>(c.url, 'GET', `/jobs/${id}/files`);
  expectStatus(files, 200, `GET /jobs/${id}/files`);
  const file = files.body.find((f) => f.name.endsWith('.mkv'));
  if (!file) throw new Error(`job ${id} has no .mkv in its output folder: ${files.text}`);
  const size = file.size;
  const ripwerkUrl = `${c.url}/jobs/${id}/files/${encodeURIComponent(file.name)}`;
  const onDisk = path.join(done.output_path as string, file.name);
  const server = await startNginx(nginx, done.output_path as string);
  const nginxUrl = `${server.url}/${encodeURIComponent(file.name)}`;
  let node: { url: string; proc: Proc } | null = null;
  const ripwerk: number[] = [];
  const bare: number[] = [];
  const plain: number[] = [];
  const rangeR: number[] = [];
  const rangeN: number[] = [];
  const tinyR: number[] = [];
  const tinyN: number[] = [];
  const span = RANGE_MB * 1024 * 1024;
  try {
    node = await bareNodeFileServer(onDisk);
    // Both answer Range requests alike, with the bytes of the file on disk.
    const scratch = tempDir('ripwerk-bench-ranges-');
    cleanup.push(scratch);
    const fd = fs.openSync(onDisk, 'r');
    const slice = (from: number, to: number): Buffer => {
      const b = Buffer.alloc(to - from);
      fs.readSync(fd, b, 0, b.length, from);
      return b;
    };
    try {
      for (const [range, from, to] of [['bytes=0-99', 0, 100], ['bytes=-500', size - 500, size], [`bytes=${size - 1000}-`, size - 1000, size], [`bytes=${size}-`, 0, 0]] as const) {
        for (const [who, url] of [['Ripwerk', ripwerkUrl], ['nginx', nginxUrl]] as const) {
          const into = path.join(scratch, who);
          fs.rmSync(into, { force: true });
          const f = curlGet(url, range, into);
          const want = to > from ? { status: 206, contentRange: `bytes ${from}-${to - 1}/${size}` } : { status: 416, contentRange: `bytes */${size}` };
          if (f.status !== want.status || f.contentRange !== want.contentRange) throw new Error(`Range ${range}: ${who} answered ${f.status} "${f.contentRange}", expected ${want.status} "${want.contentRange}"`);
          if (to > from && !fs.readFileSync(into).equals(slice(from, to))) throw new Error(`Range ${range}: ${who} sent other bytes than the file holds`);
        }
      }
    } finally {
      fs.closeSync(fd);
    }

    const check = (f: Fetched, what: string): number => {
      if (f.status !== 200 || f.bytes !== size) throw new Error(`${what}: HTTP ${f.status}, ${f.bytes} of ${size} bytes`);
      return f.seconds * 1000;
    };
    check(curlGet(ripwerkUrl), 'Ripwerk warm-up');
    check(curlGet(nginxUrl), 'nginx warm-up');
    const plainUrl = node.url;
    check(curlGet(plainUrl), 'bare Node warm-up');
    for (let i = 0; i < DOWNLOAD_ROUNDS; i++) {
      ripwerk.push(check(curlGet(ripwerkUrl), 'Ripwerk download'));
      bare.push(check(curlGet(nginxUrl), 'nginx download'));
      plain.push(check(curlGet(plainUrl), 'bare Node download'));
    }
    for (let i = 0; i < RANGE_REQUESTS; i++) {
      const start = Math.floor(((i * 7919) % RANGE_REQUESTS) * ((size - span) / RANGE_REQUESTS));
      const range = `bytes=${start}-${start + span - 1}`;
      for (const [url, into] of [[ripwerkUrl, rangeR], [nginxUrl, rangeN]] as const) {
        const f = curlGet(url, range);
        if (f.status !== 206 || f.bytes !== span) throw new Error(`${url} ${range}: HTTP ${f.status}, ${f.bytes} bytes`);
        into.push(f.seconds * 1000);
      }
      for (const [url, into] of [[ripwerkUrl, tinyR], [nginxUrl, tinyN]] as const) {
        const f = curlGet(url, `bytes=${start}-${start + 99}`);
        if (f.status !== 206 || f.bytes !== 100) throw new Error(`${url} 100 bytes from ${start}: HTTP ${f.status}, ${f.bytes} bytes`);
        into.push(f.seconds * 1000);
      }
    }
  } finally {
    await server.proc.kill();
    await node?.proc.kill();
  }
  const mbps = (t: number, bytes = size): string => `${(bytes / 1e6 / (t / 1000)).toFixed(0)} MB/s`;
  measures.push({
    key: 'download',
    name: `file download GET /jobs/{id}/files/{name} time / nginx (sendfile) on the same file (median of ${DOWNLOAD_ROUNDS}, ${DOWNLOAD_MB} MB; ≤ 1.11 = throughput ≥ 0.9 of nginx)`,
    figure: median(ripwerk),
    reference: median(bare),
    referenceName: 'nginx',
    unit: 'ms',
    ratio: median(ripwerk) / median(bare),
    // 1.11: a throughput of at least 0.9 of nginx's; measured 0.84-1.05.
    target: 1.11,
    detail:
      `Ripwerk median ${ms(median(ripwerk))} (${mbps(median(ripwerk))}), nginx median ${ms(median(bare))} (${mbps(median(bare))}); ` +
      `throughput ratio ${(median(bare) / median(ripwerk)).toFixed(3)}; ` +
      `a bare Node server piping fs.createReadStream (1 MiB pieces) into the response: median ${ms(median(plain))} (${mbps(median(plain))}, ${(median(bare) / median(plain)).toFixed(3)} of nginx); Range answers (0-99, suffix, open-ended, unsatisfiable) alike`,
    samples: { ripwerk_ms: ripwerk, nginx_ms: bare, bare_node_ms: plain },
  });
  measures.push({
    key: 'download-range',
    name: `file download, ${RANGE_MB} MB Range requests at spread offsets, time / nginx (median of ${RANGE_REQUESTS})`,
    figure: median(rangeR),
    reference: median(rangeN),
    referenceName: 'nginx',
    unit: 'ms',
    ratio: median(rangeR) / median(rangeN),
    // As the whole file: at least 0.9 of nginx's throughput; measured 0.69-0.90.
    target: 1.11,
    detail:
      `Ripwerk median ${ms(median(rangeR))} (${mbps(median(rangeR), span)}), nginx median ${ms(median(rangeN))} (${mbps(median(rangeN), span)}); ` +
      `100-byte ranges (what a request costs before any byte): Ripwerk median ${ms(median(tinyR))}, nginx ${ms(median(tinyN))}`,
    samples: { ripwerk_ms: rangeR, nginx_ms: rangeN, ripwerk_100_bytes_ms: tinyR, nginx_100_bytes_ms: tinyN },
  });
  await stopAll();
}
