import type { AlbumInfo, DiscInfo } from '../../shared/protocol.js';
import type { DiscRecognition, JobMeta } from '../../shared/api-types.js';
import type { DiscTitle } from '../../shared/disc-titles.js';
import type { AlbumSuggestion } from './album-choice.js';

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
  /** A movie's runtime in minutes (TMDB's movie details), when the lookup knows it: evidence for the disc's main feature. */
  runtime_minutes?: number | null;
  /** Audio CDs: artist, album, tracks and MusicBrainz ids (MusicBrainz, CD-Text or the unknown fallback). */
  album?: AlbumInfo | null;
  /** Audio CDs: the other MusicBrainz releases with this disc, for the disc card. */
  suggestions?: AlbumSuggestion[];
  /** Audio CDs: the album of each suggestion, same order (what POST /jobs musicbrainz_release_id picks from). */
  alternatives?: AlbumInfo[];
  /** Video discs TheDiscDB found by their content ids: from where and by which id. */
  recognised?: DiscRecognition | null;
  /** Video discs TheDiscDB found: every title of the disc with its evidence and role (main movie, episode, extra, ...). */
  disc_titles?: DiscTitle[];
}

/**
 * The metadata chain as the pre-scan sees it (one interface; the sources live in their own modules).
 * Answers null when no source knows the disc.
 */
export interface DiscLookup {
  identify(disc: DiscInfo, label: DiscIdentity): Promise<DiscIdentity | null>;
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

/** The disc's number in its set as its volume label names it ("SHOW_S2_D3" → 3), or null. The agent's display title drops it, so the label is read. */
export function labelDiscNumber(label: string): number | null {
  const series = SERIES_LABEL.exec(label.trim());
  return series?.[3] ? Number(series[3]) : null;
}

/** The keys a disc's identity adds to a job's meta: poster_path (as the spec keeps it) and what the library files need. */
export function identityMeta(identity: DiscIdentity): JobMeta {
  const meta: JobMeta = { metadata_source: identity.source, confidence: identity.confidence };
  if (identity.poster) meta.poster_path = identity.poster;
  if (identity.overview) meta.overview = identity.overview;
  if (identity.tmdb_id) meta.tmdb_id = identity.tmdb_id;
  if (identity.imdb_id) meta.imdb_id = identity.imdb_id;
  if (identity.disc_number) meta.disc_number = identity.disc_number;
  if (identity.original_language) meta.original_language = identity.original_language;
  if (identity.album) meta.album = identity.album;
  return meta;
}
