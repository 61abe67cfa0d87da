import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../coordinator/broker.js';
import { coordinatorMigrations } from '../../coordinator/migrations.js';
import { MqttCredentials } from '../../coordinator/mqtt-credentials.js';
import type { Logger } from '../../shared/log.js';
import { openDatabase } from '../../shared/sqlite.js';

/** An embedded broker on a free port with its own credential store in a temporary SQLite file. */
export async function startTestBroker(secret: string, log: Logger, opts: { maxPacketBytes?: number; coordinatorMaxPacketBytes?: number } = {}): Promise<{ broker: EmbeddedBroker; credentials: MqttCredentials; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-broker-'));
  const db = openDatabase(path.join(dir, 'coordinator.sqlite'), coordinatorMigrations);
  const credentials = new MqttCredentials(db);
  const broker = await startEmbeddedBroker(
    { port: 0, secret, credentials, maxPacketBytes: opts.maxPacketBytes ?? 1024 * 1024, coordinatorMaxPacketBytes: opts.coordinatorMaxPacketBytes ?? 8 * 1024 * 1024, haPrefix: () => 'homeassistant' },
    log,
  );
  return {
    broker,
    credentials,
    async close() {
      await broker.close();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
