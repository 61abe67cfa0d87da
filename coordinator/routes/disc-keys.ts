import express, { Router } from 'express';
import type { AppContext } from '../context.js';
import { HttpError, objectBody } from '../http/errors.js';
import { KEY_BODY_LIMIT_BYTES } from '../keys/key-store.js';
import { isBareFileName } from '../../shared/media-paths.js';
import { keydbEntryCount } from '../keys/keydb-titles.js';

/**
 * /system/keystore, /system/keydb, /system/aacs-dumps: disc-key material (the service ships no keys and downloads none). POST /system/keystore
 * takes the archive itself as the body; KEYDB.cfg comes as JSON; AACS dumps written by the workers'
 * ripper are listed and downloaded.
 */
export function discKeysRouter(ctx: AppContext): Router {
  const router = Router();
  const { keys, fleet } = ctx;

  const workers = () => fleet.list().map((a) => ({ name: a.name, node: a.node, online: a.online, schluessel: a.status?.capabilities?.schluessel ?? null }));

  router.get('/system/keystore', async (_req, res) => {
    res.json({ ...(await keys.keystoreStatus()), workers: workers() });
  });

  router.post('/system/keystore', express.raw({ type: () => true, limit: KEY_BODY_LIMIT_BYTES }), async (req, res) => {
    const body = req.body as unknown;
    if (!Buffer.isBuffer(body) || body.length === 0) throw new HttpError(400, 'send the key store archive itself as the request body (not JSON, not multipart)');
    const status = await keys.installKeystore(body);
    ctx.log.info(`key store installed: ${status.schluessel} hashed-key file(s); handing it to the workers`);
    await ctx.dispatcher.publishKeys();
    res.json({ ...status, workers: workers() });
  });

  router.get('/system/keydb', async (_req, res) => {
    res.json(await keys.keydbStatus());
  });

  router.post('/system/keydb', express.json({ limit: KEY_BODY_LIMIT_BYTES }), async (req, res) => {
    const content = objectBody(req).content;
    if (typeof content !== 'string' || content.trim() === '') throw new HttpError(400, 'send {"content": "<the text of KEYDB.cfg>"}: content must be a non-empty string');
    // Parsed first: a file without a single entry (a text file under the name KEYDB.cfg) replaces nothing.
    if (keydbEntryCount(content) === 0) throw new HttpError(400, 'no KEYDB entries found: the file has no disc entry (0x<disc id> = …) and no key line (| DK |, | PK |, | HC |); the installed KEYDB.cfg is kept', 'keydbEmpty');
    const status = await keys.setKeydb(content);
    ctx.log.info(`KEYDB.cfg stored (${status.entries} entries)`);
    await ctx.dispatcher.publishKeys();
    res.json(status);
  });

  router.delete('/system/keydb', async (_req, res) => {
    if (!(await keys.removeKeydb())) throw new HttpError(404, 'there is no KEYDB.cfg to remove');
    ctx.log.info('KEYDB.cfg removed');
    await ctx.dispatcher.publishKeys();
    res.json(await keys.keydbStatus());
  });

  router.get('/system/aacs-dumps', async (_req, res) => {
    res.json(await keys.listDumps());
  });

  router.get('/system/aacs-dumps/:dateiname', async (req, res) => {
    const name = String(req.params.dateiname);
    // A name that can be no dump's (a NUL, a slash, a leading dot) is a bad request, not a missing file.
    if (!isBareFileName(name)) throw new HttpError(400, 'an AACS dump name is a bare file name: no NUL, slash or backslash, no leading dot');
    const file = await keys.dumpPath(name);
    if (!file) throw new HttpError(404, `no AACS dump named "${name.slice(0, 200)}"`);
    await new Promise<void>((resolve, reject) => {
      res.sendFile(file, { dotfiles: 'allow', headers: { 'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}` } }, (err) => (err ? reject(err) : resolve()));
    });
  });

  return router;
}
