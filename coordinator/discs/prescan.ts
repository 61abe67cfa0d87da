import type { DiscInfo } from '../../shared/protocol.js';
import { lookupKeys, type DiscKey } from '../../shared/disc-key.js';
import { labelIdentity, type DiscIdentity, type DiscLookup } from '../metadata/disc-identity.js';
import type { Logger } from '../../shared/log.js';
import type { Db } from '../../shared/sqlite.js';

const DAY_MS = 24 * 3600_000;
/** How long a correction (POST /metadata/override) is remembered for a disc. */
export const OVERRIDE_TTL_MS = 30 * DAY_MS;

/** Spec, Limits: a pre-scan result of this confidence or more is cached (below it, not at all)... */
export const PRESCAN_CACHE_MIN_CONFIDENCE = 0.6;
/** ...for a day, and from this confidence on for 7 days. */
export const PRESCAN_LONG_CACHE_CONFIDENCE = 0.9;
export const PRESCAN_SHORT_TTL_MS = DAY_MS;
export const PRESCAN_LONG_TTL_MS = 7 * DAY_MS;

/** How long a pre-scan result is cached: 7 days from confidence 0.9, 1 day from 0.6, below that not at all. */
export function prescanTtlMs(confidence: number): number | null {
  if (confidence >= PRESCAN_LONG_CACHE_CONFIDENCE) return PRESCAN_LONG_TTL_MS;
  if (confidence >= PRESCAN_CACHE_MIN_CONFIDENCE) return PRESCAN_SHORT_TTL_MS;
  return null;
}

/**
 * Pre-scan of an inserted disc: the label identity, improved by the metadata chain, cached by
 * fingerprint by the spec's rules (prescanTtlMs). The last result per fingerprint is kept in memory
 * for GET /devices.
 *
 * The fingerprint is the disc's content identity (`dvd:…`, `aacs:…`, `mb:…`, `files:…`); cache rows
 * and corrections are written under it. A disc with nothing under its identity finds the rows
 * written before content ids under its label fingerprint (shared/disc-key.ts, lookupKeys); a row
 * under another disc's identity is never one of them.
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

  /**
   * A user's correction: shown for the disc at once, and used for it instead of the chain for 30 days.
   * Written under the key given: a disc's identity (a job made before content ids gives its label
   * fingerprint, which the disc still finds).
   */
  override(fingerprint: string, identity: DiscIdentity): void {
    this.db
      .prepare('INSERT INTO metadata_overrides (fingerprint, identity, expires_at) VALUES (?, ?, ?) ON CONFLICT(fingerprint) DO UPDATE SET identity = excluded.identity, expires_at = excluded.expires_at')
      .run(fingerprint, JSON.stringify(identity), new Date(this.now() + OVERRIDE_TTL_MS).toISOString());
    this.latest.set(fingerprint, identity);
  }

  /** The remembered correction of a disc, if it is younger than 30 days: under its identity, else a legacy one under its label fingerprint. */
  overridden(disc: DiscKey | string): DiscIdentity | null {
    return this.storedFor('metadata_overrides', typeof disc === 'string' ? { fingerprint: disc } : disc);
  }

  async run(disc: DiscInfo): Promise<DiscIdentity> {
    const overridden = this.overridden(disc);
    if (overridden) {
      this.latest.set(disc.fingerprint, overridden);
      return overridden;
    }
    // Audio CDs skip this cache: MusicBrainz's answers have their own (per disc id), and the release
    // is chosen anew by the current musicCountry setting.
    const cacheable = disc.type !== 'cd';
    const cached = cacheable ? this.storedFor('prescan_cache', disc) : null;
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

  /** The first unexpired identity of a disc under its lookup keys: its identity, then its label fingerprint (legacy rows only). */
  private storedFor(table: 'prescan_cache' | 'metadata_overrides', disc: DiscKey): DiscIdentity | null {
    for (const key of lookupKeys(disc)) {
      const found = this.stored(table, key);
      if (found) return found;
    }
    return null;
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
