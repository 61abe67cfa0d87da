import type { Request } from 'express';
import { HttpError } from '../../http/errors.js';

/** How a worker on another host reaches this coordinator: its HTTP address and its MQTT broker. */
export interface SetupOrigin {
  /** http(s)://host[:port] as the client called it, without /api. */
  coordinatorUrl: string;
  /** The broker URL a worker on another host uses; never with credentials. */
  mqttUrl: string;
}

// A host name, IPv4 address or bracketed IPv6 address with an optional port: nothing that could break
// out of a quoted string in a generated script.
const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]', '0.0.0.0', '::', '[::]']);

function first(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v?.split(',')[0]?.trim() || undefined;
}

/**
 * The coordinator's address as the client sees it: the Host header (X-Forwarded-Host and -Proto when
 * the request comes from a trusted reverse proxy). The MQTT address is the request's host with the
 * broker's port; an external broker (MQTT_URL) is named as configured unless it is a loopback
 * address, which another host could not reach.
 */
export function setupOrigin(req: Request, brokerUrl: string | null, trustedProxies: readonly string[]): SetupOrigin {
  const socket = (req.socket.remoteAddress ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  const proxied = trustedProxies.includes(socket);
  const host = (proxied ? first(req.headers['x-forwarded-host']) : undefined) ?? req.headers.host ?? '';
  if (!HOST_RE.test(host)) throw new HttpError(400, `the Host header "${host.slice(0, 100)}" is not a host name or address; call the coordinator by its name or IP address`);
  const proto = proxied ? first(req.headers['x-forwarded-proto']) : undefined;
  const scheme = proto === 'https' ? 'https' : 'http';
  const hostname = new URL(`http://${host}`).hostname;
  if (!brokerUrl) throw new HttpError(503, 'the coordinator is not connected to its MQTT broker yet; try again in a moment');
  const broker = new URL(brokerUrl);
  broker.username = '';
  broker.password = '';
  if (LOOPBACK.has(broker.hostname)) broker.hostname = hostname;
  const mqttUrl = broker.toString().replace(/\/$/, '');
  return { coordinatorUrl: `${scheme}://${host}`, mqttUrl };
}
