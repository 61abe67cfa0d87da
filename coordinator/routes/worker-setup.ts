import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { Router, type Request } from 'express';
import type { AppContext } from '../context.js';
import { HttpError } from '../http/errors.js';
import { pathMapAdvice } from '../mounts/path-map-advice.js';
import { DesktopExe } from '../workers/setup/desktop-exe.js';
import { desktopInstaller, INSTALLER_FILE_NAME } from '../workers/setup/installer-script.js';
import { setupOrigin, type SetupOrigin } from '../workers/setup/origin.js';
import { PACKAGE_FILE_NAME, workerPackage } from '../workers/setup/package-zip.js';

/** dist/native-worker/ripwerk-worker.cjs, made by `npm run build` (scripts/build-native-worker.mjs). */
export const WORKER_BUNDLE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'native-worker', 'ripwerk-worker.cjs');
const PACKAGE_JSON = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'package.json');

function appVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(PACKAGE_JSON, 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * /worker-setup/*: what a worker on another host needs. Its path map (pfad-map) comes from the mounts
 * this service attached. The native worker for a desktop without containers comes as a zip for
 * Node.js 20 (paket), as a PowerShell installer (desktop) and as a Windows executable (desktop-exe). The broker secret is never part of an answer: the files say where
 * it is (DATA_DIR/broker-secret on the coordinator host, or RIPWERK_BROKER_SECRET).
 */
export function workerSetupRouter(ctx: AppContext): Router {
  const router = Router();
  const exe = new DesktopExe(path.join(ctx.config.dataDir, 'worker-setup'), WORKER_BUNDLE, ctx.log.child('worker-setup'));
  const origin = (req: Request): SetupOrigin => setupOrigin(req, ctx.dispatcher.brokerUrl, ctx.config.trustedProxies);
  const bundlePresent = (): void => {
    if (!fs.existsSync(WORKER_BUNDLE)) throw new HttpError(503, `the worker bundle ${WORKER_BUNDLE} is missing: run "npm run build" on the coordinator host`);
  };

  // RIPWERK_PATH_MAP for an external worker, derived from the mounts this service attached (a saved
  // mount whose last attempt failed is not attached and maps nothing).
  router.get('/worker-setup/pfad-map', (_req, res) => {
    res.json(pathMapAdvice(ctx.mounts.store.all().filter((m) => m.state === 'active')));
  });

  // Where a worker on another host connects: the broker as this coordinator runs it (its real port,
  // the caller's host name for a loopback broker), and whether workers get own credentials here.
  router.get('/worker-setup/broker', (req, res) => {
    const o = origin(req);
    res.json({ mqtt_url: o.mqttUrl, coordinator_url: o.coordinatorUrl, own_credentials: ctx.broker !== null });
  });

  // The worker for Node.js 20 as a zip, the broker prefilled in config/worker.json.
  router.get('/worker-setup/paket', async (req, res) => {
    const o = origin(req);
    bundlePresent();
    res.status(200);
    res.attachment(PACKAGE_FILE_NAME);
    res.type('application/zip');
    await pipeline(workerPackage(WORKER_BUNDLE, o, { mediaRoot: ctx.config.mediaRoot, rawDir: ctx.config.rawDir }, appVersion()), res);
  });

  // The PowerShell installer for Windows (the desktop operating system family of the spec).
  router.get('/worker-setup/desktop', (req, res) => {
    const script = desktopInstaller(origin(req));
    res.status(200);
    res.attachment(INSTALLER_FILE_NAME);
    res.type('text/plain; charset=utf-8');
    res.send(script);
  });

  // The Windows executable: built on the first request (10-20 s), then served from the cache.
  router.get('/worker-setup/desktop-exe', async (_req, res) => {
    bundlePresent();
    const file = await exe.file();
    res.attachment('ripwerk-worker.exe');
    res.type('application/vnd.microsoft.portable-executable');
    // DATA_DIR may lie under a dot folder (.data): allow it.
    await new Promise<void>((resolve, reject) => res.sendFile(file, { dotfiles: 'allow', lastModified: false, cacheControl: false }, (err) => (err ? reject(err) : resolve())));
  });

  return router;
}
