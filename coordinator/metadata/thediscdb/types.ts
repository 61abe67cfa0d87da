/**
 * TheDiscDB's disc entry in one shape, whichever way it arrived: the data repository's files
 * (discNN.json, metadata.json, release.json: PascalCase keys, any key may be missing) or the
 * GraphQL answer (camelCase keys, `externalids` in lower case). Only what a lookup needs is kept.
 */

/** What TheDiscDB says a title is (DiscItemReference). Season and episode are strings there ("4", "3-4", "1–7"). */
export interface TddbItem {
  title: string | null;
  /** MainMovie, Episode, Trailer, DeletedScene, Extra, Other, Interview, Featurette, Scene, Music, Short. */
  type: string | null;
  season: string | null;
  episode: string | null;
}

/** One title of a disc as TheDiscDB captured it with MakeMKV. */
export interface TddbTitle {
  /** MakeMKV's title number at capture time: differs between MakeMKV versions and settings; never matched on. */
  index: number;
  /** DVD: the DVD title number, two digits ("01", TINFO 24); Blu-ray: "00800.mpls", "00006.m2ts", "00000.mpls(1)" (TINFO 16). */
  sourceFile: string | null;
  /** TINFO 26: DVD cell ranges "1-19,20-35", Blu-ray clip numbers "14,15,16". */
  segmentMap: string | null;
  /** "H:MM:SS" as seconds; null when absent. */
  seconds: number | null;
  size: number | null;
  /** null: TheDiscDB does not know what this title is. */
  item: TddbItem | null;
}

export interface TddbDisc {
  index: number | null;
  name: string | null;
  format: string | null;
  /** 32 upper-case hex digits; legacy entries carry 16 or none. */
  contentHash: string | null;
  globalDiscId: string | null;
  titles: TddbTitle[];
}

export interface TddbRelease {
  slug: string | null;
  title: string | null;
  year: number | null;
  imageUrl: string | null;
}

export interface TddbMediaItem {
  title: string;
  year: number | null;
  slug: string | null;
  /** "Movie" or "Series". */
  type: string | null;
  /** Relative to `<base>/images/`. */
  imageUrl: string | null;
  tmdb: string | null;
  imdb: string | null;
}

/** One disc of one release of one media item: the unit a ContentHash or GlobalDiscId finds. */
export interface TddbEntry {
  mediaItem: TddbMediaItem;
  release: TddbRelease;
  disc: TddbDisc;
}

type Rec = Record<string, unknown>;

function rec(v: unknown): Rec | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : null;
}

/** A key in either spelling: `Title` (data files) or `title` (GraphQL). */
function field(r: Rec, name: string): unknown {
  if (name in r) return r[name];
  const pascal = name[0].toUpperCase() + name.slice(1);
  if (pascal in r) return r[pascal];
  const lower = name.toLowerCase();
  return lower in r ? r[lower] : undefined;
}

function text(v: unknown): string | null {
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

function int(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^\d+$/.test(v.trim())) return Number(v.trim());
  return null;
}

/** "2:28:24" or "0:00:12" → seconds; null when unreadable. */
export function durationSeconds(v: unknown): number | null {
  if (typeof v !== 'string' || !/^\d+(:\d{1,2}){1,2}$/.test(v.trim())) return null;
  return v
    .trim()
    .split(':')
    .reduce((total, p) => total * 60 + Number(p), 0);
}

/** A ContentHash or GlobalDiscId as TheDiscDB stores it: hex in upper case; null when it is no hex string. */
export function normaliseId(v: unknown): string | null {
  const s = typeof v === 'string' ? v.trim().toUpperCase() : '';
  return /^[0-9A-F]{8,128}$/.test(s) ? s : null;
}

/** A ContentHash a lookup can use: 32 hex digits. The legacy 16-hex values never equal a computed hash. */
export function isContentHash(v: string | null): v is string {
  return v !== null && /^[0-9A-F]{32}$/.test(v);
}

function parseItem(v: unknown): TddbItem | null {
  const r = rec(v);
  if (!r) return null;
  return { title: text(field(r, 'title')), type: text(field(r, 'type')), season: text(field(r, 'season')), episode: text(field(r, 'episode')) };
}

export function parseTitle(v: unknown): TddbTitle | null {
  const r = rec(v);
  if (!r) return null;
  const index = int(field(r, 'index'));
  return {
    index: index ?? 0,
    sourceFile: text(field(r, 'sourceFile')),
    segmentMap: text(field(r, 'segmentMap')),
    seconds: durationSeconds(field(r, 'duration')),
    size: int(field(r, 'size')),
    item: parseItem(field(r, 'item')),
  };
}

/** A discNN.json or a GraphQL `ReleaseDisc`. */
export function parseDisc(v: unknown): TddbDisc | null {
  const r = rec(v);
  if (!r) return null;
  const titles = field(r, 'titles');
  return {
    index: int(field(r, 'index')),
    name: text(field(r, 'name')),
    format: text(field(r, 'format')),
    contentHash: normaliseId(field(r, 'contentHash')),
    globalDiscId: normaliseId(field(r, 'globalDiscId')),
    titles: Array.isArray(titles) ? titles.map(parseTitle).filter((t): t is TddbTitle => t !== null) : [],
  };
}

/** A release.json or a GraphQL `Release`. */
export function parseRelease(v: unknown): TddbRelease {
  const r = rec(v) ?? {};
  return { slug: text(field(r, 'slug')), title: text(field(r, 'title')), year: int(field(r, 'year')), imageUrl: text(field(r, 'imageUrl')) };
}

/** A metadata.json (`ExternalIds`) or a GraphQL `MediaItem` (`externalids`); null without a title. */
export function parseMediaItem(v: unknown): TddbMediaItem | null {
  const r = rec(v);
  if (!r) return null;
  const title = text(field(r, 'title'));
  if (!title) return null;
  const ids = rec(r.externalids ?? r.ExternalIds ?? r.externalIds) ?? {};
  return {
    title,
    year: int(field(r, 'year')),
    slug: text(field(r, 'slug')),
    type: text(field(r, 'type')),
    imageUrl: text(field(r, 'imageUrl')),
    tmdb: text(field(ids, 'tmdb')),
    imdb: text(field(ids, 'imdb')),
  };
}
