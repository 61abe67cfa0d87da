import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ffprobeStreams, ffprobeSubtitleEvents } from '../../../../agent/tools/ffprobe-runner.js';
import { parseFfprobePacketCounts } from '../../../../agent/tools/ffprobe-parser.js';
import { readMatroskaStreams } from '../../../../agent/tools/matroska-head.js';
import { mkvpropeditFailureReason, mkvpropeditSucceeded, mkvpropeditWarnings } from '../../../../agent/tools/mkvpropedit-parser.js';
import { describeTrackFlags, mkvpropeditArgs, setTrackFlags } from '../../../../agent/tools/mkvpropedit-runner.js';

describe('mkvpropedit arguments and answers', () => {
  it('sets each named flag to 1 on its track selector, and leaves out tracks without a flag', () => {
    assert.deepEqual(
      mkvpropeditArgs('/media/Film.mkv', [
        { track: 'a1', flags: ['original'] },
        { track: 'a2', flags: ['commentary', 'visual-impaired'] },
        { track: 's3', flags: [] },
        { track: 's1', flags: ['forced', 'hearing-impaired'] },
      ]),
      ['/media/Film.mkv', '--edit', 'track:a1', '--set', 'flag-original=1', '--edit', 'track:a2', '--set', 'flag-commentary=1', '--set', 'flag-visual-impaired=1', '--edit', 'track:s1', '--set', 'flag-forced=1', '--set', 'flag-hearing-impaired=1'],
    );
    assert.equal(describeTrackFlags([{ track: 'a2', flags: ['commentary'] }, { track: 's1', flags: ['forced', 'default'] }]), 'a2 commentary, s1 forced default');
  });

  it('counts exit codes 0 and 1 (warnings) as done, 2 as failed, and names the error line', () => {
    assert.equal(mkvpropeditSucceeded(0), true);
    assert.equal(mkvpropeditSucceeded(1), true);
    assert.equal(mkvpropeditSucceeded(2), false);
    assert.equal(mkvpropeditSucceeded(null), false);
    // Captured from mkvpropedit v74 (its messages go to stdout).
    const missing = "Error: The file '/nonexist.mkv' is not a Matroska file or it could not be found.\n";
    assert.equal(mkvpropeditFailureReason(missing, 2), "mkvpropedit failed with exit code 2: The file '/nonexist.mkv' is not a Matroska file or it could not be found.");
    const noTrack = "The file is being analyzed.\nError: No track corresponding to the edit specification 's3' was found. The file has not been modified.\n";
    assert.equal(mkvpropeditFailureReason(noTrack, 2), "mkvpropedit failed with exit code 2: No track corresponding to the edit specification 's3' was found. The file has not been modified.");
    assert.equal(mkvpropeditFailureReason('', null, 'SIGKILL'), 'mkvpropedit was stopped by signal SIGKILL');
    assert.deepEqual(mkvpropeditWarnings('The file is being analyzed.\nWarning: something odd\nDone.\n'), ['something odd']);
  });

  it('reads the subtitle event counts of ffprobe -count_packets in stream order', () => {
    const json = '{"programs":[],"streams":[{"index":3,"nb_read_packets":"840"},{"index":4,"nb_read_packets":"12"},{"index":5}]}';
    assert.deepEqual(parseFfprobePacketCounts(json), [840, 12, null]);
    assert.throws(() => parseFfprobePacketCounts('{}'), /no stream list/);
  });
});

describe('track flags on a real file (ffmpeg, mkvpropedit, ffprobe)', () => {
  let dir: string;
  let film: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-flags-'));
    const srt = (n: number): string => Array.from({ length: n }, (_, i) => `${i + 1}\n00:00:0${Math.floor(i / 2)},${i % 2 ? '5' : '0'}00 --> 00:00:0${Math.floor(i / 2)},${i % 2 ? '9' : '4'}00\nLine ${i + 1}\n`).join('\n');
    fs.writeFileSync(path.join(dir, 'full.srt'), srt(16));
    fs.writeFileSync(path.join(dir, 'few.srt'), srt(3));
    film = path.join(dir, 'Film (2001).mkv');
    execFileSync('ffmpeg', [
      '-v', 'error', '-nostdin',
      '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
      '-i', path.join(dir, 'full.srt'), '-i', path.join(dir, 'few.srt'),
      '-t', '9', '-map', '0:v', '-map', '1:a', '-map', '1:a', '-map', '2:s', '-map', '3:s',
      '-c:v', 'mpeg2video', '-c:a', 'ac3', '-c:s', 'srt',
      '-metadata:s:a:0', 'language=ger', '-metadata:s:a:1', 'language=eng', '-metadata:s:s:0', 'language=ger', '-metadata:s:s:1', 'language=ger',
      '-y', film,
    ], { stdio: 'pipe' });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('sets forced, hearing impaired, visual impaired, commentary and original, which ffprobe then reads (and the head reader, where the tracks stayed in the head)', async () => {
    await setTrackFlags('mkvpropedit', film, [
      { track: 'a1', flags: ['original'] },
      { track: 'a2', flags: ['commentary', 'visual-impaired'] },
      { track: 's1', flags: ['hearing-impaired'] },
      { track: 's2', flags: ['forced'] },
    ]);
    const probed = await ffprobeStreams('ffprobe', film);
    // The grown Tracks element does not fit where ffmpeg wrote it: mkvpropedit moves it behind the
    // clusters (the seek head points to it), where the head reader does not look and leaves it to ffprobe.
    const head = await readMatroskaStreams(film);
    if (head !== null) assert.deepEqual(head, probed);
    assert.deepEqual(probed.audio, [
      { index: 1, language: 'deu', codec: 'ac3', channels: 1 },
      { index: 2, language: 'eng', codec: 'ac3', channels: 1, commentary: true, visual_impaired: true },
    ]);
    assert.deepEqual(probed.subtitles, [
      { index: 1, language: 'deu', codec: 'srt', forced: false, hearing_impaired: true },
      { index: 2, language: 'deu', codec: 'srt', forced: true },
    ]);
    const probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=index:stream_disposition=original', '-select_streams', 'a', '-of', 'json', film]).toString()) as { streams: { disposition: { original: number } }[] };
    assert.deepEqual(probe.streams.map((s) => s.disposition.original), [1, 0]);
  });

  it('counts each subtitle track\'s events', async () => {
    assert.deepEqual(await ffprobeSubtitleEvents('ffprobe', film), [16, 3]);
  });

  it('fails with mkvpropedit\'s own reason and leaves the file alone; nothing runs without a flag', async () => {
    const before = fs.readFileSync(film);
    await assert.rejects(setTrackFlags('mkvpropedit', film, [{ track: 's9', flags: ['forced'] }]), /^ToolError: mkvpropedit failed with exit code 2: No track corresponding to the edit specification 's9' was found/);
    assert.ok(fs.readFileSync(film).equals(before));
    const notMkv = path.join(dir, 'notes.txt');
    fs.writeFileSync(notMkv, 'x');
    await assert.rejects(setTrackFlags('mkvpropedit', notMkv, [{ track: 'a1', flags: ['original'] }]), /is not a Matroska file or it could not be found/);
    await setTrackFlags(path.join(dir, 'no-such-mkvpropedit'), notMkv, [{ track: 'a1', flags: [] }]);
  });

  it('says how to get a missing mkvpropedit', async () => {
    await assert.rejects(setTrackFlags(path.join(dir, 'no-such-mkvpropedit'), film, [{ track: 'a1', flags: ['original'] }]), /not installed .*: install MKVToolNix on this worker \(it sets the track flags HandBrakeCLI cannot\)/);
  });
});
