import type { Db } from '../../shared/sqlite.js';
import type { MbRelease } from './musicbrainz.js';

const DAY_MS = 24 * 3600_000;
/** A disc MusicBrainz knows is asked again after 30 days; one it does not know after a day (someone may add it). */
export const FOUND_TTL_MS = 30 * DAY_MS;
export const NOT_FOUND_TTL_MS = DAY_MS;

/** MusicBrainz's answers per disc id in SQLite, so a CD inserted again costs no request. Failures are never stored. */
export class MusicBrainzCache {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** The stored releases of a disc id ([] = MusicBrainz knew none), or undefined when nothing unexpired is stored. */
  get(discId: string): MbRelease[] | undefined {
    const row = this.db.prepare<[string], { releases: string; expires_at: string }>('SELECT releases, expires_at FROM musicbrainz_discs WHERE disc_id = ?').get(discId);
    if (!row) return undefined;
    if (Date.parse(row.expires_at) <= this.now()) {
      this.db.prepare('DELETE FROM musicbrainz_discs WHERE disc_id = ?').run(discId);
      return undefined;
    }
    try {
      const releases = JSON.parse(row.releases) as unknown;
      if (!Array.isArray(releases)) return undefined;
      // An answer stored before the tags beyond names were read (no artist ids, no disc TOCs) is asked again.
      if ((releases as MbRelease[]).some((r) => !Array.isArray(r.artist_ids) || r.media.some((m) => !Array.isArray(m.discs)))) return undefined;
      return releases as MbRelease[];
    } catch {
      return undefined;
    }
  }

  put(discId: string, releases: MbRelease[]): void {
    const now = this.now();
    this.db
      .prepare('INSERT INTO musicbrainz_discs (disc_id, releases, fetched_at, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT(disc_id) DO UPDATE SET releases = excluded.releases, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at')
      .run(discId, JSON.stringify(releases), new Date(now).toISOString(), new Date(now + (releases.length ? FOUND_TTL_MS : NOT_FOUND_TTL_MS)).toISOString());
  }
}
