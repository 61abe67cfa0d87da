/**
 * The titles of a recognised disc against the library and the household's choice (pure): which are
 * in the library already, which an automatic rip takes, and the counts the disc card shows.
 */
import type { DiscLibrarySummary, KnownDiscTitle, ScannedDiscTrack } from '../../shared/api-types.js';
import { kindOfRole, matchTitles, type DiscTitle, type RipTitleKind, type TitleEvidence } from '../../shared/disc-titles.js';
import type { PlannedTitle, Track } from '../../shared/protocol.js';
import { chooseMainFeature, type MainFeatureOptions } from '../../shared/main-feature.js';

export interface TitleChoice {
  /** Setting ripTitleKinds. */
  kinds: readonly RipTitleKind[];
  /** Setting mainFeatureOnly: of a recognised disc only the main movie (a series disc: its episodes). */
  mainFeatureOnly: boolean;
  /** Setting minTitleSeconds: applies to extras TheDiscDB files as "Other" (logos, warnings, menus), never to titles of a named kind. */
  minSeconds: number;
}

/** An extra TheDiscDB files as "Other" shorter than minTitleSeconds: a logo, warning or menu, no title of the library. */
function isFiller(t: DiscTitle, choice: Pick<TitleChoice, 'minSeconds'>): boolean {
  return t.role.role === 'extra' && t.role.kind === 'Other' && t.seconds < choice.minSeconds;
}

/** Whether a title's kind is wanted, apart from the library. */
function wantedKind(t: DiscTitle, choice: TitleChoice): boolean {
  const kind = kindOfRole(t.role);
  if (!kind || !choice.kinds.includes(kind)) return false;
  if (choice.mainFeatureOnly && kind === 'extras') return false;
  return !isFiller(t, choice);
}

/** The remembered titles as scanned ones, to pair them with the database's by their evidence. */
function asScan(library: readonly TitleEvidence[]) {
  return library.map((t, number) => ({ ...t, number }));
}

/** Every title of the disc with whether it is in the library and whether the automatic rip takes it. */
export function knownTitles(titles: readonly DiscTitle[], library: readonly TitleEvidence[], choice: TitleChoice): KnownDiscTitle[] {
  const present = new Set(matchTitles(asScan(library), titles).map((p) => p.known));
  return titles.map((t) => {
    const inLibrary = present.has(t);
    return { ...t, in_library: inLibrary, wanted: !inLibrary && wantedKind(t, choice) };
  });
}

/** What a rip sends the agent: every title with its role; `take` for the wanted ones. */
export function plannedTitles(known: readonly KnownDiscTitle[]): PlannedTitle[] {
  return known.map(({ in_library: _inLibrary, wanted, ...t }) => ({ ...t, take: wanted }));
}

/** Per kind: how many titles the disc has and how many are in the library (play-all, unknown titles and fillers count nowhere). */
export function librarySummary(known: readonly KnownDiscTitle[], choice: Pick<TitleChoice, 'minSeconds'>): DiscLibrarySummary {
  const summary: DiscLibrarySummary = { main_feature: { total: 0, in_library: 0 }, episodes: { total: 0, in_library: 0 }, extras: { total: 0, in_library: 0 } };
  for (const t of known) {
    const kind = kindOfRole(t.role);
    if (!kind || isFiller(t, choice)) continue;
    summary[kind].total++;
    if (t.in_library) summary[kind].in_library++;
  }
  return summary;
}

/**
 * A recognised disc counts as ripped when every title of the wanted kinds is in the library (and
 * there is one); a title of a kind not wanted does not count against it.
 */
export function allWantedInLibrary(known: readonly KnownDiscTitle[], choice: TitleChoice): boolean {
  const ofWantedKind = known.filter((t) => wantedKind(t, choice));
  return ofWantedKind.length > 0 && ofWantedKind.every((t) => t.in_library);
}

/** The scanned titles with the role, library state and choice of the database title each is (by evidence). */
export function annotateScan(tracks: readonly Track[], known: readonly KnownDiscTitle[]): ScannedDiscTrack[] {
  const pairs = new Map(matchTitles(tracks, known).map((p) => [p.scan, p.known]));
  return tracks.map((t) => {
    const k = pairs.get(t);
    return k ? { ...t, role: k.role, in_library: k.in_library, wanted: k.wanted } : { ...t, role: null, in_library: false, wanted: false };
  });
}

/**
 * A movie disc TheDiscDB does not know: the scanned titles with the main feature marked (its reasons)
 * and each title an automatic rip would leave (why, and for which title), by the rules the agent's
 * rip follows (shared/main-feature.ts) with the same settings and runtime.
 */
export function annotateMainFeature(tracks: readonly Track[], opts: MainFeatureOptions): ScannedDiscTrack[] {
  const choice = chooseMainFeature(tracks, opts);
  return tracks.map((t) => {
    const left = choice.left.get(t.number);
    return { ...t, ...(t.number === choice.main ? { main_feature: choice.reasons } : {}), ...(left ? { left } : {}) };
  });
}
