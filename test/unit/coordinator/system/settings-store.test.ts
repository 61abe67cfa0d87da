import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import {
  isSettingName,
  keepKeyForHost,
  maskUrlCredentials,
  restoreMaskedUrl,
  SECRET_MASK,
  SECRET_SETTINGS,
  SETTING_DEFAULTS,
  SettingsError,
  SettingsStore,
  validateSetting,
} from '../../../../coordinator/system/settings-store.js';
import { openDatabase } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-settings-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
function store(): SettingsStore {
  return new SettingsStore(openDatabase(path.join(root, `s-${++n}.sqlite`), coordinatorMigrations));
}

describe('validateSetting: mediaServerType', () => {
  it('takes the product name in any case and stores the lower-case kind', () => {
    assert.equal(validateSetting('mediaServerType', 'Jellyfin'), 'jellyfin');
    assert.equal(validateSetting('mediaServerType', ' PLEX '), 'plex');
    assert.equal(validateSetting('mediaServerType', ''), '');
    assert.throws(() => validateSetting('mediaServerType', 3), SettingsError);
  });
});

describe('SettingsStore', () => {
  it('answers the defaults for an empty table', () => {
    const s = store();
    assert.deepEqual(s.all(), { ...SETTING_DEFAULTS });
    assert.equal(s.get('transcodePreset'), 'Fast 1080p30');
    assert.equal(s.get('autoEject'), true);
    assert.equal(s.get('keepOriginal'), false);
  });

  it('stores values with their types and keeps the others at their defaults', () => {
    const s = store();
    s.set({ keepOriginal: true, workDir: '/media/raw', transcodePreset: 'H.265 MKV 1080p30' });
    assert.equal(s.get('keepOriginal'), true);
    assert.equal(s.get('workDir'), '/media/raw');
    assert.equal(s.get('transcodePreset'), 'H.265 MKV 1080p30');
    assert.equal(s.get('autoEject'), true);
    s.set({ keepOriginal: false });
    assert.equal(s.get('keepOriginal'), false, 'a later write replaces the value');
  });

  it('hands out copies: changing an answer changes neither the store nor the defaults', () => {
    const s = store();
    const all = s.all() as Record<string, unknown>;
    all.workDir = '/changed';
    assert.equal(s.get('workDir'), '');
    assert.equal(SETTING_DEFAULTS.workDir, '');
  });

  it('answers from memory between writes, and every write through the store is seen at once', () => {
    const s = store();
    assert.equal(s.get('transcodePreset'), 'Fast 1080p30');
    s.set({ transcodePreset: 'Very Fast 480p30' });
    assert.equal(s.get('transcodePreset'), 'Very Fast 480p30');
    s.setRaw('transcodePreset', 'HQ 720p30 Surround');
    assert.equal(s.all().transcodePreset, 'HQ 720p30 Surround');
    s.setRaw('tracks:kitchen-sr0', []);
    assert.equal(s.get('transcodePreset'), 'HQ 720p30 Surround');
  });

  it('keeps free-form keys apart from the settings', () => {
    const s = store();
    assert.equal(s.getRaw('tracks:kitchen-sr0'), undefined);
    s.setRaw('tracks:kitchen-sr0', [{ number: 1, seconds: 60 }]);
    assert.deepEqual(s.getRaw('tracks:kitchen-sr0'), [{ number: 1, seconds: 60 }]);
  });

  it('masks secrets that are set in the public view, and only there', () => {
    const s = store();
    s.set({ tmdbApiKey: 'tmdb-secret', webhookUrl: 'https://hook.example/abc', mediaServerUrl: 'http://jellyfin:8096' });
    const view = s.publicView();
    assert.equal(view.tmdbApiKey, SECRET_MASK);
    assert.equal(view.webhookUrl, SECRET_MASK);
    assert.equal(view.omdbApiKey, '', 'an empty secret stays empty, so the UI can tell it is not set');
    assert.equal(view.mediaServerUrl, 'http://jellyfin:8096', 'non-secret values are shown');
    assert.ok(!JSON.stringify(view).includes('tmdb-secret'));
    assert.ok(!JSON.stringify(view).includes('hook.example'));
    assert.equal(s.get('tmdbApiKey'), 'tmdb-secret', 'the stored value is untouched');
  });

  it('masks the password in a URL setting and keeps internal keys out of the settings', () => {
    const s = store();
    s.set({ mediaServerUrl: 'http://kodi:geheim@192.168.1.5:8080' });
    s.setRaw('tracks:kitchen-sr0', [{ number: 1, seconds: 60 }]);
    const view = s.publicView();
    assert.equal(view.mediaServerUrl, `http://kodi:${SECRET_MASK}@192.168.1.5:8080`);
    assert.ok(!JSON.stringify(view).includes('geheim'));
    assert.ok(!('tracks:kitchen-sr0' in view) && !('tracks:kitchen-sr0' in s.all()), 'tracks:<device> is no setting');
    assert.deepEqual(Object.keys(view).sort(), Object.keys(SETTING_DEFAULTS).sort());
    s.set({ mediaServerUrl: 'http://token123@kodi:8080/' });
    assert.equal(s.publicView().mediaServerUrl, `http://${SECRET_MASK}@kodi:8080/`, 'a user part without password may be a token');
    s.set({ mediaServerUrl: 'http://jellyfin:8096' });
    assert.equal(s.publicView().mediaServerUrl, 'http://jellyfin:8096');
  });

  it('puts the stored credentials back into a URL sent with the mask', () => {
    const stored = 'http://kodi:geheim@192.168.1.5:8080';
    assert.equal(restoreMaskedUrl('mediaServerUrl', maskUrlCredentials(stored), stored), stored);
    assert.equal(restoreMaskedUrl('mediaServerUrl', `http://kodi:${SECRET_MASK}@192.168.1.5:8096/jsonrpc`, stored), 'http://kodi:geheim@192.168.1.5:8096/jsonrpc', 'the same host on another port or path keeps it');
    assert.equal(restoreMaskedUrl('mediaServerUrl', `http://KODI:${SECRET_MASK}@kodi.fritz.box/`, 'http://kodi:geheim@Kodi.Fritz.Box:8080/'), 'http://KODI:geheim@kodi.fritz.box/', 'host names compare without case');
  });

  it('keeps a masked password only for the host it was saved for (issue 42)', () => {
    const stored = 'http://kodi:geheim@192.168.1.5:8080';
    assert.throws(
      () => restoreMaskedUrl('mediaServerUrl', `http://kodi:${SECRET_MASK}@192.168.1.66:8080`, stored),
      (err: Error) => err instanceof SettingsError && err.message === `mediaServerUrl holds the mask ${SECRET_MASK} where its password belongs, but the stored password is for 192.168.1.5, not 192.168.1.66: type the password for the new host`,
    );
    assert.throws(() => restoreMaskedUrl('mediaServerUrl', `http://${SECRET_MASK}@evil.example/`, 'http://token123@kodi/'), /the stored password is for kodi, not evil\.example/);
    assert.equal(restoreMaskedUrl('mediaServerUrl', 'http://kodi:neu@192.168.1.5:8080', stored), 'http://kodi:neu@192.168.1.5:8080', 'a typed password wins');
    assert.equal(restoreMaskedUrl('mediaServerUrl', `http://${SECRET_MASK}@kodi/`, 'http://token123@kodi/'), 'http://token123@kodi/');
    assert.throws(() => restoreMaskedUrl('mediaServerUrl', `http://kodi:${SECRET_MASK}@kodi/`, 'http://kodi/'), /holds the mask .* type the password/);
  });

  it('keeps the media server key only for the host it was saved for (issue 42)', () => {
    const stored = { ...SETTING_DEFAULTS, mediaServerUrl: 'http://192.168.1.5:8096', mediaServerKey: 'k3y' } as Parameters<typeof keepKeyForHost>[1];
    // Another host without a new key: refused, the key would go to it.
    assert.throws(
      () => keepKeyForHost({ mediaServerUrl: 'http://192.168.1.66:8096' }, stored),
      (err: Error) => err instanceof SettingsError && err.message === 'mediaServerKey was saved for the media server at 192.168.1.5: send the key for 192.168.1.66 together with the new mediaServerUrl (or an empty mediaServerKey to remove it)',
    );
    // A new key with it, or an empty one: fine.
    assert.deepEqual(keepKeyForHost({ mediaServerUrl: 'http://192.168.1.66:8096', mediaServerKey: 'n3w' }, stored), { mediaServerUrl: 'http://192.168.1.66:8096', mediaServerKey: 'n3w' });
    assert.deepEqual(keepKeyForHost({ mediaServerUrl: 'http://192.168.1.66:8096', mediaServerKey: '' }, stored), { mediaServerUrl: 'http://192.168.1.66:8096', mediaServerKey: '' });
    // The same host (another port, path or case), or no URL change: the key stays.
    assert.deepEqual(keepKeyForHost({ mediaServerUrl: 'https://192.168.1.5:8920/jf' }, stored), { mediaServerUrl: 'https://192.168.1.5:8920/jf' });
    assert.deepEqual(keepKeyForHost({ autoEject: false }, stored), { autoEject: false });
    // The URL emptied: the key goes with it, so a later URL cannot inherit it.
    assert.deepEqual(keepKeyForHost({ mediaServerUrl: '' }, stored), { mediaServerUrl: '', mediaServerKey: '' });
    // No key stored: nothing to keep.
    assert.deepEqual(keepKeyForHost({ mediaServerUrl: 'http://elsewhere:8096' }, { ...stored, mediaServerKey: '' }), { mediaServerUrl: 'http://elsewhere:8096' });
  });

  it('masks every secret setting', () => {
    const s = store();
    const values: Record<string, string> = {};
    for (const name of SECRET_SETTINGS) values[name] = `value-of-${name}`;
    s.set(values);
    const view = s.publicView();
    for (const name of SECRET_SETTINGS) assert.equal(view[name], SECRET_MASK, name);
    assert.deepEqual([...SECRET_SETTINGS].sort(), ['mediaServerKey', 'omdbApiKey', 'ripperAppKey', 'tmdbApiKey', 'webhookUrl']);
  });
});

describe('validateSetting', () => {
  it('accepts values of the type of the default', () => {
    assert.equal(validateSetting('keepOriginal', true), true);
    assert.equal(validateSetting('workDir', '/media/raw'), '/media/raw');
    assert.equal(validateSetting('workDir', ''), '');
  });

  it('refuses unknown names, including names from the object prototype', () => {
    assert.throws(() => validateSetting('nope', 1), (err: unknown) => err instanceof SettingsError && err.message === 'unknown setting "nope"');
    assert.throws(() => validateSetting('toString', 'x'), SettingsError);
    assert.throws(() => validateSetting('__proto__', {}), SettingsError);
    assert.equal(isSettingName('constructor'), false);
    assert.equal(isSettingName('autoEject'), true);
  });

  it('refuses a value of the wrong type, naming the expected one', () => {
    assert.throws(() => validateSetting('keepOriginal', 'true'), { message: 'setting "keepOriginal" must be a boolean' });
    assert.throws(() => validateSetting('workDir', 5), { message: 'setting "workDir" must be a string' });
    assert.throws(() => validateSetting('autoEject', null), SettingsError);
    assert.throws(() => validateSetting('workDir', ['/a']), SettingsError);
  });

  it('takes the URL settings without the spaces and line breaks around them, and refuses one with a space or control character inside (issue 42)', () => {
    assert.equal(validateSetting('webhookUrl', ' \n\thttps://ntfy.example/ripwerk\r\n '), 'https://ntfy.example/ripwerk');
    assert.equal(validateSetting('mediaServerUrl', 'http://jellyfin:8096\n'), 'http://jellyfin:8096');
    assert.equal(validateSetting('webhookUrl', '  '), '', 'only spaces: no webhook');
    for (const bad of ['https://ntfy.example/rip werk', 'https://ntfy.example/\nX-Injected: 1', 'https://ntfy.example/\u0000']) {
      assert.throws(() => validateSetting('webhookUrl', bad), (err: Error) => err instanceof SettingsError && err.message === 'setting "webhookUrl" must be one URL without spaces or control characters inside', JSON.stringify(bad));
    }
  });

  it('refuses strings longer than 4096 characters', () => {
    assert.equal(validateSetting('webhookUrl', 'x'.repeat(4096)), 'x'.repeat(4096));
    assert.throws(() => validateSetting('webhookUrl', 'x'.repeat(4097)), /longer than 4096/);
  });
});

describe('the setting ripTitleKinds', () => {
  it('wants every kind of title by default', () => {
    assert.deepEqual(SETTING_DEFAULTS.ripTitleKinds, ['main_feature', 'episodes', 'extras']);
    assert.deepEqual(store().get('ripTitleKinds'), ['main_feature', 'episodes', 'extras']);
  });

  it('takes a non-empty subset of the three kinds, in their canonical order and without repeats', () => {
    assert.deepEqual(validateSetting('ripTitleKinds', ['main_feature']), ['main_feature']);
    assert.deepEqual(validateSetting('ripTitleKinds', ['extras', 'main_feature']), ['main_feature', 'extras']);
    assert.deepEqual(validateSetting('ripTitleKinds', ['extras', 'episodes', 'main_feature', 'extras']), ['main_feature', 'episodes', 'extras']);
  });

  it('refuses an empty list, saying why', () => {
    assert.throws(
      () => validateSetting('ripTitleKinds', []),
      (err: unknown) =>
        err instanceof SettingsError &&
        err.message === 'setting "ripTitleKinds" must name at least one title kind (main_feature, episodes, extras): a recognised disc would otherwise never be ripped automatically',
    );
  });

  it('refuses a kind it does not know and a value that is no list, naming the kinds', () => {
    assert.throws(() => validateSetting('ripTitleKinds', ['main_feature', 'trailers']), {
      message: 'setting "ripTitleKinds": "trailers" is no title kind (main_feature, episodes, extras)',
    });
    assert.throws(() => validateSetting('ripTitleKinds', ['main_feature', 3]), /"3" is no title kind/);
    assert.throws(() => validateSetting('ripTitleKinds', [null]), SettingsError);
    assert.throws(() => validateSetting('ripTitleKinds', 'main_feature'), { message: 'setting "ripTitleKinds" must be a list of title kinds (main_feature, episodes, extras)' });
    assert.throws(() => validateSetting('ripTitleKinds', { main_feature: true }), SettingsError);
    assert.throws(() => validateSetting('ripTitleKinds', ['Main_Feature']), SettingsError, 'the names are exact');
  });

  it('stores the validated list and answers it', () => {
    const s = store();
    s.set({ ripTitleKinds: validateSetting('ripTitleKinds', ['extras', 'episodes']) as readonly string[] });
    assert.deepEqual(s.get('ripTitleKinds'), ['episodes', 'extras']);
  });
});

describe('the setting chunkMinMinutes (issue 41)', () => {
  it('splits titles longer than 20 minutes by default', () => {
    assert.equal(SETTING_DEFAULTS.chunkMinMinutes, 20);
  });

  it('takes minutes with decimals from 0 (never) to a day', () => {
    assert.equal(validateSetting('chunkMinMinutes', 0), 0);
    assert.equal(validateSetting('chunkMinMinutes', 0.5), 0.5);
    assert.equal(validateSetting('chunkMinMinutes', 45), 45);
    assert.equal(validateSetting('chunkMinMinutes', 1440), 1440);
  });

  it('refuses a negative, too large or non-number value, saying what it takes', () => {
    for (const bad of [-0.1, 1440.5, Number.NaN, Number.POSITIVE_INFINITY, '20', null, true]) {
      assert.throws(
        () => validateSetting('chunkMinMinutes', bad),
        (err: Error) => err instanceof SettingsError && err.message === 'setting "chunkMinMinutes" must be a number of minutes from 0 (never split a title) to 1440; decimals are taken (0.5 is 30 seconds)',
        String(bad),
      );
    }
  });
});
