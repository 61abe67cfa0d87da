import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';

/**
 * Where a webhook may go. A household's webhook is a chat or push service on the internet or on the
 * LAN (ntfy on 192.168.x.y is fine); it is never this machine itself, a link-local address (cloud
 * metadata at 169.254.169.254) or an unspecified one. Those are refused unless the setting
 * allowPrivateWebhooks is on, and this coordinator's own API is refused always. The check runs on
 * the addresses a name resolves to, at the moment of connecting, so a name that points at 127.0.0.1
 * (or is switched to it later) is refused too.
 */

export interface TargetPolicy {
  /** The setting allowPrivateWebhooks: loopback, link-local and this machine's addresses allowed. */
  allowPrivate: boolean;
  /** The port of this coordinator's API: this machine at that port is never a webhook target. */
  ownPort: number | null;
  /** This machine's addresses; os.networkInterfaces() unless a test names them. */
  ownAddresses?: readonly string[];
}

export class TargetRefused extends Error {}

/** The machine's own addresses, without the IPv6 zone. */
export function machineAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address.replace(/%.*$/, '').toLowerCase()));
}

function ipv4Parts(address: string): number[] | null {
  if (!net.isIPv4(address)) return null;
  return address.split('.').map(Number);
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:127.0.0.1), else the address as it is. */
function unmapped(address: string): string {
  const a = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return a;
}

/** Expands an IPv6 address into its eight 16-bit groups. */
function ipv6Groups(address: string): number[] | null {
  if (!net.isIPv6(address)) return null;
  const [head, tail] = address.includes('::') ? address.split('::') : [address, null];
  const part = (s: string) => (s ? s.split(':') : []);
  const h = part(head);
  const t = tail === null ? [] : part(tail);
  if (t.length && t[t.length - 1].includes('.')) return null;
  const fill = tail === null ? [] : Array.from({ length: 8 - h.length - t.length }, () => '0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/** What kind of address a webhook must not reach without allowPrivateWebhooks, or null when it is fine. */
export function forbiddenKind(address: string): string | null {
  const a = unmapped(address);
  const v4 = ipv4Parts(a);
  if (v4) {
    if (v4[0] === 127) return 'a loopback address';
    if (v4[0] === 0) return 'an unspecified address';
    if (v4[0] === 169 && v4[1] === 254) return 'a link-local address';
    if (v4[0] >= 224) return 'a multicast or broadcast address';
    return null;
  }
  const g = ipv6Groups(a);
  if (!g) return 'no IP address';
  if (g.every((x) => x === 0)) return 'an unspecified address';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'a loopback address';
  if ((g[0] & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((g[0] & 0xff00) === 0xff00) return 'a multicast address';
  return null;
}

/**
 * The reason a connection to `address`:`port` is refused under `policy`, or null when it may go.
 * This machine's own addresses count as loopback.
 */
export function refusalFor(address: string, port: number, policy: TargetPolicy): string | null {
  const a = unmapped(address);
  const own = (policy.ownAddresses ?? machineAddresses()).map(unmapped);
  const special = forbiddenKind(a);
  const self = own.includes(a) || special === 'a loopback address' || special === 'an unspecified address';
  if (self && policy.ownPort !== null && port === policy.ownPort) return `it points at this Ripwerk itself (${a} port ${port})`;
  const kind = special ?? (own.includes(a) ? 'an address of this machine' : null);
  if (kind === null) return null;
  if (policy.allowPrivate && !/multicast|no IP/.test(kind)) return null;
  return `it points at ${kind} (${a}); turn on the setting allowPrivateWebhooks if that is really where it should go`;
}

export function portOf(u: URL): number {
  return u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}

/** Resolves the URL's host and checks every address it has; the reason of the first refused one, or null. */
export async function checkTarget(url: string, policy: TargetPolicy, lookup: typeof dns.promises.lookup = dns.promises.lookup): Promise<string | null> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((r) => r.address);
    } catch {
      // A name that does not resolve now may later: the send decides then.
      return null;
    }
  }
  for (const address of addresses) {
    const reason = refusalFor(address, portOf(u), policy);
    if (reason) return reason;
  }
  return null;
}

/** How a name is resolved to every address it has (dns.lookup with all: true; a test names its own). */
export type ResolveAll = (hostname: string, options: dns.LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

const resolveAll: ResolveAll = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/**
 * A lookup for http.request that resolves the name once and refuses, with TargetRefused, when any of
 * its addresses is one the policy forbids: the connection goes to the very address checked, so a
 * name that resolved to nothing (or elsewhere) when it was saved and points at loopback now (DNS
 * rebinding) is refused at the moment of connecting. A host given as an IP address is not looked
 * up by Node: check it with refusalFor before the request.
 */
export function checkedLookup(port: number, policy: TargetPolicy, resolve: ResolveAll = resolveAll): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, list) => {
      if (err) return callback(err, '', 4);
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      for (const r of list) {
        const reason = refusalFor(r.address, port, policy);
        if (reason) return callback(new TargetRefused(reason), '', 4);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

export interface TargetRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

/**
 * Sends one request to a checked target: the address the connection uses is the one checked (no
 * second lookup that DNS rebinding could answer differently), redirects are not followed, and the
 * answer is read and dropped. Resolves with the status; a refused target rejects with TargetRefused.
 */
export function sendToTarget(req: TargetRequest, policy: TargetPolicy): Promise<number> {
  const u = new URL(req.url);
  const port = portOf(u);
  const lookup = checkedLookup(port, policy);
  return new Promise((resolve, reject) => {
    const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    if (net.isIP(host)) {
      const reason = refusalFor(host, port, policy);
      if (reason) return reject(new TargetRefused(reason));
    }
    const client = u.protocol === 'https:' ? https : http;
    const signal = AbortSignal.timeout(req.timeoutMs);
    // A connection of its own: a kept-alive socket would skip the checked lookup.
    const request = client.request(u, { agent: false, method: req.method, headers: req.headers, lookup, signal }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    request.on('error', (err) => reject(signal.aborted ? Object.assign(new Error('timeout'), { name: 'TimeoutError' }) : err));
    request.end(req.body);
  });
}
