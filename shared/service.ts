import { ConfigError } from './config.js';
import { Logger } from './log.js';

/**
 * Runs a long-lived process: starts it, stops it cleanly on SIGTERM/SIGINT, and turns a
 * configuration error into one plain log line and exit code 2.
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
    throw err;
  }
}
