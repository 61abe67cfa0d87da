import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError, objectBody } from '../http.js';
import { SECRET_MASK, SECRET_SETTINGS, SettingsError, isSettingName, validateSetting, type Settings } from '../settings-store.js';

/** /settings: the key-value settings; secrets are shown masked and a masked value sent back keeps the stored one. */
export function settingsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/settings', (_req, res) => {
    res.json(ctx.settings.publicView());
  });
  const update = (body: Record<string, unknown>): void => {
    const values: Partial<Settings> = {};
    for (const [name, value] of Object.entries(body)) {
      if (!isSettingName(name)) throw new HttpError(400, `unknown setting "${name}"`);
      if (SECRET_SETTINGS.has(name) && value === SECRET_MASK) continue;
      try {
        (values as Record<string, unknown>)[name] = validateSetting(name, value);
      } catch (err) {
        if (err instanceof SettingsError) throw new HttpError(400, err.message);
        throw err;
      }
    }
    ctx.settings.set(values);
    ctx.log.info(`settings changed: ${Object.keys(values).join(', ') || 'nothing'}`);
  };
  router.put('/settings', (req, res) => {
    update(objectBody(req));
    res.json(ctx.settings.publicView());
  });
  router.post('/settings', (req, res) => {
    update(objectBody(req));
    res.json(ctx.settings.publicView());
  });
  return router;
}
