import type { AlbumDetails, AlbumInfo, DiscInfo } from '../../shared/protocol.js';
import type { MbMedium, MbRelease } from './musicbrainz.js';

export const UNKNOWN_ARTIST = 'Unbekannter Interpret';
/** MusicBrainz's "Various Artists": a release credited to it is a compilation (Picard: COMPILATION=1). */
export const VARIOUS_ARTISTS_ID = '89ad4ac3-39f7-470e-963a-56509c546377';

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

/** A CD's TOC as the lookup has it: "first last leadout offset…" (AudioCdInfo.toc), parsed; null when it is none. */
export function parseTocParam(toc: string | null | undefined): { first: number; last: number; leadout: number; offsets: number[] } | null {
  const n = (toc ?? '').trim().split(/\s+/).map(Number);
  if (n.length < 4 || n.some((x) => !Number.isInteger(x) || x < 0)) return null;
  const [first, last, leadout, ...offsets] = n;
  return offsets.length === last - first + 1 ? { first, last, leadout, offsets } : null;
}

/**
 * How far a medium is from the CD's TOC, in frames: against the TOCs attached to it (offsets and
 * lead-out), else against its track lengths (MusicBrainz's own fuzzy TOC search compares those).
 * Infinity when the medium says neither.
 */
export function tocDistance(medium: MbMedium, toc: NonNullable<ReturnType<typeof parseTocParam>>): number {
  const fromDiscs = (medium.discs ?? [])
    .filter((d) => d.offsets.length === toc.offsets.length)
    .map((d) => d.offsets.reduce((sum, o, i) => sum + Math.abs(o - toc.offsets[i]), Math.abs(d.sectors - toc.leadout)));
  if (fromDiscs.length) return Math.min(...fromDiscs);
  const frames = toc.offsets.map((o, i) => (i + 1 < toc.offsets.length ? toc.offsets[i + 1] : toc.leadout) - o);
  const lengths = medium.tracks.map((t) => t.length_ms);
  if (lengths.length !== frames.length || lengths.some((l) => typeof l !== 'number')) return Infinity;
  return frames.reduce((sum, f, i) => sum + Math.abs(f - ((lengths[i] as number) * 75) / 1000), 0);
}

/**
 * The medium of a release that is this CD: the one carrying the disc id, else among the CD media of
 * as many tracks the one closest to the CD's TOC (tocDistance): the second disc of a two-disc release
 * whose discs have the same track count is not the first.
 */
function mediumFor(release: MbRelease, discId: string, toc: string | number): { medium: MbMedium; exact: boolean } | null {
  const exact = release.media.find((m) => m.disc_ids.includes(discId));
  if (exact) return { medium: exact, exact: true };
  const parsed = typeof toc === 'string' ? parseTocParam(toc) : null;
  const trackCount = parsed ? parsed.offsets.length : Number(toc);
  const close = release.media.filter((m) => m.tracks.length === trackCount && (!m.format || /CD/i.test(m.format)));
  if (close.length === 0) return null;
  const distance = (m: MbMedium): number => (parsed ? tocDistance(m, parsed) : Infinity);
  const best = close.reduce((a, b) => (distance(b) < distance(a) ? b : a));
  return { medium: best, exact: false };
}

/**
 * The releases that fit the CD, best first: the disc id on the medium (an exact TOC) before a TOC
 * that is merely close; then a release in the user's country; then official releases; then the
 * earliest; ties keep MusicBrainz's order. `toc` is the CD's TOC (AudioCdInfo.toc), which picks the
 * medium when the disc id is on none; a bare track count picks the first medium of as many tracks.
 */
export function rankReleases(releases: MbRelease[], discId: string, toc: string | number, country: string): ReleaseCandidate[] {
  const home = country.toUpperCase();
  const candidates = releases
    .map((release, order) => {
      const m = mediumFor(release, discId, toc);
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

/** The album a chosen release gives: names, year, disc number and total, ids, the front cover's address and the details Picard tags. */
export function albumFromRelease(c: ReleaseCandidate, coverArtBaseUrl: string, discId: string | null = null): AlbumInfo {
  const { release, medium } = c;
  const group = release.release_group ?? null;
  const artistIds = release.artist_ids ?? [];
  const details: AlbumDetails = {
    date: release.date,
    original_date: group?.first_release_date ?? null,
    country: release.countries[0] ?? null,
    status: release.status ? release.status.toLowerCase() : null,
    types: [group?.primary_type, ...(group?.secondary_types ?? [])].filter((t): t is string => Boolean(t)).map((t) => t.toLowerCase()),
    media: medium.format,
    labels: release.labels ?? [],
    catalog_numbers: release.catalog_numbers ?? [],
    barcode: release.barcode ?? null,
    asin: release.asin ?? null,
    script: release.script ?? null,
    artist_ids: artistIds,
    artist_sort: release.artist_sort ?? null,
    release_group_id: group?.id ?? null,
    disc_id: discId && medium.disc_ids.includes(discId) ? discId : null,
    compilation: artistIds.includes(VARIOUS_ARTISTS_ID),
  };
  return {
    artist: release.artist,
    album: release.title,
    year: yearOfDate(release.date),
    disc_number: medium.position,
    disc_total: Math.max(1, release.media.length),
    release_id: release.id,
    tracks: medium.tracks.map((t) => ({
      number: t.position,
      title: t.title,
      artist: t.artist && t.artist !== release.artist ? t.artist : null,
      recording_id: t.recording_id,
      track_id: t.track_id,
      artist_ids: t.artist_ids ?? [],
      artist_sort: t.artist_sort ?? null,
    })),
    cover_url: release.has_front ? `${coverArtBaseUrl}/release/${encodeURIComponent(release.id)}/front` : null,
    source: 'musicbrainz',
    details,
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

const texts = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const textOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Album details as a job's meta stores them; null for anything else. */
function storedDetails(value: unknown): AlbumDetails | null {
  const d = value as Record<string, unknown> | null;
  if (!d || typeof d !== 'object') return null;
  return {
    date: textOrNull(d.date),
    original_date: textOrNull(d.original_date),
    country: textOrNull(d.country),
    status: textOrNull(d.status),
    types: texts(d.types),
    media: textOrNull(d.media),
    labels: texts(d.labels),
    catalog_numbers: texts(d.catalog_numbers),
    barcode: textOrNull(d.barcode),
    asin: textOrNull(d.asin),
    script: textOrNull(d.script),
    artist_ids: texts(d.artist_ids),
    artist_sort: textOrNull(d.artist_sort),
    release_group_id: textOrNull(d.release_group_id),
    disc_id: textOrNull(d.disc_id),
    compilation: d.compilation === true,
  };
}

/** An album as a job's meta stores it (the retry reads it back); null for anything else. */
export function storedAlbum(value: unknown): AlbumInfo | null {
  const a = value as Partial<AlbumInfo> | null;
  if (!a || typeof a !== 'object' || typeof a.artist !== 'string' || typeof a.album !== 'string' || !Array.isArray(a.tracks)) return null;
  const tracks = a.tracks.filter((t) => t && typeof t.number === 'number' && typeof t.title === 'string');
  const details = storedDetails(a.details);
  return {
    artist: a.artist,
    album: a.album,
    year: typeof a.year === 'number' ? a.year : null,
    disc_number: typeof a.disc_number === 'number' ? a.disc_number : 1,
    ...(typeof a.disc_total === 'number' && Number.isInteger(a.disc_total) && a.disc_total >= 1 ? { disc_total: a.disc_total } : {}),
    release_id: typeof a.release_id === 'string' ? a.release_id : null,
    tracks: tracks.map((t) => ({
      number: t.number,
      title: t.title,
      artist: typeof t.artist === 'string' ? t.artist : null,
      recording_id: typeof t.recording_id === 'string' ? t.recording_id : null,
      track_id: typeof t.track_id === 'string' ? t.track_id : null,
      ...(Array.isArray(t.artist_ids) ? { artist_ids: texts(t.artist_ids) } : {}),
      ...(t.artist_sort !== undefined ? { artist_sort: textOrNull(t.artist_sort) } : {}),
    })),
    cover_url: typeof a.cover_url === 'string' ? a.cover_url : null,
    source: a.source === 'musicbrainz' || a.source === 'cd-text' ? a.source : 'none',
    ...(details ? { details } : {}),
  };
}
