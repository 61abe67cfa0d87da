#!/usr/bin/env node
// One process for a single-host home: the coordinator with its embedded broker plus a local agent.
import { ConfigError, readAgentConfig, readCoordinatorConfig } from '../shared/config.js';
import { Logger } from '../shared/log.js';
import { startAgent } from '../agent/agent.js';
import { startCoordinator } from './app.js';

const log = new Logger('coordinator');
try {
  const coordinatorConfig = readCoordinatorConfig(process.env);
  const agentConfig = readAgentConfig(process.env);
  const coordinator = await startCoordinator(coordinatorConfig, log);
  const agent = await startAgent({ ...agentConfig, mqttUrl: process.env.MQTT_URL ? agentConfig.mqttUrl : coordinator.mqttUrl }, new Logger('agent'));
  log.info(`Ripwerk is up: API at http://localhost:${coordinator.port}/api (agent ${agent.node})`);
  const shutdown = (signal: string): void => {
    log.info(`${signal}: stopping`);
    void agent
      .stop()
      .then(() => coordinator.stop())
      .then(() => process.exit(0));
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
