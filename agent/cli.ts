#!/usr/bin/env node
import { ConfigError, readAgentConfig } from '../shared/config.js';
import { Logger } from '../shared/log.js';
import { startAgent } from './agent.js';

const log = new Logger('agent');
try {
  const config = readAgentConfig(process.env);
  const agent = await startAgent(config, log);
  const shutdown = (signal: string): void => {
    log.info(`${signal}: stopping; running tasks resume on the next start`);
    void agent.stop().then(() => process.exit(0));
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
