import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { validate } from 'node-cron';
import { parsePathMap, type PathMapEntry } from './path-map.js';

/** Everything the coordinator reads from its environment, validated once at start. */
export interface CoordinatorConfig {
  port: number;
  mqttPort: number;
  /** External broker; null means the embedded broker. */
  mqttUrl: string | null;
  dataDir: string;
  mediaRoot: string;
  rawDir: string;
  tmdbBaseUrl: string;
  omdbBaseUrl: string;
  jikanBaseUrl: string;
  /** TheDiscDB (disc lookup by content hash / disc id): its GraphQL API is `<this>/graphql`, covers `<this>/images/…`. */
  thediscdbBaseUrl: string;
  /** TMDB's poster_path values are relative to this (a size folder of its image server). */
  tmdbImageBaseUrl: string;
  /** Metadata keys from the environment; keys saved in the settings (UI, wizard) win over them. */
  tmdbApiKey: string;
  omdbApiKey: string;
  rateLimitPerMinute: number;
  /** The broker secret from RIPWERK_BROKER_SECRET; null: generated at first start into DATA_DIR. */
  brokerSecret: string | null;
  /** Seconds between the background capability pings of every worker. */
  capabilityPingSeconds: number;
  /** When the mount guard looks at the storage mounts (cron syntax; every minute by default). */
  mountGuardSchedule: string;
  /** Seconds an agent may stay offline before its rip jobs fail and its transcodes are re-queued. */
  agentGraceSeconds: number;
  /** Seconds past the grace period a transcode whose encodes had ended waits for its worker to come back and finish it. */
  encodedWaitSeconds: number;
  /** Page the ripper's free application key (ripperAppKey) is read from once a day. */
  ripperKeyUrl: string;
  /** Where GET /system/updates reads the latest published versions. */
  updateSources: { handbrake: string; makemkv: string; node: string };
  /** Largest MQTT packet a worker or Home Assistant may send to the embedded broker (MQTT_MAX_PACKET_SIZE, bytes). */
  mqttMaxPacketBytes: number;
  /** Addresses whose X-Real-IP header is believed (the reverse proxy); from others it is ignored. */
  trustedProxies: string[];
  /** MusicBrainz web service (audio CD lookup by disc id), ending in /ws/2. */
  musicbrainzBaseUrl: string;
  /** Cover Art Archive (the front cover of a release). */
  coverArtBaseUrl: string;
  /** An e-mail address or URL MusicBrainz can reach the operator at, sent in the User-Agent; null when not set. */
  musicbrainzContact: string | null;
  /**
   * Host names the API and UI answer to (ALLOWED_HOSTS, lower case, no port); an IP address is always
   * served. ['*'] serves any name. The default: localhost and this machine's names.
   */
  allowedHosts: string[];
  /** The address the HTTP server listens on (BIND_ADDRESS); null: every interface. */
  bindAddress: string | null;
  /** The address the embedded MQTT broker listens on (MQTT_BIND_ADDRESS); null: every interface. */
  mqttBindAddress: string | null;
}

/** Everything an agent reads from its environment, validated once at start. */
export interface AgentConfig {
  mqttUrl: string;
  dataDir: string;
  mediaRoot: string;
  rawDir: string;
  workerName: string;
  hostName: string;
  /** Device paths (/dev/sr0) and image drive folders. Empty with auto: every /dev/sr* found. */
  drives: DriveSpec[];
  drivesAuto: boolean;
  makemkvcon: string;
  handbrakeCli: string;
  abcde: string;
  /**
   * The AccurateRip database every audio-CD rip is checked against (ACCURATERIP_BASE_URL, default
   * http://www.accuraterip.com/accuraterip; `off`: no check, the FLACs are still decoded in full).
   */
  accurateRipUrl: string | null;
  /**
   * Each CD drive's read offset in samples (CD_READ_OFFSETS, `/dev/sr0=+6,/dev/sr1=-472`): cdparanoia
   * corrects the rip by it, and AccurateRip's checksums only agree with a corrected rip. A drive not
   * listed is read with 0, and the AccurateRip log says so.
   */
  cdReadOffsets: Record<string, number>;
  /** MakeMKV's data folder: settings.conf (app_Key), the key store's hkd_*.bin files, KEYDB.cfg, AACS dumps. */
  makemkvDataDir: string;
  pathMap: PathMapEntry[];
  slots: number;
  /**
   * The nice value the encoder runs at (ENCODER_NICE, 0-19, default 10): an encode takes every core
   * it can get, and the API, the web UI and the household's other services on the same host (a media
   * server streaming, say) go first. On an otherwise idle host the encode is just as fast.
   */
  encoderNice: number;
  /** The coordinator's broker secret (RIPWERK_BROKER_SECRET): the legacy way in, used only without own credentials. */
  brokerSecret: string | null;
  /**
   * The worker's own MQTT credentials (MQTT_USERNAME and MQTT_PASSWORD or MQTT_PASSWORD_FILE), issued
   * by POST /workers/{name}/credentials. The user name is the worker's node: its topics are named by it.
   */
  mqttCredentials: { username: string; password: string } | null;
  /**
   * A native worker (the single-file build for desktops without containers): no drives, no ripper,
   * only the transcode queue; its tasks and outbox live in a JSON file instead of SQLite.
   */
  native: boolean;
}

export type DriveSpec = { kind: 'device'; path: string } | { kind: 'image'; dir: string };

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`${name} must be a port number from 0 to 65535, got "${raw}"`);
  return n;
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a positive whole number, got "${raw}"`);
  return n;
}

/** A nice value from 0 (the service's own priority) to 19 (the lowest). */
function niceValue(env: Env, name: string, fallback: number): number {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new ConfigError(`${name} must be a nice value from 0 (normal priority) to 19 (lowest), got "${raw}"`);
  return n;
}

/** A byte count from 1 KiB to 256 MiB, given as bytes or with the suffix K or M (1024-based). */
function packetSize(env: Env, name: string, fallback: number): number {
  const raw = (env[name] ?? '').trim();
  if (!raw) return fallback;
  const m = /^(\d+)\s*([KkMm]?)i?[Bb]?$/.exec(raw);
  const n = m ? Number(m[1]) * (m[2] ? (m[2].toLowerCase() === 'k' ? 1024 : 1024 * 1024) : 1) : NaN;
  if (!Number.isSafeInteger(n) || n < 1024 || n > 256 * 1024 * 1024) throw new ConfigError(`${name} must be a size from 1K to 256M (bytes, or with K or M), got "${raw}"`);
  return n;
}

function absDir(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : raw;
  if (!path.isAbsolute(value)) throw new ConfigError(`${name} must be an absolute path, got "${value}"`);
  return path.resolve(value);
}

function url(env: Env, name: string, fallback: string | null): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** Where AccurateRip's database answers (whipper and dBpoweramp ask the same address). */
export const DEFAULT_ACCURATERIP_URL = 'http://www.accuraterip.com/accuraterip';

/**
 * The largest read offset a drive has (AccurateRip's drive list runs from about -1200 to +2000
 * samples): a bigger number is a typing error, not a drive.
 */
export const MAX_READ_OFFSET_SAMPLES = 5000;

/** CD_READ_OFFSETS: `device=offset` pairs, comma separated, offsets in samples with an optional sign. */
function readOffsets(env: Env, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (env[name] ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^(\/dev\/[A-Za-z0-9._/-]+)\s*=\s*([+-]?\d{1,5})$/.exec(part);
    const samples = m ? Number(m[2]) : NaN;
    if (!m || Math.abs(samples) > MAX_READ_OFFSET_SAMPLES) throw new ConfigError(`${name} takes device=samples pairs such as /dev/sr0=+6 (at most ${MAX_READ_OFFSET_SAMPLES} samples either way), got "${part}"`);
    out[m[1]] = samples;
  }
  return out;
}

/** MUSICBRAINZ_CONTACT: an e-mail address or an http(s) URL (MusicBrainz asks for a way to reach the client's operator). */
function contact(env: Env, name: string): string | null {
  const raw = (env[name] ?? '').trim();
  if (!raw) return null;
  const mail = /^[^\s@()]+@[^\s@()]+\.[^\s@()]+$/.test(raw);
  let web = false;
  try {
    web = /^https?:$/.test(new URL(raw).protocol) && !/[\s()]/.test(raw);
  } catch {
    web = false;
  }
  if (!mail && !web) throw new ConfigError(`${name} must be an e-mail address or an http(s) URL, got "${raw}"`);
  return raw;
}

function bindAddress(env: Env, name: string): string | null {
  const raw = (env[name] ?? '').trim();
  if (!raw) return null;
  const bare = raw.replace(/^\[(.*)\]$/, '$1');
  if (!net.isIP(bare) && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(bare)) throw new ConfigError(`${name} must be an IP address of this machine (such as 127.0.0.1 or ::) or a host name, got "${raw}"`);
  return bare;
}

/** Name suffixes home networks give their hosts (mDNS, routers); none of them can be registered by a stranger. */
const HOME_SUFFIXES = ['local', 'lan', 'home', 'home.arpa', 'localdomain', 'internal', 'fritz.box'];

/** localhost, the machine's host name, its short name, and the short name under the home-network suffixes. */
export function defaultAllowedHosts(hostName: string = os.hostname()): string[] {
  const name = hostName.toLowerCase().replace(/\.$/, '');
  const short = name.split('.')[0];
  const names = ['localhost', name, short, ...(short ? HOME_SUFFIXES.map((s) => `${short}.${s}`) : [])];
  return [...new Set(names.filter(Boolean))];
}

function allowedHosts(env: Env): string[] {
  const raw = (env.ALLOWED_HOSTS ?? '').trim();
  if (!raw) return defaultAllowedHosts();
  const names = raw.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  for (const h of names) {
    if (h !== '*' && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?\.?$/.test(h)) throw new ConfigError(`ALLOWED_HOSTS holds "${h}", which is no host name (a comma list such as ripwerk.example.org,nas; no port, no scheme; * for any)`);
  }
  return names.map((h) => h.replace(/\.$/, ''));
}

function cronExpression(env: Env, name: string, fallback: string): string {
  const raw = (env[name] ?? '').trim();
  if (!raw) return fallback;
  if (!validate(raw)) throw new ConfigError(`${name} must be a cron expression such as "* * * * *", got "${raw}"`);
  return raw;
}

/** Spec, Limits: 600 requests per minute per client IP (RATE_LIMIT_PER_MINUTE may change it). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;
/** Spec, Limits: the capability ping loop runs every 5 seconds (CAPABILITY_PING_SECONDS may change it). */
export const DEFAULT_CAPABILITY_PING_SECONDS = 5;
/** Spec, Limits: the mount guard runs every minute (MOUNT_GUARD_SCHEDULE may change it). */
export const DEFAULT_MOUNT_GUARD_SCHEDULE = '* * * * *';

export function readCoordinatorConfig(env: Env): CoordinatorConfig {
  return {
    port: port(env, 'PORT', 8080),
    mqttPort: port(env, 'MQTT_PORT', 1883),
    mqttUrl: url(env, 'MQTT_URL', null),
    dataDir: absDir(env, 'DATA_DIR', '/var/lib/ripwerk'),
    mediaRoot: absDir(env, 'MEDIA_ROOT', '/app/media'),
    rawDir: absDir(env, 'RAW_DIR', '/app/temp/raw'),
    tmdbBaseUrl: url(env, 'TMDB_BASE_URL', 'https://api.themoviedb.org') as string,
    omdbBaseUrl: url(env, 'OMDB_BASE_URL', 'https://www.omdbapi.com') as string,
    jikanBaseUrl: url(env, 'JIKAN_BASE_URL', 'https://api.jikan.moe/v4') as string,
    thediscdbBaseUrl: url(env, 'THEDISCDB_BASE_URL', 'https://thediscdb.com') as string,
    tmdbImageBaseUrl: url(env, 'TMDB_IMAGE_BASE_URL', 'https://image.tmdb.org/t/p/w500') as string,
    tmdbApiKey: (env.TMDB_API_KEY ?? '').trim(),
    omdbApiKey: (env.OMDB_API_KEY ?? '').trim(),
    rateLimitPerMinute: positiveInt(env, 'RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE),
    agentGraceSeconds: positiveInt(env, 'AGENT_GRACE_SECONDS', 20),
    encodedWaitSeconds: positiveInt(env, 'ENCODED_WAIT_SECONDS', 600),
    capabilityPingSeconds: positiveInt(env, 'CAPABILITY_PING_SECONDS', DEFAULT_CAPABILITY_PING_SECONDS),
    mountGuardSchedule: cronExpression(env, 'MOUNT_GUARD_SCHEDULE', DEFAULT_MOUNT_GUARD_SCHEDULE),
    brokerSecret: (env.RIPWERK_BROKER_SECRET ?? '').trim() || null,
    mqttMaxPacketBytes: packetSize(env, 'MQTT_MAX_PACKET_SIZE', 1024 * 1024),
    trustedProxies: (env.TRUSTED_PROXIES ?? '127.0.0.1,::1').split(',').map((a) => a.trim()).filter(Boolean),
    musicbrainzBaseUrl: url(env, 'MUSICBRAINZ_BASE_URL', 'https://musicbrainz.org/ws/2') as string,
    coverArtBaseUrl: url(env, 'COVERART_BASE_URL', 'https://coverartarchive.org') as string,
    musicbrainzContact: contact(env, 'MUSICBRAINZ_CONTACT'),
    allowedHosts: allowedHosts(env),
    bindAddress: bindAddress(env, 'BIND_ADDRESS'),
    mqttBindAddress: bindAddress(env, 'MQTT_BIND_ADDRESS'),
    updateSources: {
      handbrake: url(env, 'UPDATE_HANDBRAKE_URL', 'https://api.github.com/repos/HandBrake/HandBrake/releases/latest') as string,
      makemkv: url(env, 'UPDATE_MAKEMKV_URL', 'https://www.makemkv.com/download/') as string,
      node: url(env, 'UPDATE_NODE_URL', 'https://nodejs.org/dist/index.json') as string,
    },
    ripperKeyUrl: url(env, 'RIPPER_KEY_URL', 'https://forum.makemkv.com/forum/viewtopic.php?f=5&t=1053') as string,
  };
}

export function parseDrives(value: string | undefined): { drives: DriveSpec[]; auto: boolean } {
  if (value === undefined || value.trim() === '' || value.trim() === 'auto') return { drives: [], auto: true };
  const drives: DriveSpec[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (part.startsWith('image:')) {
      const dir = part.slice('image:'.length);
      if (!path.isAbsolute(dir)) throw new ConfigError(`DRIVES: image folder must be absolute, got "${dir}"`);
      drives.push({ kind: 'image', dir: path.resolve(dir) });
    } else if (part.startsWith('/dev/')) {
      drives.push({ kind: 'device', path: part });
    } else {
      throw new ConfigError(`DRIVES: "${part}" is neither a device path (/dev/sr0) nor image:DIR`);
    }
  }
  return { drives, auto: false };
}

/** MakeMKV reads only $HOME/.MakeMKV: the folder must be named so (makemkvcon runs with HOME set to its parent). */
function makemkvDataDir(env: Env): string {
  const dir = absDir(env, 'MAKEMKV_DATA_DIR', path.join(env.HOME || os.homedir(), '.MakeMKV'));
  if (path.basename(dir) !== '.MakeMKV') throw new ConfigError(`MAKEMKV_DATA_DIR must be a folder named .MakeMKV (MakeMKV reads $HOME/.MakeMKV), got "${dir}"`);
  return dir;
}

/** MQTT_USERNAME with MQTT_PASSWORD (or the first line of the file MQTT_PASSWORD_FILE); both or neither. */
function mqttCredentials(env: Env): { username: string; password: string } | null {
  const username = (env.MQTT_USERNAME ?? '').trim();
  let password = env.MQTT_PASSWORD ?? '';
  const file = (env.MQTT_PASSWORD_FILE ?? '').trim();
  if (!password && file) {
    try {
      password = fs.readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? '';
    } catch (err) {
      throw new ConfigError(`MQTT_PASSWORD_FILE ${file} cannot be read: ${(err as Error).message}`);
    }
  }
  password = password.trim();
  if (!username && !password) return null;
  if (!username || !password) throw new ConfigError('MQTT_USERNAME and MQTT_PASSWORD (or MQTT_PASSWORD_FILE) go together: set both, from the answer of POST /api/workers/{name}/credentials');
  if (!MQTT_NODE_RE.test(username)) throw new ConfigError(`MQTT_USERNAME may hold letters, digits, dot, dash, underscore and @ only, got "${username}"`);
  return { username, password };
}

/** What a node (and so an MQTT user name of a worker) may hold: nothing that is special in a topic. */
export const MQTT_NODE_RE = /^[A-Za-z0-9._@-]{1,120}$/;

/** Spec, Limits: a worker has 4 slots (a second disc can be ripped while the first one transcodes). */
export const WORKER_SLOTS = 4;

export function readAgentConfig(env: Env, embeddedMqttUrl?: string): AgentConfig {
  const { drives, auto } = parseDrives(env.DRIVES);
  let pathMap: PathMapEntry[];
  try {
    pathMap = parsePathMap(env.RIPWERK_PATH_MAP ?? '');
  } catch (err) {
    throw new ConfigError(`RIPWERK_PATH_MAP: ${(err as Error).message}`);
  }
  const hostName = os.hostname();
  const credentials = mqttCredentials(env);
  // With own credentials the user name's part before @ is the default worker name.
  const workerName = (env.WORKER_NAME ?? '').trim() || credentials?.username.split('@')[0] || hostName;
  if (!/^[A-Za-z0-9._-]+$/.test(workerName)) throw new ConfigError(`WORKER_NAME may hold letters, digits, dot, dash and underscore only, got "${workerName}"`);
  if (credentials) {
    const problem = credentialNodeProblem(credentials.username, workerName, hostName);
    if (problem) throw new ConfigError(problem);
  }
  return {
    mqttUrl: url(env, 'MQTT_URL', embeddedMqttUrl ?? 'mqtt://localhost:1883') as string,
    dataDir: absDir(env, 'DATA_DIR', '/var/lib/ripwerk'),
    mediaRoot: absDir(env, 'MEDIA_ROOT', '/app/media'),
    rawDir: absDir(env, 'RAW_DIR', '/app/temp/raw'),
    workerName,
    hostName,
    drives,
    drivesAuto: auto,
    makemkvcon: env.MAKEMKVCON || 'makemkvcon',
    handbrakeCli: env.HANDBRAKE_CLI || 'HandBrakeCLI',
    abcde: env.ABCDE || 'abcde',
    accurateRipUrl: (env.ACCURATERIP_BASE_URL ?? '').trim() === 'off' ? null : url(env, 'ACCURATERIP_BASE_URL', DEFAULT_ACCURATERIP_URL),
    cdReadOffsets: readOffsets(env, 'CD_READ_OFFSETS'),
    makemkvDataDir: makemkvDataDir(env),
    pathMap,
    slots: WORKER_SLOTS,
    encoderNice: niceValue(env, 'ENCODER_NICE', 10),
    brokerSecret: (env.RIPWERK_BROKER_SECRET ?? '').trim() || null,
    mqttCredentials: credentials,
    native: false,
  };
}

/** The variables a native worker's config file (worker.json) may hold; the same names as in the environment. */
export const NATIVE_CONFIG_KEYS = ['MQTT_URL', 'MQTT_USERNAME', 'MQTT_PASSWORD', 'RIPWERK_BROKER_SECRET', 'WORKER_NAME', 'DATA_DIR', 'HANDBRAKE_CLI', 'ENCODER_NICE', 'RIPWERK_PATH_MAP', 'MEDIA_ROOT', 'RAW_DIR'] as const;

/** Where a native worker keeps its state unless DATA_DIR says otherwise: %ProgramData%\Ripwerk on Windows, ~/.ripwerk-worker elsewhere. */
export function nativeDefaultDataDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return path.win32.join(env.ProgramData || env.PROGRAMDATA || 'C:\\ProgramData', 'Ripwerk');
  return path.join(env.HOME || os.homedir(), '.ripwerk-worker');
}

/**
 * The native worker's configuration: the JSON file named by --config (an object of the variables in
 * NATIVE_CONFIG_KEYS, string values), with non-empty environment variables winning over it. It has
 * no drives whatever DRIVES says.
 */
export function readNativeWorkerConfig(env: Env, configFile: string | null): AgentConfig {
  const fromFile: Env = {};
  if (configFile !== null) {
    let text: string;
    try {
      text = fs.readFileSync(configFile, 'utf8');
    } catch (err) {
      throw new ConfigError(`the config file ${configFile} cannot be read: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : (err as Error).message}`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new ConfigError(`the config file ${configFile} is not valid JSON: ${(err as Error).message}`);
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new ConfigError(`the config file ${configFile} must hold one JSON object like {"MQTT_URL": "mqtt://server:1883"}`);
    for (const [key, value] of Object.entries(data)) {
      if (!(NATIVE_CONFIG_KEYS as readonly string[]).includes(key)) throw new ConfigError(`the config file ${configFile} names "${key}", which a native worker does not know (known: ${NATIVE_CONFIG_KEYS.join(', ')})`);
      if (typeof value !== 'string') throw new ConfigError(`the config file ${configFile}: ${key} must be a string`);
      fromFile[key] = value;
    }
  }
  const merged: Env = { ...env, ...fromFile };
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') merged[key] = value;
  if (!merged.DATA_DIR) merged.DATA_DIR = nativeDefaultDataDir(env);
  return { ...readAgentConfig({ ...merged, DRIVES: undefined }), drives: [], drivesAuto: false, native: true };
}

/** The queue node of an agent: celery style name@host, so two workers on one host differ by name. */
export function nodeName(workerName: string, hostName: string): string {
  return `${workerName}@${hostName}`;
}

/** An agent's node, always `<WORKER_NAME>@<host>` (spec: the node name contains WORKER_NAME), with or without own credentials. */
export function agentNode(config: Pick<AgentConfig, 'workerName' | 'hostName'>): string {
  return nodeName(config.workerName, config.hostName);
}

/**
 * Why an agent's node cannot log in with the credential `username`, or null. The broker lets the
 * credential `keller` act as `keller@<host>`, and `keller@nas` as exactly that node
 * (coordinator/mqtt/agent-node.ts; a Mosquitto ACL with `%u` wants the user name to be the node):
 * a mismatch would be refused at every login, so the agent says so at its start instead.
 */
export function credentialNodeProblem(username: string, workerName: string, hostName: string): string | null {
  const [name, host] = username.split('@');
  if (name !== workerName) return `WORKER_NAME=${workerName} does not fit MQTT_USERNAME=${username}: the credential logs in only as the worker ${name} (leave WORKER_NAME unset, or set it to ${name})`;
  if (host !== undefined && host !== hostName) return `MQTT_USERNAME=${username} names the node ${username}, but this worker's node is ${nodeName(workerName, hostName)} (host name ${hostName}): ask for the credential of the worker ${name} (POST /api/workers/${name}/credentials), which takes the host of its first login`;
  return null;
}
