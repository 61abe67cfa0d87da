import type { Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { emptyCatalogue, startMetadataServer, TMDB_V3_KEY, type MetadataServer } from '../fixtures/metadata-server.js';
import { api, freePort, startAgent, startCoordinator, stopAll, waitFor, world, type CoordinatorHandle, type World } from './harness.js';

interface UpdateJson { tool: string; installed: string | null; latest: string | null; update_available: boolean | null; error: string | null }

describe('system: info, updates, supplies, first-run setup, routes that must not exist', () => {
  let w: World;
  let c: CoordinatorHandle;
  let sources: http.Server;
  let sourceBase = '';
  let makemkvDown = false;
  let meta: MetadataServer;

  before(async () => {
    sources = http.createServer((req, res) => {
      if (req.url === '/handbrake') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ tag_name: '9.9.9', name: 'HandBrake 9.9.9' }));
      } else if (req.url === '/makemkv') {
        res.writeHead(makemkvDown ? 502 : 200, { 'content-type': 'text/html' });
        res.end('<h1>MakeMKV 1.17.8 for Windows and Mac</h1>');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify([{ version: `v${process.versions.node}` }, { version: 'v18.0.0' }]));
      }
    });
    const port = await freePort();
    await new Promise<void>((r) => sources.listen(port, '127.0.0.1', r));
    sourceBase = `http://127.0.0.1:${port}`;
    w = world();
    // The TMDB key saved below is tried live (issue 38): against the loopback stand-in.
    meta = await startMetadataServer(emptyCatalogue());
    c = await startCoordinator(w, { TMDB_BASE_URL: meta.tmdbBase, UPDATE_HANDBRAKE_URL: `${sourceBase}/handbrake`, UPDATE_MAKEMKV_URL: `${sourceBase}/makemkv`, UPDATE_NODE_URL: `${sourceBase}/node` });
    await startAgent(w, c.mqttUrl, 'keller');
    await startAgent(w, c.mqttUrl, 'dachboden', { makemkv: true });
  });
  after(async () => {
    sources.close();
    await stopAll();
    await meta?.close();
  });

  it('walks the first-run setup: open steps, skipping allowed, then complete', async () => {
    const fresh = await api<{ complete: boolean; next: string; steps: { step: string; done: boolean }[] }>(c.url, 'GET', '/setup');
    assert.equal(fresh.body.complete, false);
    assert.equal(fresh.body.next, 'metadata');
    assert.equal((await api(c.url, 'PUT', '/settings', { tmdbApiKey: TMDB_V3_KEY, workDir: w.media })).status, 200);
    const mid = await api<{ next: string; steps: { step: string; done: boolean }[] }>(c.url, 'GET', '/setup');
    assert.deepEqual(mid.body.steps.map((s) => s.done), [true, true, false, false, true]);
    assert.equal(mid.body.next, 'media_server');
    const done = await api<{ complete: boolean; next: string | null }>(c.url, 'POST', '/setup/complete');
    assert.deepEqual([done.body.complete, done.body.next], [true, null]);
    const settings = await api<Record<string, unknown>>(c.url, 'GET', '/settings');
    assert.equal(settings.body.setupComplete, true);
  });

  it('tells tool versions, disk space, key and webhook status', async () => {
    await waitFor('both workers', async () => (await api<{ online: boolean }[]>(c.url, 'GET', '/capabilities')).body.filter((x) => x.online).length === 2);
    const info = await api<{ node: string; workers: { name: string; tools: Record<string, string | null> }[]; disks: { name: string; path: string; free_bytes: number; total_bytes: number }[]; keys: { keystore: { installed: boolean; schluessel: number }; keydb: { present: boolean }; ripper_app_key: string }; webhook: { configured: boolean; kind: string | null } }>(c.url, 'GET', '/system/info');
    assert.equal(info.status, 200);
    assert.equal(info.body.node, process.versions.node);
    assert.match(info.body.workers.find((x) => x.name === 'keller')?.tools.HandBrakeCLI ?? '', /\d+\.\d+\.\d+/);
    // Which disc kinds each worker can rip: keller has Debian's open tools (and libdvdcss only if this host has it), dachboden MakeMKV without keys.
    const ok = { can: true, missing: null };
    const hostHasCss = spawnSync('sh', ['-c', '/sbin/ldconfig -p | grep -q "libdvdcss\\.so\\.2 "']).status === 0;
    const kinds = (name: string) => (info.body.workers.find((x) => x.name === name) as unknown as { disc_kinds: unknown }).disc_kinds;
    assert.deepEqual(kinds('keller'), { audio_cd: ok, dvd: ok, dvd_protected: hostHasCss ? ok : { can: false, missing: 'libdvdcss' }, bluray: { can: false, missing: 'makemkvcon' }, uhd: { can: false, missing: 'makemkvcon' } });
    assert.deepEqual(kinds('dachboden'), { audio_cd: ok, dvd: ok, dvd_protected: ok, bluray: ok, uhd: { can: false, missing: 'keystore' } });
    const caps = await api<Worker[]>(c.url, 'GET', '/capabilities');
    assert.deepEqual(caps.body.find((x) => x.name === 'dachboden')?.disc_kinds, kinds('dachboden'), 'GET /capabilities carries the same');
    const media = info.body.disks.find((d) => d.name === 'media')!;
    assert.equal(media.path, w.media);
    assert.ok(media.free_bytes > 0 && media.total_bytes >= media.free_bytes);
    assert.ok(info.body.disks.some((d) => d.name === 'workDir'));
    assert.deepEqual([info.body.keys.keystore.installed, info.body.keys.keystore.schluessel, info.body.keys.keydb.present, info.body.keys.ripper_app_key], [false, 0, false, 'not set']);
    assert.deepEqual(info.body.webhook, { configured: false, kind: null, last: null });
    assert.ok(!JSON.stringify(info.body).includes('0123456789abcdef0123456789abcdef'), 'no secret in the answer');
  });

  it('compares installed with published versions, keeping a stale answer when a source fails', async () => {
    const r = await api<{ tools: UpdateJson[] }>(c.url, 'GET', '/system/updates');
    const by = Object.fromEntries(r.body.tools.map((t) => [t.tool, t]));
    assert.equal(by.HandBrakeCLI.latest, '9.9.9');
    assert.equal(by.HandBrakeCLI.update_available, true);
    assert.match(by.HandBrakeCLI.installed ?? '', /^\d+\.\d+\.\d+$/);
    assert.equal(by.makemkvcon.latest, '1.17.8');
    assert.equal(by.makemkvcon.installed, null, 'no worker has MakeMKV');
    assert.equal(by.makemkvcon.update_available, null);
    assert.deepEqual([by.node.installed, by.node.latest, by.node.update_available], [process.versions.node, process.versions.node, false]);
    makemkvDown = true;
    const again = await api<{ tools: UpdateJson[] }>(c.url, 'GET', '/system/updates');
    assert.equal(again.body.tools.find((t) => t.tool === 'makemkvcon')?.latest, '1.17.8', 'cached: the source is not asked again within 12 hours');
  });

  it('reports the age and findings of the ping and raw-data stores', async () => {
    const v = await waitFor('a ping answer', async () => {
      const r = await api<{ ping: { alter_sekunden: number | null; mit_treffer: boolean }; rohdaten: { alter_sekunden: number | null; mit_treffer: boolean }; mount_guard: { active: boolean; mounts: number; alter_sekunden: number | null; mit_treffer: boolean } }>(c.url, 'GET', '/health/vorraete');
      return r.body.ping.mit_treffer ? r.body : undefined;
    }, 20_000);
    assert.ok(v.ping.alter_sekunden !== null && v.ping.alter_sekunden <= 30);
    assert.equal(v.rohdaten.mit_treffer, false);
    // The guard is scheduled (every minute) but has no mount to look at; no round has run yet.
    assert.deepEqual([v.mount_guard.active, v.mount_guard.mounts, v.mount_guard.mit_treffer], [true, 0, false]);
  });

  it('browses folders under the media root only and creates folders there', async () => {
    fs.mkdirSync(path.join(w.media, 'Filme', 'Heat (1995)'), { recursive: true });
    fs.writeFileSync(path.join(w.media, 'Filme', 'liste.txt'), 'x'.repeat(120));
    fs.writeFileSync(path.join(w.media, 'Filme', '.hidden'), '');
    const outside = fs.mkdtempSync(path.join(w.root, 'outside-'));
    fs.symlinkSync(outside, path.join(w.media, 'Filme', 'escape'));
    fs.symlinkSync(path.join(w.media, 'Filme', 'Heat (1995)'), path.join(w.media, 'Filme', 'inside'));
    const r = await api<{ path: string; parent: string; entries: { name: string; type: string; size: number | null }[] }>(c.url, 'GET', `/browse?path=${encodeURIComponent(path.join(w.media, 'Filme'))}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.parent, w.media);
    assert.deepEqual(r.body.entries, [
      { name: 'Heat (1995)', type: 'dir', size: null },
      { name: 'inside', type: 'dir', size: null },
      { name: 'liste.txt', type: 'file', size: 120 },
    ]);
    const root = await api<{ path: string; parent: string | null }>(c.url, 'GET', '/browse');
    assert.deepEqual([root.body.path, root.body.parent], [w.media, null]);
    for (const bad of [`${w.media}/../x`, w.root, `${w.media}-x`]) {
      const refused = await api(c.url, 'GET', `/browse?path=${encodeURIComponent(bad)}`);
      assert.equal(refused.status, 400, bad);
      assert.match(refused.text, /^path refused: /);
    }
    const symlinked = await api(c.url, 'GET', `/browse?path=${encodeURIComponent(path.join(w.media, 'Filme', 'escape'))}`);
    assert.equal(symlinked.status, 403);
    assert.match(symlinked.text, /^path refused: it leads outside .* through a symbolic link/);
    const missing = await api(c.url, 'GET', `/browse?path=${encodeURIComponent(path.join(w.media, 'nope'))}`);
    assert.deepEqual([missing.status, missing.text], [404, `${path.join(w.media, 'nope')} does not exist\n`]);
    const made = await api<{ path: string }>(c.url, 'POST', '/browse/mkdir', { path: path.join(w.media, 'Serien', 'Neu') });
    assert.deepEqual([made.status, made.body], [201, { path: path.join(w.media, 'Serien', 'Neu') }]);
    assert.ok(fs.statSync(path.join(w.media, 'Serien', 'Neu')).isDirectory());
    const again = await api(c.url, 'POST', '/browse/mkdir', { path: path.join(w.media, 'Serien', 'Neu') });
    assert.deepEqual([again.status, again.text], [409, `${path.join(w.media, 'Serien', 'Neu')} exists already\n`]);
    const onFile = await api(c.url, 'POST', '/browse/mkdir', { path: path.join(w.media, 'Filme', 'liste.txt') });
    assert.deepEqual([onFile.status, onFile.text], [409, `${path.join(w.media, 'Filme', 'liste.txt')} exists and is not a folder\n`]);
    const through = await api(c.url, 'POST', '/browse/mkdir', { path: path.join(w.media, 'Filme', 'escape', 'sub') });
    assert.equal(through.status, 403);
    assert.match(through.text, /^path refused: it leads outside .* through a symbolic link/);
    assert.ok(!fs.existsSync(path.join(outside, 'sub')), 'nothing was created through the symlink');
    const outsideRoot = await api(c.url, 'POST', '/browse/mkdir', { path: '/etc/ripwerk-x' });
    assert.deepEqual([outsideRoot.status, outsideRoot.text], [400, `path refused: path must lie under ${w.media}\n`]);
    const dotdot = await api(c.url, 'POST', '/browse/mkdir', { path: `${w.media}/Filme/../x` });
    assert.deepEqual([dotdot.status, dotdot.text], [400, 'path refused: path must not contain ..\n']);
    assert.ok(!fs.existsSync('/etc/ripwerk-x') && !fs.existsSync(path.join(w.media, 'x')));
  });

  it('lists each worker\'s real HandBrake presets with a recommendation and its reason', async () => {
    const r = await api<{ current: string; workers: { name: string; encoders: string[]; categories: { name: string; presets: string[] }[]; recommendation: { preset: string; reason: string; reason_code: string; reason_params: Record<string, string> }; recommendations: Record<string, { preset: string }> }[] }>(c.url, 'GET', '/presets');
    assert.equal(r.status, 200);
    assert.equal(r.body.current, 'Fast 1080p30');
    const keller = r.body.workers.find((x) => x.name === 'keller')!;
    assert.deepEqual(keller.encoders, ['software']);
    assert.ok(keller.categories.find((x) => x.name === 'General')?.presets.includes('Fast 1080p30'));
    assert.ok(keller.categories.find((x) => x.name === 'Hardware')?.presets.includes('H.265 NVENC 1080p'), 'the Hardware category is listed');
    // The reason in English, and as a code with parameters the web UI words in its language (issue 38).
    assert.deepEqual(keller.recommendation, { preset: 'H.265 MKV 1080p30', reason: 'software encoding: the worker reports no hardware encoder family', reason_code: 'presetWhySoftware', reason_params: { family: '', skipped: '' } });
    assert.deepEqual([keller.recommendations.dvd.preset, keller.recommendations.uhd.preset], ['H.265 MKV 1080p30', 'H.265 MKV 2160p60 4K']);
  });

  it('lists the storage targets under the media root with free space and the 60 GB warning', async () => {
    const r = await api<{ name: string; path: string; exists: boolean; free_bytes: number; total_bytes: number; warning: string | null }[]>(c.url, 'GET', '/storage-targets');
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.map((t) => [t.name, t.path]),
      [
        ['media', w.media],
        ['movies', path.join(w.media, 'Filme')],
        ['series', path.join(w.media, 'Serien')],
        ['music', path.join(w.media, 'Musik')],
        // The raw folder lies outside MEDIA_ROOT here: no storage target (issue 38; the spec's storage target is a directory under the media root).
        ['workDir', w.media],
      ],
    );
    assert.ok(!w.raw.startsWith(`${w.media}/`), 'the test world keeps the raw folder outside the media root');
    const music = r.body.find((t) => t.name === 'music')!;
    assert.equal(music.exists, false, 'not made yet, measured on its parent');
    assert.ok(music.free_bytes > 0);
    for (const t of r.body) {
      assert.ok(t.total_bytes >= t.free_bytes);
      assert.equal(t.warning, t.free_bytes < 60e9 ? `less than 60 GB free on ${t.path}` : null);
    }
  });

  it('answers 404 on the routes the spec says must not exist', async () => {
    for (const [method, p] of [
      ['POST', '/prescan'],
      ['GET', '/stream/jobs'],
      ['POST', '/token'],
      ['POST', '/api-keys'],
      ['GET', '/api-keys'],
      ['POST', '/metadata/lookup'],
      ['POST', '/metadata/confirm'],
      ['GET', '/metadata/lookup'],
    ]) {
      const r = await api(c.url, method, p);
      assert.equal(r.status, 404, `${method} ${p}`);
      assert.match(r.text, /^no such endpoint/);
    }
  });
});
