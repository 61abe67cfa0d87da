import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { emptyCatalogue, startMetadataServer, TMDB_V3_KEY } from '../fixtures/metadata-server.js';
import { api, sleep, startCoordinator, stopAll, waitFor, world } from './harness.js';

/** The resident memory of a process in MB (/proc/<pid>/status VmRSS). */
function rssMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round(kb / 1024);
}

/** Waits until the process's memory stops growing (the server has read what the clients sent), at most `maxMs`. */
async function settledRssMb(pid: number, maxMs = 15_000): Promise<number> {
  const deadline = Date.now() + maxMs;
  let last = rssMb(pid);
  while (Date.now() < deadline) {
    await sleep(750);
    const now = rssMb(pid);
    if (Math.abs(now - last) < 3) return now;
    last = now;
  }
  return last;
}

interface SlowBody {
  socket: net.Socket;
  /** What the server answered so far (empty while it waits for the rest of the body). */
  answer(): string;
}

/**
 * A request whose body stops short of its Content-Length and then hangs: the headers and `sent` of
 * `declared` bytes go out, the rest never does. The socket stays open until the test ends it.
 */
function slowBody(port: number, p: string, type: string, declared: number, sent: number): Promise<SlowBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`POST ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${declared}\r\n\r\n`);
      socket.write(Buffer.alloc(sent, 0x20), () => resolve(slow));
    });
    const slow: SlowBody = { socket, answer: () => Buffer.concat(chunks).toString('latin1') };
    socket.on('data', (c: Buffer) => chunks.push(c));
    // A refused body: the server answers and closes while the client still writes.
    socket.on('error', () => resolve(slow));
    socket.on('close', () => resolve(slow));
  });
}

describe('API limits', () => {
  after(stopAll);

  it('limits requests per client address (X-Real-IP) with a plain-text 429 and logs it once', async () => {
    const c = await startCoordinator(world(), { RATE_LIMIT_PER_MINUTE: '5' });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await api(c.url, 'GET', '/jobs', undefined, { 'X-Real-IP': '192.0.2.10' })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    const limited = await api(c.url, 'GET', '/jobs', undefined, { 'X-Real-IP': '192.0.2.10' });
    assert.equal(limited.status, 429);
    assert.match(limited.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(limited.text, /at most 5 per minute/);
    assert.equal((await api(c.url, 'GET', '/jobs', undefined, { 'X-Real-IP': '192.0.2.11' })).status, 200, 'another client is not affected');
    await waitFor('the log line', async () => c.proc.lines.some((l) => /rate limit hit by 192\.0\.2\.10/.test(l)), 5000);
    assert.equal(c.proc.lines.filter((l) => /rate limit hit by 192\.0\.2\.10/.test(l)).length, 1, 'one log line per client per minute');
  });

  it('ignores X-Real-IP from a client that is not a trusted proxy', async () => {
    const c = await startCoordinator(world(), { RATE_LIMIT_PER_MINUTE: '3', TRUSTED_PROXIES: '192.0.2.1' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await api(c.url, 'GET', '/jobs', undefined, { 'X-Real-IP': `198.51.100.${i}` })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429], 'a new header per request does not dodge the limit');
    await waitFor('the log line', async () => c.proc.lines.some((l) => /rate limit hit by 127\.0\.0\.1/.test(l)), 5000);
  });

  it('answers unknown paths outside /api and bad settings with plain text', async () => {
    // A TMDB key is tried when saved (issue 38): against the loopback stand-in, never the internet.
    const meta = await startMetadataServer(emptyCatalogue());
    after(() => meta.close());
    const c = await startCoordinator(world(), { TMDB_BASE_URL: meta.tmdbBase });
    const root = await api(c.url.replace(/\/api$/, ''), 'GET', '/jobs');
    assert.equal(root.status, 404);
    assert.match(root.text, /the API lives under \/api/);
    const bad = await api(c.url, 'PUT', '/settings', { keepOriginal: 'yes' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /keepOriginal.*boolean/);
    const unknown = await api(c.url, 'PUT', '/settings', { nope: 1 });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /unknown setting "nope"/);
    const secret = await api<Record<string, unknown>>(c.url, 'PUT', '/settings', { tmdbApiKey: TMDB_V3_KEY });
    assert.equal(secret.body.tmdbApiKey, '********', 'secrets never come back');
    const again = await api<Record<string, unknown>>(c.url, 'PUT', '/settings', { tmdbApiKey: '********', keepOriginal: true });
    assert.equal(again.body.keepOriginal, true);
    assert.ok(!c.proc.lines.some((l) => l.includes(TMDB_V3_KEY)), 'the key never reaches the log');
  });

  it('holds no more than the body budget for slow bodies, answering the rest 503 at once (issue 42)', async () => {
    const c = await startCoordinator(world());
    const pid = c.proc.child.pid as number;
    const before = await settledRssMb(pid, 3000);
    // 300 JSON bodies of 1 MB (the JSON limit) that never finish.
    const json = await Promise.all(Array.from({ length: 300 }, () => slowBody(c.port, '/api/settings', 'application/json', 1024 * 1024, 1024 * 1024 - 16)));
    const afterJson = await settledRssMb(pid);
    // 12 key store uploads that declare 60 MB and send 40 MB of it.
    const uploads: SlowBody[] = [];
    for (let i = 0; i < 12; i++) uploads.push(await slowBody(c.port, '/api/system/keystore', 'application/octet-stream', 60 * 1024 * 1024, 40 * 1024 * 1024));
    const afterUploads = await settledRssMb(pid);
    const refused = (list: SlowBody[]) => list.filter((b) => b.answer().startsWith('HTTP/1.1 503')).length;
    const figures = `RSS ${before} MB, with 300 slow JSON bodies ${afterJson} MB, with 12 slow uploads ${afterUploads} MB; refused ${refused(json)} JSON, ${refused(uploads)} uploads`;
    for (const b of [...json, ...uploads]) b.socket.destroy();
    // Held: the budget (16 MB, 2 × 40 MB); the rest is what the refused bodies pass through on their way
    // to being discarded, garbage not yet given back. Before the budget: +320 MB and +480 MB.
    assert.ok(afterJson - before < 100, `slow JSON bodies hold at most their 16 MB budget: ${figures}`);
    assert.ok(afterUploads - afterJson < 160, `slow uploads hold at most their 128 MB budget: ${figures}`);
    assert.ok(refused(json) >= 280, figures);
    assert.equal(refused(uploads), 10, figures);
    const answer = json.find((b) => b.answer().startsWith('HTTP/1.1 503'))?.answer() ?? '';
    assert.match(answer, /\r\nretry-after: \d+\r\n/i);
    assert.match(answer, /\r\n\r\nthe coordinator is receiving 16 MB of request bodies already: try again in a few seconds\n$/);
    const upload = uploads.find((b) => b.answer().startsWith('HTTP/1.1 503'))?.answer() ?? '';
    assert.match(upload, /\r\n\r\nthe coordinator is receiving other uploads \(128 MB\) already: try again when they are done\n$/);
    assert.equal((await api(c.url, 'GET', '/health')).status, 200, 'the API still answers');
    console.log(`    ${figures}`);
  });

  it('refuses folder settings outside MEDIA_ROOT and keeps the stored value', async () => {
    const w = world();
    const c = await startCoordinator(w);
    const good = await api<Record<string, unknown>>(c.url, 'PUT', '/settings', { workDir: `${w.media}/raw`, quickPickMusic: 'Musik/CDs' });
    assert.equal(good.status, 200, good.text);
    for (const [body, reason] of [
      [{ workDir: '/etc' }, /workDir refused: path must lie under/],
      [{ workDir: `${w.media}/../x` }, /workDir refused/],
      [{ quickPickMovies: '../Filme' }, /quickPickMovies refused/],
      [{ quickPickSeries: '/srv/Serien' }, /quickPickSeries must be a folder name below/],
    ] as const) {
      const r = await api(c.url, 'PUT', '/settings', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.text, reason);
    }
    const now = await api<Record<string, unknown>>(c.url, 'GET', '/settings');
    assert.equal(now.body.workDir, `${w.media}/raw`);
    assert.equal(now.body.quickPickMusic, 'Musik/CDs');
    assert.equal(now.body.quickPickMovies, 'Filme');
  });
});
