/**
 * The DVD subtitle palette of the open backend (issue 37): the IFO's colours in RGB, the .idx header,
 * mkvmerge -J, the second ffmpeg pass, and what a rip does when mkvtoolnix is missing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { mkvtoolnixError, mkvtoolnixProgress, parseMkvmergeIdentify } from '../../../../agent/tools/mkvtoolnix-parser.js';
import type { MkvTrack, MkvTrackFlags } from '../../../../agent/tools/mkvtoolnix-parser.js';
import { openDvdRip, paletteRemuxArgs } from '../../../../agent/tools/open-dvd-runner.js';
import { readVobsubHeader, subpictureCanvas, vobsubHeaderLines, withVobsubHeader, ycrcbToRgb } from '../../../../agent/tools/vobsub-idx.js';
import { sampleSection, sampleText } from '../../../fixtures/tools-samples.js';

const hex = (n: number): string => n.toString(16).padStart(6, '0');

/** What `mkvextract remuxed.mkv tracks 3:subtitle_1.idx` wrote for the two-language disc's German track (captured, mkvtoolnix 74). */
const EXTRACTED_IDX = '# VobSub index file, v7 (do not modify this line!)\nlangidx: 0\n\nid: de, index: 0\ntimestamp: 00:00:01:005, filepos: 000000000\ntimestamp: 00:00:05:005, filepos: 000000800\n';

describe('ycrcbToRgb', () => {
  it('converts as the dvdsub decoder of ffmpeg 5.1 does with -ifo_palette (its debug log, for an IFO with these 16 colours)', () => {
    const ifo = [0xeb8080, 0x108080, 0x000000, 0xffffff, 0x51f05a, 0x902236, 0x296ef0, 0x7f8080, 0x79d67f, 0x42c6c6, 0xbd6ac3, 0xf2b725, 0x218cff, 0x06bdf4, 0xf03f38, 0x84ca0c];
    const ffmpeg = 'ffffff 000000 008800 ff7dff fe0000 00fe00 0000ff 818181 ff3578 aa00c7 a6c1ff fffe4f 2700ff 5600de 9dff73 fd7800';
    assert.equal(ifo.map((c) => hex(ycrcbToRgb(c))).join(' '), ffmpeg);
  });

  it('ignores the unused top byte of an IFO entry (0 Y Cr Cb)', () => {
    assert.equal(ycrcbToRgb(0x7feb8080), 0xffffff);
  });
});

describe('subpictureCanvas', () => {
  it('is the full frame of the video standard', () => {
    assert.deepEqual(subpictureCanvas('PAL', 576), { width: 720, height: 576 });
    assert.deepEqual(subpictureCanvas('NTSC', 480), { width: 720, height: 480 });
    assert.deepEqual(subpictureCanvas('PAL', 288), { width: 720, height: 576 }, 'half PAL still places subtitles on the full frame');
  });

  it('goes by the video height without a standard, NTSC when nothing is known', () => {
    assert.deepEqual(subpictureCanvas(null, 576), { width: 720, height: 576 });
    assert.deepEqual(subpictureCanvas(null, 288), { width: 720, height: 576 });
    assert.deepEqual(subpictureCanvas(null, 480), { width: 720, height: 480 });
    assert.deepEqual(subpictureCanvas(null, null), { width: 720, height: 480 });
  });
});

describe('the .idx header', () => {
  const palette = [0xeb8080, ...Array<number>(15).fill(0x108080)];
  const lines = vobsubHeaderLines({ width: 720, height: 576 }, palette);

  it('declares the canvas and the 16 colours in RGB', () => {
    assert.deepEqual(lines, ['size: 720x576', `palette: ffffff, ${Array<string>(15).fill('000000').join(', ')}`]);
    assert.throws(() => vobsubHeaderLines({ width: 720, height: 576 }, palette.slice(1)), /16 colours, not 15/);
  });

  it('goes right after the first line of what mkvextract wrote, the index kept as it was', () => {
    const idx = withVobsubHeader(EXTRACTED_IDX, lines);
    assert.equal(idx, ['# VobSub index file, v7 (do not modify this line!)', ...lines, ...EXTRACTED_IDX.split('\n').slice(1)].join('\n'));
    assert.deepEqual(readVobsubHeader(idx), { size: '720x576', palette: ['ffffff', ...Array<string>(15).fill('000000')] });
  });

  it('replaces a size and palette the track had (CRLF too), and refuses a file that is no .idx', () => {
    const had = '# VobSub index file, v7 (do not modify this line!)\r\nsize: 720x480\r\norg: 0, 0\r\npalette: 008700, 008700\r\nlangidx: 0\r\n';
    const idx = withVobsubHeader(had, lines);
    assert.equal(idx.match(/^size:/gm)?.length, 1);
    assert.equal(idx.match(/^palette:/gm)?.length, 1);
    assert.match(idx, /^org: 0, 0$/m);
    assert.equal(readVobsubHeader(idx).size, '720x576');
    assert.throws(() => withVobsubHeader('size: 720x576\n', lines), /not a VobSub index file/);
  });

  it('reads nothing from a header without size or palette', () => {
    assert.deepEqual(readVobsubHeader('# VobSub index file, v7\nlangidx: 0\n'), { size: null, palette: null });
  });
});

describe('mkvmerge -J', () => {
  it('lists the tracks of the remuxed two-language title with mkvextract\'s ids (captured)', () => {
    const tracks = parseMkvmergeIdentify(sampleText('dvd-mkvmerge-identify-remux.json'));
    assert.deepEqual(
      tracks.map((t) => [t.id, t.type, t.codec, t.codecId, t.language, t.flags.default, t.flags.forced, t.name]),
      [
        [0, 'video', 'MPEG-1/2', 'V_MPEG2', 'und', false, false, null],
        [1, 'audio', 'AC-3', 'A_AC3', 'ger', true, false, null],
        [2, 'audio', 'AC-3', 'A_AC3', 'eng', false, false, null],
        [3, 'subtitles', 'VobSub', 'S_VOBSUB', 'ger', true, false, null],
        [4, 'subtitles', 'VobSub', 'S_VOBSUB', 'eng', false, false, null],
      ],
    );
  });

  it('reads the flags ffmpeg writes, by the names mkvmerge 74 prints them', () => {
    const json = JSON.stringify({
      container: { recognized: true, supported: true, type: 'Matroska' },
      errors: [],
      tracks: [
        { id: 3, type: 'subtitles', codec: 'VobSub', properties: { codec_id: 'S_VOBSUB', default_track: false, forced_track: true, flag_hearing_impaired: true, language: 'ger', track_name: 'SDH' } },
        { id: 4, type: 'subtitles', codec: 'VobSub', properties: { codec_id: 'S_VOBSUB', flag_commentary: true, flag_original: true, flag_text_descriptions: true, flag_visual_impaired: true } },
      ],
    });
    const [sdh, comment] = parseMkvmergeIdentify(json);
    assert.deepEqual(sdh.flags, { default: false, forced: true, hearingImpaired: true, visualImpaired: false, textDescriptions: false, original: false, commentary: false });
    assert.equal(sdh.name, 'SDH');
    assert.deepEqual(comment.flags, { default: false, forced: false, hearingImpaired: false, visualImpaired: true, textDescriptions: true, original: true, commentary: true });
    assert.equal(comment.language, 'und', 'no language: und');
  });

  it('throws with mkvmerge\'s own error, and for a file it did not recognise', () => {
    const missing = '{\n  "errors": [\n    "The file \'/x.mkv\' could not be opened for reading: open file error.\\n"\n  ],\n  "warnings": []\n}\n';
    assert.throws(() => parseMkvmergeIdentify(missing), /could not be opened for reading: open file error\.$/);
    assert.throws(() => parseMkvmergeIdentify('{"container":{"recognized":false,"supported":false},"errors":[],"warnings":[]}'), /did not recognise/);
    assert.throws(() => parseMkvmergeIdentify('mkvmerge: command not found'), /no JSON/);
  });

  it('reads mkvextract --gui-mode progress and error lines', () => {
    assert.equal(mkvtoolnixProgress('#GUI#progress 45%'), 45);
    assert.equal(mkvtoolnixProgress("Writing the VobSub index file 'a.idx'."), null);
    assert.equal(mkvtoolnixError('#GUI#progress 10%\n#GUI#error No track with the ID 9 was found in the source file.\n', 2), 'No track with the ID 9 was found in the source file. (exit code 2)');
    assert.equal(mkvtoolnixError('Error: The file could not be opened.\n', 2), 'The file could not be opened. (exit code 2)');
    assert.equal(mkvtoolnixError('', null), 'stopped by a signal');
  });
});

describe('paletteRemuxArgs', () => {
  const none: MkvTrackFlags = { default: false, forced: false, hearingImpaired: false, visualImpaired: false, textDescriptions: false, original: false, commentary: false };
  const track = (over: Partial<MkvTrack>): MkvTrack => ({ id: 3, type: 'subtitles', codec: 'VobSub', codecId: 'S_VOBSUB', language: 'ger', name: null, flags: { ...none, default: true }, ...over });

  it('copies everything but the subtitles from the remux, then each subtitle track from its .idx, with the same language, name and flags', () => {
    const args = paletteRemuxArgs('/t/remuxed.mkv', [
      { idx: '/t/subtitle_1.idx', track: track({}) },
      { idx: '/t/subtitle_2.idx', track: track({ id: 4, language: 'eng', flags: { ...none, forced: true }, name: 'Forced' }) },
      { idx: '/t/subtitle_3.idx', track: track({ id: 5, language: 'und', flags: none }) },
    ], '/out/title_t01.mkv');
    assert.deepEqual(args, [
      '-v', 'error', '-nostdin', '-copyts',
      '-i', '/t/remuxed.mkv', '-i', '/t/subtitle_1.idx', '-i', '/t/subtitle_2.idx', '-i', '/t/subtitle_3.idx',
      '-map', '0', '-map', '-0:s', '-map', '1:s:0', '-map', '2:s:0', '-map', '3:s:0',
      '-map_metadata', '0', '-map_chapters', '0',
      '-metadata:s:s:0', 'language=ger', '-disposition:s:0', 'default',
      '-metadata:s:s:1', 'language=eng', '-metadata:s:s:1', 'title=Forced', '-disposition:s:1', 'forced',
      '-metadata:s:s:2', 'language=und', '-disposition:s:2', '0',
      '-c', 'copy', '-f', 'matroska', '-progress', 'pipe:1', '-nostats', '-y', '/out/title_t01.mkv',
    ]);
  });

  it('keeps every track flag ffmpeg writes: hearing impaired, visual impaired, descriptions, original, commentary', () => {
    const all: MkvTrackFlags = { default: true, forced: true, hearingImpaired: true, visualImpaired: true, textDescriptions: true, original: true, commentary: true };
    const args = paletteRemuxArgs('/t/r.mkv', [{ idx: '/t/s.idx', track: track({ flags: all }) }], '/o.mkv');
    assert.equal(args[args.indexOf('-disposition:s:0') + 1], 'default+forced+hearing_impaired+visual_impaired+descriptions+original+comment');
  });
});

describe('openDvdRip of a title with subtitles (fake lsdvd, dvdbackup, ffmpeg and mkvtoolnix)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-vobsub-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const info = sampleSection('dvd-backup-remux.txt', '## dvdbackup -i test.iso -I', '##').join('\n');
  const clearVob = path.join(dir, 'clear.vob');
  // One clear MPEG pack per 2048 bytes: a pack header, then a video PES packet.
  const pack = Buffer.alloc(2048);
  pack.set([0x00, 0x00, 0x01, 0xba, 0x44, 0, 0x04, 0, 0x04, 0x01, 0x01, 0x89, 0xc3, 0xf8, 0x00, 0x00, 0x01, 0xe0, 0x07, 0xec, 0x80, 0x80, 0x05]);
  fs.writeFileSync(clearVob, Buffer.concat(Array.from({ length: 16 }, () => pack)));

  /** Fakes: ffmpeg logs its arguments and writes its last one; mkvmerge and mkvextract print and write the captures, or are absent. */
  function bins(name: string, mkvtoolnix: boolean) {
    const bin = path.join(dir, name);
    fs.mkdirSync(bin);
    const script = (file: string, body: string): string => {
      fs.writeFileSync(path.join(bin, file), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      return path.join(bin, file);
    };
    fs.writeFileSync(path.join(bin, 'lsdvd.out'), sampleText('dvd-lsdvd-multilang.txt'));
    fs.writeFileSync(path.join(bin, 'info.txt'), `${info}\n`);
    fs.writeFileSync(path.join(bin, 'identify.json'), sampleText('dvd-mkvmerge-identify-remux.json'));
    fs.writeFileSync(path.join(bin, 'extracted.idx'), EXTRACTED_IDX);
    return {
      // -Oy asks where the title lies: its set and one cell over every sector the fake dvdbackup copies.
      lsdvd: script('lsdvd', `case " $* " in *" -Oy "*) printf "'vts' : 1,\\n'first_sector' : 0,\\n'last_sector' : %d,\\n" $(( $(stat -c %s '${clearVob}') / 2048 - 1 )); exit 0 ;; esac\ncat '${bin}/lsdvd.out'`),
      dvdbackup: script('dvdbackup', `case " $* " in *" -I "*) cat '${bin}/info.txt'; exit 0 ;; esac
while [ $# -gt 0 ]; do case "$1" in -o) o=$2; shift ;; -n) n=$2; shift ;; esac; shift; done
mkdir -p "$o/$n/VIDEO_TS" && cp '${clearVob}' "$o/$n/VIDEO_TS/VTS_01_1.VOB"`),
      // ffmpeg keeps a copy of the .idx it is given, to be looked at after the temp folder is gone.
      ffmpeg: script('ffmpeg', `echo "$*" >>'${bin}/ffmpeg.log'; for a in "$@"; do case "$a" in *.idx) cp "$a" '${bin}/';; esac; last=$a; done; echo mkv >"$last"`),
      mkvmerge: mkvtoolnix ? script('mkvmerge', `cat '${bin}/identify.json'`) : path.join(bin, 'no-mkvmerge'),
      mkvextract: mkvtoolnix ? script('mkvextract', `for a in "$@"; do case "$a" in *:*.idx) cp '${bin}/extracted.idx' "\${a#*:}";; esac; done`) : path.join(bin, 'no-mkvextract'),
    };
  }

  it('gives every VobSub track the disc\'s palette and canvas in a second ffmpeg pass', async () => {
    const b = bins('with', true);
    const messages: string[] = [];
    const out = path.join(dir, 'out-a', 'title_t01.mkv');
    assert.deepEqual(await openDvdRip('/discs/multi.iso', 1, out, { bins: b, onMessage: (m) => messages.push(m) }), { files: [out] });
    const calls = fs.readFileSync(path.join(dir, 'with', 'ffmpeg.log'), 'utf8').trim().split('\n');
    assert.equal(calls.length, 2, 'the remux, then the palette pass');
    assert.match(calls[1], /-copyts -i \S+\/remuxed\.mkv -i \S+\/subtitle_1\.idx -i \S+\/subtitle_2\.idx -map 0 -map -0:s -map 1:s:0 -map 2:s:0 /);
    assert.ok(messages.includes("subtitles: the disc's palette and canvas for 2 track(s)"), messages.join('\n'));
    for (const idx of ['subtitle_1.idx', 'subtitle_2.idx']) {
      assert.deepEqual(readVobsubHeader(fs.readFileSync(path.join(dir, 'with', idx), 'utf8')), { size: '720x576', palette: ['ffffff', ...Array<string>(15).fill('000000')] });
    }
    assert.deepEqual(fs.readdirSync(path.join(dir, 'out-a')), ['title_t01.mkv'], 'no temp folder left');
  });

  it('without mkvtoolnix keeps the remux as it is and says what to install', async () => {
    const messages: string[] = [];
    const out = path.join(dir, 'out-b', 'title_t01.mkv');
    assert.deepEqual(await openDvdRip('/discs/multi.iso', 1, out, { bins: bins('without', false), onMessage: (m) => messages.push(m) }), { files: [out] });
    assert.equal(fs.readFileSync(out, 'utf8'), 'mkv\n');
    assert.equal(fs.readFileSync(path.join(dir, 'without', 'ffmpeg.log'), 'utf8').trim().split('\n').length, 1, 'only the remux');
    assert.ok(
      messages.some((m) => /^subtitles keep no palette \(they may show in wrong colours or not at all\): no-mkvmerge is not installed .*; install mkvtoolnix$/.test(m)),
      messages.join('\n'),
    );
  });
});
