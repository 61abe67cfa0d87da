import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { HttpError } from '../../../../coordinator/http/errors.js';
import { AACS_DUMPS_LIMIT_BYTES, KEY_BODY_LIMIT_BYTES, KEY_ENTRIES_LIMIT, KeyStore, readKeystoreArchive, safeEntryPath } from '../../../../coordinator/keys/key-store.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { extractAppKey, REFRESH_SCHEDULE, RipperAppKeyRefresher } from '../../../../coordinator/keys/ripper-app-key.js';
import { SettingsStore } from '../../../../coordinator/system/settings-store.js';
import { Logger } from '../../../../shared/log.js';
import { openDatabase } from '../../../../shared/sqlite.js';
import { FIXTURES_DIR, REPO_DIR } from '../../../fixtures/tools-samples.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-keys-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A zip built by Python's zipfile (entries as given, see test/fixtures/make-zip.py). */
function zip(...entries: string[]): Buffer {
  const out = path.join(root, `a-${++n}.zip`);
  execFileSync('python3', [path.join(FIXTURES_DIR, 'make-zip.py'), out, ...entries]);
  return fs.readFileSync(out);
}

async function refusal(body: Buffer): Promise<HttpError> {
  try {
    await readKeystoreArchive(body);
  } catch (err) {
    assert.ok(err instanceof HttpError, String(err));
    return err;
  }
  assert.fail('the archive was accepted');
}

describe('key store archives', () => {
  it('takes the hashed-key files, also from a subfolder, and nothing else', async () => {
    const files = await readKeystoreArchive(zip('keys/hkd_b.bin=BBB', 'hkd_a.bin=A', 'README.txt=hello', 'keys/other.bin=x'));
    assert.deepEqual(files.map((f) => [f.name, f.data.toString()]), [['hkd_a.bin', 'A'], ['hkd_b.bin', 'BBB']]);
  });

  it('refuses an archive without any hkd_*.bin, a body that is no zip, and entries leaving the folder', async () => {
    assert.match((await refusal(zip('README.txt=hello', 'keys.bin=x'))).message, /holds no hashed-key files \(hkd_\*\.bin\)/);
    assert.match((await refusal(Buffer.from('not a zip at all'))).message, /not a zip archive/);
    const escape = await refusal(zip('hkd_a.bin=A', '../x=evil'));
    assert.equal(escape.status, 400);
    assert.equal(escape.message, 'the archive entry "../x" points outside its folder: refused');
    assert.match((await refusal(zip('hkd_a.bin=A', 'keys/../../x=evil'))).message, /points outside its folder/);
    assert.match((await refusal(zip('/etc/hkd_x.bin=evil'))).message, /has an absolute path/);
    assert.match((await refusal(zip('..\\hkd_x.bin=evil'))).message, /uses a backslash/);
  });

  it('refuses an archive that declares more than 64 MB unpacked (a small zip bomb)', async () => {
    const bomb = zip('hkd_a.bin=A', `hkd_big.bin@${KEY_BODY_LIMIT_BYTES + 1024}`);
    assert.ok(bomb.length < 1024 * 1024, 'the archive itself is small');
    const err = await refusal(bomb);
    assert.equal(err.status, 413);
    assert.match(err.message, /declares 65 MB unpacked, more than the limit of 64 MB/);
  });

  it('refuses 40,000 empty hashed-key entries with 400 before reading any (the EMFILE archive)', async () => {
    const body = zip('40000*hkd_');
    const err = await refusal(body);
    assert.equal(err.status, 400);
    assert.equal(err.message, 'the archive has 40000 entries, more than the 10000 a key store may have: refused, nothing was installed');
    const most = await readKeystoreArchive(zip(`${KEY_ENTRIES_LIMIT}*hkd_`));
    assert.equal(most.length, KEY_ENTRIES_LIMIT, 'the limit itself is taken');
  });

  it('refuses an entry name over 255 characters and an encrypted entry with 400', async () => {
    const long = await refusal(zip(`hkd_${'a'.repeat(60_000)}.bin=x`, 'hkd_1.bin=y'));
    assert.deepEqual([long.status, long.message], [400, 'an archive entry name is 60008 characters long, more than 255: refused']);
    assert.equal((await readKeystoreArchive(zip(`keys/hkd_${'b'.repeat(241)}.bin=x`))).length, 1, '255 characters are fine');
    const locked = await refusal(zip('hkd_1.bin!=secret', 'hkd_2.bin=y'));
    assert.deepEqual([locked.status, locked.message], [400, 'the archive entry "hkd_1.bin" is encrypted: send a key store without a password']);
  });

  it('checks entry paths by segment', () => {
    assert.equal(safeEntryPath('keys/./hkd_a.bin'), 'keys/hkd_a.bin');
    assert.equal(safeEntryPath('..hkd_a.bin'), '..hkd_a.bin');
    assert.throws(() => safeEntryPath('a/../../b'), /outside its folder/);
    assert.throws(() => safeEntryPath('C:/keys/hkd.bin'), /absolute path/);
  });
});

describe('key store on disk', () => {
  it('installs, keeps the old store when a new archive is refused, and hands the files out', async () => {
    const store = new KeyStore(path.join(root, 'data-1'));
    const status = await store.installKeystore(zip('hkd_1.bin=one', 'hkd_2.bin=two'));
    assert.equal(status.schluessel, 2);
    assert.deepEqual(status.files, ['hkd_1.bin', 'hkd_2.bin']);
    assert.match(status.sha256 ?? '', /^[0-9a-f]{64}$/);
    await assert.rejects(store.installKeystore(zip('../x=evil', 'hkd_3.bin=three')), /outside its folder/);
    assert.equal((await store.keystoreStatus()).schluessel, 2);
    assert.ok(!fs.existsSync(path.join(root, 'x')), 'nothing was written outside');
    const msg = await store.keystoreMessage();
    assert.deepEqual(msg.files.map((f) => [f.name, Buffer.from(f.data_base64, 'base64').toString()]), [['hkd_1.bin', 'one'], ['hkd_2.bin', 'two']]);
    for (const name of ['hkd_1.bin', 'meta.json']) assert.equal(fs.statSync(path.join(root, 'data-1', 'keystore', name)).mode & 0o777, 0o600, name);
    assert.equal(fs.statSync(path.join(root, 'data-1', 'keystore')).mode & 0o777, 0o700);
    const replaced = await store.installKeystore(zip('hkd_9.bin=nine'));
    assert.deepEqual(replaced.files, ['hkd_9.bin']);
  });

  it('stores KEYDB.cfg under that exact name, counts entries and removes it', async () => {
    const dir = path.join(root, 'data-2');
    const store = new KeyStore(dir);
    assert.equal((await store.keydbStatus()).present, false);
    const status = await store.setKeydb('; comment\n0x0123456789ABCDEF0123456789ABCDEF01234567 = Disc | D | 2020-01-01 | V | 0x00\n\n0x456789ABCDEF0123456789ABCDEF0123456789AB = Other | D | 2020-01-01\n');
    assert.deepEqual([status.present, status.entries, status.file], [true, 2, 'KEYDB.cfg']);
    assert.deepEqual(fs.readdirSync(dir), ['KEYDB.cfg']);
    assert.equal(fs.statSync(path.join(dir, 'KEYDB.cfg')).mode & 0o777, 0o600, 'disc keys are the service user\'s only');
    assert.equal(await store.removeKeydb(), true);
    assert.equal(await store.removeKeydb(), false);
  });

  it('keeps AACS dumps once and by bare names only', async () => {
    const store = new KeyStore(path.join(root, 'data-3'));
    assert.equal(await store.storeDump('MKB20_v77_FILM_2A52.tgz', Buffer.from('one')), true);
    assert.equal(await store.storeDump('MKB20_v77_FILM_2A52.tgz', Buffer.from('two')), false);
    assert.equal(await store.storeDump('../escape.tgz', Buffer.from('x')), false);
    assert.equal(await store.storeDump('.hidden', Buffer.from('x')), false);
    assert.deepEqual((await store.listDumps()).map((d) => [d.name, d.size_bytes]), [['MKB20_v77_FILM_2A52.tgz', 3]]);
    assert.equal(await store.dumpPath('../data-1'), null);
    assert.ok((await store.dumpPath('MKB20_v77_FILM_2A52.tgz'))?.endsWith('/aacs-dumps/MKB20_v77_FILM_2A52.tgz'));
  });
});

describe('key files and links planted in DATA_DIR (issue 42)', () => {
  it('stores no dump into, and lists none from, a dumps folder that is a link elsewhere', async () => {
    const dir = path.join(root, 'data-4');
    fs.mkdirSync(dir);
    const away = fs.mkdtempSync(path.join(root, 'outside-'));
    fs.writeFileSync(path.join(away, 'secret.txt'), 'not a dump');
    fs.symlinkSync(away, path.join(dir, 'aacs-dumps'));
    const store = new KeyStore(dir);
    await assert.rejects(store.storeDump('MKB20_v77_FILM_2A52.tgz', Buffer.from('one')), { message: `${path.join(dir, 'aacs-dumps')} is a symbolic link that leads out of ${dir}: the dump was not stored` });
    assert.deepEqual(fs.readdirSync(away), ['secret.txt'], 'nothing written through the link');
    assert.deepEqual(await store.listDumps(), []);
    assert.equal(await store.dumpPath('secret.txt'), null);
  });

  it('writes KEYDB.cfg through no link planted at its names, replacing the link', async () => {
    const dir = path.join(root, 'data-5');
    fs.mkdirSync(dir);
    const away = fs.mkdtempSync(path.join(root, 'outside-'));
    fs.writeFileSync(path.join(away, 'victim'), 'keep');
    fs.symlinkSync(path.join(away, 'victim'), path.join(dir, 'KEYDB.cfg'));
    fs.symlinkSync(path.join(away, 'tmp-target'), path.join(dir, 'KEYDB.cfg.tmp'));
    await new KeyStore(dir).setKeydb('0x01 = New\n');
    assert.deepEqual(fs.readdirSync(away).sort(), ['victim']);
    assert.equal(fs.readFileSync(path.join(away, 'victim'), 'utf8'), 'keep');
    assert.ok(!fs.lstatSync(path.join(dir, 'KEYDB.cfg')).isSymbolicLink());
    assert.equal(fs.readFileSync(path.join(dir, 'KEYDB.cfg'), 'utf8'), '0x01 = New\n');
  });
});

describe('AACS dumps in total', () => {
  it('keeps the dumps below their total limit and says so when they reach it', async () => {
    assert.equal(AACS_DUMPS_LIMIT_BYTES, 16 * 1024 * 1024);
    const store = new KeyStore(path.join(root, 'data-cap'), 10);
    assert.equal(await store.storeDump('MKB_a.bin', Buffer.alloc(6)), true);
    await assert.rejects(store.storeDump('MKB_b.bin', Buffer.alloc(6)), /^Error: the AACS dumps hold 6 bytes; with 6 more they would pass their limit of 10 bytes: remove some \(DATA_DIR\/aacs-dumps\)$/);
    assert.deepEqual((await store.listDumps()).map((d) => d.name), ['MKB_a.bin']);
  });
});

describe('ripper application key', () => {
  const key = `T-${'a1B2'.repeat(16)}_@`;
  it('finds the key in the forum page, also behind entities', () => {
    assert.equal(key.length, 68);
    assert.equal(extractAppKey(`<div class="content">The current beta key is <code>${key}</code> valid until end of month</div>`), key);
    assert.equal(extractAppKey(`<code>${key.replace('@', '&#64;')}</code>`), key);
    assert.equal(extractAppKey('<p>no key today</p>'), null);
    assert.equal(extractAppKey(`<code>${key}X</code>`), null, 'a longer token is not a key');
  });

  it('saves and hands out a new key, and keeps the old one when the page fails or holds none', async () => {
    let page: { status: number; body: string } = { status: 200, body: `<code>${key}</code>` };
    const server = http.createServer((_req, res) => {
      res.statusCode = page.status;
      res.end(page.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const settings = new SettingsStore(openDatabase(path.join(root, 'app-key.sqlite'), coordinatorMigrations));
      const published: string[] = [];
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/t`;
      const refresher = new RipperAppKeyRefresher(settings, url, (k) => published.push(k), new Logger('t', true));
      assert.equal(await refresher.refresh(), 'updated');
      assert.equal(settings.get('ripperAppKey'), key);
      assert.equal(await refresher.refresh(), 'unchanged');
      page = { status: 500, body: 'down' };
      assert.equal(await refresher.refresh(), 'failed');
      page = { status: 200, body: '<p>the key is being renewed</p>' };
      assert.equal(await refresher.refresh(), 'failed');
      assert.equal(settings.get('ripperAppKey'), key, 'the old key is kept');
      assert.deepEqual(published, [key]);
    } finally {
      server.close();
    }
  });
});

describe('ripper key refresh schedule', () => {
  it('refreshes the ripper key once a day: a fixed minute and hour, every day', () => {
    const [minute, hour, ...rest] = REFRESH_SCHEDULE.split(' ');
    assert.match(minute ?? '', /^\d+$/);
    assert.match(hour ?? '', /^\d+$/);
    assert.deepEqual(rest, ['*', '*', '*']);
  });
});

describe('key store body limit', () => {
  it('takes key store and KEYDB bodies up to 64 MB, the same limit as the proxy in deploy/nginx-ripwerk.conf', () => {
    assert.equal(KEY_BODY_LIMIT_BYTES, 64 * 1024 * 1024);
    const conf = fs.readFileSync(path.join(REPO_DIR, 'deploy', 'nginx-ripwerk.conf'), 'utf8');
    const proxyMb = Number(/^\s*client_max_body_size (\d+)m;$/m.exec(conf)?.[1]);
    assert.equal(proxyMb * 1024 * 1024, KEY_BODY_LIMIT_BYTES);
  });
});
