import { getJson, records, SourceError, str, yearOf, type MetadataMatch } from './match.js';

const RETRY_AFTER_MS = 2000;

/** Every title an anime is known by: default, English, Japanese, synonyms and the titles list. */
export function jikanTitles(r: Record<string, unknown>): string[] {
  const titles = [r.title, r.title_english, r.title_japanese, ...(Array.isArray(r.title_synonyms) ? r.title_synonyms : []), ...records(r.titles).map((t) => t.title)];
  return [...new Set(titles.filter((t): t is string => typeof t === 'string' && t.trim() !== ''))];
}

/** One entry of GET /anime (Jikan v4); movies are "Movie", everything else counts as a series. */
export function jikanMatch(r: Record<string, unknown>): MetadataMatch | null {
  const id = typeof r.mal_id === 'number' ? r.mal_id : null;
  const title = str(r.title_english) ?? str(r.title);
  if (id === null || !title) return null;
  const images = (r.images ?? {}) as { jpg?: { large_image_url?: unknown; image_url?: unknown } };
  const poster = str(images.jpg?.large_image_url) ?? str(images.jpg?.image_url);
  const aired = (r.aired ?? {}) as { from?: unknown };
  return {
    source: 'jikan',
    id: String(id),
    kind: r.type === 'Movie' ? 'movie' : 'series',
    title,
    original_title: str(r.title),
    year: typeof r.year === 'number' ? r.year : yearOf(aired.from),
    poster_path: poster,
    poster_url: poster,
    overview: str(r.synopsis),
    tmdb_id: null,
    imdb_id: null,
  };
}

/** The anime database (no key). A 504 (MyAnimeList slow behind Jikan) is retried once after 2 s. */
export class JikanClient {
  constructor(
    private readonly baseUrl: string,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  async search(query: string): Promise<{ match: MetadataMatch; titles: string[] }[]> {
    const url = `${this.baseUrl}/anime?q=${encodeURIComponent(query)}&limit=10&sfw=true`;
    let body: unknown;
    try {
      body = await getJson('jikan', url);
    } catch (err) {
      if (!(err instanceof SourceError) || err.status !== 504) throw err;
      await this.sleep(RETRY_AFTER_MS);
      body = await getJson('jikan', url);
    }
    const out: { match: MetadataMatch; titles: string[] }[] = [];
    for (const r of records((body as { data?: unknown } | null)?.data)) {
      const match = jikanMatch(r);
      if (match) out.push({ match, titles: jikanTitles(r) });
    }
    return out;
  }

  async check(): Promise<void> {
    await getJson('jikan', `${this.baseUrl}/anime?q=test&limit=1`);
  }
}
