import type { Logger } from '../../shared/log.js';
import type { JobRow } from '../jobs/jobs-store.js';
import type { SettingsStore } from '../system/settings-store.js';

export const MEDIA_SERVER_KINDS: readonly string[] = ['', 'jellyfin', 'emby', 'plex', 'kodi'];
export type MediaServerKind = 'jellyfin' | 'emby' | 'plex' | 'kodi';

const TIMEOUT_MS = 10_000;

export interface RefreshRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/**
 * The library scan request of each media server, with its key: Jellyfin and Emby POST
 * /Library/Refresh (Jellyfin's MediaBrowser token header, Emby's X-Emby-Token), Plex refreshes every
 * section with X-Plex-Token, Kodi gets JSON-RPC VideoLibrary.Scan (AudioLibrary.Scan for music) with
 * the key as "user:password" for basic auth. A user part in the URL is sent as basic auth instead of
 * in the URL, unless the key already fills the Authorization header.
 */
export function refreshRequest(kind: MediaServerKind, baseUrl: string, key: string, music: boolean): RefreshRequest {
  const { base, basic } = splitCredentials(baseUrl);
  const request = requestFor(kind, base, key, music);
  // Credentials written into the URL (http://kodi:secret@htpc:8080) become basic auth: fetch refuses URLs that carry them.
  if (basic && !request.headers.authorization) request.headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  return request;
}

/** The URL without its user part and trailing slashes, and the user part as "user:password" (decoded), if any. */
function splitCredentials(baseUrl: string): { base: string; basic: string | null } {
  const trimmed = baseUrl.replace(/\/+$/, '');
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i.exec(trimmed);
  if (!m) return { base: trimmed, basic: null };
  const decode = (t: string): string => {
    try {
      return decodeURIComponent(t);
    } catch {
      return t;
    }
  };
  const [user, ...rest] = m[2].split(':');
  return { base: `${m[1]}${trimmed.slice(m[0].length)}`, basic: `${decode(user)}:${decode(rest.join(':'))}` };
}

function requestFor(kind: MediaServerKind, base: string, key: string, music: boolean): RefreshRequest {
  switch (kind) {
    case 'jellyfin':
      return { url: `${base}/Library/Refresh`, method: 'POST', headers: key ? { authorization: `MediaBrowser Token="${key}"` } : {} };
    case 'emby':
      return { url: `${base}/Library/Refresh`, method: 'POST', headers: key ? { 'x-emby-token': key } : {} };
    case 'plex':
      return { url: `${base}/library/sections/all/refresh`, method: 'GET', headers: key ? { 'x-plex-token': key } : {} };
    case 'kodi': {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (key) headers.authorization = `Basic ${Buffer.from(key).toString('base64')}`;
      const method = music ? 'AudioLibrary.Scan' : 'VideoLibrary.Scan';
      return { url: `${base}/jsonrpc`, method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method, id: 1 }) };
    }
  }
}

/**
 * After every finished rip the configured media server rescans its library. A failure is a warning
 * logged with the job id (the key is never logged) and never touches the job.
 */
export class LibraryRefresher {
  constructor(
    private readonly settings: SettingsStore,
    private readonly log: Logger,
  ) {}

  jobEnded(job: JobRow): void {
    if (job.status !== 'completed') return;
    const s = this.settings.all();
    if (!s.mediaServerType || !s.mediaServerUrl) return;
    const kind = s.mediaServerType as MediaServerKind;
    const req = refreshRequest(kind, s.mediaServerUrl, s.mediaServerKey, job.meta?.disc_type === 'cd');
    // A redirect is not followed: the key would go wherever the answer points.
    fetch(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) })
      .then(async (res) => {
        await res.arrayBuffer().catch(() => undefined);
        if (!res.ok) throw new Error(`it answered ${res.status}`);
        this.log.info(`${kind} library refresh requested`, job.id);
      })
      .catch((err: Error) => {
        const reason = err.name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : err.message.startsWith('it answered') ? err.message : 'it cannot be reached';
        this.log.warn(`${kind} library refresh failed: ${reason}; the job is not affected`, job.id);
      });
  }
}
