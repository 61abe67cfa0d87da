#!/usr/bin/env node
import { readCoordinatorConfig } from '../shared/config.js';
import { Logger } from '../shared/log.js';
import { runService } from '../shared/service.js';
import { startCoordinator } from './app.js';

const log = new Logger('coordinator');
await runService(log, () => startCoordinator(readCoordinatorConfig(process.env), log));
