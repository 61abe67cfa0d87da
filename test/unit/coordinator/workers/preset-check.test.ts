/**
 * Issue 38: a typo in the HandBrake preset was saved and the next job failed after its rip. A preset
 * is saved only when a worker's reported list has it (online workers first, else the lists reported
 * last, else the built-in names Ripwerk knows).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { presetRefusal, type PresetLists } from '../../../../coordinator/workers/preset-check.js';

const list = ['Very Fast 480p30', 'Fast 1080p30', 'H.265 MKV 1080p30', 'H.265 NVENC 1080p'];
const worker = (name: string, online: boolean, presets = list, encoders: string[] = []): PresetLists => ({ name, online, presets, encoders });

describe('the transcode preset on save', () => {
  it('takes a preset an online worker reports', () => {
    assert.equal(presetRefusal('Fast 1080p30', [worker('keller', true)]), null);
    assert.equal(presetRefusal('Only There', [worker('keller', true), worker('buero', true, ['Only There'])]), null);
  });

  it('refuses a typo with the online workers and the recommendation (hardware where the worker reports it)', () => {
    const r = presetRefusal('Fast 1080p3O', [worker('keller', true, list, ['nvenc']), worker('alt', false, ['Fast 1080p3O'])]);
    assert.equal(r?.code, 'presetUnknown');
    assert.deepEqual(r?.params, { preset: 'Fast 1080p3O', workers: 'keller', recommendation: 'H.265 NVENC 1080p' });
    assert.match(r?.text ?? '', /"Fast 1080p3O" is in no online worker's preset list \(keller\); recommended: "H.265 NVENC 1080p"/);
  });

  it('with no worker online, checks the lists reported last and says so', () => {
    assert.equal(presetRefusal('Very Fast 480p30', [worker('keller', false)]), null);
    const r = presetRefusal('Kein Preset 9000', [worker('keller', false)]);
    assert.equal(r?.code, 'presetUnknownOffline');
    assert.match(r?.text ?? '', /reported last \(keller\); no worker is online/);
  });

  it('with no list at all, takes only the built-in names Ripwerk knows', () => {
    assert.equal(presetRefusal('H.265 MKV 2160p60 4K', []), null);
    assert.equal(presetRefusal('Very Fast 480p30', []), null, 'a name of HandBrakeCLI 1.6.1\'s own list');
    assert.equal(presetRefusal('Fast 1080p30', [worker('neu', true, [])]), null);
    const r = presetRefusal('Fast 1080p3O', []);
    assert.equal(r?.code, 'presetNoLists');
    assert.match(r?.text ?? '', /no worker has reported its preset list yet/);
  });
});
