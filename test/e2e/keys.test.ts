import type { Device, Worker } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FIXTURES_DIR } from '../fixtures/tools-samples.js';
import {
  api, freePort, insertSparseBluray, smallMkv, startAgent, startCoordinator, stopAll, tempDir, waitFor, waitForStatus, world,
  type AgentHandle, type CoordinatorHandle, type Job, type World,
} from './harness.js';

const APP_KEY = `T-${'Zq9x'.repeat(16)}@_`;

function zip(...entries: string[]): Buffer {
  const out = path.join(tempDir('ripwerk-zip-'), 'keys.zip');
  execFileSync('python3', [path.join(FIXTURES_DIR, 'make-zip.py'), out, ...entries]);
  return fs.readFileSync(out);
}

async function upload(c: CoordinatorHandle, body: Buffer): Promise<{ status: number; text: string }> {
  const res = await fetch(`${c.url}/system/keystore`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) });
  return { status: res.status, text: await res.text() };
}

interface KeystoreStatus { installed: boolean; schluessel: number; files: string[]; workers: { name: string; schluessel: number | null }[] }

describe('disc keys: key store, KEYDB.cfg, AACS dumps and the ripper application key', () => {
  let w: World;
  let c: CoordinatorHandle;
  let kino: AgentHandle;
  let forum: http.Server;
  let makemkvDir: string;

  before(async () => {
    // The forum page the key is read from, on loopback.
    forum = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<html><body><div class="postbody">The current beta key is <code>${APP_KEY.replace('@', '&#64;')}</code></div></body></html>`);
    });
    const forumPort = await freePort();
    await new Promise<void>((resolve) => forum.listen(forumPort, '127.0.0.1', resolve));
    w = world();
    c = await startCoordinator(w, { RIPPER_KEY_URL: `http://127.0.0.1:${forumPort}/forum/viewtopic.php?f=5&t=1053` });
    kino = await startAgent(w, c.mqttUrl, 'kino', { makemkv: true, extra: { FAKE_MAKEMKV_SOURCE_MKV: smallMkv(), FAKE_MAKEMKV_TITLES: '30', FAKE_MAKEMKV_MODE: 'volume-key-unknown' } });
    makemkvDir = kino.env.MAKEMKV_DATA_DIR;
  });
  after(async () => {
    forum.close();
    await stopAll();
  });

  it('reads the application key at start, keeps it secret and writes it into the worker\'s settings.conf', async () => {
    const conf = path.join(makemkvDir, 'settings.conf');
    await waitFor('app_Key on the worker', async () => fs.existsSync(conf) && fs.readFileSync(conf, 'utf8').includes(APP_KEY), 20_000);
    assert.equal(fs.readFileSync(conf, 'utf8'), `app_Key = "${APP_KEY}"\n`);
    const settings = await api<Record<string, unknown>>(c.url, 'GET', '/settings');
    assert.equal(settings.body.ripperAppKey, '********');
    assert.ok(c.proc.lines.some((l) => /ripper key refreshed/.test(l)));
    assert.ok(![...c.proc.lines, ...kino.proc.lines].some((l) => l.includes(APP_KEY)), 'the key never reaches a log line');
  });

  it('installs a key store on every worker and counts its keys', async () => {
    const r = await upload(c, zip('keys/hkd_0001.bin=first', 'keys/hkd_0002.bin=second', 'README.txt=x'));
    assert.equal(r.status, 200, r.text);
    const status = JSON.parse(r.text) as KeystoreStatus;
    assert.deepEqual([status.installed, status.schluessel, status.files], [true, 2, ['hkd_0001.bin', 'hkd_0002.bin']]);
    await waitFor('schluessel 2 on kino', async () => (await api<Worker[]>(c.url, 'GET', '/capabilities')).body.find((x) => x.name === 'kino' && x.schluessel === 2));
    assert.deepEqual(fs.readdirSync(makemkvDir).filter((n) => n.startsWith('hkd_')).sort(), ['hkd_0001.bin', 'hkd_0002.bin']);
    assert.equal(fs.readFileSync(path.join(makemkvDir, 'hkd_0002.bin'), 'utf8'), 'second');
    const get = await api<KeystoreStatus>(c.url, 'GET', '/system/keystore');
    assert.deepEqual(get.body.workers.map((x) => [x.name, x.schluessel]), [['kino', 2]]);
  });

  it('refuses bad key stores with plain reasons and keeps the installed one', async () => {
    const none = await upload(c, zip('README.txt=x', 'keys.bin=y'));
    assert.equal(none.status, 400);
    assert.equal(none.text, 'the archive holds no hashed-key files (hkd_*.bin): refused, nothing was installed\n');
    const escape = await upload(c, zip('hkd_0003.bin=x', '../x=evil'));
    assert.equal(escape.status, 400);
    assert.equal(escape.text, 'the archive entry "../x" points outside its folder: refused\n');
    const json = await api(c.url, 'POST', '/system/keystore', { files: ['hkd_1.bin'] });
    assert.equal(json.status, 415, 'the key store is the archive itself, not JSON');
    assert.equal(json.text, 'refused: a body of type application/json is not taken here; send the file itself as application/octet-stream or application/zip\n');
    const notZip = await upload(c, Buffer.from('{"files":["hkd_1.bin"]}'));
    assert.equal(notZip.status, 400);
    assert.match(notZip.text, /not a zip archive/);
    const big = await upload(c, Buffer.alloc(64 * 1024 * 1024 + 1));
    assert.equal(big.status, 413);
    assert.equal(big.text, 'the request body has 67108865 bytes, more than the 64 MB this endpoint takes\n', 'refused before it is read');
    const still = await api<KeystoreStatus>(c.url, 'GET', '/system/keystore');
    assert.equal(still.body.schluessel, 2);
    assert.ok(!fs.existsSync(path.join(w.root, 'coordinator-data', 'x')) && !fs.existsSync(path.join(w.root, 'x')));
    assert.equal(fs.readdirSync(makemkvDir).filter((n) => n.startsWith('hkd_')).length, 2);
  });

  it('stores KEYDB.cfg as JSON content, hands it to the worker and removes it', async () => {
    const content = '; KEYDB\n0x0123456789ABCDEF0123456789ABCDEF01234567 = MY DISC | D | 2020-01-01 | V | 0x00112233\n';
    assert.equal((await api(c.url, 'POST', '/system/keydb', { content: 42 })).status, 400);
    const stored = await api<{ present: boolean; file: string; entries: number; size_bytes: number }>(c.url, 'POST', '/system/keydb', { content });
    assert.equal(stored.status, 200, stored.text);
    assert.deepEqual([stored.body.present, stored.body.file, stored.body.entries, stored.body.size_bytes], [true, 'KEYDB.cfg', 1, Buffer.byteLength(content)]);
    assert.equal(fs.readFileSync(path.join(w.root, 'coordinator-data', 'KEYDB.cfg'), 'utf8'), content);
    await waitFor('KEYDB.cfg on the worker', async () => fs.existsSync(path.join(makemkvDir, 'KEYDB.cfg')));
    // A text file of another kind under the name KEYDB.cfg has no entry: refused, the installed one kept (issue 38).
    const text = await api(c.url, 'POST', '/system/keydb', { content: 'Einkaufsliste\nMilch\nBrot\n' });
    assert.equal(text.status, 400);
    assert.match(text.text, /^no KEYDB entries found: .*the installed KEYDB\.cfg is kept/);
    assert.equal(text.headers.get('Ripwerk-Reason'), 'keydbEmpty');
    assert.equal(fs.readFileSync(path.join(w.root, 'coordinator-data', 'KEYDB.cfg'), 'utf8'), content);
    assert.equal((await api<{ present: boolean }>(c.url, 'GET', '/system/keydb')).body.present, true);
    assert.equal((await api(c.url, 'DELETE', '/system/keydb')).status, 200);
    const again = await api(c.url, 'DELETE', '/system/keydb');
    assert.equal(again.status, 404);
    assert.equal(again.text, 'there is no KEYDB.cfg to remove\n');
    await waitFor('KEYDB.cfg gone on the worker', async () => !fs.existsSync(path.join(makemkvDir, 'KEYDB.cfg')));
  });

  it('names the key count on a UHD disc with an unknown key and collects the AACS dump MakeMKV wrote', async () => {
    insertSparseBluray(kino.driveDir, 'UHD_FILM', 60 * 1024 ** 3);
    const device = 'kino-drive-kino';
    await waitFor('the UHD disc', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device && d.disc?.type === 'uhd'), 30_000);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    const failed = await waitForStatus(c.url, created.body.id, ['failed']);
    assert.equal(failed.error, 'the volume key of this 4K UHD disc is unknown: install a key store (POST /api/system/keystore); this worker knows 2 disc keys');
    const dumps = await waitFor('the dump on the coordinator', async () => {
      const r = await api<{ name: string; size_bytes: number }[]>(c.url, 'GET', '/system/aacs-dumps');
      return r.body.length ? r.body : undefined;
    });
    assert.deepEqual(dumps.map((d) => [d.name, d.size_bytes]), [['MKB20_v77_UHD_FILM_2A52.tgz', 14]]);
    const file = await fetch(`${c.url}/system/aacs-dumps/MKB20_v77_UHD_FILM_2A52.tgz`);
    assert.equal(file.status, 200);
    assert.equal(await file.text(), 'fake MKB dump\n');
    assert.equal((await api(c.url, 'GET', '/system/aacs-dumps/.hidden')).status, 400);
    assert.equal((await api(c.url, 'GET', '/system/aacs-dumps/nope.tgz')).status, 404);
  });
});
