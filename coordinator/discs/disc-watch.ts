import path from 'node:path';
import type { Disc } from '../../shared/api-types.js';
import type { DiscInfo } from '../../shared/protocol.js';
import { labelKey, lookupKeys, sameDisc, type DiscKey } from '../../shared/disc-key.js';
import type { Logger } from '../../shared/log.js';
import { ripsAsSeries } from '../../shared/rip-as-series.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../shared/sqlite.js';
import type { DeviceEntry } from '../workers/fleet.js';
import type { JobRow } from '../jobs/jobs-store.js';
import { identityMeta, type DiscIdentity } from '../metadata/disc-identity.js';
import type { Prescan } from './prescan.js';
import type { RipRequest } from './rip-jobs.js';
import type { PosterCache } from '../library/poster-cache.js';
import type { SettingsStore } from '../system/settings-store.js';
import type { KnownDiscTitle, PreviousRip } from '../../shared/api-types.js';
import { parseJobMeta } from '../jobs/job-meta.js';
import type { RipTitleKind } from '../../shared/disc-titles.js';
import { LibraryTitles } from '../library/library-titles.js';
import { allWantedInLibrary, knownTitles, librarySummary, type TitleChoice } from './title-plan.js';


/**
 * Reacts to the drive states the agents publish: an insert (a fingerprint the device did not hold
 * before, remembered in SQLite so a restart or a repeated message is not a new insert) gets a
 * pre-scan and, with autoRipStart, a rip; a disc already inside at start gets its pre-scan only.
 * One device is handled at a time, so a detection that fires twice starts nothing twice.
 *
 * A disc is known by its content identity (DiscInfo.fingerprint). The same disc seen once with and
 * once without it (an agent updated while the disc sat in the drive, ids not read this time) is no
 * new insert: device_discs keeps the label fingerprint too (shared/disc-key.ts, sameDisc).
 */
export class DiscWatch {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly rippedCount: Statement<[string], { n: number }>;
  private readonly lastRip: Statement<[string], HistoryJoin>;
  private readonly seenAt: Statement<[string], { fingerprint: string | null; label_fingerprint: string | null; seen_at: string }>;
  /** The titles finished jobs put into the library, per disc identity. */
  readonly libraryTitles: LibraryTitles;

  constructor(
    private readonly db: Db,
    private readonly settings: SettingsStore,
    readonly prescan: Prescan,
    private readonly startRip: (req: RipRequest) => Promise<JobRow>,
    private readonly log: Logger,
    private readonly posters: PosterCache,
    /** Called with each pre-scan answer (with the disc's keys): jobs made before it answered take it. */
    private readonly onIdentity: (disc: DiscKey, identity: DiscIdentity) => void = () => undefined,
  ) {
    this.rippedCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM history WHERE fingerprint = ?');
    this.lastRip = db.prepare<[string], HistoryJoin>(
      'SELECT h.title AS history_title, h.finished_at, j.id AS job_id, j.title AS job_title, j.meta, j.target_dir, j.output_path FROM history h LEFT JOIN jobs j ON j.id = h.job_id WHERE h.fingerprint = ? ORDER BY h.finished_at DESC, h.id DESC LIMIT 1',
    );
    this.seenAt = db.prepare('SELECT fingerprint, label_fingerprint, seen_at FROM device_discs WHERE device = ?');
    this.libraryTitles = new LibraryTitles(db);
  }

  /** The household's choice of titles from a recognised disc (settings ripTitleKinds, mainFeatureOnly, minTitleSeconds). */
  titleChoice(): TitleChoice {
    const s = this.settings.all();
    return { kinds: s.ripTitleKinds as RipTitleKind[], mainFeatureOnly: s.mainFeatureOnly, minSeconds: s.minTitleSeconds };
  }

  /**
   * The titles of a disc TheDiscDB recognised, each with whether it is in the library and whether the
   * automatic rip takes it; null for a disc whose titles no database knows.
   */
  knownTitles(disc: DiscKey, choice: TitleChoice = this.titleChoice()): KnownDiscTitle[] | null {
    const titles = this.prescan.get(disc.fingerprint)?.disc_titles;
    if (!titles?.length) return null;
    return knownTitles(titles, this.libraryTitles.forDisc(disc.fingerprint), choice);
  }

  /** What the pre-scan (or a correction) says about a disc, if it ran. */
  identity(fingerprint: string): DiscIdentity | undefined {
    return this.prescan.get(fingerprint);
  }

  /** The folder the main movie of this disc was filed in by an earlier job (its missing titles join it); null when none is. */
  libraryFolder(disc: DiscKey): string | null {
    const main = this.libraryTitles.forDisc(disc.fingerprint).find((t) => t.role?.role === 'main_movie' && t.output_file);
    return main?.output_file ? path.dirname(main.output_file) : null;
  }

  /**
   * A rip of this disc finished before. A recognised disc with titles in the library: only when every
   * title of the wanted kinds is there (a disc with missing titles is no ripped disc). Otherwise a
   * history row under its identity, else a row written before content ids under its label
   * fingerprint (lookupKeys; a row of a twin disc's identity never counts).
   */
  alreadyRipped(disc: DiscKey, known: KnownDiscTitle[] | null = this.knownTitles(disc)): boolean {
    if (known && known.some((t) => t.in_library)) return allWantedInLibrary(known, this.titleChoice());
    return lookupKeys(disc).some((key) => (this.rippedCount.get(key)?.n ?? 0) > 0);
  }

  /**
   * The disc's latest finished rip, by the same keys as alreadyRipped (its identity first, then a row
   * written before content ids under its label fingerprint), named as the job is named now (a
   * correction renamed it); a deleted job leaves the history's title and time.
   */
  previousRip(disc: DiscKey): PreviousRip | null {
    for (const key of lookupKeys(disc)) {
      const row = this.lastRip.get(key);
      if (!row) continue;
      const meta = row.job_id ? parseJobMeta(row.meta) : null;
      return {
        job_id: row.job_id,
        ripped_at: row.finished_at,
        title: row.job_title ?? row.history_title,
        year: meta?.year ?? null,
        series: meta?.series ?? null,
        season: meta?.season ?? null,
        target_dir: row.target_dir,
        output_path: row.output_path,
      };
    }
    return null;
  }

  /** When this disc went into the drive as far as the coordinator saw (device_discs); null for another disc or none recorded. */
  insertedAt(device: string, disc: DiscKey): string | null {
    const row = this.seenAt.get(device);
    return row?.fingerprint && sameDisc({ fingerprint: row.fingerprint, label_fingerprint: row.label_fingerprint }, disc) ? row.seen_at : null;
  }

  view(disc: DiscInfo, device: string | null = null): Disc {
    const identity = this.prescan.get(disc.fingerprint);
    const known = this.knownTitles(disc);
    return {
      title: identity?.title ?? disc.title,
      label: disc.label,
      year: identity?.year ?? disc.year,
      type: disc.type,
      size_bytes: disc.size_bytes,
      fingerprint: disc.fingerprint,
      label_fingerprint: labelKey(disc),
      ids: disc.ids ?? null,
      confidence: identity ? identity.confidence : null,
      poster: identity?.poster ?? null,
      poster_url: this.posters.urlFor(identity?.poster),
      already_ripped: this.alreadyRipped(disc, known),
      audio_tracks: disc.audio_tracks ?? null,
      kind: identity?.kind ?? null,
      season: identity?.season ?? null,
      tmdb_id: identity?.tmdb_id ?? null,
      album: identity?.album ?? null,
      suggestions: identity?.suggestions ?? [],
      metadata_source: identity?.source ?? null,
      recognised: identity?.recognised ?? null,
      titles: known ?? [],
      library: known ? librarySummary(known, this.titleChoice()) : null,
      previous_rip: this.previousRip(disc),
      inserted_at: device ? this.insertedAt(device, disc) : null,
    };
  }

  /** Called for every drive state message; resolves when this state is handled (tests wait on it). */
  onDrive(entry: DeviceEntry): Promise<void> {
    const previous = this.chains.get(entry.name) ?? Promise.resolve();
    const next = previous.then(() => this.handle(entry)).catch((err: Error) => this.log.error(`device ${entry.name}: ${err.message}`));
    this.chains.set(entry.name, next);
    return next;
  }

  private async handle(entry: DeviceEntry): Promise<void> {
    const disc = entry.state.disc;
    const known = this.db.prepare<[string], { fingerprint: string | null; label_fingerprint: string | null }>('SELECT fingerprint, label_fingerprint FROM device_discs WHERE device = ?').get(entry.name);
    const fingerprint = disc?.fingerprint ?? null;
    const label = disc ? labelKey(disc) : null;
    const inserted = disc !== null && !(known?.fingerprint && sameDisc({ fingerprint: known.fingerprint, label_fingerprint: known.label_fingerprint }, disc));
    if (!known || known.fingerprint !== fingerprint || known.label_fingerprint !== label) {
      this.db
        .prepare('INSERT INTO device_discs (device, fingerprint, label_fingerprint, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT(device) DO UPDATE SET fingerprint = excluded.fingerprint, label_fingerprint = excluded.label_fingerprint, seen_at = excluded.seen_at')
        .run(entry.name, fingerprint, label, new Date().toISOString());
      if (!disc && known?.fingerprint) this.log.info(`device ${entry.name}: disc ejected`);
    }
    if (!disc) return;
    if (!inserted && this.prescan.get(disc.fingerprint)) return;
    if (inserted) this.log.info(`device ${entry.name}: disc inserted: "${disc.title}" (${disc.type}, ${disc.size_bytes} bytes, label "${disc.label}")`);
    const identity = await this.prescan.run(disc);
    this.posters.prefetch(identity.poster);
    this.onIdentity(disc, identity);
    const ripped = this.alreadyRipped(disc);
    this.log.info(`device ${entry.name}: pre-scan: ${describe(identity)}, ${disc.type}${ripped ? ', already ripped' : ''}`);
    if (inserted) await this.autoRip(entry, disc, identity, ripped);
  }

  private async autoRip(entry: DeviceEntry, disc: DiscInfo, identity: DiscIdentity, ripped: boolean): Promise<void> {
    if (!this.settings.all().autoRipStart) return;
    const known = this.knownTitles(disc);
    if (ripped) {
      const why = known?.some((t) => t.in_library) ? 'every title it should take is in the library (TheDiscDB titles of this disc identity)' : 'same disc fingerprint in the history';
      this.log.info(`device ${entry.name}: automatic rip skipped: "${disc.title}" was ripped before (${why})`);
      return;
    }
    if (known && !known.some((t) => t.wanted)) {
      this.log.info(`device ${entry.name}: automatic rip skipped: TheDiscDB knows ${known.length} title(s) of "${identity.title}", none of the kinds ripTitleKinds wants (${this.titleChoice().kinds.join(', ')})`);
      return;
    }
    // A season from the label makes it a series rip even when no database knew the title.
    const series = ripsAsSeries(identity);
    try {
      const job = await this.startRip({
        device: entry.name,
        title: series ? null : identity.title,
        year: identity.year,
        series: series ? identity.title : null,
        season: series ? identity.season : null,
        origin: 'autoRipStart',
        meta: identityMeta(identity),
      });
      this.log.info(`device ${entry.name}: automatic rip started as job ${job.id}`, job.id);
    } catch (err) {
      this.log.warn(`device ${entry.name}: automatic rip not started: ${(err as Error).message}`);
    }
  }
}

/** A history row with its job, when the job still exists. */
interface HistoryJoin {
  history_title: string;
  finished_at: string;
  job_id: string | null;
  job_title: string | null;
  meta: string | null;
  target_dir: string | null;
  output_path: string | null;
}

function describe(identity: DiscIdentity): string {
  const year = identity.year ? ` (${identity.year})` : '';
  const season = identity.kind === 'series' && identity.season !== null ? `, season ${identity.season}` : '';
  return `"${identity.title}"${year}${season}, ${identity.kind}, confidence ${identity.confidence.toFixed(2)} from ${identity.source}`;
}
