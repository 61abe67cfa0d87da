import type { Device } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, dvdImage, freePort, insertDisc, startAgent, startCoordinator, stopAll, waitFor, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';

interface Hit { method: string; url: string; type: string; body: string; auth: string }

describe('webhooks on job end and the test notification', () => {
  let w: World;
  let c: CoordinatorHandle;
  let flur: AgentHandle;
  let target: http.Server;
  let base: string;
  const hits: Hit[] = [];
  let answer = 204;

  before(async () => {
    target = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hits.push({ method: req.method ?? '', url: req.url ?? '', type: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('utf8'), auth: req.headers.authorization ?? '' });
        res.statusCode = answer;
        res.end();
      });
    });
    const port = await freePort();
    await new Promise<void>((resolve) => target.listen(port, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${port}`;
    w = world();
    c = await startCoordinator(w);
    flur = await startAgent(w, c.mqttUrl, 'flur');
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodeEnabled: false, autoEject: false })).status, 200);
  });
  after(async () => {
    target.close();
    await stopAll();
  });

  it('refuses a test without a webhook, and a webhook that is no http URL', async () => {
    const none = await api(c.url, 'POST', '/notifications/test');
    assert.equal(none.status, 409);
    assert.equal(none.text, 'no webhook is set: save webhookUrl in the settings first\n');
    assert.equal((await api(c.url, 'PUT', '/settings', { webhookUrl: 'ftp://x/y' })).status, 400);
    assert.equal((await api(c.url, 'PUT', '/settings', { webhookKind: 'telegram' })).status, 400);
  });

  it('refuses a webhook on this machine until allowPrivateWebhooks is on, and never the API itself', async () => {
    const loopback = await api(c.url, 'PUT', '/settings', { webhookUrl: `${base}/api/webhooks/42/secret-token` });
    assert.equal(loopback.status, 400);
    assert.equal(loopback.text, 'webhookUrl refused: it points at a loopback address (127.0.0.1); turn on the setting allowPrivateWebhooks if that is really where it should go\n');
    const byName = await api(c.url, 'PUT', '/settings', { webhookUrl: `http://localhost:${new URL(base).port}/hook` });
    assert.match(byName.text, /^webhookUrl refused: it points at a loopback address/, 'a name is resolved first');
    const self = await api(c.url, 'PUT', '/settings', { webhookUrl: `http://127.0.0.1:${c.port}/api/jobs`, allowPrivateWebhooks: true });
    assert.equal(self.status, 400);
    assert.match(self.text, /^webhookUrl refused: it points at this Ripwerk itself/);
    assert.equal((await api<Record<string, unknown>>(c.url, 'GET', '/settings')).body.allowPrivateWebhooks, false, 'nothing of the refused request was stored');
    assert.equal((await api(c.url, 'PUT', '/settings', { allowPrivateWebhooks: true })).status, 200);
  });

  it('posts Discord JSON {content} when a job ends, and the test message', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { webhookUrl: `${base}/api/webhooks/42/secret-token` })).status, 200);
    insertDisc(flur.driveDir, dvdImage('HOOK_MOVIE', [6]));
    const device = 'flur-drive-flur';
    await waitFor('the disc', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device && d.disc), 30_000);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, year: 2020 });
    await waitForStatus(c.url, created.body.id, ['completed']);
    const hit = await waitFor('the webhook', async () => hits.find((h) => h.url === '/api/webhooks/42/secret-token'));
    assert.equal(hit.type, 'application/json');
    assert.deepEqual(JSON.parse(hit.body), { content: `Ripwerk: "Hook Movie" is ready in ${path.join(w.media, 'Filme', 'Hook Movie (2020)')}` });
    const test = await api<{ sent: boolean; kind: string }>(c.url, 'POST', '/notifications/test');
    assert.deepEqual(test.body, { sent: true, kind: 'discord' }, 'whether it was delivered, not the target\'s status');
    assert.deepEqual(JSON.parse(hits.at(-1)!.body), { content: 'Ripwerk: "Ripwerk test" is test' });
    assert.ok(!c.proc.lines.some((l) => l.includes('secret-token')), 'the webhook URL never reaches the log');
  });

  it('sends ntfy plain text with the title as query parameter', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { webhookUrl: `${base}/ripwerk`, webhookKind: 'ntfy' })).status, 200);
    const test = await api<{ kind: string }>(c.url, 'POST', '/notifications/test');
    assert.equal(test.body.kind, 'ntfy');
    const hit = hits.at(-1)!;
    assert.deepEqual([hit.url, hit.type, hit.body], ['/ripwerk?title=Ripwerk+test', 'text/plain; charset=utf-8', 'Ripwerk: "Ripwerk test" is test']);
  });

  it('logs a failing target, answers the test with 502, and the job still ends normally', async () => {
    answer = 500;
    assert.equal((await api(c.url, 'PUT', '/settings', { webhookKind: 'generic' })).status, 200);
    const test = await api(c.url, 'POST', '/notifications/test');
    assert.equal(test.status, 502);
    assert.equal(test.text, 'the generic webhook was not delivered\n', 'no status code: the test is no port probe');
    const info = await api<{ webhook: { last: { ok: boolean; message: string } } }>(c.url, 'GET', '/system/info');
    assert.deepEqual([info.body.webhook.last.ok, info.body.webhook.last.message], [false, 'the generic webhook was not delivered']);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device: 'flur-drive-flur', titles: [7] });
    assert.equal(created.status, 201, created.text);
    await waitForStatus(c.url, created.body.id, ['failed']);
    const hit = await waitFor('the generic webhook', async () => hits.find((h) => h.body.includes(created.body.id)));
    const body = JSON.parse(hit.body) as { event: string; job: { id: string; status: string; error: string } };
    assert.deepEqual([body.event, body.job.id, body.job.status], ['job_end', created.body.id, 'failed']);
    assert.match(body.job.error, /no title 7/);
    await waitFor('the warning', async () => c.proc.lines.some((l) => l.includes(`job=${created.body.id}`) && /generic webhook answered 500; the job is not affected/.test(l)));
    assert.equal((await api<Job[]>(c.url, 'GET', '/jobs')).body.find((j) => j.id === created.body.id)?.status, 'failed');
  });

  it('asks the media server for a library scan after a finished rip, and a failing server never touches the job', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { mediaServerType: 'nope' })).status, 400);
    // The server is asked when saved (issue 38): it answers then.
    answer = 204;
    assert.equal((await api(c.url, 'PUT', '/settings', { webhookUrl: '', mediaServerType: 'jellyfin', mediaServerUrl: `${base}/jf`, mediaServerKey: 'jf-secret' })).status, 200);
    assert.deepEqual(hits.filter((h) => h.url === '/jf/System/Info').map((h) => h.auth), ['MediaBrowser Token="jf-secret"'], 'asked with the key the refresh sends');
    const run = async (): Promise<string> => {
      const created = await api<Job>(c.url, 'POST', '/jobs', { device: 'flur-drive-flur', titles: [1] });
      assert.equal(created.status, 201, created.text);
      assert.equal((await waitForStatus(c.url, created.body.id, ['completed'])).status, 'completed');
      return created.body.id;
    };
    answer = 500;
    const failing = await run();
    await waitFor('the refresh warning', async () => c.proc.lines.some((l) => l.includes(`job=${failing}`) && /jellyfin library refresh failed: it answered 500; the job is not affected/.test(l)));
    answer = 204;
    const ok = await run();
    await waitFor('the refresh note', async () => c.proc.lines.some((l) => l.includes(`job=${ok}`) && /jellyfin library refresh requested/.test(l)));
    const refreshes = hits.filter((h) => h.url === '/jf/Library/Refresh');
    assert.equal(refreshes.length, 2);
    assert.deepEqual([refreshes[1].method, refreshes[1].auth], ['POST', 'MediaBrowser Token="jf-secret"']);
    assert.ok(!c.proc.lines.some((l) => l.includes('jf-secret')), 'the key never reaches the log');
  });

  it('exposes Prometheus metrics that agree with the job list', async () => {
    const res = await fetch(`${c.url}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    const value = (sample: string) => Number(new RegExp(`^${sample.replace(/[{}"=]/g, (ch) => `\\${ch}`)} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    const jobs = (await api<Job[]>(c.url, 'GET', '/jobs')).body;
    assert.ok(jobs.length >= 3);
    for (const status of ['completed', 'failed', 'canceled', 'pending', 'processing', 'transcoding']) {
      assert.equal(value(`ripwerk_jobs{status="${status}"}`), jobs.filter((j) => j.status === status).length, status);
    }
    assert.equal(value('ripwerk_workers{state="online"}'), 1);
    assert.equal(value('ripwerk_workers_online'), 1);
    assert.equal(value('ripwerk_transcode_queue_length'), 0);
    assert.equal(value('ripwerk_rips_finished_total'), jobs.filter((j) => j.status === 'completed').length, 'every completed job here ripped once');
    assert.equal(value('ripwerk_transcodes_finished_total'), 0, 'transcoding is off in this test');
    assert.match(text, /^# TYPE ripwerk_rips_finished_total counter$/m);
  });
});
