import { ConfigError } from './config.js';
import { Logger } from './log.js';

/** A port the process could not listen on, said plainly (null for any other error). */
export function listenFailure(err: unknown): string | null {
  const e = err as { code?: unknown; syscall?: unknown; port?: unknown } | null;
  if (!e || e.syscall !== 'listen' || typeof e.port !== 'number') return null;
  if (e.code === 'EADDRINUSE') return `port ${e.port} is already in use (another Ripwerk, an MQTT broker or another service): stop that, or set another port (PORT for the API, MQTT_PORT for the embedded broker)`;
  if (e.code === 'EACCES') return `port ${e.port} may not be used by this user: ports below 1024 need root or CAP_NET_BIND_SERVICE; set another port (PORT for the API, MQTT_PORT for the embedded broker)`;
  if (e.code === 'EADDRNOTAVAIL') return `the address to listen on for port ${e.port} is not one of this machine's (BIND_ADDRESS, MQTT_BIND_ADDRESS)`;
  return null;
}

/**
 * Runs a long-lived process: starts it, stops it cleanly on SIGTERM/SIGINT, and turns a
 * configuration error into one plain log line and exit code 2, a port it cannot listen on into one
 * plain line and exit code 1.
 */
export async function runService(log: Logger, start: () => Promise<{ stop(): Promise<void> }>): Promise<void> {
  try {
    const service = await start();
    const shutdown = (signal: string): void => {
      log.info(`${signal}: stopping`);
      void service.stop().then(() => process.exit(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  } catch (err) {
    if (err instanceof ConfigError) {
      log.error(`configuration: ${err.message}`);
      process.exit(2);
    }
    const port = listenFailure(err);
    if (port) {
      log.error(`cannot start: ${port}`);
      process.exit(1);
    }
    throw err;
  }
}
