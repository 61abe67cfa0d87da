import type { MqttClient } from 'mqtt';

/** How long a stopping process gives its broker to take its last message and the disconnect. */
export const CLOSE_WAIT_MS = 2000;

/**
 * Says a last retained word (QoS 1: the offline state) and disconnects, within `waitMs`. mqtt.js's
 * publish waits for the broker's acknowledgement and its end() for every message still in flight, both
 * for as long as it takes: a broker that is gone, frozen or never acknowledges (a coordinator stopping
 * in the same moment) kept a stopping agent up until systemd killed it. A word not acknowledged in time
 * is given up and the connection closed without waiting: the broker then publishes the client's will,
 * which says the same. Nothing is lost by it: events wait in the outbox until acknowledged. Never throws.
 * (A module of its own: the native worker's bundle puts its own shared/mqtt-client.ts in place.)
 */
export async function closeWithLastWord(client: MqttClient, last: { topic: string; payload: string }, waitMs = CLOSE_WAIT_MS): Promise<void> {
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
  let taken = false;
  if (client.connected) taken = await within(client.publishAsync(last.topic, last.payload, { qos: 1, retain: true }));
  // Forced when the word was not taken: a plain end() would wait for it (and any other message in flight) without end.
  if (!(await within(client.endAsync(!taken)))) client.stream?.destroy();
}
