import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FfmpegProgressParser, ffmpegPercent } from '../../../../agent/tools/ffmpeg-progress-parser.js';
import type { FfmpegProgress } from '../../../../agent/tools/ffmpeg-progress-parser.js';
import { chaptersMetadata } from '../../../../agent/tools/open-dvd-runner.js';
import { sampleSection } from '../../../fixtures/tools-samples.js';

function feed(lines: string[]): FfmpegProgress[] {
  const parser = new FfmpegProgressParser();
  return lines.map((l) => parser.push(l)).filter((b): b is FfmpegProgress => b !== null);
}

describe('FfmpegProgressParser', () => {
  it('reads the captured final block', () => {
    const lines = sampleSection('dvd-backup-remux.txt', '-progress pipe:1 -nostats');
    assert.deepEqual(feed(lines), [{ outTimeUs: 75008000, end: true }]);
  });

  it('returns one result per block, with N/A as 0', () => {
    const blocks = feed([
      'frame=0',
      'out_time_us=N/A',
      'out_time_ms=N/A',
      'progress=continue',
      'frame=150',
      'out_time_us=5926000',
      'out_time_ms=5926000',
      'progress=continue',
      'out_time_ms=6000000',
      'progress=end',
    ]);
    assert.deepEqual(blocks, [
      { outTimeUs: 0, end: false },
      { outTimeUs: 5926000, end: false },
      { outTimeUs: 6000000, end: true },
    ]);
  });

  it('ignores lines that are not key=value', () => {
    assert.deepEqual(feed(['', 'garbage', '=x']), []);
  });
});

describe('ffmpegPercent', () => {
  it('is out_time_us over the title length, capped, 100 at the end', () => {
    assert.equal(ffmpegPercent({ outTimeUs: 37504000, end: false }, 75.008), 50);
    assert.equal(ffmpegPercent({ outTimeUs: 90000000, end: false }, 75), 100);
    assert.equal(ffmpegPercent({ outTimeUs: 0, end: true }, 75), 100);
    assert.equal(ffmpegPercent({ outTimeUs: 1000, end: false }, 0), 0);
  });
});

describe('chaptersMetadata', () => {
  it('writes ffmetadata chapters from lsdvd chapter lengths', () => {
    assert.equal(
      chaptersMetadata([4.8, 1.2]),
      [
        ';FFMETADATA1',
        '[CHAPTER]',
        'TIMEBASE=1/1000',
        'START=0',
        'END=4800',
        'title=Chapter 1',
        '[CHAPTER]',
        'TIMEBASE=1/1000',
        'START=4800',
        'END=6000',
        'title=Chapter 2',
        '',
      ].join('\n'),
    );
  });
});
