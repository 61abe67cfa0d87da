import type { DiscInfo } from '../../shared/protocol.js';
import type { Logger } from '../../shared/log.js';
import { searchCandidates, titleSimilarity } from './title-similarity.js';
import type { DiscIdentity, DiscLookup } from './disc-identity.js';
import type { JikanClient } from './jikan.js';
import { SourceError, type MetadataMatch } from './match.js';
import type { OmdbClient } from './omdb.js';
import type { TmdbClient } from './tmdb.js';
import type { TheDiscDbHit, TheDiscDbLookup } from './thediscdb/lookup.js';

/** Similarity from which a title counts as exact and ends the chain. */
export const EXACT_SIMILARITY = 0.9;
/** Similarity from which a hit is worth remembering as a suggestion. */
export const FUZZY_SIMILARITY = 0.55;
export const SUGGESTION_CONFIDENCE = 0.6;
export const UNKNOWN_CONFIDENCE = 0.3;
/** TheDiscDB found the disc by its own content: no guess from a title. */
export const DISC_ID_CONFIDENCE = 1;

interface Scored {
  match: MetadataMatch;
  similarity: number;
}

/** The best similarity of any of a hit's titles to the searched text. */
function score(query: string, titles: (string | null)[]): number {
  return Math.max(0, ...titles.filter((t): t is string => Boolean(t)).map((t) => titleSimilarity(query, t)));
}

function identityFromMatch(m: MetadataMatch, label: DiscIdentity, confidence: number): DiscIdentity {
  return {
    title: m.title,
    year: m.year ?? label.year,
    confidence: Math.round(confidence * 1000) / 1000,
    poster: m.poster_path,
    kind: label.kind === 'series' ? 'series' : m.kind,
    season: label.season,
    source: m.source,
    source_id: m.id,
    overview: m.overview,
    tmdb_id: m.tmdb_id,
    imdb_id: m.imdb_id,
    disc_number: label.disc_number ?? null,
    original_language: m.original_language ?? null,
  };
}

function identityFromDisc(hit: TheDiscDbHit, label: DiscIdentity): DiscIdentity {
  return {
    title: hit.title,
    year: hit.year ?? label.year,
    confidence: DISC_ID_CONFIDENCE,
    poster: hit.poster_url,
    kind: hit.kind,
    season: hit.season ?? (hit.kind === 'series' ? label.season : null),
    source: 'thediscdb',
    source_id: hit.slug,
    overview: null,
    tmdb_id: hit.tmdb_id,
    imdb_id: hit.imdb_id,
    disc_number: label.disc_number ?? (hit.kind === 'series' ? hit.disc_number : null),
    original_language: null,
    recognised: { source: 'thediscdb', from: hit.from, matched_by: hit.matched_by, release: hit.release, disc_number: hit.disc_number },
    disc_titles: hit.disc_titles,
  };
}

/**
 * The spec's lookup chain (after TheDiscDB, for video discs with content ids): TMDB (exact only), then Jikan (exact ends it, 0.55..0.9 is remembered),
 * then OMDb (re-localised to German through TMDB's find), then the remembered fuzzy hit as a
 * suggestion (0.6), then unknown (0.3, the disc title kept). Every candidate of the title (trailing
 * words stripped one by one) is tried per source. A failing source is logged and skipped.
 */
export class MetadataChain implements DiscLookup {
  constructor(
    private readonly tmdb: TmdbClient,
    private readonly jikan: JikanClient,
    private readonly omdb: OmdbClient,
    private readonly log: Logger,
    private readonly thediscdb: Pick<TheDiscDbLookup, 'lookupDisc'> | null = null,
    /** The household's KEYDB.cfg (coordinator/keys/keydb-titles.ts): a Blu-ray's title by its AACS disc id. */
    private readonly keydb: { identityFor(disc: DiscInfo, label: DiscIdentity): Promise<DiscIdentity | null> } | null = null,
  ) {}

  async identify(disc: DiscInfo, label: DiscIdentity): Promise<DiscIdentity | null> {
    const identity = await this.lookup(disc, label);
    return identity ? withMovieRuntime(this.tmdb, identity, this.log) : null;
  }

  private async lookup(disc: DiscInfo, label: DiscIdentity): Promise<DiscIdentity | null> {
    if (label.kind === 'music') return null;
    // A video disc TheDiscDB knows by its content ids is exact; the title search below is for the rest.
    if (this.thediscdb && disc.ids && (disc.type === 'dvd' || disc.type === 'bluray' || disc.type === 'uhd')) {
      const hit = await this.thediscdb.lookupDisc(disc.ids, []);
      if (hit) return identityFromDisc(hit, label);
    }
    // A Blu-ray or UHD TheDiscDB does not know may be named by KEYDB.cfg for its AACS disc id: that title is searched (and kept) instead of the label's.
    if (this.keydb && disc.ids?.aacs_disc_id && (disc.type === 'bluray' || disc.type === 'uhd')) {
      const named = await this.keydb.identityFor(disc, label);
      if (named) {
        this.log.info(`KEYDB.cfg names disc ${disc.ids.aacs_disc_id}: "${named.title}"${named.year ? ` (${named.year})` : ''} is searched instead of the label "${label.title}"`);
        label = named;
      }
    }
    const kind = label.kind === 'series' ? 'series' : null;
    const candidates = searchCandidates(label.title);
    let fuzzy: Scored | null = null;
    const remember = (s: Scored | null) => {
      if (s && s.similarity >= FUZZY_SIMILARITY && (!fuzzy || s.similarity > fuzzy.similarity)) fuzzy = s;
    };

    if (this.tmdb.configured()) {
      const best = await this.best('tmdb', candidates, async (q) => (await this.tmdb.search(q, kind)).map((m) => ({ match: m, titles: [m.title, m.original_title] })));
      if (best && best.similarity >= EXACT_SIMILARITY) return identityFromMatch(best.match, label, best.similarity);
      remember(best);
    }

    const anime = await this.best('jikan', candidates, (q) => this.jikan.search(q));
    if (anime && anime.similarity >= EXACT_SIMILARITY) return identityFromMatch(anime.match, label, anime.similarity);
    remember(anime);

    if (this.omdb.configured()) {
      const hit = await this.omdbHit(candidates, kind);
      if (hit) return identityFromMatch(await this.relocalise(hit.match), label, hit.similarity);
    }

    const suggestion = fuzzy as Scored | null;
    if (suggestion) {
      this.log.info(`"${label.title}": no exact match; suggesting "${suggestion.match.title}" from ${suggestion.match.source} (similarity ${suggestion.similarity.toFixed(2)})`);
      return identityFromMatch(suggestion.match, label, SUGGESTION_CONFIDENCE);
    }
    this.log.info(`"${label.title}": no metadata source knows this disc; the disc title is kept`);
    return { ...label, kind: 'unknown', confidence: UNKNOWN_CONFIDENCE, source: 'none' };
  }

  /** The most similar hit of a source over the candidates; stops at the first exact one. */
  private async best(source: MetadataMatch['source'], candidates: string[], search: (q: string) => Promise<{ match: MetadataMatch; titles: (string | null)[] }[]>): Promise<Scored | null> {
    let best: Scored | null = null;
    for (const q of candidates) {
      let hits: { match: MetadataMatch; titles: (string | null)[] }[];
      try {
        hits = await search(q);
      } catch (err) {
        this.skip(source, err);
        return best;
      }
      for (const h of hits) {
        const similarity = score(q, h.titles);
        if (!best || similarity > best.similarity) best = { match: h.match, similarity };
      }
      if (best && best.similarity >= EXACT_SIMILARITY) break;
    }
    return best;
  }

  /** OMDb: per candidate, the first hit in OMDb's ranking order that is similar enough. */
  private async omdbHit(candidates: string[], kind: MetadataMatch['kind'] | null): Promise<Scored | null> {
    for (const q of candidates) {
      let hits: MetadataMatch[];
      try {
        hits = await this.omdb.search(q, kind);
      } catch (err) {
        this.skip('omdb', err);
        return null;
      }
      for (const m of hits) {
        const similarity = score(q, [m.title]);
        if (similarity >= FUZZY_SIMILARITY) return { match: m, similarity };
      }
    }
    return null;
  }

  /** An OMDb hit in German through TMDB's find-by-IMDb-id; unchanged when TMDB has no key or no entry. */
  private async relocalise(m: MetadataMatch): Promise<MetadataMatch> {
    if (!this.tmdb.configured() || !m.imdb_id) return m;
    try {
      const german = await this.tmdb.findByImdb(m.imdb_id);
      if (!german) return m;
      return { ...m, title: german.title, original_title: m.title, year: german.year ?? m.year, poster_path: german.poster_path ?? m.poster_path, poster_url: german.poster_url ?? m.poster_url, overview: german.overview ?? m.overview, tmdb_id: german.tmdb_id, original_language: german.original_language ?? m.original_language ?? null };
    } catch (err) {
      this.skip('tmdb', err);
      return m;
    }
  }

  private skip(source: MetadataMatch['source'], err: unknown): void {
    const reason = err instanceof SourceError ? err.message : `${source} failed: ${(err as Error).message}`;
    this.log.warn(`metadata source skipped: ${reason}`);
  }
}

/**
 * A movie identity with TMDB's runtime (movie details), the evidence for the disc's main feature
 * (shared/main-feature.ts); unchanged for series, without a TMDB id or key, or when TMDB fails (logged).
 */
export async function withMovieRuntime(tmdb: Pick<TmdbClient, 'configured' | 'movieRuntime'>, identity: DiscIdentity, log: Logger): Promise<DiscIdentity> {
  if (identity.kind !== 'movie' || !identity.tmdb_id || identity.runtime_minutes || !tmdb.configured()) return identity;
  try {
    const runtime = await tmdb.movieRuntime(identity.tmdb_id);
    return runtime ? { ...identity, runtime_minutes: runtime } : identity;
  } catch (err) {
    log.warn(`TMDB runtime of movie ${identity.tmdb_id} skipped: ${err instanceof SourceError ? err.message : (err as Error).message}`);
    return identity;
  }
}
