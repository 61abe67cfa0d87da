/**
 * End-to-end helpers: real coordinator and agent processes on loopback ports chosen free, real DVD
 * images, HTTP helpers. Everything started here is killed by stopAll().
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES_DIR, REPO_DIR } from '../fixtures/tools-samples.js';
import type { Device, Job } from '../../shared/api-types.js';

export const FAKE_MAKEMKVCON = path.join(FIXTURES_DIR, 'makemkvcon');
const started = new Set<Proc>();

/**
 * The first port the kernel gives to outgoing connections (ip_local_port_range). A port from
 * listen(0) lies at or above it, so an outgoing connection (an agent's, a fetch's) can take it as
 * its local port between the pick and the service's bind, and the service then fails with
 * EADDRINUSE. Ports below it are never given out that way.
 */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    // No host: every interface, as a coordinator binds by default.
    srv.listen(port, () => srv.close(() => resolve(true)));
  });
}

/** A port nothing listens on, below the range of outgoing connections, not handed out before in this process. */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(1025, high - 12_000);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

/** Every file below dir, relative, sorted (what a media server's scan of the folder sees). */
export function fileTree(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

export function tempDir(prefix = 'ripwerk-e2e-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

const isoCache = new Map<string, string>();

/** A real unencrypted DVD-Video ISO (scripts/make-dvd-image.sh), built once per label and titles. */
export function dvdImage(label: string, seconds: number[]): string {
  const key = `${label}:${seconds.join(',')}`;
  const cached = isoCache.get(key);
  if (cached) return cached;
  const dir = tempDir('ripwerk-iso-');
  const file = path.join(dir, `${label}.iso`);
  execFileSync('bash', [path.join(REPO_DIR, 'scripts/make-dvd-image.sh'), file, label, ...seconds.map(String)], { stdio: 'pipe' });
  isoCache.set(key, file);
  return file;
}

/**
 * The two-language DVD (scripts/make-multilang-dvd-image.sh): de AC-3 5.1 + en AC-3 2.0, de + en
 * subpictures; `content`: the streams' content codes (dvdauthor's words, German first), e.g.
 * { audio: 'normal comments1', subpictures: 'forced normal_cc' }.
 */
export function multiLangImage(label: string, seconds = 12, content: { audio?: string; subpictures?: string } = {}): string {
  const key = `multilang:${label}:${seconds}:${content.audio ?? ''}:${content.subpictures ?? ''}`;
  const cached = isoCache.get(key);
  if (cached) return cached;
  const file = path.join(tempDir('ripwerk-iso-'), `${label}.iso`);
  const env = { ...process.env, DVD_AUDIO_CONTENT: content.audio ?? '', DVD_SUBPICTURE_CONTENT: content.subpictures ?? '' };
  execFileSync('bash', [path.join(REPO_DIR, 'scripts/make-multilang-dvd-image.sh'), file, label, String(seconds)], { stdio: 'pipe', env });
  isoCache.set(key, file);
  return file;
}

/** What MakeMKV writes for the two-language DVD: one MKV with every stream and its language (the MakeMKV stand-in's source). */
export function multiLangMkv(): string {
  const dir = tempDir('ripwerk-mkv-');
  // The image's only title set holds only title 1: its VOB is the title whole (dvdbackup's title copy `-t` loses sectors where cells meet).
  execFileSync('dvdbackup', ['-i', multiLangImage('MULTI_SOURCE'), '-T', '1', '-o', dir, '-n', 'title'], { stdio: 'pipe' });
  const file = path.join(dir, 'source.mkv');
  const vob = path.join(dir, 'title', 'VIDEO_TS', 'VTS_01_1.VOB');
  const maps = ['0x80', '0x81', '0x20', '0x21'].flatMap((id) => ['-map', `0:i:${id}`]);
  const langs = ['-metadata:s:a:0', 'language=ger', '-metadata:s:a:1', 'language=eng', '-metadata:s:s:0', 'language=ger', '-metadata:s:s:1', 'language=eng'];
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-i', vob, '-map', '0:v', ...maps, ...langs, '-c', 'copy', '-y', file], { stdio: 'pipe' });
  return file;
}

export interface ProbedStream {
  type: 'video' | 'audio' | 'subtitle';
  codec: string;
  channels: number | null;
  language: string | null;
  default: boolean;
  /** The role dispositions (Matroska track flags) that are set: forced, hearing_impaired, visual_impaired, comment, original. */
  roles: string[];
}

const ROLE_DISPOSITIONS = ['forced', 'hearing_impaired', 'visual_impaired', 'comment', 'original'] as const;

/** ffprobe's view of a file's streams, in file order. */
export function probeStreams(file: string): ProbedStream[] {
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', `stream=codec_type,codec_name,channels:stream_tags=language:stream_disposition=default,${ROLE_DISPOSITIONS.join(',')}`, '-of', 'json', file]).toString();
  const doc = JSON.parse(out) as { streams: { codec_type: ProbedStream['type']; codec_name: string; channels?: number; tags?: { language?: string }; disposition?: Record<string, number> }[] };
  return doc.streams.map((s) => ({
    type: s.codec_type,
    codec: s.codec_name,
    channels: s.channels ?? null,
    language: s.tags?.language ?? null,
    default: s.disposition?.default === 1,
    roles: ROLE_DISPOSITIONS.filter((d) => s.disposition?.[d] === 1),
  }));
}

/**
 * Puts a Blu-ray ISO (BDMV tree, UHD index version) grown sparse to `bytes` into an image drive: no
 * disk space is used. Written under a hidden name and renamed, as the README tells users to.
 */
export function insertSparseBluray(driveDir: string, label: string, bytes: number): void {
  const tree = path.join(tempDir('ripwerk-uhd-'), 'tree');
  for (const sub of ['BDMV/PLAYLIST', 'BDMV/STREAM', 'BDMV/CLIPINF']) fs.mkdirSync(path.join(tree, sub), { recursive: true });
  fs.writeFileSync(path.join(tree, 'BDMV/index.bdmv'), Buffer.concat([Buffer.from('INDX0300'), Buffer.alloc(32)]));
  fs.writeFileSync(path.join(tree, 'BDMV/PLAYLIST/00800.mpls'), Buffer.concat([Buffer.from('MPLS0300'), Buffer.alloc(32)]));
  const hidden = path.join(driveDir, `.${label}.iso`);
  execFileSync('genisoimage', ['-quiet', '-udf', '-V', label, '-o', hidden, tree]);
  fs.truncateSync(hidden, bytes);
  fs.renameSync(hidden, path.join(driveDir, `${label}.iso`));
}

/** Puts a disc into an image drive folder (a copy, so the cached image survives an eject). */
export function insertDisc(driveDir: string, iso: string): void {
  fs.mkdirSync(driveDir, { recursive: true });
  fs.copyFileSync(iso, path.join(driveDir, path.basename(iso)));
}

export class Proc {
  readonly lines: string[] = [];
  private exitPromise: Promise<number | null>;

  constructor(readonly name: string, readonly child: ChildProcess) {
    const onData = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) if (line) this.lines.push(line);
      if (process.env.E2E_VERBOSE) process.stderr.write(`[${name}] ${chunk.toString('utf8')}`);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.exitPromise = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    started.add(this);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async waitForLine(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const hit = this.lines.find((l) => pattern.test(l));
      if (hit) return hit;
      if (!this.alive) throw new Error(`${this.name} exited while waiting for ${pattern}:\n${this.lines.slice(-20).join('\n')}`);
      await sleep(50);
    }
    throw new Error(`${this.name}: no line matching ${pattern} within ${timeoutMs} ms:\n${this.lines.slice(-20).join('\n')}`);
  }

  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.alive) this.child.kill(signal);
    await this.exitPromise;
    started.delete(this);
  }
}

/** Processes of this host whose command line mentions the text (an encoder or ripper left running, say). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The V8 flags and memory settings the systemd units and scripts/start.sh run Ripwerk with, so tests and the bench see the same process. */
export const NODE_FLAGS = ['--max-semi-space-size=2'];
const NODE_ENV_SETTINGS = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' };

/**
 * BENCH_CPU_PROFILE=<dir>: the coordinator (and with BENCH_CPU_PROFILE_AGENTS=1 every agent) writes a V8
 * CPU profile there when it ends (SIGTERM), for `npm run bench -- scale`.
 */
function profileFlags(name: string): string[] {
  const dir = process.env.BENCH_CPU_PROFILE;
  const wanted = name === 'coordinator' || (process.env.BENCH_CPU_PROFILE_AGENTS === '1' && name !== 'coordinator');
  return wanted && dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

function startNode(name: string, script: string, env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [...NODE_FLAGS, ...profileFlags(name), path.join(REPO_DIR, 'dist', script)], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...NODE_ENV_SETTINGS, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Proc(name, child);
}

export interface CoordinatorHandle {
  proc: Proc;
  url: string;
  port: number;
  mqttPort: number;
  mqttUrl: string;
  env: Record<string, string>;
}

export interface World {
  root: string;
  media: string;
  raw: string;
  /** The broker secret coordinator and agents of this world share (RIPWERK_BROKER_SECRET). */
  secret: string;
}

export function world(): World {
  const root = tempDir();
  // A dot folder above MEDIA_ROOT (like ~/.data/media) must not hinder downloads.
  const media = path.join(root, '.data', 'media');
  const raw = path.join(root, 'raw');
  fs.mkdirSync(media, { recursive: true });
  fs.mkdirSync(raw, { recursive: true });
  return { root, media, raw, secret: randomBytes(12).toString('hex') };
}

export async function startCoordinator(w: World, extra: Record<string, string> = {}, ports?: { port: number; mqttPort: number }): Promise<CoordinatorHandle> {
  const port = ports?.port ?? (await freePort());
  const mqttPort = ports?.mqttPort ?? (await freePort());
  const env = {
    PORT: String(port),
    MQTT_PORT: String(mqttPort),
    DATA_DIR: path.join(w.root, 'coordinator-data'),
    MEDIA_ROOT: w.media,
    RAW_DIR: w.raw,
    AGENT_GRACE_SECONDS: '5',
    // No test reaches the internet: the daily ripper-key refresh gets a closed loopback port.
    RIPPER_KEY_URL: 'http://127.0.0.1:9/',
    // The anime database needs no key: it gets a closed port too unless a test brings a fixture.
    JIKAN_BASE_URL: 'http://127.0.0.1:9/v4',
    // TheDiscDB too: a disc's content ids would otherwise be looked up on the real site.
    THEDISCDB_BASE_URL: 'http://127.0.0.1:9',
    // MusicBrainz and the Cover Art Archive likewise (audio CDs fall back to their CD-Text).
    MUSICBRAINZ_BASE_URL: 'http://127.0.0.1:9/ws/2',
    COVERART_BASE_URL: 'http://127.0.0.1:9',
    RIPWERK_BROKER_SECRET: w.secret,
    ...extra,
  };
  const proc = startNode('coordinator', 'coordinator/cli.js', env);
  await proc.waitForLine(/API listening on port/);
  return { proc, url: `http://127.0.0.1:${port}/api`, port, mqttPort, mqttUrl: extra.MQTT_URL ?? `mqtt://127.0.0.1:${mqttPort}`, env };
}

/** The all-in-one process (what `npm start` runs): coordinator, embedded broker and one agent with an image drive. */
export async function startAllInOne(w: World, name: string): Promise<CoordinatorHandle & { driveDir: string }> {
  const port = await freePort();
  const mqttPort = await freePort();
  const driveDir = path.join(w.root, `drive-${name}`);
  fs.mkdirSync(driveDir, { recursive: true });
  const env = {
    PORT: String(port),
    MQTT_PORT: String(mqttPort),
    DATA_DIR: path.join(w.root, 'all-in-one-data'),
    MEDIA_ROOT: w.media,
    RAW_DIR: w.raw,
    DRIVES: `image:${driveDir}`,
    WORKER_NAME: name,
    MAKEMKVCON: '/nonexistent/makemkvcon',
    MAKEMKV_DATA_DIR: path.join(w.root, `home-${name}`, '.MakeMKV'),
    RIPPER_KEY_URL: 'http://127.0.0.1:9/',
    JIKAN_BASE_URL: 'http://127.0.0.1:9/v4',
    THEDISCDB_BASE_URL: 'http://127.0.0.1:9',
    MUSICBRAINZ_BASE_URL: 'http://127.0.0.1:9/ws/2',
    COVERART_BASE_URL: 'http://127.0.0.1:9',
    ACCURATERIP_BASE_URL: 'http://127.0.0.1:9/accuraterip',
  };
  const proc = startNode('ripwerk', 'coordinator/cli-all-in-one.js', env);
  await proc.waitForLine(/Ripwerk is up/);
  return { proc, url: `http://127.0.0.1:${port}/api`, port, mqttPort, mqttUrl: `mqtt://127.0.0.1:${mqttPort}`, env, driveDir };
}

export interface AgentHandle {
  proc: Proc;
  name: string;
  node: string;
  driveDir: string;
  env: Record<string, string>;
}

export async function startAgent(w: World, mqttUrl: string, name: string, opts: { makemkv?: boolean; extra?: Record<string, string>; drive?: boolean } = {}): Promise<AgentHandle> {
  const driveDir = path.join(w.root, `drive-${name}`);
  fs.mkdirSync(driveDir, { recursive: true });
  const env: Record<string, string> = {
    MQTT_URL: mqttUrl,
    WORKER_NAME: name,
    DATA_DIR: path.join(w.root, `agent-${name}-data`),
    MEDIA_ROOT: w.media,
    RAW_DIR: w.raw,
    DRIVES: opts.drive === false ? 'image:' + path.join(w.root, `nodrive-${name}`) : `image:${driveDir}`,
    MAKEMKVCON: opts.makemkv ? FAKE_MAKEMKVCON : '/nonexistent/makemkvcon',
    // AccurateRip is asked on a closed loopback port unless a test brings its database fixture.
    ACCURATERIP_BASE_URL: 'http://127.0.0.1:9/accuraterip',
    MAKEMKV_DATA_DIR: path.join(w.root, `home-${name}`, '.MakeMKV'),
    RIPWERK_BROKER_SECRET: w.secret,
    ...opts.extra,
  };
  const proc = startNode(`agent-${name}`, 'agent/cli.js', env);
  await proc.waitForLine(/connected to MQTT broker/);
  return { proc, name, node: `${name}@${os.hostname()}`, driveDir, env };
}

export async function restartAgent(a: AgentHandle): Promise<AgentHandle> {
  const proc = startNode(`agent-${a.name}`, 'agent/cli.js', a.env);
  await proc.waitForLine(/connected to MQTT broker/);
  return { ...a, proc };
}

export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((p) => p.kill('SIGKILL')));
}

// ------------------------------------------------------------------ HTTP

export interface Reply<T = unknown> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/**
 * A kept-alive socket the server closed (its keep-alive timeout) at the moment fetch reused it fails
 * with "other side closed" before the request reached the server: Node's documented race, seen on a
 * loaded host. A GET or HEAD is sent once more, as a browser does; nothing else is repeated.
 */
function reusedSocketClosed(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'UND_ERR_SOCKET' || cause?.code === 'ECONNRESET';
}

export async function api<T = unknown>(base: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
  const send = (): Promise<Response> =>
    fetch(`${base}${p}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const res = await send().catch((err: unknown) => {
    if ((method === 'GET' || method === 'HEAD') && reusedSocketClosed(err)) return send();
    throw err;
  });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('application/json')) parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

/** Polls fn until it returns a value that is not undefined/false. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 60_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false && v !== null) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

/** A job as GET /jobs shows it: the server's own record type. */
export type { Job };

export async function job(base: string, id: string): Promise<Job> {
  const r = await api<Job[]>(base, 'GET', '/jobs');
  const j = r.body.find((x) => x.id === id);
  if (!j) throw new Error(`job ${id} not in GET /jobs`);
  return j;
}

export async function waitForStatus(base: string, id: string, statuses: string[], timeoutMs = 90_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  let j = await job(base, id);
  while (Date.now() < deadline) {
    j = await job(base, id);
    if (statuses.includes(j.status)) return j;
    if (['failed', 'completed', 'canceled'].includes(j.status)) throw new Error(`job ${id} ended ${j.status} instead of ${statuses.join('/')}: ${j.error ?? ''}`);
    await sleep(200);
  }
  throw new Error(`job ${id} is ${j.status} after ${timeoutMs} ms, expected ${statuses.join('/')}`);
}

/** Waits until the device of an agent shows a disc, and returns the device name. */
export async function waitForDisc(base: string, agent: AgentHandle): Promise<string> {
  const name = `${agent.name}-drive-${agent.name}`;
  await waitFor(`disc in ${name}`, async () => {
    const r = await api<Device[]>(base, 'GET', '/devices');
    return r.body.find((d) => d.name === name && d.disc);
  }, 30_000);
  return name;
}

/** A small real MKV (H.264 + AAC) for the MakeMKV stand-in to "rip". */
export function smallMkv(seconds = 4): string {
  const file = path.join(tempDir('ripwerk-mkv-'), 'source.mkv');
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-y', file], { stdio: 'pipe' });
  return file;
}

/** A HandBrakeCLI wrapper that waits before encoding (not before --version), to widen fault windows. */
export function slowHandbrake(delaySeconds: number): string {
  const file = path.join(tempDir('ripwerk-hb-'), 'HandBrakeCLI');
  fs.writeFileSync(file, `#!/bin/sh\ncase " $* " in *" -i "*) sleep ${delaySeconds};; esac\nexec HandBrakeCLI "$@"\n`, { mode: 0o755 });
  return file;
}

/**
 * A HandBrakeCLI that lists one preset more than it can run: `--preset-list` adds `name` (category
 * "Ripwerk Test"), every other call is the real HandBrakeCLI, which fails on that preset. The settings
 * take only presets a worker lists (issue 38); a preset a worker lists but cannot run (a preset file
 * removed since it was listed) still fails its transcode, and that path is what the retry tests need.
 */
export function listedPresetHandbrake(name: string): string {
  const file = path.join(tempDir('ripwerk-hb-'), 'HandBrakeCLI');
  fs.writeFileSync(file, `#!/bin/sh\ncase " $* " in *" --preset-list "*) HandBrakeCLI "$@"; s=$?; printf 'Ripwerk Test/\\n    %s\\n' '${name}' >&2; exit $s;; esac\nexec HandBrakeCLI "$@"\n`, { mode: 0o755 });
  return file;
}

/** GET with the path sent exactly as written (fetch would resolve ".." segments first). */
export async function rawGet(base: string, rawPath: string): Promise<{ status: number; text: string }> {
  const { request } = await import('node:http');
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: `${u.pathname.replace(/\/$/, '')}${rawPath}`, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * An audio CD image as a cue sheet beside its raw CD-DA (test/fixtures/samples/cd-test.cue): three
 * sine tracks of 375, 565 and 235 frames, track 2 with a 10-frame pregap. Written into `dir`. Other
 * track lengths (in frames) give another CD: a plain sheet without CD-Text, tracks at their INDEX 01.
 */
export function audioCdImage(dir: string, frames: number[] = [375, 565, 235]): string {
  fs.mkdirSync(dir, { recursive: true });
  const parts = frames.map((n, i) => {
    const file = path.join(dir, `.t${i}.raw`);
    execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', `sine=frequency=${[440, 660, 523][i % 3]}:sample_rate=44100`, '-af', `atrim=end_sample=${n * 588},volume=0.5,pan=stereo|c0=c0|c1=c0`, '-f', 's16le', '-ac', '2', '-y', file]);
    return file;
  });
  fs.writeFileSync(path.join(dir, 'disc.bin'), Buffer.concat(parts.map((p) => fs.readFileSync(p))));
  for (const p of parts) fs.rmSync(p);
  const cue = path.join(dir, 'disc.cue');
  if (frames.join() === '375,565,235') {
    fs.copyFileSync(path.join(FIXTURES_DIR, 'samples', 'cd-test.cue'), cue);
    return cue;
  }
  const time = (f: number): string => [Math.floor(f / 4500), Math.floor(f / 75) % 60, f % 75].map((x) => String(x).padStart(2, '0')).join(':');
  const starts = frames.map((_, i) => frames.slice(0, i).reduce((a, b) => a + b, 0));
  fs.writeFileSync(cue, ['FILE "disc.bin" BINARY', ...starts.flatMap((s, i) => [`  TRACK ${String(i + 1).padStart(2, '0')} AUDIO`, `    INDEX 01 ${time(s)}`]), ''].join('\n'));
  return cue;
}
