import type { EpisodeRuntime, LibraryInfo } from '../../shared/protocol.js';
import type { JobRow } from '../jobs/jobs-store.js';
import type { Settings } from '../system/settings-store.js';

const NFO_PROFILES: readonly string[] = ['jellyfin', 'emby', 'kodi'];

/**
 * Whether a client may set this poster_path: a TMDB-relative image path (/abc.jpg) or an http(s) URL;
 * never javascript:, data:, a path with .. or text with spaces, quotes or control characters.
 */
export function isPosterPath(value: string): boolean {
  if (/^\/[A-Za-z0-9_-][A-Za-z0-9._-]*\.(jpe?g|png|webp)$/i.test(value)) return !value.includes('..');
  if (!/^https?:\/\/[^/]/i.test(value) || /[\s\u0000-\u001f\u007f"'<>\\`]/.test(value)) return false;
  return URL.canParse(value);
}

/** A poster_path as the spec keeps it (TMDB-relative or absolute) as a URL to download. */
export function posterUrl(posterPath: unknown, imageBase: string): string | null {
  if (typeof posterPath !== 'string' || !posterPath) return null;
  if (/^https?:\/\//i.test(posterPath)) return posterPath;
  if (posterPath.startsWith('/')) return `${imageBase}${posterPath}`;
  return null;
}

/**
 * The folder below a movie's folder that the media server reads as its extras. Jellyfin, Emby and
 * Kodi all read "Extras"; Plex reads only its own kinds of extras folder ("Behind The Scenes",
 * "Deleted Scenes", "Featurettes", "Interviews", "Other", "Scenes", "Shorts", "Trailers") and not
 * "Extras", so for Plex the extras go into "Other". No one name is read by all four.
 */
export function extrasFolder(mediaServerType: string): string {
  return mediaServerType === 'plex' ? 'Other' : 'Extras';
}

/**
 * Extras of a known kind (a recognised disc) go to the folder of their kind, Featurettes, Trailers,
 * ..., which Jellyfin, Emby and Plex read (and without a media server); Kodi reads its one extras folder.
 */
export function extrasByKind(mediaServerType: string): boolean {
  return mediaServerType !== 'kodi';
}

/**
 * What the agent writes beside a finished job for the configured media server: nfo and poster for
 * Jellyfin, Emby and Kodi; nothing for Plex (naming only) or when no media server is set. Audio CDs
 * get no video metadata. A poster off the configured image server is fetched under the webhook target
 * rules (poster_policy), like the coordinator's own poster cache.
 */
export function libraryInfo(job: Pick<JobRow, 'title' | 'meta'>, settings: Pick<Settings, 'mediaServerType'> & Partial<Pick<Settings, 'allowPrivateWebhooks'>>, imageBase: string): LibraryInfo | null {
  if (!NFO_PROFILES.includes(settings.mediaServerType)) return null;
  const meta = job.meta ?? {};
  if (meta.disc_type === 'cd') return null;
  const series = meta.series || null;
  const poster = posterUrl(meta.poster_path, imageBase);
  const imageOrigin = URL.canParse(imageBase) ? new URL(imageBase).origin : null;
  const onImageServer = poster !== null && URL.canParse(poster) && new URL(poster).origin === imageOrigin;
  return {
    profile: settings.mediaServerType as LibraryInfo['profile'],
    kind: series ? 'series' : 'movie',
    title: series ?? job.title,
    year: meta.year ?? null,
    overview: meta.overview ?? null,
    poster_url: poster,
    poster_policy: onImageServer ? null : { allow_private: settings.allowPrivateWebhooks === true },
    tmdb_id: meta.tmdb_id ?? null,
    imdb_id: meta.imdb_id ?? null,
  };
}

/** The season's episodes stored on a series job (meta.episodes), as the agent's matcher wants them. */
export function jobEpisodes(job: Pick<JobRow, 'meta'>): EpisodeRuntime[] | null {
  const list = job.meta?.episodes;
  return list?.length ? list : null;
}
