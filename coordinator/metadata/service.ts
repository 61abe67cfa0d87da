import type { SearchAnswer, SourceStatus } from '../../shared/api-types.js';
import type { CoordinatorConfig } from '../../shared/config.js';
import type { Logger } from '../../shared/log.js';
import { titleSimilarity } from './title-similarity.js';
import type { SettingsStore } from '../system/settings-store.js';
import { KeyStore } from '../keys/key-store.js';
import { KeydbTitles } from '../keys/keydb-titles.js';
import { MetadataChain } from './chain.js';
import { JikanClient } from './jikan.js';
import { SourceError, sourceName, type MetadataMatch } from './match.js';
import { OmdbClient } from './omdb.js';
import { TmdbClient } from './tmdb.js';
import { TheDiscDbClient } from './thediscdb/client.js';
import { TheDiscDbLookup } from './thediscdb/lookup.js';
import { TheDiscDbMirror } from './thediscdb/mirror.js';

export type { SourceStatus };

export type { SearchAnswer };

/**
 * The three metadata databases with their keys (a key saved in the settings wins over the
 * environment's), the lookup chain over them, and the live search and status of /metadata.
 */
export class MetadataService {
  readonly tmdb: TmdbClient;
  readonly jikan: JikanClient;
  readonly omdb: OmdbClient;
  readonly chain: MetadataChain;
  /** TheDiscDB's live API and the offline copy the setting thediscdbMirror names. */
  readonly thediscdbClient: TheDiscDbClient;
  readonly mirror: TheDiscDbMirror;
  readonly thediscdb: TheDiscDbLookup;

  constructor(config: CoordinatorConfig, settings: SettingsStore, log: Logger, sleep?: (ms: number) => Promise<void>) {
    this.tmdb = new TmdbClient(config.tmdbBaseUrl, () => settings.get('tmdbApiKey') || config.tmdbApiKey, config.tmdbImageBaseUrl);
    this.jikan = new JikanClient(config.jikanBaseUrl, sleep);
    this.omdb = new OmdbClient(config.omdbBaseUrl, () => settings.get('omdbApiKey') || config.omdbApiKey);
    this.thediscdbClient = new TheDiscDbClient(config.thediscdbBaseUrl);
    this.mirror = new TheDiscDbMirror(() => settings.get('thediscdbMirror'), log);
    this.thediscdb = new TheDiscDbLookup(this.mirror, this.thediscdbClient, log);
    // A Blu-ray TheDiscDB does not know is searched by the title DATA_DIR/KEYDB.cfg gives its AACS disc id, when there is one.
    this.chain = new MetadataChain(this.tmdb, this.jikan, this.omdb, log, this.thediscdb, new KeydbTitles(new KeyStore(config.dataDir).keydbFile, log));
  }

  /** Every source at once; results of all of them, most similar to the query first. */
  async search(query: string): Promise<SearchAnswer> {
    const errors: SearchAnswer['errors'] = [];
    const ask = async (source: MetadataMatch['source'], run: () => Promise<MetadataMatch[]>): Promise<MetadataMatch[]> => {
      try {
        return await run();
      } catch (err) {
        errors.push({ source, message: err instanceof SourceError ? err.message : `${sourceName(source)} failed: ${(err as Error).message}` });
        return [];
      }
    };
    const lists = await Promise.all([
      this.tmdb.configured() ? ask('tmdb', () => this.tmdb.search(query, null)) : Promise.resolve([]),
      ask('jikan', async () => (await this.jikan.search(query)).map((h) => ({ ...h.match, similarity: Math.max(...h.titles.map((t) => titleSimilarity(query, t))) }))),
      this.omdb.configured() ? ask('omdb', () => this.omdb.search(query, null)) : Promise.resolve([]),
    ]);
    const results = lists
      .flat()
      .map((m) => ({ ...m, similarity: round(m.similarity ?? Math.max(titleSimilarity(query, m.title), m.original_title ? titleSimilarity(query, m.original_title) : 0)) }))
      .sort((a, b) => b.similarity - a.similarity);
    return { query, results, errors };
  }

  /** A live request to each source (never cached): reachable, key accepted, how long it took. */
  async status(): Promise<SourceStatus[]> {
    const probe = async (source: MetadataMatch['source'], configured: boolean, check: () => Promise<void>, extra: Partial<SourceStatus> = {}): Promise<SourceStatus> => {
      if (!configured) return { source, configured, ok: false, message: `no ${sourceName(source)} key is set`, latency_ms: null, ...extra };
      const start = performance.now();
      try {
        await check();
        return { source, configured, ok: true, message: 'connected', latency_ms: Math.round(performance.now() - start), ...extra };
      } catch (err) {
        return { source, configured, ok: false, message: (err as Error).message, latency_ms: Math.round(performance.now() - start), ...extra };
      }
    };
    return Promise.all([
      probe('tmdb', this.tmdb.configured(), () => this.tmdb.check(), { auth: this.tmdb.authKind() }),
      probe('jikan', true, () => this.jikan.check()),
      probe('omdb', this.omdb.configured(), () => this.omdb.check()),
      this.thediscdbStatus(probe),
    ]);
  }

  /** TheDiscDB: the live API (no key), and in the message the state of the offline copy when one is set. */
  private async thediscdbStatus(probe: (source: MetadataMatch['source'], configured: boolean, check: () => Promise<void>) => Promise<SourceStatus>): Promise<SourceStatus> {
    const live = await probe('thediscdb', true, () => this.thediscdbClient.check());
    const copy = this.mirror.status();
    if (!copy) return live;
    const state = copy.error ? `offline copy ${copy.folder}: ${copy.error}` : copy.ready ? `offline copy ${copy.folder}: ${copy.discs} discs` : `offline copy ${copy.folder}: being indexed`;
    return { ...live, ok: live.ok || copy.ready, message: `${live.message}; ${state}` };
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
