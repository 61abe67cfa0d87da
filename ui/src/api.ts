import { reasonText as catalogueText } from '../../shared/reasons.js';
import { lang, t } from './i18n/index.js';

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
  if (!res.ok) throw new ApiError(res.status, reasonText(res.headers) ?? (text.trim() || t('api.error', { status: res.status })));
  return (text ? JSON.parse(text) : null) as T;
}

/** A refusal with a code (header Ripwerk-Reason) worded in the UI's language from shared/reasons.ts; null without one. */
function reasonText(headers: Headers): string | null {
  const code = headers.get('Ripwerk-Reason');
  if (!code) return null;
  let params: Record<string, string | number> = {};
  try {
    params = JSON.parse(decodeURIComponent(headers.get('Ripwerk-Reason-Params') ?? '%7B%7D')) as Record<string, string | number>;
  } catch {
    // Parameters that cannot be read: the text without them is still better than none.
  }
  return catalogueText(code, params, lang());
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => request<T>('POST', path, body);
export const put = <T>(path: string, body?: unknown) => request<T>('PUT', path, body);
export const del = <T>(path: string) => request<T>('DELETE', path);

/** Types of the answers the UI reads: the server's own records (shared/api-types.ts, docs/api.md). */
export type { AudioStream, BrowseListing, Device, DeviceTracks, Disc, DiscKinds, DiscLibrarySummary, DiscRecognition, FileStreams, Job, JobDetail, JobMeta, LogEntry, Mount, PathMapAdvice, QueuedTranscode, ScannedDiscTrack, ScoredMatch, SearchAnswer, SourceStatus, StorageTarget, SubtitleStream, SystemInfo, Track, UpdateEntry, Worker, WorkerJob } from '../../shared/api-types.js';

/** A TMDB-relative poster path as a URL the browser can load (absolute URLs stay). */
export function posterSrc(poster: string | null): string | null {
  if (!poster) return null;
  if (/^https?:\/\//.test(poster)) return poster;
  return `https://image.tmdb.org/t/p/w185${poster}`;
}
