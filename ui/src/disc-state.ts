/**
 * What the drive card says of the disc in the drive besides its name: how the name was found (in
 * words, not as a percentage), whether and as what it was ripped before, whether it can be read at
 * all, whether a finished rip is of this insert, and what the rip dialog starts from. Pure (the unit
 * test reads it); the texts come from the catalogs.
 */
import type { Disc, PreviousRip, ScannedDiscTrack } from '../../shared/api-types.js';
import { ripsAsSeries } from '../../shared/rip-as-series.js';
import { dateTime, t, tKnown } from './i18n/index.js';

/** From this confidence on the lookup found the disc's own name (coordinator/metadata/chain.ts EXACT_SIMILARITY). */
export const EXACT_NAME_CONFIDENCE = 0.9;

/** The name of a lookup source as people know it; the code itself when it is none of the known ones. */
function sourceName(source: string): string {
  return tKnown(`found.sourceName.${source}`) ?? source;
}

/**
 * How the disc's name was found, in words: searched by its label and found (exactly or only a
 * similar title), nothing found (the label is kept), the label alone, or set by hand. Null for a disc
 * recognised by its content (recognitionText says that), an audio CD (its album source is shown),
 * and before the pre-scan answered.
 */
export function foundText(disc: Pick<Disc, 'type' | 'label' | 'title' | 'metadata_source' | 'confidence' | 'recognised'>): string | null {
  const source = disc.metadata_source;
  if (!source || disc.recognised || disc.type === 'cd') return null;
  const label = disc.label || disc.title;
  switch (source) {
    case 'override':
      return t('found.override');
    case 'label':
      return t('found.label', { label });
    case 'none':
      return t('found.none', { label });
    default:
      return t((disc.confidence ?? 0) >= EXACT_NAME_CONFIDENCE ? 'found.exact' : 'found.similar', { label, source: sourceName(source) });
  }
}

/** "Die Hard (1988)", "The Office · Staffel 4": the name an earlier rip filed the disc as. */
export function previousName(rip: PreviousRip): string {
  if (rip.series) return rip.season !== null ? t('previous.seriesSeason', { series: rip.series, season: rip.season }) : rip.series;
  return rip.year ? `${rip.title} (${rip.year})` : rip.title;
}

/** "Schon gerippt am 28.11.26, 04:12 als „Die Hard (1988)“"; null when the disc was never ripped. */
export function previousRipText(rip: PreviousRip | null | undefined): string | null {
  if (!rip) return null;
  return t('previous.ripped', { when: dateTime(rip.ripped_at), name: previousName(rip) });
}

/**
 * Why the disc in the drive cannot be read, or null when it can: the drive found neither a DVD nor a
 * Blu-ray on it (no file system the agent knows, no audio tracks), or it reports no data at all.
 */
export function unreadableText(disc: Pick<Disc, 'type' | 'size_bytes'>): string | null {
  if (disc.type !== 'unknown') return null;
  return t(disc.size_bytes > 0 ? 'unreadable.noLayout' : 'unreadable.empty');
}

/**
 * Whether a job ripped the disc of this insert: made after the disc went in. An older coordinator
 * does not say when it went in: then any job of the disc counts, as before.
 */
export function ofThisInsert(jobCreatedAt: string, disc: Pick<Disc, 'inserted_at'>): boolean {
  if (!disc.inserted_at) return true;
  const created = Date.parse(jobCreatedAt);
  const inserted = Date.parse(disc.inserted_at);
  return Number.isNaN(created) || Number.isNaN(inserted) || created >= inserted;
}

/**
 * A series disc opens as a series: by the same rule as the automatic rip, or when the metadata says
 * so; a disc ripped before opens as it was ripped then.
 */
export function opensAsSeries(disc: Disc): boolean {
  if (disc.previous_rip) return disc.previous_rip.series !== null;
  return disc.kind === 'series' || ripsAsSeries(disc);
}

/** The name fields the dialog opens with: the earlier rip's (the same disc filed under the same name), else the disc's. */
export function startingName(disc: Disc): { series: string; season: number; title: string; year: string } {
  const prev = disc.previous_rip;
  if (prev) return { series: prev.series ?? '', season: prev.season ?? disc.season ?? 1, title: prev.series ? disc.title : prev.title, year: prev.year ? String(prev.year) : '' };
  return { series: opensAsSeries(disc) ? disc.title : '', season: disc.season ?? 1, title: disc.title, year: disc.year ? String(disc.year) : '' };
}

/** Why the rip cannot start with these titles, or null: the scan found none, or none is ticked (the server would take all). */
export function titlesProblem(tracks: ScannedDiscTrack[] | null, chosen: ReadonlySet<number>, mainFeatureOnly: boolean): string | null {
  if (!tracks) return null;
  if (tracks.length === 0) return t('rip.noTitles');
  if (!mainFeatureOnly && chosen.size === 0) return t('rip.noneChosen');
  return null;
}
