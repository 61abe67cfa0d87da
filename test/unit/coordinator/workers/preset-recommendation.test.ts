import { reasonText } from '../../../../shared/reasons.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encoderFamilies, parsePresetList, parseVideoEncoders } from '../../../../agent/tools/handbrake-parser.js';
import { PRESET_CHOICES, recommendPreset } from '../../../../coordinator/workers/preset-recommendation.js';
import { sampleText } from '../../../fixtures/tools-samples.js';

const presets = parsePresetList(sampleText('hb-preset-list.txt'));
const known = new Set(presets.flatMap((c) => c.presets));

describe('encoder families from HandBrakeCLI --help', () => {
  it('reads the video encoders of the Debian build: software only', () => {
    const encoders = parseVideoEncoders(sampleText('hb-help.txt'));
    assert.deepEqual(encoders, ['svt_av1', 'svt_av1_10bit', 'x264', 'x264_10bit', 'x265', 'x265_10bit', 'x265_12bit', 'mpeg4', 'mpeg2', 'VP8', 'VP9', 'VP9_10bit', 'theora']);
    assert.deepEqual(encoderFamilies(encoders), ['software']);
  });

  it('maps hardware encoder names to their families', () => {
    // An upstream build's list (constructed from the sample plus the hardware encoders it documents).
    const help = sampleText('hb-help.txt').replace(/\n(\s+x264\n)/, '\n                               nvenc_h264\n                               nvenc_h265\n                               vce_h265\n                               mf_h265\n$1');
    const encoders = parseVideoEncoders(help);
    assert.ok(encoders.includes('nvenc_h265') && encoders.includes('x264'));
    assert.deepEqual(encoderFamilies(encoders), ['software', 'mf', 'nvenc', 'vce']);
    assert.deepEqual(encoderFamilies(['qsv_h265', 'vt_h265', 'vaapi_h264']), ['qsv', 'vaapi', 'vt']);
  });
});

describe('preset recommendation', () => {
  it('lists real preset names only (every one is in the recorded --preset-list)', () => {
    for (const list of Object.values(PRESET_CHOICES)) for (const c of list) assert.ok(known.has(c.preset), c.preset);
    assert.ok(presets.some((c) => c.category === 'Hardware'));
  });

  it('recommends software for a worker without hardware families, although the Hardware presets are listed', () => {
    assert.deepEqual(recommendPreset('bluray', known, ['software']), { preset: 'H.265 MKV 1080p30', reason: 'software encoding: the worker reports no hardware encoder family', reason_code: 'presetWhySoftware', reason_params: { family: '', skipped: '' } });
    assert.equal(recommendPreset('dvd', known, ['software']).preset, 'H.265 MKV 1080p30');
    assert.equal(recommendPreset('uhd', known, ['software']).preset, 'H.265 MKV 2160p60 4K');
  });

  it('recommends the hardware preset of a reported family; vce maps to VCN', () => {
    assert.deepEqual(recommendPreset('bluray', known, ['software', 'nvenc']), { preset: 'H.265 NVENC 1080p', reason: 'the worker reports the NVIDIA NVENC encoder family', reason_code: 'presetWhyFamily', reason_params: { family: 'NVIDIA NVENC', skipped: '' } });
    assert.equal(recommendPreset('uhd', known, ['software', 'vce']).preset, 'H.265 VCN 2160p 4K');
    assert.equal(recommendPreset('bluray', known, ['qsv']).preset, 'H.265 QSV 1080p');
    assert.equal(recommendPreset('dvd', known, ['software', 'nvenc']).preset, 'H.265 NVENC 1080p');
    assert.equal(recommendPreset('dvd', known, ['software', 'vce']).preset, 'H.265 VCN 1080p');
  });

  it('never recommends a 25 fps preset for a DVD (it would drop frames of an NTSC disc)', () => {
    for (const c of PRESET_CHOICES.dvd) assert.doesNotMatch(c.preset, /p25\b/, c.preset);
    assert.deepEqual(PRESET_CHOICES.dvd.filter((c) => c.family === null).map((c) => c.preset), ['H.265 MKV 1080p30', 'H.264 MKV 1080p30', 'Fast 1080p30']);
  });

  it('never recommends vaapi or the media-framework presets', () => {
    for (const s of ['dvd', 'bluray', 'uhd'] as const) {
      const r = recommendPreset(s, known, ['software', 'mf', 'vaapi']);
      assert.ok(r.preset && !/ MF |vaapi/i.test(r.preset), r.preset ?? '');
      assert.match(r.reason, /software encoding \(no hardware preset of its families is in its list\)|software encoding/);
    }
  });

  it('takes the next one when the worker lacks the first choice, and says so', () => {
    const without = new Set([...known].filter((p) => p !== 'H.265 MKV 1080p30'));
    const r = recommendPreset('bluray', without, ['software']);
    assert.equal(r.preset, 'H.264 MKV 1080p30');
    assert.match(r.reason, /it does not know H\.265 MKV 1080p30/);
    // Worded by the UI in its language from the code: the skipped presets travel as a parameter.
    assert.equal(r.reason_code, 'presetWhySoftware');
    assert.equal(r.reason_params.skipped, 'H.265 MKV 1080p30');
    assert.equal(reasonText(r.reason_code, r.reason_params, 'de'), 'Software-Kodierung: Der Worker meldet keine Hardware-Encoder-Familie');
    assert.deepEqual(recommendPreset('bluray', new Set(), []), { preset: null, reason: 'the worker reported no presets (is HandBrakeCLI installed?)', reason_code: 'presetWhyNoPresets', reason_params: { presets: 'H.265 NVENC 1080p, H.265 QSV 1080p, H.265 VCN 1080p, H.265 MKV 1080p30, H.264 MKV 1080p30, Fast 1080p30', skipped: '' } });
  });
});
