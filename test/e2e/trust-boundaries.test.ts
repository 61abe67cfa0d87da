/**
 * Issue 20, the HTTP side: what a share user who can write the media tree, a web page in the
 * household's browser and a neighbour on the network tried, each first shown to work on the file
 * system or the wire, then refused by the coordinator.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { JobsStore, type JobMeta } from '../../coordinator/jobs/jobs-store.js';
import { coordinatorMigrations } from '../../coordinator/db/migrations.js';
import { openDatabase } from '../../shared/sqlite.js';
import { api, freePort, startAgent, startCoordinator, stopAll, tempDir, world, type CoordinatorHandle, type World } from './harness.js';

const SECRET = 'root:$6$not-for-you';

/** A request with headers fetch would not let us set (Host), sent as written. */
function rawRequest(port: number, method: string, p: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method, headers, setHost: headers.host === undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const mode = (p: string): number => fs.statSync(p).mode & 0o777;

/** The machine's first address that is not loopback, if it has one. */
function lanAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

interface Seeded { healthy: string; linkedOutput: string; linkedRaw: string; strayRaw: string; series: string }

/** Jobs as a finished rip leaves them, written into the coordinator's database before it starts. */
function seedJobs(w: World, dataDir: string): Seeded {
  const db = openDatabase(path.join(dataDir, 'coordinator.sqlite'), coordinatorMigrations);
  const jobs = new JobsStore(db);
  const make = (id: string, title: string, to: 'completed' | 'failed', fields: Parameters<JobsStore['update']>[1], meta: JobMeta = {}): string => {
    jobs.create({ id, title, target_dir: path.join(w.media, 'Filme'), device: 'flur-drive-flur', node: 'flur@host', meta });
    jobs.move(id, to, { finished_at: new Date().toISOString(), ...fields });
    return id;
  };
  const ids: Seeded = {
    healthy: make('11111111-1111-4111-8111-111111111111', 'Heat', 'completed', { output_path: path.join(w.media, 'Filme', 'Heat (1995)') }),
    linkedOutput: make('22222222-2222-4222-8222-222222222222', 'Evil', 'completed', { output_path: path.join(w.media, 'Filme', 'Evil (2000)') }, { fingerprint: 'EVIL:1', year: 2000, output_files: ['shadow'] }),
    linkedRaw: make('33333333-3333-4333-8333-333333333333', 'Kaputt', 'failed', { error: 'the disc could not be read' }),
    strayRaw: make('44444444-4444-4444-8444-444444444444', 'Fremd', 'failed', { error: 'x' }),
    series: make('55555555-5555-4555-8555-555555555555', 'Good', 'completed', { output_path: path.join(w.media, 'Serien', 'Good', 'Season 01') }, { fingerprint: 'GOOD:1', series: 'Good', season: 1, output_files: ['Good - S01E01.mkv'] }),
  };
  db.prepare("INSERT INTO settings (key, value) VALUES ('tracks:flur-drive-flur', '[{\"number\":1,\"seconds\":60}]')").run();
  db.close();
  return ids;
}

describe('trust boundaries of the API', () => {
  let w: World;
  let c: CoordinatorHandle;
  let ids: Seeded;
  let outside: string;
  let evilSeries: string;
  let target: http.Server;
  let targetPort = 0;
  const hits: string[] = [];

  before(async () => {
    w = world();
    outside = tempDir('ripwerk-outside-');
    fs.writeFileSync(path.join(outside, 'shadow'), SECRET);
    const dataDir = path.join(w.root, 'coordinator-data');
    ids = seedJobs(w, dataDir);
    // A healthy output folder with a link to a secret beside the film.
    const heat = path.join(w.media, 'Filme', 'Heat (1995)');
    fs.mkdirSync(heat, { recursive: true });
    fs.writeFileSync(path.join(heat, 'Heat (1995).mkv'), 'video');
    fs.symlinkSync(path.join(outside, 'shadow'), path.join(heat, 'shadow.nfo'));
    // A share user replaced a job's output folder by a link to a folder with secrets (the /etc case).
    fs.symlinkSync(outside, path.join(w.media, 'Filme', 'Evil (2000)'));
    // A finished series job, and a series folder a share user replaced by a link to elsewhere.
    fs.mkdirSync(path.join(w.media, 'Serien', 'Good', 'Season 01'), { recursive: true });
    fs.writeFileSync(path.join(w.media, 'Serien', 'Good', 'Season 01', 'Good - S01E01.mkv'), 'episode');
    evilSeries = tempDir('ripwerk-outside-series-');
    fs.symlinkSync(evilSeries, path.join(w.media, 'Serien', 'Evil'));
    // A raw folder that is a link, and a stored raw path outside every raw root.
    const victim = fs.mkdtempSync(path.join(w.root, 'victim-'));
    fs.writeFileSync(path.join(victim, 'keep.txt'), 'precious');
    // A video file makes it raw data the finder reports (a folder without one is no raw data at all).
    fs.writeFileSync(path.join(victim, 'title_t01.mkv'), 'precious video');
    fs.symlinkSync(victim, path.join(w.raw, ids.linkedRaw));
    const stray = path.join(w.root, 'elsewhere', ids.strayRaw);
    fs.mkdirSync(stray, { recursive: true });
    fs.writeFileSync(path.join(stray, 'keep.mkv'), 'precious');
    c = await startCoordinator(w);
    new Database(path.join(dataDir, 'coordinator.sqlite')).prepare('UPDATE jobs SET raw_path = ? WHERE id = ?').run(stray, ids.strayRaw);
    target = http.createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      if (req.url === '/moved') res.writeHead(307, { location: '/elsewhere' });
      else res.writeHead(204);
      res.end();
    });
    targetPort = await freePort();
    await new Promise<void>((resolve) => target.listen(targetPort, '0.0.0.0', resolve));
  });
  after(async () => {
    target.close();
    await stopAll();
  });

  describe('files under MEDIA_ROOT and the raw folders', () => {
    it('neither lists nor serves a job\'s output folder that is a symlink to a folder of secrets', async () => {
      // The finding: through the link, the secret is one path away.
      assert.equal(fs.readFileSync(path.join(w.media, 'Filme', 'Evil (2000)', 'shadow'), 'utf8'), SECRET);
      const list = await api(c.url, 'GET', `/jobs/${ids.linkedOutput}/files`);
      assert.equal(list.status, 403);
      assert.equal(list.text, `the output folder ${path.join(w.media, 'Filme', 'Evil (2000)')} leads outside ${w.media} through a symbolic link: refused\n`);
      const file = await api(c.url, 'GET', `/jobs/${ids.linkedOutput}/files/shadow`);
      assert.equal(file.status, 403);
      assert.ok(!file.text.includes(SECRET) && !list.text.includes('shadow'));
    });

    it('renames nothing through a symlinked output folder when a finished job is corrected', async () => {
      const r = await api(c.url, 'POST', '/metadata/override', { job_id: ids.linkedOutput, title: 'Evil Twin', year: 2001 });
      assert.deepEqual([r.status, r.text], [403, `the job's output folder ${path.join(w.media, 'Filme', 'Evil (2000)')} is a symbolic link or leads outside ${w.media}: nothing was changed\n`]);
      assert.deepEqual(fs.readdirSync(outside), ['shadow'], 'the folder behind the link is as it was');
      assert.ok(fs.lstatSync(path.join(w.media, 'Filme', 'Evil (2000)')).isSymbolicLink());
    });

    it('moves no episode into a series folder that is a link leading outside when a finished job is corrected (issue 42)', async () => {
      const r = await api(c.url, 'POST', '/metadata/override', { job_id: ids.series, title: 'Evil', kind: 'series', season: 1 });
      assert.deepEqual([r.status, r.text], [409, `the corrected folder ${path.join(w.media, 'Serien', 'Evil', 'Season 01')} leads outside ${w.media} through a symbolic link (or nowhere): nothing was changed\n`]);
      assert.deepEqual(fs.readdirSync(evilSeries), [], 'no season folder, episode or tvshow.nfo behind the link');
      assert.ok(fs.existsSync(path.join(w.media, 'Serien', 'Good', 'Season 01', 'Good - S01E01.mkv')), 'the episode stays');
      const job = (await api<{ id: string; title: string; output_path: string }[]>(c.url, 'GET', '/jobs')).body.find((j) => j.id === ids.series);
      assert.deepEqual([job?.title, job?.output_path], ['Good', path.join(w.media, 'Serien', 'Good', 'Season 01')]);
    });

    it('lists and serves the films of a healthy folder, but not a link in it that leads outside', async () => {
      const list = await api<{ name: string; size: number }[]>(c.url, 'GET', `/jobs/${ids.healthy}/files`);
      assert.deepEqual(list.body, [{ name: 'Heat (1995).mkv', size: 5 }]);
      const film = await api(c.url, 'GET', `/jobs/${ids.healthy}/files/${encodeURIComponent('Heat (1995).mkv')}`);
      assert.deepEqual([film.status, film.text], [200, 'video']);
      const link = await api(c.url, 'GET', `/jobs/${ids.healthy}/files/shadow.nfo`);
      assert.deepEqual([link.status, link.text], [403, '"shadow.nfo" leads outside the output folder through a symbolic link: refused\n']);
    });

    it('deletes no raw folder that is a symlink or lies outside the raw roots, and keeps the job', async () => {
      const linked = await api(c.url, 'DELETE', `/jobs/${ids.linkedRaw}?rohdaten=true`);
      assert.deepEqual([linked.status, linked.text], [403, `the raw folder ${path.join(w.raw, ids.linkedRaw)} is a symbolic link: refused\n`]);
      const retry = await api(c.url, 'POST', `/jobs/${ids.linkedRaw}/retry-transcode`);
      assert.equal(retry.status, 403, retry.text);
      const stray = await api(c.url, 'DELETE', `/jobs/${ids.strayRaw}?rohdaten=true`);
      assert.equal(stray.status, 403);
      assert.match(stray.text, /^the raw folder .*elsewhere.* lies outside .*: refused\n$/);
      assert.equal(fs.readFileSync(path.join(fs.realpathSync(path.join(w.raw, ids.linkedRaw)), 'keep.txt'), 'utf8'), 'precious');
      assert.ok(fs.existsSync(path.join(w.root, 'elsewhere', ids.strayRaw, 'keep.mkv')));
      const left = (await api<{ id: string }[]>(c.url, 'GET', '/jobs')).body.map((j) => j.id);
      assert.ok(left.includes(ids.linkedRaw) && left.includes(ids.strayRaw), 'the jobs are still there');
    });

    it('refuses /browse with a path given twice or as an array', async () => {
      const twice = await api(c.url, 'GET', `/browse?path=${encodeURIComponent(w.media)}&path=${encodeURIComponent(outside)}`);
      assert.deepEqual([twice.status, twice.text], [400, 'path must be given once, as one folder path (a string)\n']);
      const bracketed = await api(c.url, 'GET', '/browse?path[]=x');
      assert.deepEqual([bracketed.status, bracketed.text], [400, 'unknown query parameter "path[]": /browse takes path only\n']);
    });
  });

  describe('the browser as a way in', () => {
    const evil = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };

    it('refuses a cross-site key store upload as text/plain, the no-cors fetch a page can send', async () => {
      const forged = await rawRequest(c.port, 'POST', '/api/system/keystore', { ...evil, 'content-type': 'text/plain' }, 'PK\u0003\u0004 not really');
      assert.equal(forged.status, 403);
      assert.match(forged.headers['content-type'] ?? '', /^text\/plain/);
      assert.equal(forged.text, 'refused: the request comes from another site (Sec-Fetch-Site: cross-site); change things from the Ripwerk page itself or without a browser\n');
      const noFetchMetadata = await rawRequest(c.port, 'POST', '/api/system/keystore', { origin: 'https://evil.example', 'content-type': 'text/plain' }, 'x');
      assert.deepEqual([noFetchMetadata.status, noFetchMetadata.text], [403, 'refused: the request comes from another origin (https://evil.example), not from this Ripwerk\n']);
      const withoutOrigin = await rawRequest(c.port, 'POST', '/api/system/keystore', { 'content-type': 'text/plain' }, 'x');
      assert.deepEqual([withoutOrigin.status, withoutOrigin.text], [403, 'refused: a body of type text/plain can be sent by any web page; send the file itself as application/octet-stream or application/zip\n']);
      assert.equal((await api<{ installed: boolean }>(c.url, 'GET', '/system/keystore')).body.installed, false);
    });

    it('refuses cross-site eject, scan, cancel, retries, job deletion and the test notification', async () => {
      for (const p of ['/api/devices/flur-drive-flur/eject', '/api/devices/flur-drive-flur/scan-tracks', `/api/jobs/${ids.healthy}/cancel`, `/api/jobs/${ids.linkedRaw}/retry-rip`, `/api/jobs/${ids.linkedRaw}/retry-transcode`, '/api/notifications/test']) {
        const r = await rawRequest(c.port, 'POST', p, { origin: 'https://evil.example' });
        assert.deepEqual([r.status, r.text], [403, 'refused: the request comes from another origin (https://evil.example), not from this Ripwerk\n'], p);
      }
      const del = await rawRequest(c.port, 'DELETE', `/api/jobs/${ids.healthy}`, { origin: 'null' });
      assert.equal(del.status, 403);
      const put = await rawRequest(c.port, 'PUT', '/api/settings', { ...evil, 'content-type': 'application/json' }, '{"autoRipStart":true}');
      assert.equal(put.status, 403);
      assert.equal((await api<Record<string, unknown>>(c.url, 'GET', '/settings')).body.autoRipStart, false);
      assert.ok((await api<{ id: string }[]>(c.url, 'GET', '/jobs')).body.some((j) => j.id === ids.healthy));
    });

    it('lets the own page and scripts through', async () => {
      const own = await rawRequest(c.port, 'POST', `/api/jobs/${ids.healthy}/cancel`, { origin: `http://127.0.0.1:${c.port}`, 'sec-fetch-site': 'same-origin' });
      assert.equal(own.status, 409, own.text);
      assert.match(own.text, /only pending, processing or transcoding/, 'the guard let it through to the job rules');
      const script = await api<Record<string, unknown>>(c.url, 'PUT', '/settings', { autoEject: false });
      assert.equal(script.status, 200);
      const upload = await fetch(`${c.url}/system/keystore`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', origin: `http://127.0.0.1:${c.port}` }, body: 'not a zip' });
      assert.equal(upload.status, 400, 'the UI\'s upload passes the guard and reaches the archive check');
      assert.match(await upload.text(), /not a zip archive/);
    });

    it('answers no foreign host name: a DNS-rebinding page reads nothing', async () => {
      const rebound = await rawRequest(c.port, 'GET', '/api/settings', { host: 'evil.example' });
      assert.deepEqual([rebound.status, rebound.text], [403, 'refused: this Ripwerk does not answer to the host name evil.example; add it to ALLOWED_HOSTS if it is yours\n']);
      const ui = await rawRequest(c.port, 'GET', '/', { host: `evil.example:${c.port}` });
      assert.equal(ui.status, 403);
      for (const host of [`localhost:${c.port}`, `127.0.0.1:${c.port}`, `[::1]:${c.port}`, `${os.hostname()}:${c.port}`, '192.0.2.77']) {
        assert.equal((await rawRequest(c.port, 'GET', '/api/health', { host })).status, 200, host);
      }
    });

    it('sends the UI with a CSP, X-Frame-Options DENY and nosniff, and the page needs no inline code', async () => {
      const res = await fetch(c.url.replace(/\/api$/, '/'));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'self'; script-src 'self'; style-src 'self'; .*frame-ancestors 'none'$/);
      const html = await res.text();
      assert.doesNotMatch(html, /style=|<script(?![^>]*\bsrc=)|<style/, 'no inline script or style for the CSP to block');
      assert.equal((await fetch(`${c.url}/jobs`)).headers.get('x-content-type-options'), 'nosniff');
    });

    it('never echoes CR, LF or other control characters of the URL', async () => {
      const r = await rawRequest(c.port, 'GET', '/api/jobs/%0D%0ASet-Cookie:%20x%1B[31m/detail', {});
      assert.equal(r.status, 404);
      assert.equal(r.text, 'no job with id Set-Cookie: x[31m\n');
      const other = await rawRequest(c.port, 'GET', '/nowhere%0D%0Ax', {});
      assert.doesNotMatch(other.text.slice(0, -1), /[\r\n]/);
    });
  });

  describe('settings, secrets and refusals', () => {
    // A media server address is asked when saved (issue 38): Kodi stand-ins on two loopback hosts
    // (127.0.0.1 on two ports, 127.0.0.2) answer JSON-RPC's ping, so the host rules below meet real answers.
    const kodis: http.Server[] = [];
    let a = '';
    let a2 = '';
    let b = '';
    before(async () => {
      const start = async (host: string): Promise<string> => {
        const server = http.createServer((req, res) => {
          req.resume();
          req.on('end', () => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ id: 1, jsonrpc: '2.0', result: 'pong' }));
          });
        });
        const port = await freePort();
        await new Promise<void>((resolve) => server.listen(port, host, resolve));
        kodis.push(server);
        return `${host}:${port}`;
      };
      [a, a2, b] = [await start('127.0.0.1'), await start('127.0.0.1'), await start('127.0.0.2')];
    });
    after(() => {
      for (const k of kodis) k.close();
    });

    it('masks a password inside the media-server URL and keeps it when the mask is sent back', async () => {
      const saved = await api<Record<string, unknown>>(c.url, 'PUT', '/settings', { mediaServerType: 'kodi', mediaServerUrl: `http://kodi:geheim@${a}` });
      assert.equal(saved.body.mediaServerUrl, `http://kodi:********@${a}`);
      const view = await api<Record<string, unknown>>(c.url, 'GET', '/settings');
      assert.ok(!view.text.includes('geheim'));
      assert.equal((await api(c.url, 'PUT', '/settings', view.body)).status, 200, 'the whole view goes back unchanged: no internal key, the mask kept');
      const stored = new Database(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'), { readonly: true }).prepare("SELECT value FROM settings WHERE key = 'mediaServerUrl'").get() as { value: string };
      assert.equal(JSON.parse(stored.value), `http://kodi:geheim@${a}`);
      assert.ok(!('tracks:flur-drive-flur' in view.body), 'tracks:<device> is internal');
      assert.ok(!c.proc.lines.some((l) => l.includes('geheim')));
    });

    it('sends a kept password or media-server key to no other host (issue 42)', async () => {
      const stored = (key: string): unknown => JSON.parse((new Database(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'), { readonly: true }).prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string }).value);
      // The URL of the test before: http://kodi:geheim@<a>. The mask sent back with another host keeps nothing.
      const moved = await api(c.url, 'PUT', '/settings', { mediaServerUrl: `http://kodi:********@${b}` });
      assert.deepEqual([moved.status, moved.text], [400, 'mediaServerUrl holds the mask ******** where its password belongs, but the stored password is for 127.0.0.1, not 127.0.0.2: type the password for the new host\n']);
      assert.equal((await api(c.url, 'PUT', '/settings', { mediaServerKey: 'k3y-for-5' })).status, 200);
      const keyMoved = await api(c.url, 'PUT', '/settings', { mediaServerUrl: `http://${b}`, mediaServerKey: '********' });
      assert.deepEqual([keyMoved.status, keyMoved.text], [400, 'mediaServerKey was saved for the media server at 127.0.0.1: send the key for 127.0.0.2 together with the new mediaServerUrl (or an empty mediaServerKey to remove it)\n']);
      assert.deepEqual([stored('mediaServerUrl'), stored('mediaServerKey')], [`http://kodi:geheim@${a}`, 'k3y-for-5'], 'nothing changed');
      const samePort = await api(c.url, 'PUT', '/settings', { mediaServerUrl: `http://kodi:********@${a2}/jsonrpc` });
      assert.equal(samePort.status, 200, 'the same host keeps both');
      const typed = await api(c.url, 'PUT', '/settings', { mediaServerUrl: `http://kodi:neu@${b}`, mediaServerKey: 'k3y-for-66' });
      assert.equal(typed.status, 200, typed.text);
      assert.deepEqual([stored('mediaServerUrl'), stored('mediaServerKey')], [`http://kodi:neu@${b}`, 'k3y-for-66']);
      const cleared = await api(c.url, 'PUT', '/settings', { mediaServerUrl: '' });
      assert.equal(cleared.status, 200);
      assert.equal(stored('mediaServerKey'), '', 'an emptied URL takes its key along: a later URL cannot inherit it');
      assert.equal((await api(c.url, 'PUT', '/settings', { mediaServerType: '' })).status, 200);
    });

    it('stores a webhook URL without the spaces and line breaks of a paste, and refuses one with a break inside (issue 42)', async () => {
      const pasted = await api(c.url, 'PUT', '/settings', { webhookUrl: ' \nhttps://hook.example/token\n' });
      assert.equal(pasted.status, 200, pasted.text);
      const stored = new Database(path.join(w.root, 'coordinator-data', 'coordinator.sqlite'), { readonly: true }).prepare("SELECT value FROM settings WHERE key = 'webhookUrl'").get() as { value: string };
      assert.equal(JSON.parse(stored.value), 'https://hook.example/token');
      const inside = await api(c.url, 'PUT', '/settings', { webhookUrl: 'https://hook.example/a\nb' });
      assert.deepEqual([inside.status, inside.text], [400, 'setting "webhookUrl" must be one URL without spaces or control characters inside\n']);
      assert.equal((await api(c.url, 'PUT', '/settings', { webhookUrl: '' })).status, 200);
    });

    it('refuses a POST /jobs title, series or folder longer than a worker takes with 400, before looking for the drive (issue 42)', async () => {
      const long = (n: number) => 'x'.repeat(n);
      for (const [body, reason] of [
        [{ title: long(1001) }, 'title is longer than 1000 characters, more than a worker takes'],
        [{ series: long(1001), season: 1 }, 'series is longer than 1000 characters, more than a worker takes'],
        [{ target_dir: `${w.media}/${long(4097)}` }, 'target_dir is longer than 4096 characters, more than a worker takes'],
        [{ work_dir: `${w.media}/${long(4096 - 37)}` }, 'the job\'s raw folder (the work folder and the job id) would be longer than 4096 characters, more than a worker takes'],
      ] as const) {
        const r = await api(c.url, 'POST', '/jobs', { device: 'flur-drive-flur', ...body });
        assert.deepEqual([r.status, r.text], [400, `${reason}\n`], Object.keys(body).join());
      }
      const fits = await api(c.url, 'POST', '/jobs', { device: 'flur-drive-flur', title: long(1000) });
      assert.equal(fits.status, 404, 'a title of 1000 characters passes on to the drive');
    });

    it('refuses unknown POST /jobs fields, a javascript: poster and keeps the language fields', async () => {
      const unknown = await api(c.url, 'POST', '/jobs', { device: 'flur-drive-flur', target: '/etc', colour: 'red' });
      assert.equal(unknown.status, 400);
      assert.match(unknown.text, /^unknown fields "target", "colour": POST \/jobs takes device, title, .*audio_languages, subtitle_languages, musicbrainz_release_id\n$/);
      const languages = await api(c.url, 'POST', '/jobs', { device: 'nope', audio_languages: ['deu'], subtitle_languages: ['eng'] });
      assert.equal(languages.status, 404, 'known fields pass on to the device check');
      for (const poster of ['javascript:alert(document.cookie)', 'data:text/html;base64,PHNjcmlwdD4=']) {
        const r = await api(c.url, 'POST', '/metadata/override', { fingerprint: 'HEAT:1', title: 'Heat', poster_path: poster });
        assert.deepEqual([r.status, r.text], [400, 'poster_path must be a TMDB image path such as /abc123.jpg or an http(s) URL\n'], poster);
      }
      const metadataService = await api(c.url, 'POST', '/metadata/override', { fingerprint: 'HEAT:1', title: 'Heat', poster_path: 'http://169.254.169.254/latest/meta-data/x.jpg' });
      assert.equal(metadataService.status, 400);
      assert.match(metadataService.text, /^poster_path refused: it points at a link-local address \(169\.254\.169\.254\)/, 'the coordinator would fetch it into its poster cache');
      const good = await api(c.url, 'POST', '/metadata/override', { fingerprint: 'HEAT:1', title: 'Heat', poster_path: '/abc123.jpg' });
      assert.equal(good.status, 200, good.text);
    });

    it('sends no webhook to loopback or this machine once allowPrivateWebhooks is off, follows no redirect, and tells only delivered or not', async () => {
      assert.equal((await api(c.url, 'PUT', '/settings', { allowPrivateWebhooks: true, webhookUrl: `http://127.0.0.1:${targetPort}/hook`, webhookKind: 'generic' })).status, 200);
      const ok = await api(c.url, 'POST', '/notifications/test');
      assert.deepEqual([ok.status, ok.body], [200, { sent: true, kind: 'generic' }]);
      assert.equal((await api(c.url, 'PUT', '/settings', { allowPrivateWebhooks: false })).status, 200);
      const refused = await api(c.url, 'POST', '/notifications/test');
      assert.deepEqual([refused.status, refused.text], [400, 'the generic webhook was not sent: it points at a loopback address (127.0.0.1); turn on the setting allowPrivateWebhooks if that is really where it should go\n']);
      const lan = lanAddress();
      if (lan) {
        const own = await api(c.url, 'PUT', '/settings', { webhookUrl: `http://${lan}:${targetPort}/hook` });
        assert.deepEqual([own.status, own.text], [400, `webhookUrl refused: it points at an address of this machine (${lan}); turn on the setting allowPrivateWebhooks if that is really where it should go\n`]);
      }
      const metadata = await api(c.url, 'PUT', '/settings', { webhookUrl: 'http://169.254.169.254/latest/meta-data/' });
      assert.match(metadata.text, /^webhookUrl refused: it points at a link-local address \(169\.254\.169\.254\)/);
      assert.equal((await api(c.url, 'PUT', '/settings', { allowPrivateWebhooks: true, webhookUrl: `http://127.0.0.1:${targetPort}/moved` })).status, 200);
      const moved = await api(c.url, 'POST', '/notifications/test');
      assert.deepEqual([moved.status, moved.text], [502, 'the generic webhook was not delivered\n'], 'no status code of the target');
      assert.deepEqual(hits, ['POST /hook', 'POST /moved'], 'the redirect was not followed, and nothing reached a refused target');
      const closed = await api(c.url, 'PUT', '/settings', { webhookUrl: `http://127.0.0.1:${await freePort()}/x` });
      assert.equal(closed.status, 200);
      const probe = await api(c.url, 'POST', '/notifications/test');
      assert.deepEqual([probe.status, probe.text], [502, 'the generic webhook was not delivered\n'], 'a closed port reads the same as a refusing target');
    });
  });
});

describe('files of the service user and the listen addresses', () => {
  after(stopAll);

  it('keeps DATA_DIR 0700 and its files 0600 under umask 000, also what an older version left readable', async () => {
    const w = world();
    const dataDir = path.join(w.root, 'coordinator-data');
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    fs.writeFileSync(path.join(dataDir, 'KEYDB.cfg'), '0x01 = Old\n', { mode: 0o644 });
    fs.chmodSync(path.join(dataDir, 'KEYDB.cfg'), 0o644);
    const old = process.umask(0o000);
    let c!: CoordinatorHandle;
    try {
      c = await startCoordinator(w, { RIPWERK_BROKER_SECRET: '' });
      await startAgent(w, c.mqttUrl, 'flur', { extra: { RIPWERK_BROKER_SECRET: fs.readFileSync(path.join(dataDir, 'broker-secret'), 'utf8').trim() } });
    } finally {
      process.umask(old);
    }
    assert.equal((await api(c.url, 'PUT', '/settings', { webhookUrl: 'https://hook.example/token' })).status, 200);
    assert.equal((await api(c.url, 'POST', '/system/keydb', { content: '0x0223456789ABCDEF0123456789ABCDEF01234567 = New\n' })).status, 200);
    assert.equal(mode(dataDir), 0o700);
    for (const f of ['coordinator.sqlite', 'coordinator.sqlite-wal', 'coordinator.sqlite-shm', 'broker-secret', 'KEYDB.cfg']) assert.equal(mode(path.join(dataDir, f)), 0o600, f);
    const agentData = path.join(w.root, 'agent-flur-data');
    assert.equal(mode(agentData), 0o700);
    for (const f of fs.readdirSync(agentData)) assert.equal(mode(path.join(agentData, f)), 0o600, f);
    assert.ok(fs.readdirSync(agentData).includes('agent-flur.sqlite'));
  });

  it('browses a MEDIA_ROOT that is itself a link, with the links inside it that stay inside', async () => {
    const w = world();
    const real = path.join(w.root, 'real-media');
    fs.mkdirSync(path.join(real, 'Filme', 'Heat (1995)'), { recursive: true });
    fs.symlinkSync(path.join(real, 'Filme', 'Heat (1995)'), path.join(real, 'Filme', 'Heat-Link'));
    fs.symlinkSync(tempDir('ripwerk-outside-'), path.join(real, 'Filme', 'Draussen'));
    const linkedRoot = path.join(w.root, 'media-link');
    fs.symlinkSync(real, linkedRoot);
    const c = await startCoordinator(w, { MEDIA_ROOT: linkedRoot });
    const r = await api<{ path: string; entries: { name: string; type: string }[] }>(c.url, 'GET', `/browse?path=${encodeURIComponent(path.join(linkedRoot, 'Filme'))}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.path, path.join(linkedRoot, 'Filme'));
    assert.deepEqual(r.body.entries.map((e) => [e.name, e.type]), [['Heat (1995)', 'dir'], ['Heat-Link', 'dir']], 'the link leading out is left out');
  });

  it('listens on BIND_ADDRESS and MQTT_BIND_ADDRESS only', async () => {
    const w = world();
    const c = await startCoordinator(w, { BIND_ADDRESS: '127.0.0.1', MQTT_BIND_ADDRESS: '127.0.0.1' });
    await c.proc.waitForLine(/API listening on port \d+ of 127\.0\.0\.1; MQTT mqtt:\/\/127\.0\.0\.1:\d+/);
    assert.equal((await api(c.url, 'GET', '/health')).status, 200);
    await startAgent(w, c.mqttUrl, 'flur');
    const lan = lanAddress();
    if (lan) {
      const refused = (port: number) => new Promise<string>((resolve) => {
        const s = net.connect(port, lan, () => {
          s.destroy();
          resolve('connected');
        });
        s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
      assert.equal(await refused(c.port), 'ECONNREFUSED', `HTTP is not reachable on ${lan}`);
      assert.equal(await refused(c.mqttPort), 'ECONNREFUSED', `MQTT is not reachable on ${lan}`);
      const open = await startCoordinator(world());
      assert.equal(await refused(open.port), 'connected', 'by default every interface is served');
    }
    const bad = await startCoordinator(world(), { BIND_ADDRESS: 'not an address!' }).catch((err: Error) => err);
    assert.ok(bad instanceof Error && /BIND_ADDRESS must be an IP address/.test(bad.message));
  });
});
