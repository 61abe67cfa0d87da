import { t } from './i18n/index.js';

/** The API under /api: JSON in and out; a refusal is the server's plain-text reason. */
export const API = '/api';
const TIMEOUT_MS = 10_000;

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${API}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch {
    throw new ApiError(0, t('api.unreachable'));
  }
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, text.trim() || t('api.error', { status: res.status }));
  return (text ? JSON.parse(text) : null) as T;
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => request<T>('POST', path, body);
export const put = <T>(path: string, body?: unknown) => request<T>('PUT', path, body);
export const del = <T>(path: string) => request<T>('DELETE', path);

/** Types of the answers the UI reads (see docs/api.md). */
export interface Disc {
  title: string;
  label: string;
  year: number | null;
  type: string;
  size_bytes: number;
  fingerprint: string;
  confidence: number | null;
  poster: string | null;
  /** The poster as Ripwerk serves it (/api/posters/…), fetched once from the movie database. */
  poster_url?: string | null;
  already_ripped: boolean;
  audio_tracks: number | null;
  kind: 'movie' | 'series' | 'music' | 'unknown' | null;
  season: number | null;
  tmdb_id: number | null;
  /** Audio CDs: what the files will be named by (MusicBrainz, CD-Text or unknown). */
  album?: { artist: string; album: string; year: number | null; release_id: string | null; source: string } | null;
  /** Audio CDs: other MusicBrainz releases of the disc. */
  suggestions?: { release_id: string; artist: string; album: string; year: number | null; country: string | null; exact: boolean }[];
}

export interface Device {
  name: string;
  node: string;
  worker: string | null;
  worker_online: boolean;
  vendor: string | null;
  model: string | null;
  status: string;
  busy_job: string | null;
  disc: Disc | null;
}

export interface Job {
  id: string;
  title: string;
  status: string;
  progress: number;
  output_path: string | null;
  target_dir: string | null;
  meta: Record<string, unknown> | null;
  can_retry: boolean;
  eta_sekunden: number | null;
  eta_text: string | null;
  device: string | null;
  node: string | null;
  transcode_node: string | null;
  phase: string | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface Stream {
  index: number;
  /** ISO 639-2/T, "und" when the disc does not say. */
  language: string;
  codec: string;
  channels?: number | null;
  forced?: boolean;
}

export interface Track {
  number: number;
  seconds: number;
  size_bytes: number;
  chapters: number;
  audio?: Stream[];
  subtitles?: Stream[];
}

export interface Worker {
  name: string;
  node: string;
  host: string | null;
  ip: string | null;
  online: boolean;
  encoders: string[];
  tools: Record<string, string | null>;
  key_source: string | null;
  schluessel: number;
  last_seen: string | null;
  /** A native worker (desktop without containers): transcode queue only. */
  native?: boolean;
}

export interface Match {
  source: string;
  id: string;
  kind: 'movie' | 'series';
  title: string;
  year: number | null;
  poster_path: string | null;
  poster_url: string | null;
  overview: string | null;
  tmdb_id: number | null;
  similarity: number;
}

/** A TMDB-relative poster path as a URL the browser can load (absolute URLs stay). */
export function posterSrc(poster: string | null): string | null {
  if (!poster) return null;
  if (/^https?:\/\//.test(poster)) return poster;
  return `https://image.tmdb.org/t/p/w185${poster}`;
}
