import net from 'node:net';
import type { RequestHandler } from 'express';
import type { Logger } from '../../shared/log.js';
import { sendText } from './errors.js';

/**
 * What a browser may not do to the API on behalf of a page from elsewhere: reach it under a foreign
 * host name (DNS rebinding), change state from another origin (cross-site requests), or send a body in
 * a type a page can forge without asking (a form, a no-cors fetch with text/plain).
 */

/** The methods that change state; only these need a same-origin Origin and a fitting content type. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Body types a page on any site can send without a CORS preflight (Fetch standard, CORS-safelisted). */
const FORGEABLE_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);

/** Requests whose body is a file rather than JSON, with the types they take. */
const BINARY_UPLOADS: Record<string, readonly string[]> = {
  '/api/system/keystore': ['application/octet-stream', 'application/zip', 'application/x-zip-compressed', 'application/x-zip'],
};

const JSON_TYPES: readonly string[] = ['application/json'];

/** Headers sent with every answer: the UI may not be framed, types are not sniffed, scripts and styles come from here only. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    // Posters come from the metadata databases' image servers.
    "img-src 'self' data: https: http:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

/** A text that came from the request, safe to put into a refusal: control characters (CR, LF, ...) dropped, at most 100 characters. */
export function quoted(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  return clean.length > 100 ? `${clean.slice(0, 100)}…` : clean;
}

/** The host name of a Host header without its port and brackets, lower case; null when it is not one. */
export function hostOf(header: string): string | null {
  const h = header.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d+)?$/.exec(h);
  if (bracketed) return net.isIPv6(bracketed[1]) ? bracketed[1] : null;
  const m = /^([a-z0-9._-]+?)\.?(?::(\d+))?$/.exec(h);
  return m ? m[1] : null;
}

/**
 * Whether a Host header names this coordinator: any IP address (a rebinding page can only reach us
 * under its own name, never under an address), or a name of `allowed` ('*' allows any name).
 */
export function hostAllowed(header: string | undefined, allowed: readonly string[]): boolean {
  if (header === undefined) return true;
  const host = hostOf(header);
  if (host === null) return false;
  if (net.isIP(host)) return true;
  return allowed.includes('*') || allowed.includes(host);
}

/** How many Host headers hostCheck remembers its answer for: a client sends the same one every time. */
export const HOST_MEMO_SIZE = 64;

/**
 * hostAllowed for a fixed list, remembering its answer for the last few Host headers: the answer
 * depends on nothing else, and parsing the header (an IPv6 test among it) costs every request. When
 * full, the memo starts over, so a client sending ever new names cannot make it grow.
 */
export function hostCheck(allowed: readonly string[]): (header: string | undefined) => boolean {
  const list = [...allowed];
  const memo = new Map<string, boolean>();
  return (header) => {
    if (header === undefined) return true;
    let ok = memo.get(header);
    if (ok === undefined) {
      ok = hostAllowed(header, list);
      if (memo.size >= HOST_MEMO_SIZE) memo.clear();
      memo.set(header, ok);
    }
    return ok;
  };
}

/** The reason a state-changing request is refused as coming from another site, or null when it may pass. */
export function crossSiteReason(headers: { origin?: string; host?: string; secFetchSite?: string }): string | null {
  const site = headers.secFetchSite?.trim().toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return `refused: the request comes from another site (Sec-Fetch-Site: ${site}); change things from the Ripwerk page itself or without a browser`;
  if (headers.origin === undefined) return null;
  let origin: URL;
  try {
    origin = new URL(headers.origin);
  } catch {
    return `refused: the request comes from another origin (${quoted(headers.origin)})`;
  }
  const own = headers.host === undefined ? null : hostOf(headers.host);
  // Ports are not compared: a reverse proxy passes the host name without the port it listens on.
  if (headers.origin === 'null' || own === null || origin.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase() !== own) {
    return `refused: the request comes from another origin (${quoted(headers.origin)}), not from this Ripwerk`;
  }
  return null;
}

/**
 * Checks the declared type of a state-changing request. A request without a body may omit it; one with
 * a body must declare JSON, or the file type of an upload. A type any page can send is refused with
 * 403, another wrong type with 415.
 */
export function contentTypeRefusal(pathName: string, contentType: string | undefined, hasBody: boolean): { status: 403 | 415; reason: string } | null {
  const type = contentType?.split(';')[0].trim().toLowerCase() ?? '';
  if (type === '' && !hasBody) return null;
  // Routes match without regard to case or a trailing slash: so does this lookup.
  const upload = BINARY_UPLOADS[pathName.toLowerCase().replace(/\/+$/, '')];
  const accepted = upload ?? JSON_TYPES;
  if (accepted.includes(type)) return null;
  const wanted = upload ? `the file itself as ${upload.slice(0, 2).join(' or ')}` : 'JSON (Content-Type: application/json)';
  if (type === '') return { status: 415, reason: `refused: the body has no Content-Type; send ${wanted}` };
  if (FORGEABLE_TYPES.has(type)) return { status: 403, reason: `refused: a body of type ${type} can be sent by any web page; send ${wanted}` };
  return { status: 415, reason: `refused: a body of type ${quoted(type)} is not taken here; send ${wanted}` };
}

/**
 * The guard in front of everything the coordinator serves: the Host must be one it answers to, and a
 * state-changing request must come from its own page (or from no browser at all) with a fitting body
 * type. Refusals are 403 (415 for a wrong but not forgeable type) with a plain reason, logged once a
 * minute per reason.
 */
export function requestGuard(allowedHosts: readonly string[], log: Logger): RequestHandler {
  const logged = new Map<string, number>();
  const refuse = (res: Parameters<RequestHandler>[1], status: number, reason: string, what: string): void => {
    const now = Date.now();
    if ((logged.get(what) ?? 0) < now - 60_000) {
      logged.set(what, now);
      log.warn(`request refused: ${reason}`);
    }
    sendText(res, status, reason);
  };
  const headers = Object.entries(SECURITY_HEADERS);
  const hostOk = hostCheck(allowedHosts);
  return (req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    const host = req.headers.host;
    if (!hostOk(host)) {
      refuse(res, 403, `refused: this Ripwerk does not answer to the host name ${quoted(host ?? '')}; add it to ALLOWED_HOSTS if it is yours`, 'host');
      return;
    }
    if (!STATE_CHANGING.has(req.method)) {
      next();
      return;
    }
    const crossSite = crossSiteReason({ origin: req.headers.origin, host, secFetchSite: req.headers['sec-fetch-site'] as string | undefined });
    if (crossSite) {
      refuse(res, 403, crossSite, 'origin');
      return;
    }
    const length = Number(req.headers['content-length'] ?? 0);
    const hasBody = req.headers['transfer-encoding'] !== undefined || length > 0;
    const typeRefusal = contentTypeRefusal(req.path, req.headers['content-type'], hasBody);
    if (typeRefusal) {
      refuse(res, typeRefusal.status, typeRefusal.reason, 'type');
      return;
    }
    next();
  };
}
