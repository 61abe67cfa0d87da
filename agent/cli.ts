#!/usr/bin/env node
import { readAgentConfig } from '../shared/config.js';
import { Logger } from '../shared/log.js';
import { runService } from '../shared/service.js';
import { startAgent } from './agent.js';
import { openSqliteTaskStore } from './store/agent-store.js';

// Running tasks are interrupted on stop and resume (transcodes) or fail (rips) on the next start.
const log = new Logger('agent');
await runService(log, () => startAgent(readAgentConfig(process.env), log, openSqliteTaskStore));
