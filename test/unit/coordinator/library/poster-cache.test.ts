/**
 * The poster cache fetches what the coordinator shows (issue 42): the size cap holds while the bytes
 * arrive, an address is checked when it is connected to (not only when the URL was saved), and every
 * failed fetch reads the same, so the poster route is no port scanner.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PosterCache, PosterError } from '../../../../coordinator/library/poster-cache.js';
import { Logger } from '../../../../shared/log.js';
import { POSTER_FETCH_FAILED, POSTER_MAX_BYTES } from '../../../../shared/poster-fetch.js';
import type { TargetPolicy } from '../../../../shared/target-rules.js';

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-posters-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;

const strict: TargetPolicy = { allowPrivate: false, ownPort: null };
const lax: TargetPolicy = { allowPrivate: true, ownPort: null };

describe('the poster cache (issue 42)', () => {
  let server: http.Server;
  let port = 0;
  const requests: string[] = [];
  /** Bytes the server managed to hand to the socket for /huge before the client hung up. */
  let hugeSent = 0;

  before(async () => {
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === '/ok.jpg') {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.end(JPEG);
      } else if (req.url === '/huge.jpg') {
        // A chunked answer (no Content-Length) of 100 MB, written as fast as the client reads it.
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        const chunk = Buffer.alloc(64 * 1024, 0xff);
        let left = 1600;
        const pump = (): void => {
          while (left > 0) {
            left--;
            hugeSent += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        res.on('close', () => (left = 0));
        pump();
      } else if (req.url === '/slow.jpg') {
        // The headers at once, then nothing.
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.write(JPEG);
      } else if (req.url === '/text.jpg') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>router login</html>');
      } else {
        res.writeHead(404);
        res.end('not here');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const cache = (imageBase: string, policy: TargetPolicy = strict, options: ConstructorParameters<typeof PosterCache>[5] = {}): PosterCache =>
    new PosterCache(path.join(root, `posters-${++n}`), 10_000_000, imageBase, new Logger('test', true), () => policy, options);

  it('fetches a poster of the configured image server, where the admin put it (here on loopback)', async () => {
    const c = cache(`http://127.0.0.1:${port}`);
    const key = c.register('/ok.jpg') as string;
    const got = await c.get(key);
    assert.equal(got.contentType, 'image/jpeg');
    assert.deepEqual(fs.readFileSync(got.file), JPEG);
  });

  it('stops reading a chunked answer once it passes 10 MB: 100 MB are never taken in', async () => {
    const c = cache(`http://127.0.0.1:${port}`);
    hugeSent = 0;
    const err = await c.get(c.register('/huge.jpg') as string).catch((e: unknown) => e);
    assert.ok(err instanceof PosterError, String(err));
    assert.equal(err.status, 502);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // What the server could write is the cap plus what the sockets' buffers held when the client hung up.
    assert.ok(hugeSent < POSTER_MAX_BYTES + 24 * 1024 * 1024, `the server sent ${Math.round(hugeSent / 1024 / 1024)} MB`);
  });

  it('checks the address when it connects: a URL to loopback, or a name that now resolves to loopback, is not fetched', async () => {
    const before = requests.length;
    const direct = cache('https://image.invalid/t/p/w500');
    const e1 = await direct.get(direct.register(`http://127.0.0.1:${port}/ok.jpg`) as string).catch((e: unknown) => e);
    assert.ok(e1 instanceof PosterError && e1.status === 502, String(e1));
    // DNS rebinding: the name did not resolve when the override was saved; now it names loopback.
    const rebound = cache('https://image.invalid/t/p/w500', strict, {
      lookup: (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    const e2 = await rebound.get(rebound.register(`http://poster.rebind.example:${port}/ok.jpg`) as string).catch((e: unknown) => e);
    assert.ok(e2 instanceof PosterError && e2.status === 502, String(e2));
    assert.equal(requests.length, before, 'nothing reached the loopback server');
    // With allowPrivateWebhooks the same poster is fetched.
    const allowed = cache('https://image.invalid/t/p/w500', lax, {
      lookup: (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    assert.equal((await allowed.get(allowed.register(`http://poster.rebind.example:${port}/ok.jpg`) as string)).contentType, 'image/jpeg');
  });

  it('gives one answer for a closed port, a 404, no image, a refused address and a slow server', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = http.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const c = cache(`http://127.0.0.1:${port}`, lax, { timeoutMs: 300 });
    const outcomes: string[] = [];
    for (const url of [`http://127.0.0.1:${closed}/x.jpg`, `http://127.0.0.1:${port}/missing.jpg`, `http://127.0.0.1:${port}/text.jpg`, `http://127.0.0.1:${port}/slow.jpg`, `http://127.0.0.1:${port}/huge.jpg`]) {
      const err = await c.get(c.register(url) as string).catch((e: unknown) => e);
      assert.ok(err instanceof PosterError, `${url}: ${String(err)}`);
      outcomes.push(`${err.status} ${err.message}`);
    }
    const refused = cache('https://image.invalid/t/p/w500');
    const e = await refused.get(refused.register(`http://127.0.0.1:${port}/ok.jpg`) as string).catch((x: unknown) => x);
    outcomes.push(`${(e as PosterError).status} ${(e as PosterError).message}`);
    assert.deepEqual(new Set(outcomes), new Set(['502 the poster from 127.0.0.1 could not be fetched (the server is not reachable or refused, it has no such image, or the answer is no image of at most 10 MB)']));
  });

  it('logs every failed fetch in one wording: the log GET /logs serves tells no closed port from a 404, no image, a refused address or a timeout', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = http.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const lines: string[] = [];
    const log = new Logger('posters', true);
    // The sink the coordinator's log store (GET /logs) is fed by.
    log.addSink((e) => void lines.push(`${e.level} ${e.message}`));
    const make = (policy: TargetPolicy): PosterCache => new PosterCache(path.join(root, `posters-${++n}`), 10_000_000, 'https://image.invalid/t/p/w500', log, () => policy, { timeoutMs: 300 });
    const lax = make({ allowPrivate: true, ownPort: null });
    const urls = [`http://127.0.0.1:${closed}/x.jpg`, `http://127.0.0.1:${port}/missing.jpg`, `http://127.0.0.1:${port}/text.jpg`, `http://127.0.0.1:${port}/slow.jpg`, `http://127.0.0.1:${port}/huge.jpg`];
    for (const url of urls) await lax.get(lax.register(url) as string).catch(() => undefined);
    const refused = make(strict);
    const refusedUrl = `http://127.0.0.1:${port}/ok.jpg`;
    await refused.get(refused.register(refusedUrl) as string).catch(() => undefined);
    assert.deepEqual(lines, [...urls, refusedUrl].map((url) => `warn poster ${url} not fetched (${POSTER_FETCH_FAILED})`));
    assert.doesNotMatch(lines.join('\n'), /ECONNREFUSED|HTTP \d|timeout|loopback|allowPrivateWebhooks|bytes|declares|cut off/);
  });

  it('answers a slow poster server 502, not 500', async () => {
    const c = cache(`http://127.0.0.1:${port}`, strict, { timeoutMs: 300 });
    const started = Date.now();
    const err = await c.get(c.register('/slow.jpg') as string).catch((e: unknown) => e);
    assert.ok(err instanceof PosterError, String(err));
    assert.equal(err.status, 502);
    assert.ok(Date.now() - started < 2000);
  });
});
