import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type * as Mqtt from 'mqtt';

/**
 * mqtt.js, loaded with require(). mqtt is a CommonJS package whose index re-exports its modules; an
 * ES `import` of it makes Node 20 work out the named exports through those re-exports, which leaves
 * about 8 MB more RSS in every process than require() of the same package (measured: 62 against
 * 52 MB over a bare node's 42). The coordinator's client and every agent use it.
 */
const require = createRequire(import.meta.url);
const mqtt = require('mqtt') as typeof Mqtt;

/**
 * mqtt-packet, the encoder under mqtt.js and aedes (one copy, resolved as mqtt.js resolves it), fills
 * a table of all 65,536 two-byte numbers as Buffers on its first packet: 6.3 MB of heap kept for the
 * life of the process. Switched off here, before any packet is written, as mqtt.js's own option
 * `writeCache: false` would do for the whole process: a number is then a fresh two-byte Buffer.
 */
(createRequire(require.resolve('mqtt'))('mqtt-packet') as { writeToStream: { cacheNumbers: boolean } }).writeToStream.cacheNumbers = false;

/** A new connection to a broker in this process (an in-memory stream), in place of a socket. */
export type InProcessConnect = () => Duplex;

/**
 * Connects to `url`, or with `inProcess` to the embedded broker in this same process through an
 * in-memory stream (each reconnect takes a new one): same options, same MQTT, no socket.
 */
export function connectMqtt(url: string, options: Mqtt.IClientOptions, inProcess: InProcessConnect | null = null): Mqtt.MqttClient {
  return inProcess ? new mqtt.MqttClient(() => inProcess(), options) : mqtt.connect(url, options);
}
export type { IClientOptions, MqttClient } from 'mqtt';

/** How long a stopping process gives its broker to take its last message and the disconnect. */
export const CLOSE_WAIT_MS = 2000;

/**
 * Says a last retained word (QoS 1: the offline state) and disconnects, within `waitMs`. mqtt.js's
 * publish waits for the broker's acknowledgement and its end() for every message still in flight, both
 * for as long as it takes: a broker that is gone, frozen or never acknowledges (a coordinator stopping
 * in the same moment) kept a stopping agent up until systemd killed it. A word not acknowledged in time
 * is given up and the connection closed without waiting: the broker then publishes the client's will,
 * which says the same. Nothing is lost by it: events wait in the outbox until acknowledged. Never throws.
 */
export async function closeWithLastWord(client: Mqtt.MqttClient, last: { topic: string; payload: string } | null, waitMs = CLOSE_WAIT_MS): Promise<void> {
  const deadline = Date.now() + waitMs;
  const within = (work: Promise<unknown>): Promise<boolean> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      work.then(done, done);
    });
  let taken = !last;
  if (last && client.connected) taken = await within(client.publishAsync(last.topic, last.payload, { qos: 1, retain: true }));
  // Forced when the word was not taken: a plain end() would wait for it (and any other message in flight) without end.
  if (!(await within(client.endAsync(!taken)))) client.stream?.destroy();
}
