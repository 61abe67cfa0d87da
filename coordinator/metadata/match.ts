import type { Match } from '../../shared/api-types.js';
/** One answer of a metadata database, in the form the chain, /metadata/search and the override use. */
export type MetadataMatch = Match;

/** A source that failed (no key, refused, unreachable): the reason in words, never the key. */
export class SourceError extends Error {
  constructor(
    readonly source: MetadataMatch['source'],
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

const TIMEOUT_MS = 10_000;

/** A POST instead of a GET (a GraphQL query), and a time-out other than 10 s. */
export interface JsonRequest {
  method?: 'GET' | 'POST';
  /** Sent as application/json. */
  body?: unknown;
  timeoutMs?: number;
}

/** GET a JSON document; any non-2xx answer or unreadable body is a SourceError naming the source and status. */
export async function getJson(source: MetadataMatch['source'], url: string, headers: Record<string, string> = {}, request: JsonRequest = {}): Promise<unknown> {
  let res: Response;
  const timeoutMs = request.timeoutMs ?? TIMEOUT_MS;
  try {
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const sent = body === undefined ? headers : { 'content-type': 'application/json', ...headers };
    res = await fetch(url, { method: request.method ?? 'GET', body, headers: { accept: 'application/json', ...sent }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const c = (err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
    const cause = c?.code ?? c?.errors?.[0]?.code ?? ((err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (c?.message ?? (err as Error).message));
    throw new SourceError(source, `${sourceName(source)} is not reachable (${cause})`);
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) {
    let detail = '';
    try {
      const body = JSON.parse(text) as Record<string, unknown>;
      detail = String(body.status_message ?? body.Error ?? body.message ?? '');
    } catch {
      /* not JSON */
    }
    throw new SourceError(source, `${sourceName(source)} answered ${res.status}${detail ? `: ${detail}` : ''}`, res.status);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SourceError(source, `${sourceName(source)} answered with something that is not JSON`, res.status);
  }
}

export function sourceName(source: MetadataMatch['source']): string {
  return source === 'tmdb' ? 'TMDB' : source === 'omdb' ? 'OMDb' : source === 'thediscdb' ? 'TheDiscDB' : 'Jikan';
}

export function yearOf(date: unknown): number | null {
  const m = typeof date === 'string' ? /^(\d{4})/.exec(date) : null;
  return m ? Number(m[1]) : null;
}

export function str(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}

export function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => Boolean(v) && typeof v === 'object') : [];
}
