/**
 * Issue 40: box-set sessions through the real pipeline (image drive, real rip and HandBrakeCLI): a
 * three-disc season started by hand is numbered E01-E09 across its discs, each disc is ejected after
 * its rip and the webhook asks for the next one; a season recognised from its labels with disc 2
 * skipped waits with disc 3, and ended by hand names the missing disc.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Device } from '../../shared/api-types.js';
import type { SessionView } from '../../coordinator/sessions/session-book.js';
import { chromium, type Browser } from 'playwright-core';
import { REPO_DIR } from '../fixtures/tools-samples.js';
import { api, dvdImage, fileTree as tree, freePort, insertDisc, startAgent, startCoordinator, stopAll, waitFor, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';

interface Notice { event: string; text: string; session: SessionView }

describe('box-set sessions through the real pipeline', () => {
  let w: World;
  let c: CoordinatorHandle;
  let agent: AgentHandle;
  let target: http.Server;
  const notices: Notice[] = [];
  const device = 'regal-drive-regal';
  let browser: Browser;
  const SHOTS = path.join(REPO_DIR, 'test-output', 'screenshots');

  before(async () => {
    target = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (b: Buffer) => chunks.push(b));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Notice;
        if (body.event.startsWith('session_')) notices.push(body);
        res.statusCode = 204;
        res.end();
      });
    });
    const port = await freePort();
    await new Promise<void>((resolve) => target.listen(port, '127.0.0.1', resolve));
    w = world();
    c = await startCoordinator(w);
    agent = await startAgent(w, c.mqttUrl, 'regal');
    const r = await api(c.url, 'PUT', '/settings', {
      transcodePreset: 'Very Fast 480p30',
      audioLanguages: ['eng'],
      subtitleLanguages: [],
      autoRipStart: true,
      autoEject: false,
      webhookUrl: `http://127.0.0.1:${port}/hook`,
      webhookKind: 'generic',
      allowPrivateWebhooks: true,
    });
    assert.equal(r.status, 200, r.text);
    assert.equal((await api(c.url, 'POST', '/setup/complete')).status, 200);
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  });
  after(async () => {
    await browser?.close();
    target.close();
    await stopAll();
  });

  /** Inserts a disc, waits for the job the automatic rip makes of it, and for the disc to be ejected after its rip. */
  async function feed(label: string, seconds: number[], known: Set<string>): Promise<Job> {
    insertDisc(agent.driveDir, dvdImage(label, seconds));
    const job = await waitFor(`the job of ${label}`, async () => (await api<Job[]>(c.url, 'GET', '/jobs')).body.find((j) => !known.has(j.id)), 60_000);
    known.add(job.id);
    await waitFor(`${label} ejected after its rip`, async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device && !d.disc), 120_000);
    return job;
  }

  it('refuses a session request with a wrong field, in words', async () => {
    const none = await api(c.url, 'POST', '/sessions', { series: 'X', season: 1, discs: 1 });
    assert.equal(none.status, 400);
    assert.equal(none.text, 'discs must be a whole number from 2 to 99: how many discs the set has\n');
    const noSeries = await api(c.url, 'POST', '/sessions', { season: 1, discs: 3 });
    assert.equal(noSeries.text, 'series is required for a series session (the name its files are filed under)\n');
    assert.equal((await api(c.url, 'POST', '/sessions', { series: 'X', season: 1, discs: 3, drive: 'nope' })).status, 400);
    assert.equal((await api(c.url, 'POST', '/sessions/nope/end')).status, 404);
  });

  it('a three-disc season started by hand: E01-E09 across the discs, "insert disc 2 of 3" by webhook, each disc ejected after its rip', async () => {
    const started = await api<SessionView>(c.url, 'POST', '/sessions', { drive: device, series: 'Heide', season: 1, discs: 3, kind: 'series' });
    assert.equal(started.status, 201, started.text);
    assert.equal((await api(c.url, 'POST', '/sessions', { drive: device, series: 'Heide', season: 2, discs: 3 })).status, 409, 'one open session per drive');
    const known = new Set<string>();
    const jobs: Job[] = [];
    jobs.push(await feed('HEIDE_DISC_A', [20, 20, 20], known));
    await waitFor('the next-disc webhook', async () => notices.find((n) => n.text.includes('insert disc 2 of 3')));
    // The drive card says it too, on a phone, in German and English.
    fs.mkdirSync(SHOTS, { recursive: true });
    for (const [locale, text] of [['de-DE', 'Disc 2 von 3 einlegen'], ['en-US', 'Insert disc 2 of 3']] as const) {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale });
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${c.port}/`);
      const next = page.getByTestId('session-next');
      await next.waitFor();
      assert.equal((await next.innerText()).replace(/^\W+/, ''), text);
      await page.screenshot({ path: path.join(SHOTS, `${locale.slice(0, 2)}-session-phone.png`), fullPage: true });
      await context.close();
    }
    jobs.push(await feed('HEIDE_DISC_B', [21, 21, 21], known));
    await waitFor('the webhook for disc 3', async () => notices.find((n) => n.text.includes('insert disc 3 of 3')));
    jobs.push(await feed('HEIDE_DISC_C', [22, 22, 22], known));
    for (const j of jobs) await waitForStatus(c.url, j.id, ['completed'], 300_000);
    const season = path.join(w.media, 'Serien', 'Heide', 'Season 01');
    assert.deepEqual(tree(season).filter((f) => f.endsWith('.mkv')), [1, 2, 3, 4, 5, 6, 7, 8, 9].map((e) => `Heide - S01E0${e}.mkv`));
    assert.equal(notices[0].text, 'Ripwerk: insert disc 2 of 3 of "Heide", season 1');
    assert.equal(notices[0].session.next_disc, 2);
    const [session] = (await api<SessionView[]>(c.url, 'GET', '/sessions')).body;
    assert.equal(session.state, 'ended', 'the last disc ends the session');
    assert.deepEqual(session.done, [1, 2, 3]);
    assert.deepEqual(session.discs.map((d) => [d.episode_first, d.episode_last]), [[1, 3], [4, 6], [7, 9]]);
    assert.ok(notices.some((n) => n.event === 'session_ended' && n.text === 'Ripwerk: session "Heide", season 1 ended: 3 of 3 disc(s) done'));
  });

  it('a season recognised from its labels with disc 2 skipped: disc 3 waits, and the end by hand names the missing disc', async () => {
    const known = new Set((await api<Job[]>(c.url, 'GET', '/jobs')).body.map((j) => j.id));
    const first = await feed('HOF_S01_D1', [20], known);
    await waitForStatus(c.url, first.id, ['completed'], 300_000);
    const third = await feed('HOF_S01_D3', [23], known);
    await waitFor('disc 3 waiting', async () => (await api<SessionView[]>(c.url, 'GET', '/sessions')).body.find((s) => s.series === 'Hof' && s.discs.some((d) => d.disc_number === 3 && d.waiting)));
    assert.equal((await api<Job>(c.url, 'GET', `/jobs/${third.id}`)).body.status, 'transcoding');
    const open = (await api<SessionView[]>(c.url, 'GET', '/sessions')).body.find((s) => s.series === 'Hof') as SessionView;
    assert.equal(open.origin, 'label');
    assert.deepEqual(open.missing, [2]);
    assert.equal(open.next_disc, 2);
    const ended = await api<SessionView>(c.url, 'POST', `/sessions/${open.id}/end`);
    assert.equal(ended.status, 200, ended.text);
    assert.deepEqual(ended.body.missing, [2]);
    await waitFor('the end webhook', async () => notices.find((n) => n.text === 'Ripwerk: session "Hof", season 1 ended: 2 disc(s) done; missing: disc 2'));
    await waitForStatus(c.url, third.id, ['completed'], 300_000);
    assert.deepEqual(tree(path.join(w.media, 'Serien', 'Hof', 'Season 01')).filter((f) => f.endsWith('.mkv')), ['Hof - S01E01.mkv', 'Hof - S01E02.mkv']);
  });
});
