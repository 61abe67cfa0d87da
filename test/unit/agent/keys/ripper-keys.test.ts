import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { RipperKeys, withAppKey } from '../../../../agent/keys/ripper-keys.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-agent-keys-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('ripper keys on a worker', () => {
  it('writes app_Key into settings.conf and keeps the other lines', () => {
    const conf = '# MakeMKV settings\napp_DataDir = "/data"\napp_Key = "T-old"\napp_UpdateEnable = "0"\n';
    assert.equal(withAppKey(conf, 'T-new'), '# MakeMKV settings\napp_DataDir = "/data"\napp_UpdateEnable = "0"\napp_Key = "T-new"\n');
    assert.equal(withAppKey('', 'T-new'), 'app_Key = "T-new"\n');
    assert.equal(withAppKey(conf, null), '# MakeMKV settings\napp_DataDir = "/data"\napp_UpdateEnable = "0"\n');
  });

  it('installs the hashed-key files, drops the ones no longer listed, ignores foreign names', async () => {
    const dir = path.join(root, 'a', '.MakeMKV');
    const keys = new RipperKeys(dir);
    assert.equal(await keys.count(), 0);
    const files = [{ name: 'hkd_1.bin', data_base64: b64('one') }, { name: 'hkd_2.bin', data_base64: b64('two') }, { name: '../hkd_3.bin', data_base64: b64('x') }, { name: 'settings.conf', data_base64: b64('x') }];
    assert.equal(await keys.applyKeystore({ sha256: 'x', installed_at: null, files }), 2);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['hkd_1.bin', 'hkd_2.bin']);
    assert.equal(fs.statSync(path.join(dir, 'hkd_1.bin')).mode & 0o777, 0o600);
    assert.equal(await keys.applyKeystore({ sha256: 'y', installed_at: null, files: [files[1]] }), 1);
    assert.deepEqual(fs.readdirSync(dir), ['hkd_2.bin']);
    assert.ok(!fs.existsSync(path.join(root, 'a', 'hkd_3.bin')));
  });

  it('writes and removes KEYDB.cfg, updates settings.conf in place', async () => {
    const dir = path.join(root, 'b', '.MakeMKV');
    const keys = new RipperKeys(dir);
    await keys.applyKeydb({ content: '0x01 = Disc\n' });
    assert.equal(fs.readFileSync(path.join(dir, 'KEYDB.cfg'), 'utf8'), '0x01 = Disc\n');
    await keys.applyKeydb({ content: null });
    assert.ok(!fs.existsSync(path.join(dir, 'KEYDB.cfg')));
    // MakeMKV (or an older Ripwerk) left it readable by everyone; with the key in it, it becomes 0600.
    fs.writeFileSync(path.join(dir, 'settings.conf'), 'app_ExpertMode = "1"\n', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'settings.conf'), 0o644);
    await keys.applyAppKey({ key: 'T-abc' });
    assert.equal(fs.readFileSync(path.join(dir, 'settings.conf'), 'utf8'), 'app_ExpertMode = "1"\napp_Key = "T-abc"\n');
    assert.equal(fs.statSync(path.join(dir, 'settings.conf')).mode & 0o777, 0o600);
    fs.chmodSync(path.join(dir, 'settings.conf'), 0o644);
    await keys.applyAppKey({ key: 'T-abc' });
    assert.equal(fs.statSync(path.join(dir, 'settings.conf')).mode & 0o777, 0o600, 'the same key again still tightens the mode');
    await keys.applyKeydb({ content: '0x02 = Disc\n' });
    assert.equal(fs.statSync(path.join(dir, 'KEYDB.cfg')).mode & 0o777, 0o600);
  });

  it('finds each new AACS dump once', async () => {
    const dir = path.join(root, 'c', '.MakeMKV');
    fs.mkdirSync(dir, { recursive: true });
    const keys = new RipperKeys(dir);
    fs.writeFileSync(path.join(dir, 'MKB20_v77_FILM_2A52.tgz'), 'dump');
    fs.writeFileSync(path.join(dir, 'settings.conf'), 'x');
    assert.deepEqual((await keys.newDumps()).map((d) => [d.name, d.data.toString()]), [['MKB20_v77_FILM_2A52.tgz', 'dump']]);
    assert.deepEqual(await keys.newDumps(), []);
  });
});
