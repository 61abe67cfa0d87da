import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  handbrakeFailureReason,
  handbrakeFps,
  HandbrakeJsonCollector,
  handbrakeProgress,
  parseHandbrakeScan,
  parseHandbrakeVersion,
  parsePresetList,
  workDone,
} from '../../../../agent/tools/handbrake-parser.js';
import type { HandbrakeJsonBlock } from '../../../../agent/tools/handbrake-parser.js';
import { sampleLines, sampleSection, sampleText } from '../../../fixtures/tools-samples.js';

function blocks(name: string): HandbrakeJsonBlock[] {
  const collector = new HandbrakeJsonCollector();
  return sampleLines(name)
    .filter((l) => !l.startsWith('# captured'))
    .map((l) => collector.push(l))
    .filter((b): b is HandbrakeJsonBlock => b !== null);
}

function percents(list: HandbrakeJsonBlock[]): number[] {
  return list.map(handbrakeProgress).filter((p): p is number => p !== null);
}

function close(actual: number[], expected: number[]): void {
  assert.equal(actual.length, expected.length, `${actual} vs ${expected}`);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 0.01, `${v} vs ${expected[i]}`));
}

/** The stderr text of one "## command" block of hb-errors.txt. */
function errorBlock(command: string): string {
  return sampleSection('hb-errors.txt', command, '## ').join('\n');
}

describe('HandbrakeJsonCollector', () => {
  it('collects the blocks of a one-pass run and skips libdvdread noise', () => {
    const list = blocks('hb-json-progress-1pass.txt');
    assert.deepEqual(
      list.map((b) => b.label),
      ['Version', 'Progress', 'Progress', 'Progress', 'Progress', 'Progress', 'Progress', 'Progress', 'Progress'],
    );
    assert.equal((list[0].value as { VersionString: string }).VersionString, '1.6.1');
  });

  it('returns a one-line block at once', () => {
    const collector = new HandbrakeJsonCollector();
    assert.deepEqual(collector.push('Progress: {"State": "WORKDONE", "WorkDone": {"Error": 0}}'), {
      label: 'Progress',
      value: { State: 'WORKDONE', WorkDone: { Error: 0 } },
    });
  });
});

describe('handbrakeProgress', () => {
  it('gives the one-pass WORKING percents and nothing for MUXING/WORKDONE', () => {
    const list = blocks('hb-json-progress-1pass.txt');
    close(percents(list), [20.8, 37.0, 54.8, 72.2, 91.4, 99.8]);
    const muxing = list.find((b) => (b.value as { State: string }).State === 'MUXING');
    assert.ok(muxing);
    assert.equal(handbrakeProgress(muxing), null);
  });

  it('spreads two passes over the whole bar', () => {
    const values = percents(blocks('hb-json-progress-2pass.txt'));
    close(values, [11.7, 19.0, 29.6, 42.5, 49.9, 51.6, 60.4, 67.8, 76.8, 84.3, 90.9, 99.9, 99.9]);
    assert.deepEqual(values, [...values].sort((a, b) => a - b));
  });

  it('ignores SCANNING and non-progress blocks', () => {
    const scanning: HandbrakeJsonBlock = { label: 'Progress', value: { State: 'SCANNING', Scanning: { Progress: 0.5, Title: 1, TitleCount: 1 } } };
    assert.equal(handbrakeProgress(scanning), null);
    assert.equal(handbrakeProgress({ label: 'Version', value: { Name: 'HandBrake' } }), null);
  });
});

describe('workDone', () => {
  it('reads the WORKDONE error', () => {
    const list = blocks('hb-json-progress-1pass.txt');
    assert.deepEqual(workDone(list[list.length - 1]), { error: 0 });
    assert.equal(workDone(list[1]), null);
    assert.deepEqual(workDone({ label: 'Progress', value: { State: 'WORKDONE', WorkDone: { Error: 3 } } }), { error: 3 });
  });
});

describe('parseHandbrakeScan', () => {
  it('reads index and duration from Ticks', () => {
    const scan = parseHandbrakeScan(sampleText('hb-scan-json.txt'));
    assert.equal(scan.titles.length, 1);
    assert.equal(scan.titles[0].index, 1);
    assert.ok(Math.abs(scan.titles[0].seconds - 120.005) < 1e-9);
  });

  it('gives no titles for output without a title set', () => {
    assert.deepEqual(parseHandbrakeScan(sampleText('hb-json-progress-1pass.txt')), { titles: [] });
  });
});

describe('parsePresetList', () => {
  const categories = parsePresetList(sampleText('hb-preset-list.txt'));

  it('finds every category of 1.6.1', () => {
    assert.deepEqual(
      categories.map((c) => c.category),
      ['General', 'Web', 'Devices', 'Matroska', 'Hardware', 'Production', 'CLI Defaults'],
    );
  });

  it('lists the hardware presets and no description lines', () => {
    const hardware = categories.find((c) => c.category === 'Hardware');
    assert.deepEqual(hardware?.presets, [
      'AV1 QSV 2160p 4K',
      'H.265 NVENC 2160p 4K',
      'H.265 NVENC 1080p',
      'H.265 QSV 2160p 4K',
      'H.265 QSV 1080p',
      'H.265 VCN 2160p 4K',
      'H.265 VCN 1080p',
      'H.265 MF 2160p 4K',
      'H.265 MF 1080p',
    ]);
    const general = categories.find((c) => c.category === 'General');
    assert.ok(general?.presets.includes('Very Fast 480p30'));
    assert.ok(general?.presets.includes('Fast 1080p30'));
    assert.ok(!general?.presets.some((p) => p.includes('container')));
    assert.deepEqual(categories.find((c) => c.category === 'CLI Defaults')?.presets, ['CLI Default']);
  });

  it('reads the list HandBrake dumps after an invalid preset (indented by 4)', () => {
    const listing = sampleSection('hb-preset-list.txt', 'The whole list goes to STDERR', 'HandBrake has exited.')
      .filter((l) => !l.startsWith('Cannot load'))
      .map((l) => `    ${l}`);
    const dump = ['Invalid preset No Such Preset', 'Valid presets are:', ...listing, 'HandBrake has exited.'].join('\n');
    const parsed = parsePresetList(dump);
    assert.deepEqual(parsed, categories);
  });

  it('reads a build without a Hardware category (the other categories unchanged)', () => {
    const lines = sampleLines('hb-preset-list.txt');
    const from = lines.indexOf('Hardware/');
    const to = lines.indexOf('Production/');
    assert.ok(from > 0 && to > from);
    const parsed = parsePresetList([...lines.slice(0, from), ...lines.slice(to)].join('\n'));
    assert.deepEqual(parsed.map((c) => c.category), ['General', 'Web', 'Devices', 'Matroska', 'Production', 'CLI Defaults']);
    assert.deepEqual(parsed, categories.filter((c) => c.category !== 'Hardware'));
    assert.ok(!parsed.some((c) => c.presets.some((p) => / (NVENC|QSV|VCN|MF) /.test(p))));
  });
});

describe('handbrakeFailureReason', () => {
  it('names an unknown preset', () => {
    const stderr = errorBlock('-Z "No Such Preset"');
    assert.equal(handbrakeFailureReason(stderr, 2, 'No Such Preset'), 'The transcoder does not know the preset "No Such Preset"');
  });

  it('says the input is unreadable when no title is found', () => {
    for (const command of ['-i nothere.mkv', '-i garbage.mkv']) {
      assert.equal(handbrakeFailureReason(errorBlock(command), 2, 'Fast 1080p30'), 'The transcoder could not read the input file: it holds no video it can open');
    }
  });

  it('reports the ERROR: line of an encode failure', () => {
    assert.equal(
      handbrakeFailureReason(errorBlock('-o /nodir/x.mkv'), 3, 'Fast 1080p30'),
      'Encode failed: avio_open2 failed, errno -2: Could not write to indicated output file. Please check destination path and file permissions',
    );
  });

  it('reports the [codec @ …] line of a hardware preset without hardware', () => {
    assert.equal(handbrakeFailureReason(errorBlock('-Z "H.265 NVENC 1080p"'), 3, 'H.265 NVENC 1080p'), 'Encode failed: hevc_nvenc: Cannot load libcuda.so.1');
  });

  it('never gives a bare exit code', () => {
    assert.equal(handbrakeFailureReason('[20:52:58] something\nHandBrake has exited.\n', 4, 'Fast 1080p30'), 'The transcoder stopped with exit code 4 while using preset "Fast 1080p30"');
    assert.equal(handbrakeFailureReason('', null, 'Fast 1080p30'), 'The transcoder was stopped by a signal while using preset "Fast 1080p30"');
  });
});

describe('parseHandbrakeVersion', () => {
  it('reads the --version line', () => {
    assert.equal(parseHandbrakeVersion('HandBrake 1.6.1\n'), '1.6.1');
    assert.equal(parseHandbrakeVersion('nothing'), null);
  });
});

describe('handbrakeFps', () => {
  it('gives no speed while HandBrake has measured none: 0.0 at first, 2.5e-7 at the end of a short encode (captured runs)', () => {
    for (const name of ['hb-json-progress-1pass.txt', 'hb-json-progress-2pass.txt']) {
      const list = blocks(name).filter((b) => handbrakeProgress(b) !== null);
      assert.ok(list.length > 3);
      assert.deepEqual([...new Set(list.map(handbrakeFps))], [null], name);
    }
  });

  it('takes Rate, else RateAvg, and nothing from other states', () => {
    const working = (w: Record<string, unknown>): HandbrakeJsonBlock => ({ label: 'Progress', value: { State: 'WORKING', Working: { Progress: 0.5, Pass: 1, PassCount: 1, ...w } } });
    // Values of a 40 s 720p encode with "Very Fast 480p30" (HandBrakeCLI 1.6.1).
    assert.equal(handbrakeFps(working({ Rate: 44.899120330810547, RateAvg: 37.657920837402344 })), 44.899120330810547);
    assert.equal(handbrakeFps(working({ Rate: 0, RateAvg: 24.5 })), 24.5);
    assert.equal(handbrakeFps(working({ Rate: 0, RateAvg: 0 })), null);
    assert.equal(handbrakeFps(working({})), null);
    assert.equal(handbrakeFps({ label: 'Progress', value: { State: 'MUXING', Muxing: { Progress: 0 }, Working: { Rate: 50 } } }), null);
    assert.equal(handbrakeFps({ label: 'Version', value: { Name: 'HandBrake' } }), null);
  });
});
