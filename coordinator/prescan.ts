import type { AlbumInfo, DiscInfo } from '../shared/protocol.js';
import type { AlbumSuggestion } from './metadata/album-choice.js';
import type { Logger } from '../shared/log.js';
import type { Db } from '../shared/sqlite.js';

/** What the pre-scan knows about a disc: the disc object of GET /devices is built from it. */
export interface DiscIdentity {
  title: string;
  year: number | null;
  /** 0..1: how sure the metadata chain is; 0 when only the disc label was used. */
  confidence: number;
  poster: string | null;
  kind: 'movie' | 'series' | 'music' | 'unknown';
  /** Series discs: the season, when known. */
  season: number | null;
  /** Who answered: "label", "none" (the chain found nothing), "override" or a metadata source (tmdb, jikan, omdb). */
  source: string;
  /** The answering source's own id (TMDB number, mal_id, IMDb id). */
  source_id?: string | null;
  overview?: string | null;
  tmdb_id?: number | null;
  imdb_id?: string | null;
  /** Series discs: the disc's number in the season set, from the label ("…D2"). */
  disc_number?: number | null;
  /** ISO 639-2/T of the title's original language, when the lookup knows it. */
  original_language?: string | null;
  /** Audio CDs: artist, album, tracks and MusicBrainz ids (MusicBrainz, CD-Text or the unknown fallback). */
  album?: AlbumInfo | null;
  /** Audio CDs: the other MusicBrainz releases with this disc, for the disc card. */
  suggestions?: AlbumSuggestion[];
  /** Audio CDs: the album of each suggestion, same order (what POST /jobs musicbrainz_release_id picks from). */
  alternatives?: AlbumInfo[];
}

/**
 * The metadata chain as the pre-scan sees it (one interface; the sources live in their own modules).
 * Answers null when no source knows the disc.
 */
export interface DiscLookup {
  identify(disc: DiscInfo, label: DiscIdentity): Promise<DiscIdentity | null>;
}

const DAY_MS = 24 * 3600_000;
/** How long a correction (POST /metadata/override) is remembered for a disc. */
export const OVERRIDE_TTL_MS = 30 * DAY_MS;

/** How long a pre-scan result is cached: 7 days from confidence 0.9, 1 day from 0.6, below that not at all. */
export function prescanTtlMs(confidence: number): number | null {
  if (confidence >= 0.9) return 7 * DAY_MS;
  if (confidence >= 0.6) return DAY_MS;
  return null;
}

/** Series discs by their label: "SHOW_SEASON_1_DISC_3", "SHOW_S01D03", "SHOW S2". */
const SERIES_LABEL = /^(.*?)[\s_-]+S(?:EASON|TAFFEL)?[\s_-]*(\d{1,2})(?:[\s_-]*D(?:ISC|ISK)?[\s_-]*(\d{1,2}))?$/i;

/** The identity the label alone gives: the agent's display title and year; a series when the label names a season. */
export function labelIdentity(disc: DiscInfo): DiscIdentity {
  if (disc.type === 'cd') return { title: disc.title, year: disc.year, confidence: 0, poster: null, kind: 'music', season: null, source: 'label' };
  const series = SERIES_LABEL.exec(disc.title);
  if (series && series[1].trim()) {
    return { title: series[1].trim(), year: disc.year, confidence: 0, poster: null, kind: 'series', season: Number(series[2]), source: 'label', disc_number: series[3] ? Number(series[3]) : null };
  }
  return { title: disc.title, year: disc.year, confidence: 0, poster: null, kind: disc.type === 'unknown' ? 'unknown' : 'movie', season: null, source: 'label' };
}

/**
 * Pre-scan of an inserted disc: the label identity, improved by the metadata chain, cached by
 * fingerprint by the spec's rules (prescanTtlMs). The last result per fingerprint is kept in memory
 * for GET /devices.
 */
export class Prescan {
  private readonly latest = new Map<string, DiscIdentity>();

  constructor(
    private readonly db: Db,
    private readonly lookup: DiscLookup,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last pre-scan result of a disc, if one ran since the coordinator started. */
  get(fingerprint: string): DiscIdentity | undefined {
    return this.latest.get(fingerprint);
  }

  /** A user's correction: shown for the disc at once, and used for it instead of the chain for 30 days. */
  override(fingerprint: string, identity: DiscIdentity): void {
    this.db
      .prepare('INSERT INTO metadata_overrides (fingerprint, identity, expires_at) VALUES (?, ?, ?) ON CONFLICT(fingerprint) DO UPDATE SET identity = excluded.identity, expires_at = excluded.expires_at')
      .run(fingerprint, JSON.stringify(identity), new Date(this.now() + OVERRIDE_TTL_MS).toISOString());
    this.latest.set(fingerprint, identity);
  }

  /** The remembered correction of a disc, if it is younger than 30 days. */
  overridden(fingerprint: string): DiscIdentity | null {
    return this.stored('metadata_overrides', fingerprint);
  }

  async run(disc: DiscInfo): Promise<DiscIdentity> {
    const overridden = this.overridden(disc.fingerprint);
    if (overridden) {
      this.latest.set(disc.fingerprint, overridden);
      return overridden;
    }
    // Audio CDs skip this cache: MusicBrainz's answers have their own (per disc id), and the release
    // is chosen anew by the current musicCountry setting.
    const cacheable = disc.type !== 'cd';
    const cached = cacheable ? this.stored('prescan_cache', disc.fingerprint) : null;
    if (cached) {
      this.latest.set(disc.fingerprint, cached);
      return cached;
    }
    const fromLabel = labelIdentity(disc);
    let identity = fromLabel;
    try {
      identity = (await this.lookup.identify(disc, fromLabel)) ?? fromLabel;
    } catch (err) {
      this.log.warn(`metadata lookup for "${disc.title}" failed: ${(err as Error).message}; using the disc label`);
    }
    const ttl = prescanTtlMs(identity.confidence);
    if (ttl !== null && cacheable) {
      this.db
        .prepare('INSERT INTO prescan_cache (fingerprint, identity, confidence, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT(fingerprint) DO UPDATE SET identity = excluded.identity, confidence = excluded.confidence, expires_at = excluded.expires_at')
        .run(disc.fingerprint, JSON.stringify(identity), identity.confidence, new Date(this.now() + ttl).toISOString());
    }
    this.latest.set(disc.fingerprint, identity);
    return identity;
  }

  /** An unexpired identity of a fingerprint from the cache or the override table; an expired one is deleted. */
  private stored(table: 'prescan_cache' | 'metadata_overrides', fingerprint: string): DiscIdentity | null {
    const row = this.db.prepare<[string], { identity: string; expires_at: string }>(`SELECT identity, expires_at FROM ${table} WHERE fingerprint = ?`).get(fingerprint);
    if (!row) return null;
    if (Date.parse(row.expires_at) <= this.now()) {
      this.db.prepare(`DELETE FROM ${table} WHERE fingerprint = ?`).run(fingerprint);
      return null;
    }
    try {
      return JSON.parse(row.identity) as DiscIdentity;
    } catch {
      return null;
    }
  }
}

/** The keys a disc's identity adds to a job's meta: poster_path (as the spec keeps it) and what the library files need. */
export function identityMeta(identity: DiscIdentity): Record<string, unknown> {
  const meta: Record<string, unknown> = { metadata_source: identity.source, confidence: identity.confidence };
  if (identity.poster) meta.poster_path = identity.poster;
  if (identity.overview) meta.overview = identity.overview;
  if (identity.tmdb_id) meta.tmdb_id = identity.tmdb_id;
  if (identity.imdb_id) meta.imdb_id = identity.imdb_id;
  if (identity.disc_number) meta.disc_number = identity.disc_number;
  if (identity.original_language) meta.original_language = identity.original_language;
  if (identity.album) meta.album = identity.album;
  return meta;
}
