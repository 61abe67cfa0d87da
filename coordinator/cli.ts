#!/usr/bin/env node
import { readCoordinatorConfig } from '../shared/config.js';
import { Logger } from '../shared/log.js';
import { runService } from '../shared/service.js';
import { startCoordinator } from './app.js';
import { startMemoryRelease } from './memory-release.js';

const log = new Logger('coordinator');
await runService(log, async () => {
  const coordinator = await startCoordinator(readCoordinatorConfig(process.env), log);
  const release = startMemoryRelease(coordinator.ctx.db, log.child('memory'));
  return {
    async stop() {
      release.stop();
      await coordinator.stop();
    },
  };
});
