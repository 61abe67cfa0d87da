import type { RateLimiter } from './rate-limiter.js';

/** A MusicBrainz release as the audio CD lookup needs it (from the discid answer's JSON). */
export interface MbRelease {
  id: string;
  title: string;
  /** The artist credit as printed: names joined by their join phrases ("A feat. B"). */
  artist: string;
  date: string | null;
  /** ISO 3166-1 countries of the release events (the release's main country first). */
  countries: string[];
  status: string | null;
  /** The Cover Art Archive holds a front image for this release. */
  has_front: boolean;
  media: MbMedium[];
  /** The credited artists' ids (MUSICBRAINZ_ALBUMARTISTID) and the credit in sort names (ALBUMARTISTSORT). Absent in answers cached before they were read. */
  artist_ids?: string[];
  artist_sort?: string | null;
  barcode?: string | null;
  asin?: string | null;
  /** text-representation.script (ISO 15924, SCRIPT). */
  script?: string | null;
  /** label-info: the label names and catalog numbers, each once (inc=labels). */
  labels?: string[];
  catalog_numbers?: string[];
  /** The release group (inc=release-groups): its id, primary and secondary types, first release date. */
  release_group?: MbReleaseGroup | null;
}

export interface MbReleaseGroup {
  id: string;
  primary_type: string | null;
  secondary_types: string[];
  first_release_date: string | null;
}

export interface MbMedium {
  position: number;
  format: string | null;
  /** The MusicBrainz disc ids attached to this medium. */
  disc_ids: string[];
  /** Their TOCs: offsets (LBA + 150) and the lead-out (sectors). Absent in answers cached before they were read. */
  discs?: { offsets: number[]; sectors: number }[];
  tracks: MbTrack[];
}

export interface MbTrack {
  position: number;
  title: string;
  artist: string;
  recording_id: string | null;
  track_id: string | null;
  /** The track's length in milliseconds, when MusicBrainz knows it. */
  length_ms?: number | null;
  /** The track's credited artists' ids (MUSICBRAINZ_ARTISTID) and the credit in sort names (ARTISTSORT). */
  artist_ids?: string[];
  artist_sort?: string | null;
}

/** MusicBrainz could not answer (unreachable, rate limited, a broken body): the reason in words. */
export class MusicBrainzError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

type Rec = Record<string, unknown>;
/**
 * What the discid lookup includes (ws/2 DiscID: media and disc ids always): the tracks with their
 * recordings, the artist credits (ids and sort names), the labels with catalog numbers and the release
 * group (types, first release date): every tag Picard writes from a release.
 */
export const DISCID_INCLUDES = ['artist-credits', 'labels', 'recordings', 'release-groups'];

/** MusicBrainz allows one request per second and source address. */
export const MUSICBRAINZ_INTERVAL_MS = 1000;
const TIMEOUT_MS = 10_000;

const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter((x): x is Rec => Boolean(x) && typeof x === 'object') : []);
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

/** An artist-credit array as one name: each credited name followed by its join phrase. */
export function artistCredit(credit: unknown): string {
  return recs(credit)
    .map((c) => `${text(c.name) ?? text((c.artist as Rec | undefined)?.name) ?? ''}${typeof c.joinphrase === 'string' ? c.joinphrase : ''}`)
    .join('')
    .trim();
}

/** The artist ids of an artist-credit array, in order. */
export function creditIds(credit: unknown): string[] {
  return recs(credit)
    .map((c) => text((c.artist as Rec | undefined)?.id))
    .filter((id): id is string => id !== null);
}

/** An artist-credit in sort names ("Beatles, The"), joined by the join phrases as Picard does; null without sort names. */
export function creditSortName(credit: unknown): string | null {
  const parts = recs(credit);
  if (!parts.some((c) => text((c.artist as Rec | undefined)?.['sort-name']))) return null;
  return parts.map((c) => `${text((c.artist as Rec | undefined)?.['sort-name']) ?? text(c.name) ?? ''}${typeof c.joinphrase === 'string' ? c.joinphrase : ''}`).join('').trim() || null;
}

const unique = (values: (string | null)[]): string[] => [...new Set(values.filter((v): v is string => v !== null))];

/** One release of the discid answer; null when it lacks an id or a title. */
export function parseRelease(r: Rec): MbRelease | null {
  const id = text(r.id);
  const title = text(r.title);
  if (!id || !title) return null;
  const countries: string[] = [];
  const main = text(r.country);
  if (main) countries.push(main);
  for (const e of recs(r['release-events'])) {
    for (const code of Array.isArray((e.area as Rec | undefined)?.['iso-3166-1-codes']) ? ((e.area as Rec)['iso-3166-1-codes'] as unknown[]) : []) {
      if (typeof code === 'string' && !countries.includes(code)) countries.push(code);
    }
  }
  const artist = artistCredit(r['artist-credit']);
  const media = recs(r.media).map((m, i) => ({
    position: typeof m.position === 'number' ? m.position : i + 1,
    format: text(m.format),
    disc_ids: recs(m.discs)
      .map((d) => text(d.id))
      .filter((d): d is string => d !== null),
    discs: recs(m.discs)
      .filter((d) => Array.isArray(d.offsets) && typeof d.sectors === 'number')
      .map((d) => ({ offsets: (d.offsets as unknown[]).filter((o): o is number => typeof o === 'number'), sectors: d.sectors as number })),
    tracks: recs(m.tracks).map((t, j) => {
      const recording = (t.recording ?? {}) as Rec;
      const credit = recs(t['artist-credit']).length ? t['artist-credit'] : recording['artist-credit'];
      return {
        position: typeof t.position === 'number' ? t.position : j + 1,
        title: text(t.title) ?? text(recording.title) ?? `Titel ${j + 1}`,
        artist: artistCredit(credit) || artist,
        recording_id: text(recording.id),
        track_id: text(t.id),
        length_ms: typeof t.length === 'number' ? t.length : typeof recording.length === 'number' ? recording.length : null,
        artist_ids: recs(credit).length ? creditIds(credit) : creditIds(r['artist-credit']),
        artist_sort: recs(credit).length ? creditSortName(credit) : creditSortName(r['artist-credit']),
      };
    }),
  }));
  const caa = (r['cover-art-archive'] ?? {}) as Rec;
  const group = r['release-group'] as Rec | undefined;
  const groupId = group && typeof group === 'object' ? text(group.id) : null;
  const labelInfo = recs(r['label-info']);
  return {
    id,
    title,
    artist: artist || 'Unbekannter Interpret',
    date: text(r.date),
    countries,
    status: text(r.status),
    has_front: caa.front === true,
    media,
    artist_ids: creditIds(r['artist-credit']),
    artist_sort: creditSortName(r['artist-credit']),
    barcode: text(r.barcode),
    asin: text(r.asin),
    script: text((r['text-representation'] as Rec | undefined)?.script),
    labels: unique(labelInfo.map((l) => text((l.label as Rec | undefined)?.name))),
    catalog_numbers: unique(labelInfo.map((l) => text(l['catalog-number']))),
    release_group: group && groupId
      ? {
          id: groupId,
          primary_type: text(group['primary-type']),
          secondary_types: Array.isArray(group['secondary-types']) ? (group['secondary-types'] as unknown[]).filter((x): x is string => typeof x === 'string') : [],
          first_release_date: text(group['first-release-date']),
        }
      : null,
  };
}

/**
 * The MusicBrainz web service (JSON): the releases of a disc id. Every request waits for its turn at
 * the rate limiter (one per second) and carries Ripwerk's User-Agent with the operator's contact.
 */
export class MusicBrainzClient {
  constructor(
    private readonly baseUrl: string,
    readonly userAgent: string,
    private readonly limiter: RateLimiter,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  /**
   * GET /discid/<id>?toc=…&inc=…: the releases holding this disc id; when MusicBrainz does not know
   * the id, the releases whose TOC is close (its fuzzy TOC search). A 404 (neither) is an empty list,
   * and so is a 400 (MusicBrainz refusing this TOC or id: "Invalid TOC"; asking again gets the same
   * answer); anything else that is not 2xx is a MusicBrainzError.
   */
  async discReleases(discId: string, toc: string | null): Promise<MbRelease[]> {
    const query = [`inc=${DISCID_INCLUDES.join('+')}`, 'cdstubs=no', 'fmt=json', ...(toc ? [`toc=${toc.trim().split(/\s+/).join('+')}`] : [])];
    const url = `${this.baseUrl}/discid/${encodeURIComponent(discId)}?${query.join('&')}`;
    await this.limiter.acquire();
    let res: Response;
    try {
      res = await this.fetchFn(url, { headers: { accept: 'application/json', 'user-agent': this.userAgent }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) {
      const cause = networkReason(err);
      throw new MusicBrainzError(`MusicBrainz is not reachable (${cause})`);
    }
    const body = await res.text().catch(() => '');
    if (res.status === 404 || res.status === 400) return [];
    if (!res.ok) throw new MusicBrainzError(`MusicBrainz answered ${res.status}${res.status === 503 ? ' (busy or rate limited)' : ''}`, res.status);
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch {
      throw new MusicBrainzError('MusicBrainz answered with something that is not JSON', res.status);
    }
    return recs((doc as Rec | null)?.releases)
      .map(parseRelease)
      .filter((r): r is MbRelease => r !== null);
  }
}

/**
 * The User-Agent MusicBrainz asks for: application/version and a way to reach whoever runs it
 * (MUSICBRAINZ_CONTACT). Without a contact it says "self-hosted" and the coordinator warns at start.
 */
export function musicbrainzUserAgent(version: string, contact: string | null): string {
  return `Ripwerk/${version} ( ${contact ?? 'self-hosted'} )`;
}

/** Why a fetch failed, in a word: the socket error code (also inside an AggregateError), a timeout, else the message. */
function networkReason(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; errors?: { code?: string }[] } };
  if (e.name === 'TimeoutError') return 'no answer in time';
  return e.cause?.code ?? e.cause?.errors?.[0]?.code ?? (e.cause as Error | undefined)?.message ?? e.message;
}
