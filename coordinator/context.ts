import type { CoordinatorConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../shared/sqlite.js';
import type { DiscWatch } from './discs/disc-watch.js';
import type { Dispatcher } from './dispatch/dispatcher.js';
import type { Fleet } from './workers/fleet.js';
import type { JobsStore } from './jobs/jobs-store.js';
import type { KeyStore } from './keys/key-store.js';
import type { EmbeddedBroker } from './mqtt/broker.js';
import type { MqttCredentials } from './mqtt/credentials.js';
import type { MetadataService } from './metadata/service.js';
import type { MountGuard } from './mounts/mount-guard.js';
import type { MountService } from './mounts/mount-service.js';
import type { RawDataFinder } from './jobs/raw-data.js';
import type { AnswersInFlight } from './http/answers-in-flight.js';
import type { LibraryRefresher } from './integrations/library-refresh.js';
import type { PosterCache } from './library/poster-cache.js';
import type { SettingsStore } from './system/settings-store.js';
import type { Notifier } from './integrations/webhook.js';

/** What the routers share: one per coordinator process. */
import type { SessionBook } from './sessions/session-book.js';

export interface AppContext {
  config: CoordinatorConfig;
  db: Db;
  jobs: JobsStore;
  settings: SettingsStore;
  fleet: Fleet;
  dispatcher: Dispatcher;
  raw: RawDataFinder;
  /** The GET /jobs answers being sent, which the raw-data sweep lets go first. */
  answers: AnswersInFlight;
  discs: DiscWatch;
  keys: KeyStore;
  metadata: MetadataService;
  notifier: Notifier;
  mounts: MountService;
  mountGuard: MountGuard;
  posters: PosterCache;
  /** Asks the media server to rescan (after a job ends, or a correction). */
  library: LibraryRefresher;
  /** The MQTT credentials this coordinator issued (hashes only). */
  credentials: MqttCredentials;
  /** The embedded broker; null with an external one (MQTT_URL), where the credentials live in that broker. */
  broker: EmbeddedBroker | null;
  /** Box-set and multi-CD sessions (GET /sessions). */
  sessions: SessionBook;
  log: Logger;
}
