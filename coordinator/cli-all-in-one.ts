#!/usr/bin/env node
// One process for a single-host home: the coordinator with its embedded broker plus a local agent,
// whose log lines land in the same log (GET /logs).
import { readAgentConfig, readCoordinatorConfig } from '../shared/config.js';
import { Logger } from '../shared/log.js';
import { runService } from '../shared/service.js';
import { startAgent } from '../agent/agent.js';
import { openSqliteTaskStore } from '../agent/store/agent-store.js';
import { startCoordinator } from './app.js';

const log = new Logger('coordinator');
await runService(log, async () => {
  const coordinatorConfig = readCoordinatorConfig(process.env);
  const agentConfig = readAgentConfig(process.env);
  const coordinator = await startCoordinator(coordinatorConfig, log);
  // On the embedded broker the local agent gets its own credentials, issued afresh at every start.
  const mqttCredentials = await coordinator.localAgentCredentials(agentConfig);
  const agent = await startAgent(
    { ...agentConfig, mqttUrl: coordinatorConfig.mqttUrl ? agentConfig.mqttUrl : coordinator.mqttUrl, mqttCredentials, brokerSecret: mqttCredentials ? null : coordinator.brokerSecret },
    log.child('agent'),
    openSqliteTaskStore,
    // On the embedded broker the local agent's connection stays inside the process, like the coordinator's.
    { mqttInProcess: coordinator.mqttInProcess },
  );
  log.info(`Ripwerk is up: API at http://localhost:${coordinator.port}/api (agent ${agent.node})`);
  return {
    async stop() {
      await agent.stop();
      await coordinator.stop();
    },
  };
});
