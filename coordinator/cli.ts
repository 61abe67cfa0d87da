#!/usr/bin/env node
import { ConfigError, readCoordinatorConfig } from '../shared/config.js';
import { Logger } from '../shared/log.js';
import { startCoordinator } from './app.js';

const log = new Logger('coordinator');
try {
  const coordinator = await startCoordinator(readCoordinatorConfig(process.env), log);
  const shutdown = (signal: string): void => {
    log.info(`${signal}: stopping`);
    void coordinator.stop().then(() => process.exit(0));
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
