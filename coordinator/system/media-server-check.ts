import type { MediaServerKind } from '../integrations/library-refresh.js';

/** How long the media server may take to answer the check on save. */
const CHECK_TIMEOUT_MS = 5_000;

/** A media server address or key the server refused, or could not be asked with: English text, code and parameters for the UI. */
export interface MediaServerRefusal {
  text: string;
  code: 'mediaServerRefused' | 'mediaServerUnreachable';
  params: Record<string, string>;
}

interface CheckRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The information request of each media server, the one that needs its key when a key is given:
 * Jellyfin and Emby GET /System/Info (with the key; /System/Info/Public without one), Plex GET
 * /library/sections with X-Plex-Token (/identity without one), Kodi JSON-RPC JSONRPC.Ping with the key
 * as "user:password" for basic auth. A user part in the URL becomes basic auth, as for the library refresh.
 */
export function checkRequest(kind: MediaServerKind, address: string, key: string): CheckRequest {
  const u = new URL(address);
  const basic = u.username || u.password ? `${decode(u.username)}:${decode(u.password)}` : null;
  u.username = '';
  u.password = '';
  const base = u.toString().replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  let request: CheckRequest;
  switch (kind) {
    case 'jellyfin':
      if (key) headers.authorization = `MediaBrowser Token="${key}"`;
      request = { url: `${base}/System/Info${key ? '' : '/Public'}`, method: 'GET', headers };
      break;
    case 'emby':
      if (key) headers['x-emby-token'] = key;
      request = { url: `${base}/System/Info${key ? '' : '/Public'}`, method: 'GET', headers };
      break;
    case 'plex':
      if (key) headers['x-plex-token'] = key;
      request = { url: `${base}${key ? '/library/sections' : '/identity'}`, method: 'GET', headers: { ...headers, accept: 'application/json' } };
      break;
    case 'kodi':
      headers['content-type'] = 'application/json';
      if (key) headers.authorization = `Basic ${Buffer.from(key).toString('base64')}`;
      request = { url: `${base}/jsonrpc`, method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'JSONRPC.Ping', id: 1 }) };
      break;
  }
  if (basic && !request.headers.authorization) request.headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  return request;
}

/**
 * Why a media server address (with its kind and key) may not be saved, or null (issue 38): the
 * server is asked for its information with the key, as the library refresh after each rip will ask
 * it. An answer other than 2xx is a refusal in the server's words (status and the start of its
 * answer); no answer at all (not reachable, no answer within 5 s) refuses as well, with the reason:
 * an address nobody checked fails unseen after the next rip, and the household can save again when
 * the server runs. The key never appears in the reason.
 */
export async function mediaServerRefusal(kind: MediaServerKind, address: string, key: string, timeoutMs = CHECK_TIMEOUT_MS): Promise<MediaServerRefusal | null> {
  const req = checkRequest(kind, address, key);
  const where = new URL(req.url);
  const shown = `${where.protocol}//${where.host}${where.pathname}`;
  let res: Response;
  try {
    res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string };
    const reason = e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (e.cause?.code ?? e.cause?.message ?? e.message ?? 'no answer');
    return { code: 'mediaServerUnreachable', params: { kind, address: shown, reason }, text: `mediaServerUrl not saved: the ${kind} server at ${shown} could not be reached (${reason}); save again when it runs` };
  }
  const text = (await res.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 200);
  if (res.status >= 200 && res.status < 300) return null;
  const answer = `${res.status}${text ? `: ${key ? text.split(key).join('…') : text}` : ''}`;
  return { code: 'mediaServerRefused', params: { kind, address: shown, answer }, text: `mediaServerUrl refused: the ${kind} server at ${shown} answered ${answer}; check the address and the key (mediaServerKey)` };
}
