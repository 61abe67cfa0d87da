/**
 * What the UI says of a disc a disc database (TheDiscDB) recognised by its content: how it was
 * recognised, what of it is already in the library, what each scanned title is, and which titles the
 * rip dialog ticks at first. Pure (the unit test reads it); the texts come from the catalogs.
 */
import type { DiscLibrarySummary, DiscRecognition, ScannedDiscTrack, TitleCount } from '../../shared/api-types.js';
import type { EpisodeRange, TitleRole } from '../../shared/disc-titles.js';
import type { LeftTitle } from '../../shared/main-feature.js';
import { locale, t, tParts } from './i18n/index.js';

/** "Exakt erkannt · TheDiscDB (Offline-Kopie)" / "Recognised exactly · TheDiscDB (API)"; null when not recognised. */
export function recognitionText(recognised: DiscRecognition | null | undefined): string | null {
  if (!recognised) return null;
  const source = recognised.source === 'thediscdb' ? 'TheDiscDB' : String(recognised.source);
  return t('drive.recognised', { source, from: t(recognised.from === 'mirror' ? 'drive.recognisedFrom.mirror' : 'drive.recognisedFrom.api') });
}

function capitalise(text: string): string {
  return text.charAt(0).toLocaleUpperCase(locale()) + text.slice(1);
}

/** "A, B und C" / "A, B, and C" in the UI's language. */
function joinList(items: string[]): string {
  try {
    return new Intl.ListFormat(locale(), { style: 'long', type: 'conjunction' }).format(items);
  } catch {
    return items.join(', ');
  }
}

/** One counted kind: "3 von 5 Extras", "alle 5 Extras", "das Extra"; null when none of it is in the library. */
function countedPart(kind: 'episodes' | 'extras', count: TitleCount | undefined): string | null {
  if (!count || count.total <= 0 || count.in_library <= 0) return null;
  if (count.in_library >= count.total) return count.total === 1 ? t(`library.${kind}.the`) : t(`library.${kind}.all`, { total: count.total });
  return t(`library.${kind}.some`, { n: count.in_library, total: count.total });
}

/**
 * The library sentence of the disc card: "Hauptfilm und 3 von 5 Extras schon in der Bibliothek",
 * "2 von 6 Folgen schon in der Bibliothek", or "Alles schon in der Bibliothek" when every title of
 * the wanted kinds is there (`complete`: the disc's already_ripped). Kinds with no title on the disc
 * and kinds of which nothing is in the library are left out; the main feature is named only when it is
 * in the library. Null when the titles are not known or nothing is in the library.
 */
export function librarySummaryText(library: DiscLibrarySummary | null | undefined, complete: boolean): string | null {
  if (!library) return null;
  const counts = [library.main_feature, library.episodes, library.extras];
  if (!counts.some((c) => c && c.total > 0 && c.in_library > 0)) return null;
  if (complete) return t('library.all');
  const parts: string[] = [];
  if (library.main_feature && library.main_feature.total > 0 && library.main_feature.in_library > 0) parts.push(t('library.mainFeature'));
  for (const kind of ['episodes', 'extras'] as const) {
    const part = countedPart(kind, library[kind]);
    if (part) parts.push(part);
  }
  return capitalise(t('library.sentence', { list: joinList(parts) }));
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "S04E03", "S04E03-E04", "E03", "S04"; "" when neither is known. */
export function episodeCode(season: number | null, episodes: EpisodeRange | null): string {
  const s = season !== null ? `S${pad(season)}` : '';
  const e = episodes ? (episodes.last > episodes.first ? `E${pad(episodes.first)}-E${pad(episodes.last)}` : `E${pad(episodes.first)}`) : '';
  return s + e;
}

/**
 * A title's role in words as pieces, the name from the database made by `name` (the dialog marks it
 * as a text not to translate): Hauptfilm / Folge S04E03 „Name“ / Extra · Featurettes: „Name“ /
 * Alles abspielen / unbekannt. A title the database does not know (null) is unknown as well.
 */
export function rolePieces<T>(role: TitleRole | null | undefined, name: (text: string) => T): (string | T)[] {
  if (!role) return [t('role.unknown')];
  let label: string;
  let named: string | null = null;
  let extra = false;
  switch (role.role) {
    case 'main_movie':
      return [t('role.main_movie')];
    case 'play_all':
      return [t('role.play_all')];
    case 'episode': {
      const several = role.episodes !== null && role.episodes.last > role.episodes.first;
      label = [t(several ? 'role.episodes' : 'role.episode'), episodeCode(role.season, role.episodes)].filter(Boolean).join(' ');
      named = role.name;
      break;
    }
    case 'extra':
      label = t('role.extra', { folder: role.folder });
      named = role.name;
      extra = true;
      break;
    default:
      return [t('role.unknown')];
  }
  if (!named) return [label];
  return tParts<string | T>(extra ? 'role.extraNamed' : 'role.named', { role: label, name: name(named) });
}

/** The role in words as one string (see rolePieces). */
export function roleText(role: TitleRole | null | undefined): string {
  return rolePieces(role, (s) => s).join('');
}

/** The scan carries roles: the disc was recognised and its titles found in the scan. */
export function hasRoles(tracks: readonly ScannedDiscTrack[]): boolean {
  return tracks.some((x) => x.role !== undefined && x.role !== null);
}

/**
 * The titles ticked at first: with roles exactly those the rip wants, else the main feature and the
 * titles of `minSeconds` or more that an automatic rip would not leave (decoys, duplicates).
 */
export function preselectedTitles(tracks: readonly ScannedDiscTrack[], minSeconds: number): number[] {
  const pick = hasRoles(tracks) ? (x: ScannedDiscTrack) => x.wanted === true : (x: ScannedDiscTrack) => x.main_feature !== undefined || (x.seconds >= minSeconds && !x.left);
  return tracks.filter(pick).map((x) => x.number);
}

/** "Hauptfilm: Titel 7, Segmente in Reihenfolge, Laufzeit wie TMDB"; null when the scan marks no main feature. */
export function mainFeatureText(tracks: readonly ScannedDiscTrack[]): string | null {
  const main = tracks.find((x) => x.main_feature !== undefined);
  if (!main) return null;
  return [t('rip.mainFeature', { n: main.number }), ...(main.main_feature ?? []).map((r) => t(`rip.mainFeatureWhy.${r}`))].join(', ');
}

/** Why an automatic rip leaves a title: "ausgelassen: Duplikat von Titel 7"; null when it takes it. */
export function leftText(left: LeftTitle | null | undefined): string | null {
  return left ? t(`rip.left.${left.reason}`, { of: left.of }) : null;
}

/** A list of fixed choices after one box is ticked or unticked, in the order of the choices (the settings' ripTitleKinds). */
export function toggleChoice(choices: readonly string[], current: readonly string[], choice: string): string[] {
  const on = current.includes(choice);
  return choices.filter((c) => (c === choice ? !on : current.includes(c)));
}
