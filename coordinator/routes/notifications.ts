import { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError } from '../http/errors.js';
import { WebhookError } from '../integrations/webhook.js';

/** /notifications: a test message through the configured webhook. */
export function notificationsRouter(ctx: AppContext): Router {
  const router = Router();
  router.post('/notifications/test', async (_req, res) => {
    if (!ctx.settings.get('webhookUrl')) throw new HttpError(409, 'no webhook is set: save webhookUrl in the settings first');
    try {
      const sent = await ctx.notifier.send({ id: 'test', title: 'Ripwerk test', status: 'test', error: null, output_path: null, device: null, finished_at: new Date().toISOString() });
      res.json({ sent: true, kind: sent.kind });
    } catch (err) {
      // Only whether it was delivered: the target's status or reachability would make this a port scanner.
      if (err instanceof WebhookError) throw new HttpError(err.refused ? 400 : 502, err.message);
      throw err;
    }
  });
  return router;
}
