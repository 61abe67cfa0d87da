import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import expressStaticGzip from 'express-static-gzip';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { schedule } from 'node-cron';
import type { AgentConfig, CoordinatorConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import type { InProcessConnect } from '../shared/mqtt-client.js';
import { makePrivateTree } from '../shared/private-files.js';
import { openDatabase } from '../shared/sqlite.js';
import { WalCheckpointer } from './db/wal-checkpointer.js';
import { loadBrokerSecret } from './mqtt/broker-secret.js';
import { startEmbeddedBroker, type EmbeddedBroker } from './mqtt/broker.js';
import type { AppContext } from './context.js';
import { DiscWatch } from './discs/disc-watch.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { Fleet } from './workers/fleet.js';
import { HaDiscovery } from './integrations/ha-discovery.js';
import { errorHandler, sendText } from './http/errors.js';
import { JobsStore } from './jobs/jobs-store.js';
import { KEY_BODY_LIMIT_BYTES, KeyStore } from './keys/key-store.js';
import { COORDINATOR_USERNAME, MqttCredentials } from './mqtt/credentials.js';
import { agentNode, MQTT_NODE_RE } from '../shared/config.js';
import { libraryInfo } from './library/library-info.js';
import { LibraryRefresher } from './integrations/library-refresh.js';
import { coordinatorMigrations } from './db/migrations.js';
import { MetadataService } from './metadata/service.js';
import { MountGuard } from './mounts/mount-guard.js';
import { MountService } from './mounts/mount-service.js';
import { MountsStore } from './mounts/mounts-store.js';
import { Prescan } from './discs/prescan.js';
import { discLookup, MusicLookup } from './metadata/music-lookup.js';
import { MUSICBRAINZ_INTERVAL_MS, MusicBrainzClient, musicbrainzUserAgent } from './metadata/musicbrainz.js';
import { MusicBrainzCache } from './metadata/musicbrainz-cache.js';
import { RateLimiter } from './metadata/rate-limiter.js';
import { RIPWERK_VERSION } from './system/version.js';
import { RawDataFinder } from './jobs/raw-data.js';
import { AnswersInFlight } from './http/answers-in-flight.js';
import { requestGuard } from './http/request-guard.js';
import { bodyLimits, HEADERS_DEADLINE_MS, JSON_BODY_LIMIT_BYTES, UPLOAD_BODY_DEADLINE_MS } from './http/body-limits.js';
import { storageTargetDirs } from './library/storage-target-dirs.js';
import { createRipJob } from './discs/rip-jobs.js';
import { RipperAppKeyRefresher } from './keys/ripper-app-key.js';
import { browseRouter } from './routes/browse.js';
import { devicesRouter, ejectDevice } from './routes/devices.js';
import { postersRouter } from './routes/posters.js';
import { PosterCache } from './library/poster-cache.js';
import { applyIdentityToJobs } from './discs/identity-jobs.js';
import { jobsRouter } from './routes/jobs.js';
import { logsRouter } from './routes/logs.js';
import { metricsRouter } from './routes/metrics.js';
import { metadataRouter } from './routes/metadata.js';
import { setupRouter } from './routes/setup.js';
import { notificationsRouter } from './routes/notifications.js';
import { presetsRouter } from './routes/presets.js';
import { settingsRouter } from './routes/settings.js';
import { storageMountsRouter } from './routes/storage-mounts.js';
import { storageTargetsRouter } from './routes/storage-targets.js';
import { systemRouter } from './routes/system.js';
import { discKeysRouter } from './routes/disc-keys.js';
import { workersRouter } from './routes/workers.js';
import { workerSetupRouter } from './routes/worker-setup.js';
import { mqttCredentialsRouter } from './routes/mqtt-credentials.js';
import { sessionsRouter } from './routes/sessions.js';
import { statsRouter } from './routes/stats.js';
import { SessionBook } from './sessions/session-book.js';
import { SessionStore } from './sessions/session-store.js';
import { SettingsStore } from './system/settings-store.js';
import { Notifier } from './integrations/webhook.js';

const KEEP_LOG_ROWS = 20_000;
/** Size cap of the poster folder (DATA_DIR/posters): a few thousand posters. */
const POSTER_CACHE_BYTES = 200 * 1024 * 1024;

const UI_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'ui');

/** One router per resource, mounted in this order after the JSON body parser. */
const RESOURCE_ROUTERS: ((ctx: AppContext) => express.Router)[] = [
  jobsRouter,
  devicesRouter,
  settingsRouter,
  workersRouter,
  workerSetupRouter,
  mqttCredentialsRouter,
  logsRouter,
  notificationsRouter,
  metadataRouter,
  systemRouter,
  setupRouter,
  browseRouter,
  presetsRouter,
  metricsRouter,
  storageTargetsRouter,
  storageMountsRouter,
  postersRouter,
  sessionsRouter,
  statsRouter,
];

/** The spec's {base_url} is http://host:PORT/api. */
export const API_PREFIX = '/api';

export interface RunningCoordinator {
  port: number;
  url: string;
  mqttUrl: string;
  /** What a local agent sends as MQTT password with an external broker (null without a secret there). */
  brokerSecret: string | null;
  /**
   * Credentials for the agent in the same process (all-in-one): issued afresh at every start on the
   * embedded broker; null with an external broker (the agent then uses its own configuration).
   */
  localAgentCredentials(agent: AgentConfig): Promise<{ username: string; password: string } | null>;
  /** A connection to the embedded broker inside this process, for the agent in the same process; null with an external broker. */
  mqttInProcess: InProcessConnect | null;
  ctx: AppContext;
  stop(): Promise<void>;
}

/**
 * Where this process reaches a server it listens on: loopback when it listens on every interface (or
 * on one of the wildcard addresses), else the address it is bound to.
 */
export function connectUrl(scheme: 'http' | 'mqtt', bound: string | null, port: number): string {
  const host = bound === null || bound === '0.0.0.0' || bound === '::' ? '127.0.0.1' : bound;
  return `${scheme}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** The socket's address without the IPv4-in-IPv6 prefix (::ffff:127.0.0.1 is 127.0.0.1). */
function socketAddress(req: express.Request): string {
  return (req.socket.remoteAddress ?? 'unknown').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
}

/** The client address: X-Real-IP when the request comes from a trusted reverse proxy, else the socket's. */
function clientIp(req: express.Request, trusted: ReadonlySet<string>): string {
  const socket = socketAddress(req);
  if (!trusted.has(socket)) return socket;
  const header = req.headers['x-real-ip'];
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value || socket;
}

/** The rate limit counts per minute (spec: 600 requests per minute), and a hit is logged at most once per client per minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

export function createApp(ctx: AppContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Before everything else: a foreign Host, a cross-site write or a forgeable body type gets no further.
  app.use(requestGuard(ctx.config.allowedHosts, ctx.log.child('http')));
  const limitLogged = new Map<string, number>();
  const trusted = new Set(ctx.config.trustedProxies);
  app.use(
    rateLimit({
      windowMs: RATE_LIMIT_WINDOW_MS,
      limit: ctx.config.rateLimitPerMinute,
      standardHeaders: 'draft-7',
      legacyHeaders: false,
      keyGenerator: (req) => ipKeyGenerator(clientIp(req, trusted)),
      validate: { keyGeneratorIpFallback: false },
      handler: (req, res) => {
        const ip = clientIp(req, trusted);
        const now = Date.now();
        if ((limitLogged.get(ip) ?? 0) < now - RATE_LIMIT_WINDOW_MS) {
          limitLogged.set(ip, now);
          ctx.log.warn(`rate limit hit by ${ip} (${ctx.config.rateLimitPerMinute} requests per minute)`);
        }
        sendText(res, 429, `too many requests: at most ${ctx.config.rateLimitPerMinute} per minute per client`);
      },
    }),
  );
  // Before anything reads a body: its size, the bytes in flight and the time it may take are bounded.
  app.use(bodyLimits());
  const api = express.Router();
  // Before the general JSON parser: the key store and KEYDB bodies may be up to 64 MB.
  api.use(discKeysRouter(ctx));
  api.use(express.json({ limit: JSON_BODY_LIMIT_BYTES }));
  api.get('/health', (_req, res) => {
    res.json({ ok: true, mqtt: ctx.dispatcher.connected, workers_online: ctx.fleet.online().length });
  });
  for (const router of RESOURCE_ROUTERS) api.use(router(ctx));
  app.use(API_PREFIX, api);
  // The web UI (built into dist/ui next to dist/coordinator): static files, index.html at /, sent
  // compressed where the browser takes it (brotli, else gzip; the build writes .br and .gz beside each file).
  app.use(expressStaticGzip(UI_DIR, { enableBrotli: true, orderPreference: ['br', 'gz'], index: 'index.html', serveStatic: { maxAge: 0 } }));
  app.use((req, res) => sendText(res, 404, `no such endpoint: ${req.method} ${req.originalUrl.split('?')[0]} (the API lives under ${API_PREFIX})`));
  app.use(errorHandler(ctx.log));
  return app;
}

/**
 * Starts the coordinator: SQLite state, the embedded MQTT broker (unless MQTT_URL names one), the
 * dispatcher and the HTTP API.
 */
export async function startCoordinator(config: CoordinatorConfig, log: Logger): Promise<RunningCoordinator> {
  // The data folder holds the API keys, webhook tokens, credentials and disc keys: the service user's only.
  const privacy = makePrivateTree(config.dataDir);
  if (privacy.foreign) log.warn(`DATA_DIR ${config.dataDir} holds "${privacy.foreign}", which is not Ripwerk's, so the folder keeps its mode (Ripwerk's own files in it are 0600): give Ripwerk a folder of its own`);
  if (privacy.refused.length) log.warn(`${privacy.refused.length} entries of DATA_DIR belong to another user and could not be made private (0700/0600), e.g. ${privacy.refused[0]}`);
  const dbFile = path.join(config.dataDir, 'coordinator.sqlite');
  const db = openDatabase(dbFile, coordinatorMigrations);
  const checkpointer = new WalCheckpointer(db, dbFile, log.child('database'));
  const insertLog = db.prepare('INSERT INTO logs (ts, level, source, job_id, message) VALUES (?, ?, ?, ?, ?)');
  let written = 0;
  log.addSink((e) => {
    insertLog.run(e.ts, e.level, e.source, e.job_id ?? null, e.message);
    if (++written % 1000 === 0) db.prepare('DELETE FROM logs WHERE id <= (SELECT MAX(id) FROM logs) - ?').run(KEEP_LOG_ROWS);
  });
  const jobs = new JobsStore(db, Date.now, log.child('jobs'));
  const settings = new SettingsStore(db);
  const fleet = new Fleet(db);
  const dispatcher = new Dispatcher(db, jobs, settings, fleet, { graceMs: config.agentGraceSeconds * 1000, encodedWaitMs: config.encodedWaitSeconds * 1000 }, log.child('dispatcher'));
  // The storage targets are read at each probe: a share mounted later is searched too.
  const targetDirs = () => storageTargetDirs(config.mediaRoot, config.rawDir, settings.all(), mounts.store.all()).map(([, dir]) => dir);
  const answers = new AnswersInFlight();
  const raw = new RawDataFinder(jobs, settings, config.rawDir, log.child('rohdaten'), targetDirs, answers);
  const metadata = new MetadataService(config, settings, log.child('metadata'));
  metadata.mirror.start();
  if (!config.musicbrainzContact) log.warn('MUSICBRAINZ_CONTACT is not set: MusicBrainz asks every client for a contact (an e-mail address or URL) in its User-Agent');
  const musicbrainz = new MusicBrainzClient(config.musicbrainzBaseUrl, musicbrainzUserAgent(RIPWERK_VERSION, config.musicbrainzContact), new RateLimiter(MUSICBRAINZ_INTERVAL_MS));
  const music = new MusicLookup(musicbrainz, new MusicBrainzCache(db), settings, config.coverArtBaseUrl, log.child('musicbrainz'));
  const prescan = new Prescan(db, discLookup(metadata.chain, music), log.child('prescan'));
  // A poster URL other than the image server's gets the webhook target rules (notifier.policy(), made below) when fetched.
  const posters = new PosterCache(path.join(config.dataDir, 'posters'), POSTER_CACHE_BYTES, config.tmdbImageBaseUrl, log.child('posters'), () => notifier.policy());
  const discs: DiscWatch = new DiscWatch(db, settings, prescan, (req) => createRipJob(ctx, req), log.child('discs'), posters, (fp, identity) => applyIdentityToJobs(ctx, fp, identity, 'lookup'));
  const keys = new KeyStore(config.dataDir);
  dispatcher.keys = keys;
  dispatcher.pingMs = config.capabilityPingSeconds * 1000;
  dispatcher.mediaRoot = config.mediaRoot;
  let listeningPort: number | null = null;
  const notifier = new Notifier(settings, log.child('webhook'), () => listeningPort);
  const refresher = new LibraryRefresher(settings, log.child('media-server'));
  dispatcher.libraryFor = (job) => libraryInfo(job, settings.all(), config.tmdbImageBaseUrl);
  const sessions = new SessionBook(new SessionStore(db), jobs, log.child('sessions'));
  sessions.enqueue = (jobId, rawDir, files) => dispatcher.enqueueTranscode(jobId, rawDir, files);
  dispatcher.beforeTranscode = (job, files, titles) => sessions.ripDone(job, files, titles);
  dispatcher.onJobEnd = (job) => {
    sessions.jobEnded(job);
    notifier.jobEnded(job);
    refresher.jobEnded(job);
  };
  const mounts = new MountService(new MountsStore(db, config.dataDir), config.mediaRoot, log.child('mounts'));
  const mountGuard = MountGuard.onSchedule(mounts, () => jobs.active().length, log.child('mounts'), config.mountGuardSchedule);
  const credentials = new MqttCredentials(db);
  const ctx: AppContext = { config, db, jobs, settings, fleet, dispatcher, raw, answers, discs, keys, metadata, notifier, mounts, mountGuard, posters, library: refresher, credentials, broker: null, sessions, log };
  const appKey = new RipperAppKeyRefresher(settings, config.ripperKeyUrl, () => void dispatcher.publishKeys(), log.child('ripper-key'));
  dispatcher.onDriveState = (entry) => discs.onDrive(entry);

  let broker: EmbeddedBroker | null = null;
  let mqttUrl = config.mqttUrl;
  // The embedded broker always wants the secret; an external one gets it only when it is configured.
  let brokerSecret = config.brokerSecret;
  if (!mqttUrl) {
    const loaded = await loadBrokerSecret(config.dataDir, config.brokerSecret);
    if (loaded.source === 'generated') log.info(`broker secret generated into ${loaded.file}: agents on other hosts need it as RIPWERK_BROKER_SECRET`);
    brokerSecret = loaded.secret;
    broker = await startEmbeddedBroker(
      {
        port: config.mqttPort,
        secret: brokerSecret,
        credentials,
        maxPacketBytes: config.mqttMaxPacketBytes,
        // The key store and KEYDB.cfg (up to KEY_BODY_LIMIT_BYTES each) travel as JSON strings: base64 or
        // escaped text needs up to twice the bytes. Only the coordinator's own client gets this limit.
        coordinatorMaxPacketBytes: Math.max(config.mqttMaxPacketBytes, 2 * KEY_BODY_LIMIT_BYTES + 1024 * 1024),
        haPrefix: () => settings.get('homeAssistantPrefix') || 'homeassistant',
        host: config.mqttBindAddress,
      },
      log.child('broker'),
    );
    ctx.broker = broker;
    mqttUrl = connectUrl('mqtt', config.mqttBindAddress, broker.port);
  }
  // The coordinator's own client reaches the embedded broker in memory, not over a loopback socket.
  const embedded = broker;
  const mqttInProcess = embedded ? () => embedded.connectInProcess() : null;
  await dispatcher.start(mqttUrl, brokerSecret ? { username: COORDINATOR_USERNAME, password: brokerSecret } : null, mqttInProcess);
  const homeAssistant = new HaDiscovery(dispatcher, fleet, jobs, settings, (fp) => discs.identity(fp)?.title ?? null, (d) => ejectDevice(ctx, d), log.child('home-assistant'), () => sessions.list());
  sessions.onNotice = (notice) => {
    notifier.sessionNotice(notice);
    homeAssistant.sessionEvent(notice);
  };
  homeAssistant.start();
  dispatcher.prune();
  const nightly = schedule('17 3 * * *', () => dispatcher.prune(), { name: 'prune' });
  raw.start();
  appKey.start();

  const server = http.createServer(createApp(ctx));
  // Node's own limits behind bodyLimits' deadlines: headers must come quickly, a whole request (an
  // upload at the latest) within its deadline and the minute Node takes to notice.
  server.headersTimeout = HEADERS_DEADLINE_MS;
  server.requestTimeout = UPLOAD_BODY_DEADLINE_MS + 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (config.bindAddress) server.listen(config.port, config.bindAddress, () => resolve());
    else server.listen(config.port, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  listeningPort = port;
  log.info(`API listening on port ${port} of ${config.bindAddress ?? 'every interface'}; MQTT ${mqttUrl}`);
  // Saved mounts come back in the background: a dead NAS never delays the start.
  void mounts.remountAll();
  mountGuard.start();
  return {
    port,
    url: `${connectUrl('http', config.bindAddress, port)}${API_PREFIX}`,
    mqttUrl,
    brokerSecret,
    mqttInProcess,
    async localAgentCredentials(agent) {
      if (!broker || agent.mqttCredentials) return agent.mqttCredentials;
      const username = agentNode(agent);
      if (!MQTT_NODE_RE.test(username)) return null;
      // Pinned: the API can neither replace nor remove it (the agent knows only this password until the next start).
      return { username, password: await credentials.issueLocal(username) };
    },
    ctx,
    async stop() {
      raw.stop();
      metadata.mirror.stop();
      homeAssistant.stop();
      await mountGuard.stop();
      await mounts.close();
      await nightly.stop();
      await appKey.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.stop();
      if (broker) await broker.close();
      await checkpointer.close();
      db.close();
    },
  };
}
