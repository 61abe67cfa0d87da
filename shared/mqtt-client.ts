import { createRequire } from 'node:module';
import type * as Mqtt from 'mqtt';

/**
 * mqtt.js, loaded with require(). mqtt is a CommonJS package whose index re-exports its modules; an
 * ES `import` of it makes Node 20 work out the named exports through those re-exports, which leaves
 * about 8 MB more RSS in every process than require() of the same package (measured: 62 against
 * 52 MB over a bare node's 42). The coordinator's client and every agent use it.
 */
const mqtt = createRequire(import.meta.url)('mqtt') as typeof Mqtt;

export const connectMqtt: typeof Mqtt.connect = mqtt.connect;
export type { MqttClient } from 'mqtt';
