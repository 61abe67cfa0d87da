import { getJson, records, SourceError, str, yearOf, type MetadataMatch } from './match.js';

/** OMDb's "N/A" (and empty strings) become null; other values stay as they are. */
export function normaliseOmdb(r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) out[k] = typeof v === 'string' && (v.trim() === 'N/A' || v.trim() === '') ? null : v;
  return out;
}

/** A normalised OMDb record as a match; one with neither poster nor plot is no hit (null). */
export function omdbMatch(raw: Record<string, unknown>): MetadataMatch | null {
  const r = normaliseOmdb(raw);
  const id = str(r.imdbID);
  const title = str(r.Title);
  if (!id || !title) return null;
  const poster = str(r.Poster);
  const plot = str(r.Plot);
  if (!poster && !plot) return null;
  return {
    source: 'omdb',
    id,
    kind: r.Type === 'series' || r.Type === 'episode' ? 'series' : 'movie',
    title,
    original_title: null,
    year: yearOf(r.Year),
    poster_path: poster,
    poster_url: poster,
    overview: plot,
    tmdb_id: null,
    imdb_id: id,
  };
}

const TYPE_ORDER: Record<string, number> = { movie: 0, series: 1, episode: 2 };

/** OMDb's search hits best first: movies before series before episodes, with poster before without, short titles before long. */
export function rankOmdbHits(hits: Record<string, unknown>[]): Record<string, unknown>[] {
  return hits
    .map((h) => normaliseOmdb(h))
    .sort((a, b) => {
      const type = (TYPE_ORDER[String(a.Type)] ?? 3) - (TYPE_ORDER[String(b.Type)] ?? 3);
      if (type) return type;
      const poster = (a.Poster ? 0 : 1) - (b.Poster ? 0 : 1);
      if (poster) return poster;
      return String(a.Title ?? '').length - String(b.Title ?? '').length;
    });
}

/** How many posterless hits are looked up in detail to see whether they have a plot. */
const DETAIL_LOOKUPS = 3;

/** The second movie database: ?s= search, ?i= detail; the key is the query parameter apikey. */
export class OmdbClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: () => string,
  ) {}

  configured(): boolean {
    return this.key().trim() !== '';
  }

  private async get(params: Record<string, string>): Promise<Record<string, unknown>> {
    if (!this.configured()) throw new SourceError('omdb', 'no OMDb key is set (setting omdbApiKey or OMDB_API_KEY)');
    const url = new URL(`${this.baseUrl}/`);
    for (const [k, v] of Object.entries({ ...params, apikey: this.key().trim() })) url.searchParams.set(k, v);
    const body = await getJson('omdb', url.toString());
    if (!body || typeof body !== 'object') throw new SourceError('omdb', 'OMDb answered with an empty document');
    const doc = body as Record<string, unknown>;
    // "Movie not found!", "Series not found!", "Too many results." are answers; a bad key is not.
    if (doc.Response === 'False' && /api key|limit reached/i.test(String(doc.Error ?? ''))) throw new SourceError('omdb', `OMDb refused: ${String(doc.Error)}`);
    return doc;
  }

  async detail(imdbId: string): Promise<MetadataMatch | null> {
    const doc = await this.get({ i: imdbId, plot: 'short' });
    return doc.Response === 'True' ? omdbMatch(doc) : null;
  }

  /** The hits of a search, best first, each with poster or plot; the first one's plot is filled from its detail. */
  async search(query: string, kind: MetadataMatch['kind'] | null): Promise<MetadataMatch[]> {
    const doc = await this.get({ s: query, ...(kind === 'series' ? { type: 'series' } : {}) });
    if (doc.Response !== 'True') return [];
    const out: MetadataMatch[] = [];
    let lookups = 0;
    for (const hit of rankOmdbHits(records(doc.Search))) {
      let match = omdbMatch(hit);
      if (!match && hit.imdbID && lookups < DETAIL_LOOKUPS) {
        lookups++;
        match = await this.detail(String(hit.imdbID)).catch(() => null);
      }
      if (match) out.push(match);
    }
    return out;
  }

  async check(): Promise<void> {
    const doc = await this.get({ i: 'tt0133093' });
    if (doc.Response !== 'True') throw new SourceError('omdb', `OMDb answered: ${String(doc.Error ?? 'no result')}`);
  }
}
