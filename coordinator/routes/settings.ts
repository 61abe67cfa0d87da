import path from 'node:path';
import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError, mediaDir, objectBody } from '../http/errors.js';
import { MEDIA_SERVER_KINDS, type MediaServerKind } from '../integrations/library-refresh.js';
import { WEBHOOK_KINDS } from '../integrations/webhook.js';
import { keepKeyForHost, SECRET_MASK, SECRET_SETTINGS, SettingsError, URL_SETTINGS, isSettingName, restoreMaskedUrl, validateSetting, type Settings } from '../system/settings-store.js';
import { checkTarget } from '../../shared/target-rules.js';
import { checkMirrorFolder } from '../metadata/thediscdb/mirror.js';
import { haPrefixProblem } from '../mqtt/topic-rights.js';
import { presetRefusal, type PresetLists } from '../workers/preset-check.js';
import { keyRefusal } from '../system/setting-live-checks.js';
import { mediaServerRefusal } from '../system/media-server-check.js';

/** Every known worker's last reported presets (an offline worker keeps the list it sent last). */
export function presetLists(ctx: AppContext): PresetLists[] {
  return ctx.fleet.list().map((a) => ({
    name: a.name,
    online: a.online,
    presets: (a.status?.capabilities?.presets ?? []).flatMap((c) => c.presets),
    encoders: a.status?.capabilities?.encoders ?? [],
  }));
}

/** /settings: the key-value settings; secrets are shown masked and a masked value sent back keeps the stored one. */
export function settingsRouter(ctx: AppContext): Router {
  const router = Router();
  router.get('/settings', (_req, res) => {
    res.json(ctx.settings.publicView());
  });
  const update = async (body: Record<string, unknown>): Promise<void> => {
    let values: Partial<Settings> = {};
    for (const [name, value] of Object.entries(body)) {
      if (!isSettingName(name)) throw new HttpError(400, `unknown setting "${name}"`);
      if (SECRET_SETTINGS.has(name) && value === SECRET_MASK) continue;
      try {
        const valid = validateSetting(name, value);
        // The mask with spaces around it is still the mask.
        if (SECRET_SETTINGS.has(name) && valid === SECRET_MASK) continue;
        (values as Record<string, unknown>)[name] = URL_SETTINGS.has(name) && typeof valid === 'string' ? restoreMaskedUrl(name, valid, String(ctx.settings.get(name))) : valid;
      } catch (err) {
        if (err instanceof SettingsError) throw new HttpError(400, err.message);
        throw err;
      }
    }
    // A kept secret only for the host it was saved for: another host brings its own key.
    try {
      values = keepKeyForHost(values, ctx.settings.all());
    } catch (err) {
      if (err instanceof SettingsError) throw new HttpError(400, err.message);
      throw err;
    }
    if (values.mediaServerType !== undefined && !MEDIA_SERVER_KINDS.includes(values.mediaServerType)) throw new HttpError(400, 'mediaServerType must be jellyfin, emby, plex, kodi or empty');
    if (values.mediaServerUrl && !(URL.canParse(values.mediaServerUrl) && /^https?:$/.test(new URL(values.mediaServerUrl).protocol))) throw new HttpError(400, 'mediaServerUrl must be an http or https URL');
    if (values.webhookKind !== undefined && !WEBHOOK_KINDS.includes(values.webhookKind)) throw new HttpError(400, `webhookKind must be one of ${WEBHOOK_KINDS.join(', ')}`);
    if (values.webhookUrl) {
      const ok = URL.canParse(values.webhookUrl) && /^https?:$/.test(new URL(values.webhookUrl).protocol);
      if (!ok) throw new HttpError(400, 'webhookUrl must be an http or https URL');
    }
    // A webhook that would reach this machine, its API or a link-local address is refused here already (and again when sending).
    if (values.webhookUrl) {
      const reason = await checkTarget(values.webhookUrl, ctx.notifier.policy(values.allowPrivateWebhooks ?? ctx.settings.get('allowPrivateWebhooks')));
      if (reason) throw new HttpError(400, `webhookUrl refused: ${reason}`);
    }
    // Home Assistant's credential may read <prefix>/#: the prefix must stay out of Ripwerk's own tree.
    const prefixProblem = values.homeAssistantPrefix === undefined ? null : haPrefixProblem(values.homeAssistantPrefix);
    if (prefixProblem) throw new HttpError(400, prefixProblem);
    // Folders are checked like the paths of POST /jobs: under MEDIA_ROOT, no "..", no symlink escape.
    if (values.workDir) values.workDir = await mediaDir(ctx.config.mediaRoot, values.workDir, 'workDir');
    for (const name of ['quickPickMovies', 'quickPickSeries', 'quickPickMusic'] as const) {
      const sub = values[name];
      if (sub === undefined) continue;
      if (!sub.trim() || path.isAbsolute(sub)) throw new HttpError(400, `${name} must be a folder name below ${ctx.config.mediaRoot}, such as "Filme"`);
      await mediaDir(ctx.config.mediaRoot, path.join(ctx.config.mediaRoot, sub), name);
    }
    // The offline TheDiscDB copy must be a folder that is there now (the coordinator reads it, not an agent).
    if (values.thediscdbMirror) {
      const reason = await checkMirrorFolder(values.thediscdbMirror);
      if (reason) throw new HttpError(400, reason);
    }
    // A preset no worker knows fails every later job after its rip: it is refused now (issue 38).
    if (values.transcodePreset !== undefined && values.transcodePreset !== ctx.settings.get('transcodePreset')) {
      const refusal = presetRefusal(values.transcodePreset, presetLists(ctx));
      if (refusal) throw new HttpError(400, refusal.text, refusal.code, refusal.params);
    }
    // Keys are tried with their service before they replace the stored one.
    for (const name of ['tmdbApiKey', 'omdbApiKey'] as const) {
      const key = values[name];
      if (key === undefined || key === ctx.settings.get(name)) continue;
      const refusal = await keyRefusal(name, key, { tmdb: ctx.config.tmdbBaseUrl, tmdbImages: ctx.config.tmdbImageBaseUrl, omdb: ctx.config.omdbBaseUrl });
      if (refusal) throw new HttpError(400, refusal.text, refusal.code, refusal.params);
    }
    // The media server is asked with the address and key it will get after each rip, when one of them changes.
    const now = ctx.settings.all();
    const media = { kind: values.mediaServerType ?? now.mediaServerType, url: values.mediaServerUrl ?? now.mediaServerUrl, key: values.mediaServerKey ?? now.mediaServerKey };
    const mediaChanged = (['mediaServerType', 'mediaServerUrl', 'mediaServerKey'] as const).some((n) => values[n] !== undefined && values[n] !== now[n]);
    if (mediaChanged && media.kind && media.url) {
      const refusal = await mediaServerRefusal(media.kind as MediaServerKind, media.url, media.key);
      if (refusal) throw new HttpError(400, refusal.text, refusal.code, refusal.params);
    }
    ctx.settings.set(values);
    if (values.thediscdbMirror !== undefined) void ctx.metadata.mirror.refresh();
    if (values.ripperAppKey !== undefined) void ctx.dispatcher.publishKeys();
    ctx.log.info(`settings changed: ${Object.keys(values).join(', ') || 'nothing'}`);
  };
  router.put('/settings', async (req, res) => {
    await update(objectBody(req));
    res.json(ctx.settings.publicView());
  });
  router.post('/settings', async (req, res) => {
    await update(objectBody(req));
    res.json(ctx.settings.publicView());
  });
  return router;
}
