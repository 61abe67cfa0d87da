import { Router } from 'express';
import type { AppContext } from '../context.js';
import { recommendPreset, type Situation } from '../workers/preset-recommendation.js';

const SITUATIONS: Situation[] = ['dvd', 'bluray', 'uhd'];

/** GET /presets: each worker's HandBrake presets (Hardware category included) and a recommendation with its reason. */
export function presetsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/presets', (_req, res) => {
    res.json({
      current: ctx.settings.get('transcodePreset'),
      workers: ctx.fleet.list().map((a) => {
        const caps = a.status?.capabilities;
        const categories = (caps?.presets ?? []).map((c) => ({ name: c.category, presets: c.presets }));
        const known = new Set(categories.flatMap((c) => c.presets));
        const families = caps?.encoders ?? [];
        const by = Object.fromEntries(SITUATIONS.map((s) => [s, recommendPreset(s, known, families)]));
        return { name: a.name, node: a.node, online: a.online, encoders: families, categories, recommendation: by.bluray, recommendations: by };
      }),
    });
  });
  return router;
}
