import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { carefulReads, restoreLeftSetting, settingValue, withSetting } from '../../../../agent/tools/makemkv-settings.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-makemkv-settings-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const CONF = '# MakeMKV settings\napp_Key = "T-abc"\nio_ErrorRetryCount = "3"\nio_IgnoreReadErrors = "1"\n';

describe("MakeMKV's settings.conf lines", () => {
  it('reads a value quoted or bare, the last line of a name counting, null when absent', () => {
    assert.equal(settingValue(CONF, 'io_ErrorRetryCount'), '3');
    assert.equal(settingValue('io_ErrorRetryCount=7\n', 'io_ErrorRetryCount'), '7');
    assert.equal(settingValue('io_ErrorRetryCount = "1"\n  io_ErrorRetryCount = "9"  \n', 'io_ErrorRetryCount'), '9');
    assert.equal(settingValue('app_Key = "x"\n# io_ErrorRetryCount = "4"\n', 'io_ErrorRetryCount'), null);
    assert.equal(settingValue(CONF, 'io_ErrorRetry'), null);
    assert.equal(settingValue('app_Key = ""\n', 'app_Key'), '');
  });

  it('sets a value (quoted, replacing every line of that name) and keeps the other lines as they were', () => {
    assert.equal(withSetting(CONF, 'io_ErrorRetryCount', '20'), '# MakeMKV settings\napp_Key = "T-abc"\nio_IgnoreReadErrors = "1"\nio_ErrorRetryCount = "20"\n');
    assert.equal(withSetting('a = "1"\nio_ErrorRetryCount=2\nio_ErrorRetryCount = "5"', 'io_ErrorRetryCount', '20'), 'a = "1"\nio_ErrorRetryCount = "20"\n');
    assert.equal(withSetting('', 'io_ErrorRetryCount', '20'), 'io_ErrorRetryCount = "20"\n');
  });

  it('removes the setting when the value is null (what a restore does for a setting that was not there)', () => {
    assert.equal(withSetting(CONF, 'io_ErrorRetryCount', null), '# MakeMKV settings\napp_Key = "T-abc"\nio_IgnoreReadErrors = "1"\n');
    assert.equal(withSetting('io_ErrorRetryCount = "20"\n', 'io_ErrorRetryCount', null), '');
    assert.equal(withSetting(CONF, 'io_IgnoreReadErrors_x', null), CONF);
  });
});

describe('careful reads for one MakeMKV run', () => {
  const read = (dir: string): string => fs.readFileSync(path.join(dir, 'settings.conf'), 'utf8');

  it('sets io_ErrorRetryCount for the run, keeps io_IgnoreReadErrors, and puts the old value back', async () => {
    const dir = path.join(root, 'a');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'settings.conf'), CONF, { mode: 0o600 });
    const release = await carefulReads(dir, 20);
    assert.equal(settingValue(read(dir), 'io_ErrorRetryCount'), '20');
    assert.equal(settingValue(read(dir), 'io_IgnoreReadErrors'), '1');
    assert.equal(settingValue(read(dir), 'app_Key'), 'T-abc');
    assert.equal(fs.statSync(path.join(dir, 'settings.conf')).mode & 0o777, 0o600);
    await release();
    assert.equal(settingValue(read(dir), 'io_ErrorRetryCount'), '3');
    assert.equal(settingValue(read(dir), 'io_IgnoreReadErrors'), '1');
    assert.equal(fs.statSync(path.join(dir, 'settings.conf')).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(dir), ['settings.conf']);
    await release();
    assert.equal(settingValue(read(dir), 'io_ErrorRetryCount'), '3', 'a second release changes nothing');
  });

  it('removes the setting again when there was none, and the file when there was no settings.conf', async () => {
    const dir = path.join(root, 'b');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'settings.conf'), 'app_Key = "T-abc"\n');
    const release = await carefulReads(dir, 20);
    await release();
    assert.equal(read(dir), 'app_Key = "T-abc"\n');
    const none = path.join(root, 'c', '.MakeMKV');
    const releaseNone = await carefulReads(none, 20);
    assert.equal(read(none), 'io_ErrorRetryCount = "20"\n');
    await releaseNone();
    assert.deepEqual(fs.readdirSync(none), []);
  });

  it('two careful runs at once: the old value comes back when the last one ends', async () => {
    const dir = path.join(root, 'd');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'settings.conf'), CONF);
    const [one, two] = await Promise.all([carefulReads(dir, 20), carefulReads(dir, 20)]);
    await one();
    assert.equal(settingValue(read(dir), 'io_ErrorRetryCount'), '20');
    await two();
    assert.equal(settingValue(read(dir), 'io_ErrorRetryCount'), '3');
  });

  it('a careful run the agent did not end (a crash) is put back at the next start, never saved as the old value', async () => {
    const dir = path.join(root, 'e');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'settings.conf'), CONF);
    await carefulReads(dir, 20); // never released: the agent died
    assert.equal(await restoreLeftSetting(dir), true);
    assert.equal(settingValue(read(dir), 'io_ErrorRetryCount'), '3');
    assert.equal(await restoreLeftSetting(dir), false);
  });
});
