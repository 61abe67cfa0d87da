/**
 * What a TheDiscDB title is for the library: the main movie, an episode (or several, "3-4"), a
 * play-all title, or an extra whose kind decides the folder Jellyfin, Emby and Plex read extras from.
 */
import type { EpisodeRange, ExtraFolder, TitleRole } from '../../../shared/disc-titles.js';
import type { TddbDisc, TddbTitle } from './types.js';

export type { EpisodeRange, ExtraFolder, TitleRole };

/**
 * TheDiscDB's item types (TheDiscDb.Naming ItemTypeNames) → extras folder:
 * - Trailer → Trailers
 * - DeletedScene → Deleted Scenes
 * - Featurette → Featurettes
 * - Interview → Interviews
 * - Scene → Scenes
 * - Short → Shorts
 * - Music (music videos, songs) → Other: no media server has a music-video extras folder
 * - Extra (the generic kind) → Other, or Behind The Scenes when its title says so (see extraFolder)
 * - Other (logos, warnings, menus, anything else) → Other
 * - any type TheDiscDB adds later → Other
 * TheDiscDB has no "BehindTheScenes" type; that folder is only reached through an Extra's title.
 */
export const EXTRA_FOLDERS: Readonly<Record<string, ExtraFolder>> = {
  Trailer: 'Trailers',
  DeletedScene: 'Deleted Scenes',
  Featurette: 'Featurettes',
  Interview: 'Interviews',
  Scene: 'Scenes',
  Short: 'Shorts',
  Music: 'Other',
  Extra: 'Other',
  Other: 'Other',
};

const BEHIND_THE_SCENES = /\b(behind[\s-]the[\s-]scenes|making[\s-]of)\b/i;

/** The folder of an extra of this TheDiscDB type and title. */
export function extraFolder(type: string | null, title: string | null): ExtraFolder {
  const folder = (type && EXTRA_FOLDERS[type]) || 'Other';
  if ((type === 'Extra' || type === 'Other' || type === null) && title && BEHIND_THE_SCENES.test(title)) return 'Behind The Scenes';
  return folder;
}

/** "5" → 5..5, "3-4" and "1–7" (en-dash, as TheDiscDB writes play-all ranges) → first..last; null for bad data ("t"). */
export function parseEpisodes(value: string | null): EpisodeRange | null {
  if (!value) return null;
  const m = /^\s*(\d{1,4})\s*(?:[-–—]\s*(\d{1,4}))?\s*$/.exec(value);
  if (!m) return null;
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  return last >= first ? { first, last } : null;
}

export function parseSeason(value: string | null): number | null {
  return value && /^\s*\d{1,4}\s*$/.test(value) ? Number(value) : null;
}

function segments(map: string | null): string[] {
  return map ? map.split(',').map((s) => s.trim()).filter(Boolean) : [];
}

/**
 * A title whose segments are those of two or more episode titles of the same disc, in order: a
 * play-all title, whatever type it was given.
 */
function coversEpisodes(title: TddbTitle, disc: TddbDisc): boolean {
  const own = segments(title.segmentMap);
  if (own.length < 2) return false;
  const episodeMaps = disc.titles.filter((t) => t !== title && t.item?.type === 'Episode').map((t) => segments(t.segmentMap));
  let pos = 0;
  let covered = 0;
  while (pos < own.length) {
    const next = episodeMaps.find((m) => m.length > 0 && m.every((s, i) => own[pos + i] === s));
    if (!next) return false;
    pos += next.length;
    covered++;
  }
  return covered >= 2;
}

/** The role of one TheDiscDB title on its disc. */
export function titleRole(title: TddbTitle, disc: TddbDisc): TitleRole {
  const item = title.item;
  if (!item) return coversEpisodes(title, disc) ? { role: 'play_all', name: null, season: null, episodes: null } : { role: 'unidentified' };
  const season = parseSeason(item.season);
  const episodes = parseEpisodes(item.episode);
  if (coversEpisodes(title, disc)) return { role: 'play_all', name: item.title, season, episodes };
  if (item.type === 'MainMovie') return { role: 'main_movie', name: item.title };
  if (item.type === 'Episode') return { role: 'episode', name: item.title, season, episodes };
  // TheDiscDB stores a play-all title as "Other" with the range it plays ("1–7") over several segments.
  if (item.type === 'Other' && episodes && episodes.last > episodes.first && segments(title.segmentMap).length > 1) {
    return { role: 'play_all', name: item.title, season, episodes };
  }
  const kind = item.type ?? 'Other';
  return { role: 'extra', name: item.title, kind, folder: extraFolder(item.type, item.title), season, episodes };
}
