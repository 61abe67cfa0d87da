import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import {
  BODY_LIMITS,
  bodyLimits,
  HEADERS_DEADLINE_MS,
  JSON_BODY_BUDGET_BYTES,
  JSON_BODY_DEADLINE_MS,
  JSON_BODY_LIMIT_BYTES,
  REFUSED_LINGER_MS,
  UPLOAD_BODY_BUDGET_BYTES,
  UPLOAD_BODY_DEADLINE_MS,
} from '../../../../coordinator/http/body-limits.js';
import { KEY_BODY_LIMIT_BYTES } from '../../../../coordinator/keys/key-store.js';
import { errorHandler } from '../../../../coordinator/http/errors.js';
import { Logger } from '../../../../shared/log.js';

/** Sends a request as written and resolves with everything the server sent until it closed or `waitMs` passed. */
function exchange(port: number, head: string, body: Buffer | string, waitMs: number): Promise<{ text: string; closedAfterMs: number | null }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let closed: number | null = null;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.concat([Buffer.from(head), Buffer.from(body)])));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = Date.now() - started;
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), closedAfterMs: closed });
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('utf8'), closedAfterMs: closed });
    }, waitMs);
  });
}

const head = (p: string, length: number | 'chunked', type = 'application/json'): string =>
  `POST ${p} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n${length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`}\r\n\r\n`;

describe('request body limits (issue 42)', () => {
  it('names its limits: 1 MB JSON, 16 MB of JSON and two 64 MB uploads at once, 30 s and 10 min to arrive, 20 s for the headers', () => {
    assert.equal(JSON_BODY_LIMIT_BYTES, 1024 * 1024);
    assert.equal(JSON_BODY_BUDGET_BYTES, 16 * 1024 * 1024);
    assert.equal(UPLOAD_BODY_BUDGET_BYTES, 2 * KEY_BODY_LIMIT_BYTES);
    assert.equal(JSON_BODY_DEADLINE_MS, 30_000);
    assert.equal(UPLOAD_BODY_DEADLINE_MS, 600_000);
    assert.equal(HEADERS_DEADLINE_MS, 20_000);
    assert.equal(REFUSED_LINGER_MS, 5_000);
    assert.deepEqual(BODY_LIMITS, { jsonLimit: JSON_BODY_LIMIT_BYTES, jsonBudget: JSON_BODY_BUDGET_BYTES, jsonDeadlineMs: 30_000, uploadLimit: KEY_BODY_LIMIT_BYTES, uploadBudget: UPLOAD_BODY_BUDGET_BYTES, uploadDeadlineMs: 600_000 });
  });

  describe('on a server', () => {
    const guard = bodyLimits({ jsonLimit: 1000, jsonBudget: 1500, jsonDeadlineMs: 300, uploadLimit: 5000, uploadBudget: 5000, uploadDeadlineMs: 600 });
    let server: http.Server;
    let port = 0;
    let release: () => void = () => undefined;

    before(async () => {
      const app = express();
      app.use(guard);
      app.use(express.json({ limit: 1000 }));
      // A handler that holds its answer until the test lets it go: its body stays reserved meanwhile.
      app.post('/api/hold', (_req, res) => {
        release = () => res.json({ ok: true });
      });
      app.post('/api/echo', (req, res) => {
        res.json({ got: req.body as unknown });
      });
      app.post('/api/system/keystore', express.raw({ type: () => true, limit: 5000 }), (req, res) => {
        res.json({ bytes: (req.body as Buffer).length });
      });
      app.use(errorHandler(new Logger('test', true)));
      server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as net.AddressInfo).port;
    });
    after(() => {
      server.closeAllConnections();
      server.close();
    });

    it('refuses a declared length over the endpoint\'s limit with 413 before reading, and keeps the connection long enough to be read', async () => {
      const r = await exchange(port, head('/api/echo', 1001), 'x'.repeat(10), 1500);
      assert.match(r.text, /^HTTP\/1\.1 413 /);
      assert.match(r.text, /\r\n\r\nthe request body has 1001 bytes, more than the 1000 bytes this endpoint takes\n$/);
      assert.equal(r.closedAfterMs, null, 'not cut off while the client may still send');
      const upload = await exchange(port, head('/api/System/KeyStore/', 6000, 'application/octet-stream'), '', 300);
      assert.match(upload.text, /^HTTP\/1\.1 413 [\s\S]*\r\n\r\nthe request body has 6000 bytes, more than the 5000 bytes this endpoint takes\n$/, 'an upload path in any case, with a trailing slash');
    });

    it('takes a body within the limits, and gives its bytes back once answered', async () => {
      const r = await exchange(port, head('/api/echo', 9), '{"a":"b"}', 300);
      assert.match(r.text, /^HTTP\/1\.1 200 [\s\S]*\{"got":\{"a":"b"\}\}$/);
      assert.deepEqual(guard.inUse(), { json: 0, upload: 0 });
    });

    it('answers 503 with Retry-After when the bodies in flight would pass the budget, and takes bodies again once they are answered', async () => {
      const held = exchange(port, head('/api/hold', 900), '{"a":"' + 'x'.repeat(892) + '"}', 2000);
      // A chunked body reserves the whole limit (1000): 900 + 1000 > 1500.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(guard.inUse(), { json: 900, upload: 0 });
      const refused = await exchange(port, head('/api/echo', 'chunked'), '9\r\n{"a":"b"}\r\n0\r\n\r\n', 300);
      assert.match(refused.text, /^HTTP\/1\.1 503 [\s\S]*\r\nRetry-After: 5\r\n[\s\S]*\r\n\r\nthe coordinator is receiving 1500 bytes of request bodies already: try again in a few seconds\n$/i);
      const small = await exchange(port, head('/api/echo', 9), '{"a":"b"}', 300);
      assert.match(small.text, /^HTTP\/1\.1 200 /, '900 + 9 fit');
      release();
      await held;
      assert.deepEqual(guard.inUse(), { json: 0, upload: 0 });
      const chunked = await exchange(port, head('/api/echo', 'chunked'), '9\r\n{"a":"b"}\r\n0\r\n\r\n', 300);
      assert.match(chunked.text, /^HTTP\/1\.1 200 /);
    });

    it('answers 408 and closes the connection when a body does not arrive by its deadline, and gives its bytes back', async () => {
      const r = await exchange(port, head('/api/echo', 500), '{"a":"', 1500);
      assert.match(r.text, /^HTTP\/1\.1 408 [\s\S]*\r\nConnection: close\r\n[\s\S]*\r\n\r\nthe request body did not arrive within 0 s: refused\n$/i);
      assert.ok(r.closedAfterMs !== null && r.closedAfterMs >= 280 && r.closedAfterMs < 1000, `closed after ${r.closedAfterMs} ms`);
      assert.deepEqual(guard.inUse(), { json: 0, upload: 0 });
      const upload = await exchange(port, head('/api/system/keystore', 4000, 'application/octet-stream'), 'x'.repeat(100), 1500);
      assert.match(upload.text, /^HTTP\/1\.1 408 /);
      assert.ok(upload.closedAfterMs !== null && upload.closedAfterMs >= 580, `an upload has its own, longer deadline: closed after ${upload.closedAfterMs} ms`);
    });

    it('counts uploads apart from JSON bodies: one upload fills its budget, the next waits', async () => {
      const first = exchange(port, head('/api/system/keystore', 5000, 'application/octet-stream'), 'x'.repeat(10), 800);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(guard.inUse(), { json: 0, upload: 5000 });
      const second = await exchange(port, head('/api/system/keystore', 10, 'application/octet-stream'), 'x'.repeat(10), 300);
      assert.match(second.text, /\r\n\r\nthe coordinator is receiving other uploads \(5000 bytes\) already: try again when they are done\n$/);
      const json = await exchange(port, head('/api/echo', 9), '{"a":"b"}', 300);
      assert.match(json.text, /^HTTP\/1\.1 200 /);
      await first;
    });
  });
});
