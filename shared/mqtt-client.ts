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

