import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setupState } from '../../../../coordinator/routes/setup.js';
import { SETTING_DEFAULTS, type Settings } from '../../../../coordinator/system/settings-store.js';
import { parseGithubLatest, parseMakemkvPage, parseNodeIndex, UPDATE_CACHE_MS, UpdateChecker } from '../../../../coordinator/integrations/update-check.js';
import { Logger } from '../../../../shared/log.js';

describe('update source parsers', () => {
  it('reads GitHub releases/latest, MakeMKV\'s download page and the Node.js index', () => {
    assert.equal(parseGithubLatest(JSON.stringify({ tag_name: '1.8.2', name: 'HandBrake 1.8.2', prerelease: false })), '1.8.2');
    assert.equal(parseGithubLatest(JSON.stringify({ tag_name: 'v2.0.0' })), '2.0.0');
    assert.equal(parseGithubLatest('{"message":"API rate limit exceeded"}'), null);
    assert.equal(parseMakemkvPage('<li>MakeMKV 1.17.7 for Windows</li><p>MakeMKV v1.17.8 (21.8.2024)</p><p>MakeMKV 1.9.10</p>'), '1.17.8');
    const index = JSON.stringify([{ version: 'v22.11.0', lts: 'Jod' }, { version: 'v20.20.1', lts: 'Iron' }, { version: 'v20.9.0', lts: 'Iron' }]);
    assert.equal(parseNodeIndex(index, '20.20.0'), '20.20.1');
    assert.equal(parseNodeIndex(index, null), '22.11.0');
  });
});

describe('update checker', () => {
  let server: http.Server;
  let base = '';
  let answer: { status: number; body: string } = { status: 200, body: JSON.stringify({ tag_name: '1.8.2' }) };
  let hits = 0;
  before(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('caches 12 hours, then asks again; a failing source keeps its last answer, marked', async () => {
    let now = Date.parse('2026-11-23T08:00:00Z');
    const logs: string[] = [];
    const log = new Logger('t', true);
    log.addSink((e) => logs.push(e.message));
    const checker = new UpdateChecker([{ tool: 'HandBrakeCLI', url: `${base}/latest`, parse: parseGithubLatest }], log, () => now);
    const first = await checker.check({ HandBrakeCLI: '1.6.1' });
    assert.deepEqual(first, [{ tool: 'HandBrakeCLI', installed: '1.6.1', latest: '1.8.2', update_available: true, source: `${base}/latest`, checked_at: '2026-11-23T08:00:00.000Z', error: null }]);
    now += UPDATE_CACHE_MS - 1000;
    await checker.check({ HandBrakeCLI: '1.6.1' });
    assert.equal(hits, 1, 'within 12 hours the cache answers');
    now += 2000;
    answer = { status: 503, body: '{}' };
    const stale = await checker.check({ HandBrakeCLI: '1.8.2' });
    assert.equal(hits, 2);
    assert.equal(stale[0].latest, '1.8.2', 'the last answer is kept');
    assert.equal(stale[0].checked_at, '2026-11-23T08:00:00.000Z');
    assert.equal(stale[0].error, 'it answered 503');
    assert.equal(stale[0].update_available, false);
    assert.ok(logs.some((l) => /update check for HandBrakeCLI .* failed: it answered 503; the last answer is kept/.test(l)));
    await checker.check({});
    assert.equal(hits, 2, 'a failed source is not asked again within a minute');
    answer = { status: 200, body: JSON.stringify({ tag_name: '1.9.0' }) };
    now += 61_000;
    const fresh = await checker.check({ HandBrakeCLI: '1.8.2' });
    assert.deepEqual([fresh[0].latest, fresh[0].error, fresh[0].update_available], ['1.9.0', null, true]);
  });
});

describe('first-run setup state', () => {
  it('lists the steps, the next one, and completes even with skipped steps', () => {
    const s: Settings = { ...SETTING_DEFAULTS };
    const fresh = setupState(s);
    assert.equal(fresh.complete, false);
    assert.equal(fresh.next, 'metadata');
    assert.deepEqual(fresh.steps.map((x) => [x.step, x.done]), [['metadata', false], ['languages', true], ['media_server', false], ['webhook', false], ['work_dir', false]]);
    const some = setupState({ ...s, tmdbApiKey: 'k', mediaServerType: 'jellyfin', mediaServerUrl: 'http://jf:8096' });
    assert.equal(some.next, 'webhook');
    assert.equal(setupState({ ...s, setupComplete: true }).next, null);
  });
});
