import net from 'node:net';
import { Aedes } from 'aedes';
import type { Logger } from '../shared/log.js';

export interface EmbeddedBroker {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Starts the embedded aedes broker on the given port (0 = a free one). */
export async function startEmbeddedBroker(port: number, log: Logger): Promise<EmbeddedBroker> {
  const broker = await Aedes.createBroker({ heartbeatInterval: 60_000 });
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
    server.listen(port, () => resolve());
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
