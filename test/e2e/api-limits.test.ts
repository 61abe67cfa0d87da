import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { api, startCoordinator, stopAll, waitFor, world } from './harness.js';

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
    const c = await startCoordinator(world());
    const root = await api(c.url.replace(/\/api$/, ''), 'GET', '/jobs');
    assert.equal(root.status, 404);
    assert.match(root.text, /the API lives under \/api/);
    const bad = await api(c.url, 'PUT', '/settings', { keepOriginal: 'yes' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /keepOriginal.*boolean/);
    const unknown = await api(c.url, 'PUT', '/settings', { nope: 1 });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /unknown setting "nope"/);
    const secret = await api<Record<string, unknown>>(c.url, 'PUT', '/settings', { tmdbApiKey: 'abcdef0123456789abcdef0123456789' });
    assert.equal(secret.body.tmdbApiKey, '********', 'secrets never come back');
    const again = await api<Record<string, unknown>>(c.url, 'PUT', '/settings', { tmdbApiKey: '********', keepOriginal: true });
    assert.equal(again.body.keepOriginal, true);
    assert.ok(!c.proc.lines.some((l) => l.includes('abcdef0123456789abcdef0123456789')), 'the key never reaches the log');
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
