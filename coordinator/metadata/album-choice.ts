import type { AlbumInfo, DiscInfo } from '../../shared/protocol.js';
import type { MbMedium, MbRelease } from './musicbrainz.js';

export const UNKNOWN_ARTIST = 'Unbekannter Interpret';

/** A release that fits the CD, and the medium of it the CD is. */
export interface ReleaseCandidate {
  release: MbRelease;
  medium: MbMedium;
  /** The medium carries the CD's disc id (rather than a TOC that is merely close). */
  exact: boolean;
  /** The release came out in the user's country (setting musicCountry). */
  home: boolean;
}

export type { AlbumSuggestion } from '../../shared/api-types.js';
import type { AlbumSuggestion } from '../../shared/api-types.js';

export function yearOfDate(date: string | null): number | null {
  const m = date ? /^(\d{4})/.exec(date) : null;
  return m ? Number(m[1]) : null;
}

/** The medium of a release that is this CD: the one carrying the disc id, else a CD medium with as many tracks. */
function mediumFor(release: MbRelease, discId: string, trackCount: number): { medium: MbMedium; exact: boolean } | null {
  const exact = release.media.find((m) => m.disc_ids.includes(discId));
  if (exact) return { medium: exact, exact: true };
  const close = release.media.find((m) => m.tracks.length === trackCount && (!m.format || /CD/i.test(m.format)));
  return close ? { medium: close, exact: false } : null;
}

/**
 * The releases that fit the CD, best first: the disc id on the medium (an exact TOC) before a TOC
 * that is merely close; then a release in the user's country; then official releases; then the
 * earliest; ties keep MusicBrainz's order.
 */
export function rankReleases(releases: MbRelease[], discId: string, trackCount: number, country: string): ReleaseCandidate[] {
  const home = country.toUpperCase();
  const candidates = releases
    .map((release, order) => {
      const m = mediumFor(release, discId, trackCount);
      return m ? { release, medium: m.medium, exact: m.exact, home: release.countries.includes(home), order } : null;
    })
    .filter((c): c is ReleaseCandidate & { order: number } => c !== null);
  const year = (c: ReleaseCandidate): number => yearOfDate(c.release.date) ?? 9999;
  candidates.sort(
    (a, b) =>
      Number(b.exact) - Number(a.exact) ||
      Number(b.home) - Number(a.home) ||
      Number(b.release.status === 'Official') - Number(a.release.status === 'Official') ||
      year(a) - year(b) ||
      a.order - b.order,
  );
  return candidates.map(({ release, medium, exact, home: inHome }) => ({ release, medium, exact, home: inHome }));
}

/** The album a chosen release gives: names, year, disc number, ids and the front cover's address. */
export function albumFromRelease(c: ReleaseCandidate, coverArtBaseUrl: string): AlbumInfo {
  const { release, medium } = c;
  return {
    artist: release.artist,
    album: release.title,
    year: yearOfDate(release.date),
    disc_number: medium.position,
    release_id: release.id,
    tracks: medium.tracks.map((t) => ({ number: t.position, title: t.title, artist: t.artist && t.artist !== release.artist ? t.artist : null, recording_id: t.recording_id, track_id: t.track_id })),
    cover_url: release.has_front ? `${coverArtBaseUrl}/release/${encodeURIComponent(release.id)}/front` : null,
    source: 'musicbrainz',
  };
}

export function suggestionOf(c: ReleaseCandidate): AlbumSuggestion {
  return { release_id: c.release.id, artist: c.release.artist, album: c.release.title, year: yearOfDate(c.release.date), country: c.release.countries[0] ?? null, disc_number: c.medium.position, exact: c.exact };
}

/** "Audio-CD <disc id>": the album name of a CD nothing is known about (the fingerprint stands in without a disc id). */
export function unknownAlbumName(disc: DiscInfo): string {
  return `Audio-CD ${disc.audio_cd?.musicbrainz_disc_id ?? disc.fingerprint.slice(0, 12)}`;
}

/**
 * The album when MusicBrainz has no answer: the CD-Text (disc and track TITLE/PERFORMER) where there
 * is some, else "Unbekannter Interpret" / "Audio-CD <disc id>" with tracks "Titel N".
 */
export function fallbackAlbum(disc: DiscInfo): AlbumInfo {
  const text = disc.audio_cd?.cd_text ?? null;
  const count = disc.audio_tracks ?? text?.tracks.length ?? 0;
  const numbers = text?.tracks.length ? text.tracks.map((t) => t.number) : Array.from({ length: count }, (_, i) => i + 1);
  const hasText = Boolean(text && (text.title || text.performer || text.tracks.some((t) => t.title)));
  const artist = (hasText && text?.performer) || UNKNOWN_ARTIST;
  return {
    artist,
    album: (hasText && text?.title) || unknownAlbumName(disc),
    year: null,
    disc_number: 1,
    release_id: null,
    tracks: numbers.map((n) => {
      const t = hasText ? text?.tracks.find((x) => x.number === n) : undefined;
      return { number: n, title: t?.title || `Titel ${n}`, artist: t?.performer && t.performer !== artist ? t.performer : null, recording_id: null, track_id: null };
    }),
    cover_url: null,
    source: hasText ? 'cd-text' : 'none',
  };
}

/** The title a disc card and the job show for an album: "Artist - Album". */
export function albumTitle(album: AlbumInfo): string {
  return `${album.artist} - ${album.album}`;
}

/**
 * The album a rip job names its files by: the pre-scan's (else the fallback); a title the request
 * gives that differs from the pre-scan's replaces the album name, a year the request gives the year.
 */
export function albumForJob(base: AlbumInfo, requestTitle: string | null | undefined, requestYear: number | null | undefined): AlbumInfo {
  const title = requestTitle?.trim();
  const renamed = title && title !== albumTitle(base) ? { album: title } : {};
  return { ...base, ...renamed, year: requestYear ?? base.year };
}

/** An album as a job's meta stores it (the retry reads it back); null for anything else. */
export function storedAlbum(value: unknown): AlbumInfo | null {
  const a = value as Partial<AlbumInfo> | null;
  if (!a || typeof a !== 'object' || typeof a.artist !== 'string' || typeof a.album !== 'string' || !Array.isArray(a.tracks)) return null;
  const tracks = a.tracks.filter((t) => t && typeof t.number === 'number' && typeof t.title === 'string');
  return {
    artist: a.artist,
    album: a.album,
    year: typeof a.year === 'number' ? a.year : null,
    disc_number: typeof a.disc_number === 'number' ? a.disc_number : 1,
    release_id: typeof a.release_id === 'string' ? a.release_id : null,
    tracks: tracks.map((t) => ({ number: t.number, title: t.title, artist: typeof t.artist === 'string' ? t.artist : null, recording_id: typeof t.recording_id === 'string' ? t.recording_id : null, track_id: typeof t.track_id === 'string' ? t.track_id : null })),
    cover_url: typeof a.cover_url === 'string' ? a.cover_url : null,
    source: a.source === 'musicbrainz' || a.source === 'cd-text' ? a.source : 'none',
  };
}
