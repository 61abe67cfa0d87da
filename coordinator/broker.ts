import net from 'node:net';
import { Aedes } from 'aedes';
import type { Logger } from '../shared/log.js';
import { secretMatches } from './broker-secret.js';

export interface EmbeddedBroker {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Starts the embedded aedes broker on the given port (0 = a free one), open to clients with the secret. */
export async function startEmbeddedBroker(port: number, secret: string, log: Logger, host: string | null = null): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker({ heartbeatInterval: 60_000 });
  // Only clients with the broker secret as password may connect: nobody else on the network can
  // send rip or transcode commands or pose as an agent. MQTT-3.1.4-1 / CONNACK return code 4.
  const refused = new Set<string>();
  broker.authenticate = (client, _username, password, cb) => {
    if (secretMatches(secret, password)) return cb(null, true);
    const who = `${client.id} from ${(client.conn as { remoteAddress?: string }).remoteAddress ?? '?'}`;
    if (!refused.has(who)) {
      refused.add(who);
      log.warn(`MQTT client ${who} refused: missing or wrong broker secret`);
    }
    const err = Object.assign(new Error('bad user name or password'), { returnCode: 4 as const });
    cb(err, false);
  };
  broker.authorizePublish = (client, packet, cb) => {
    // MQTT-3.3.1: $SYS topics belong to the broker; clients may not publish there.
    if (client && packet.topic.startsWith('$SYS/')) return cb(new Error('$SYS topics are reserved for the broker'));
    cb(null);
  };
  broker.on('clientError', (client, err) => log.warn(`MQTT client ${client?.id ?? '?'} error: ${err.message}`));
  // Small MQTT packets go out at once instead of waiting for the peer's ACK (Nagle: ~40 ms a hop).
  const server = net.createServer({ noDelay: true }, broker.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host ?? undefined, () => resolve());
  });
  const actual = (server.address() as net.AddressInfo).port;
  log.info(`embedded MQTT broker listening on port ${actual}`);
  return {
    port: actual,
    url: `mqtt://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        broker.close(() => server.close(() => resolve()));
      }),
  };
}
