import { getJson, records, SourceError, str, yearOf, type MetadataMatch } from './match.js';
import { normaliseLanguage, UNDETERMINED } from '../../shared/languages.js';

const LANGUAGE = 'de-DE';

export type TmdbAuth = { kind: 'v3'; query: Record<string, string>; headers: Record<string, string> } | { kind: 'v4'; query: Record<string, string>; headers: Record<string, string> };

/** A 32-hex key is a v3 key sent as api_key; anything else is a v4 read token sent as a bearer credential. */
export function tmdbAuth(key: string): TmdbAuth {
  const k = key.trim();
  if (/^[0-9a-f]{32}$/i.test(k)) return { kind: 'v3', query: { api_key: k }, headers: {} };
  return { kind: 'v4', query: {}, headers: { authorization: `Bearer ${k}` } };
}

export interface SeasonEpisode {
  episode: number;
  name: string | null;
  runtime_minutes: number | null;
  air_date: string | null;
}

export interface TmdbSeason {
  tv_id: number;
  season: number;
  name: string | null;
  episodes: SeasonEpisode[];
}

/** TMDB's original_language (ISO 639-1, "en") as ISO 639-2/T; null when absent or unknown. */
function originalLanguage(value: unknown): string | null {
  const code = typeof value === 'string' ? normaliseLanguage(value) : UNDETERMINED;
  return code === UNDETERMINED ? null : code;
}

/** A movie (title, release_date) or a series (name, first_air_date) of a TMDB answer. */
export function tmdbMatch(r: Record<string, unknown>, kind: MetadataMatch['kind'], imageBase: string): MetadataMatch | null {
  const id = typeof r.id === 'number' ? r.id : null;
  const title = str(kind === 'movie' ? r.title : r.name);
  if (id === null || !title) return null;
  const poster = str(r.poster_path);
  return {
    source: 'tmdb',
    id: String(id),
    kind,
    title,
    original_title: str(kind === 'movie' ? r.original_title : r.original_name),
    original_language: originalLanguage(r.original_language),
    year: yearOf(kind === 'movie' ? r.release_date : r.first_air_date),
    poster_path: poster,
    poster_url: poster ? `${imageBase}${poster}` : null,
    overview: str(r.overview),
    tmdb_id: id,
    imdb_id: null,
  };
}

/** The movie database: search, find by external id, movie and season runtimes, and a live connection check. */
export class TmdbClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: () => string,
    private readonly imageBase: string,
  ) {}

  configured(): boolean {
    return this.key().trim() !== '';
  }

  authKind(): 'v3' | 'v4' | null {
    return this.configured() ? tmdbAuth(this.key()).kind : null;
  }

  private async get(path: string, params: Record<string, string>): Promise<Record<string, unknown>> {
    if (!this.configured()) throw new SourceError('tmdb', 'no TMDB key is set (setting tmdbApiKey or TMDB_API_KEY)');
    const auth = tmdbAuth(this.key());
    const url = new URL(`${this.baseUrl}/3${path}`);
    for (const [k, v] of Object.entries({ ...params, ...auth.query })) url.searchParams.set(k, v);
    const body = await getJson('tmdb', url.toString(), auth.headers);
    if (!body || typeof body !== 'object') throw new SourceError('tmdb', 'TMDB answered with an empty document');
    return body as Record<string, unknown>;
  }

  /** Movies for a movie disc; series for a series disc; both (search/multi) when the kind is open. */
  async search(query: string, kind: MetadataMatch['kind'] | null): Promise<MetadataMatch[]> {
    const path = kind === 'movie' ? '/search/movie' : kind === 'series' ? '/search/tv' : '/search/multi';
    const body = await this.get(path, { query, language: LANGUAGE, include_adult: 'false' });
    const out: MetadataMatch[] = [];
    for (const r of records(body.results)) {
      const type = kind ?? (r.media_type === 'movie' ? 'movie' : r.media_type === 'tv' ? 'series' : null);
      if (!type) continue;
      const m = tmdbMatch(r, type, this.imageBase);
      if (m) out.push(m);
    }
    return out;
  }

  /** find/{imdb_id}: the German title and TMDB poster of a title another database found. */
  async findByImdb(imdbId: string): Promise<MetadataMatch | null> {
    const body = await this.get(`/find/${encodeURIComponent(imdbId)}`, { external_source: 'imdb_id', language: LANGUAGE });
    const movie = records(body.movie_results)[0];
    if (movie) return withImdb(tmdbMatch(movie, 'movie', this.imageBase), imdbId);
    const tv = records(body.tv_results)[0];
    if (tv) return withImdb(tmdbMatch(tv, 'series', this.imageBase), imdbId);
    return null;
  }

  async season(tvId: number, season: number): Promise<TmdbSeason> {
    const body = await this.get(`/tv/${tvId}/season/${season}`, { language: LANGUAGE });
    const episodes = records(body.episodes)
      .map((e) => ({
        episode: typeof e.episode_number === 'number' ? e.episode_number : NaN,
        name: str(e.name),
        runtime_minutes: typeof e.runtime === 'number' && e.runtime > 0 ? e.runtime : null,
        air_date: str(e.air_date),
      }))
      .filter((e) => Number.isInteger(e.episode))
      .sort((a, b) => a.episode - b.episode);
    return { tv_id: tvId, season, name: str(body.name), episodes };
  }

  /** movie/{id}: the movie's runtime in minutes (evidence for a disc's main feature); null when TMDB has none (0). */
  async movieRuntime(movieId: number): Promise<number | null> {
    const body = await this.get(`/movie/${movieId}`, { language: LANGUAGE });
    return typeof body.runtime === 'number' && body.runtime > 0 && body.runtime < 10_000 ? body.runtime : null;
  }

  /** GET /3/configuration: answers only with a valid key. */
  async check(): Promise<void> {
    await this.get('/configuration', {});
  }
}

function withImdb(m: MetadataMatch | null, imdbId: string): MetadataMatch | null {
  return m ? { ...m, imdb_id: imdbId } : null;
}
