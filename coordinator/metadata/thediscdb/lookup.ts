/**
 * A disc looked up in TheDiscDB by the ids the agent read from its files: the offline copy first,
 * then the live API; by ContentHash first, then by GlobalDiscId. A hit is exact (the disc's own
 * content found it), so it carries the title, the external ids and what each scanned title is.
 */
import type { DiscIds } from '../../../shared/protocol.js';
import type { Logger } from '../../../shared/log.js';
import { SourceError } from '../match.js';
import type { TheDiscDbClient } from './client.js';
import type { TheDiscDbMirror } from './mirror.js';
import { parseSeason } from './roles.js';
import type { DiscTitle } from '../../../shared/disc-titles.js';
import { discTitles, matchTitles, type ScannedTitle, type TitleMapping } from './title-matcher.js';
import { isContentHash, normaliseId, type TddbEntry } from './types.js';

export interface TheDiscDbHit {
  title: string;
  year: number | null;
  kind: 'movie' | 'series';
  tmdb_id: number | null;
  imdb_id: string | null;
  /** `<base>/images/<imageUrl>` of the media item's cover; null when it has none. */
  poster_url: string | null;
  /** Series discs whose titles all belong to one season. */
  season: number | null;
  /** TheDiscDB's slug of the media item ("2001-a-space-odyssey-1968"). */
  slug: string | null;
  release: string | null;
  /** The disc's number in its release. */
  disc_number: number | null;
  format: string | null;
  matched_by: 'content_hash' | 'global_disc_id';
  from: 'mirror' | 'api';
  /** Per scanned title that TheDiscDB knows: its TheDiscDB index and role; in the scan's order. */
  titles: TitleMapping[];
  /** Every title of the disc as TheDiscDB knows it (evidence and role), in TheDiscDB's order. */
  disc_titles: DiscTitle[];
}

type Kind = 'contentHash' | 'globalDiscId';

/** The id TheDiscDB keeps as GlobalDiscId: a DVD's DVDDiscID, a Blu-ray's AACS disc id. */
export function globalDiscIdOf(ids: DiscIds): string | null {
  return normaliseId(ids.dvd_disc_id) ?? normaliseId(ids.aacs_disc_id);
}

function seasonOf(entry: TddbEntry): number | null {
  const seasons = new Set(entry.disc.titles.map((t) => parseSeason(t.item?.season ?? null)).filter((s): s is number => s !== null));
  return seasons.size === 1 ? [...seasons][0] : null;
}

function tmdbNumber(value: string | null): number | null {
  return value && /^\d+$/.test(value) ? Number(value) : null;
}

function itemKey(e: TddbEntry): string {
  return e.mediaItem.slug ?? `${e.mediaItem.title} (${e.mediaItem.year ?? ''})`;
}

/**
 * Of several entries one id found (one pressing in several releases, or a disc shared by two
 * titles), the one whose titles pair with most of the scanned ones. Two different media items
 * equally good are no exact answer: null.
 */
export function bestEntry(entries: TddbEntry[], scanned: readonly ScannedTitle[]): { entry: TddbEntry; titles: TitleMapping[] } | null {
  const scored = entries.map((entry) => ({ entry, titles: matchTitles(scanned, entry.disc) }));
  scored.sort((a, b) => b.titles.length - a.titles.length);
  const best = scored[0];
  if (!best) return null;
  const rival = scored.find((s) => s.titles.length === best.titles.length && itemKey(s.entry) !== itemKey(best.entry));
  return rival ? null : best;
}

export class TheDiscDbLookup {
  constructor(
    private readonly mirror: Pick<TheDiscDbMirror, 'find'> | null,
    private readonly client: Pick<TheDiscDbClient, 'byContentHash' | 'byGlobalDiscId' | 'imageUrl'> | null,
    private readonly log: Logger,
  ) {}

  /** null when neither the copy nor the API knows the disc (or the API could not be asked). */
  async lookupDisc(ids: DiscIds | null | undefined, scannedTitles: readonly ScannedTitle[]): Promise<TheDiscDbHit | null> {
    if (!ids) return null;
    const hash = normaliseId(ids.content_hash);
    const keys: [Kind, string][] = [];
    if (isContentHash(hash)) keys.push(['contentHash', hash]);
    const discId = globalDiscIdOf(ids);
    if (discId) keys.push(['globalDiscId', discId]);
    if (keys.length === 0) return null;

    if (this.mirror) {
      for (const [kind, id] of keys) {
        const hit = this.choose(await this.mirror.find(kind, id), scannedTitles, kind, 'mirror');
        if (hit) return hit;
      }
    }
    if (this.client) {
      for (const [kind, id] of keys) {
        let entries: TddbEntry[];
        try {
          entries = kind === 'contentHash' ? await this.client.byContentHash(id) : await this.client.byGlobalDiscId(id);
        } catch (err) {
          this.log.warn(`metadata source skipped: ${err instanceof SourceError ? err.message : `TheDiscDB failed: ${(err as Error).message}`}`);
          return null;
        }
        const hit = this.choose(entries, scannedTitles, kind, 'api');
        if (hit) return hit;
      }
    }
    return null;
  }

  private choose(entries: TddbEntry[], scanned: readonly ScannedTitle[], kind: Kind, from: TheDiscDbHit['from']): TheDiscDbHit | null {
    if (entries.length === 0) return null;
    const best = bestEntry(entries, scanned);
    if (!best) {
      this.log.info(`TheDiscDB: the disc's ${kind === 'contentHash' ? 'content hash' : 'disc id'} belongs to ${new Set(entries.map(itemKey)).size} titles alike; no exact answer`);
      return null;
    }
    const { entry, titles } = best;
    const m = entry.mediaItem;
    const series = m.type?.toLowerCase() === 'series';
    return {
      title: m.title,
      year: m.year,
      kind: series ? 'series' : 'movie',
      tmdb_id: tmdbNumber(m.tmdb),
      imdb_id: m.imdb && /^tt\d+$/.test(m.imdb) ? m.imdb : null,
      poster_url: this.client ? this.client.imageUrl(m.imageUrl) : null,
      season: series ? seasonOf(entry) : null,
      slug: m.slug,
      release: entry.release.slug,
      disc_number: entry.disc.index,
      format: entry.disc.format,
      matched_by: kind === 'contentHash' ? 'content_hash' : 'global_disc_id',
      from,
      titles,
      disc_titles: discTitles(entry.disc),
    };
  }
}
