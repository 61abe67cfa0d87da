import { Router } from 'express';
import type { AppContext } from '../context.js';
import type { Settings } from '../system/settings-store.js';

interface SetupStep {
  step: 'metadata' | 'languages' | 'media_server' | 'webhook' | 'work_dir';
  done: boolean;
  /** The settings the wizard page of this step writes (with PUT /settings). */
  settings: (keyof Settings)[];
}

/** The first-run wizard's state: which steps have their settings, and whether setup was completed. */
export function setupState(s: Settings): { complete: boolean; steps: SetupStep[]; next: SetupStep['step'] | null } {
  const steps: SetupStep[] = [
    { step: 'metadata', done: Boolean(s.tmdbApiKey || s.omdbApiKey), settings: ['tmdbApiKey', 'omdbApiKey'] },
    // The languages have working defaults (German, then English; German subtitles), so the step never waits.
    { step: 'languages', done: s.audioLanguages.length > 0, settings: ['audioLanguages', 'subtitleLanguages', 'keepSurround', 'stereoCompanion', 'originalLanguage', 'burnForcedSubtitles'] },
    { step: 'media_server', done: Boolean(s.mediaServerType && s.mediaServerUrl), settings: ['mediaServerType', 'mediaServerUrl', 'mediaServerKey'] },
    { step: 'webhook', done: Boolean(s.webhookUrl), settings: ['webhookUrl', 'webhookKind'] },
    { step: 'work_dir', done: Boolean(s.workDir), settings: ['workDir'] },
  ];
  return { complete: s.setupComplete, steps, next: s.setupComplete ? null : (steps.find((st) => !st.done)?.step ?? null) };
}

/** GET /setup and POST /setup/complete: the wizard is shown until setup is completed (steps may be skipped). */
export function setupRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/setup', (_req, res) => {
    res.json(setupState(ctx.settings.all()));
  });
  router.post('/setup/complete', (_req, res) => {
    ctx.settings.set({ setupComplete: true });
    const state = setupState(ctx.settings.all());
    const skipped = state.steps.filter((s) => !s.done).map((s) => s.step);
    ctx.log.info(`first-run setup completed${skipped.length ? ` (skipped: ${skipped.join(', ')})` : ''}`);
    res.json(state);
  });
  return router;
}
