import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { dvdbackupError, DVD_SECTOR, estimateTitleSizes, parseDvdbackupInfo, scanVobSectors } from '../../../../agent/tools/dvdbackup-parser.js';
import { cssLibraryMissing, lsdvdError, parseLsdvdXml } from '../../../../agent/tools/lsdvd-parser.js';
import { openDvdRip, openDvdScan, streamArgs } from '../../../../agent/tools/open-dvd-runner.js';
import { sourceFields } from '../../../../agent/tools/rippers.js';
import { sampleSection, sampleText } from '../../../fixtures/tools-samples.js';

/** stdout of `lsdvd -Ox -a -c test.iso` as captured: the libdvdread banner, then the XML. */
function lsdvdXmlOutput(): string {
  const banner = sampleSection('dvd-lsdvd.txt', '## lsdvd test.iso', 'Disc Title:');
  const xml = sampleSection('dvd-lsdvd.txt', '## lsdvd -Ox -a -c test.iso');
  return [...banner, ...xml].join('\n');
}

describe('parseLsdvdXml', () => {
  const disc = parseLsdvdXml(lsdvdXmlOutput());

  it('reads label, main feature and titles behind the libdvdread banner', () => {
    assert.equal(disc.label, 'MY_TEST_MOVIE');
    assert.equal(disc.longest, 2);
    assert.deepEqual(
      disc.titles.map((t) => [t.number, t.seconds, t.chapters.length]),
      [
        [1, 20, 4],
        [2, 75, 15],
        [3, 8, 2],
      ],
    );
  });

  it('reads chapter lengths and audio streams', () => {
    assert.deepEqual(disc.titles[0].chapters, [4.8, 5.4, 4.8, 5.0]);
    assert.deepEqual(disc.titles[2].chapters, [4.8, 3.2]);
    assert.deepEqual(disc.titles[0].audio.map((a) => a.language), ['und'], 'lsdvd "xx" = unknown');
    assert.deepEqual(disc.titles[0].audio.map((a) => a.streamId), [0x80]);
  });

  it('keeps a single track, a numeric label and a raw & (lsdvd -x) readable', () => {
    const xml = [
      'libdvdread: Encrypted DVD support unavailable.',
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<lsdvd><title>2001</title><track><ix>1</ix><length>12.500</length><df>P&S + Letter</df>',
      '<audio><ix>1</ix><langcode>de</langcode><streamid>0x80</streamid></audio>',
      '<audio><ix>2</ix><langcode>en</langcode><streamid>0x81</streamid></audio>',
      '<chapter><ix>1</ix><length>12.500</length></chapter></track><longest_track>1</longest_track></lsdvd>',
    ].join('\n');
    const parsed = parseLsdvdXml(xml);
    assert.equal(parsed.label, '2001');
    assert.deepEqual(parsed.titles, [
      {
        number: 1,
        seconds: 12.5,
        chapters: [12.5],
        audio: [
          { language: 'deu', codec: 'unknown', channels: null, streamId: 0x80, commentary: false, visualImpaired: false },
          { language: 'eng', codec: 'unknown', channels: null, streamId: 0x81, commentary: false, visualImpaired: false },
        ],
        subtitles: [],
        palette: [],
        videoFormat: null,
        videoHeight: null,
      },
    ]);
  });

  it('throws when there is no XML', () => {
    assert.throws(() => parseLsdvdXml('Disc Title: X\n'));
  });
});

describe('lsdvd errors and the css banner', () => {
  it('explains a missing path (exit 1) and a non-DVD (exit 3)', () => {
    const missing = sampleSection('dvd-lsdvd.txt', '## lsdvd nothere.iso', '##').join('\n');
    assert.equal(lsdvdError(missing, 1), 'The disc or image nothere.iso was not found');
    const junk = sampleSection('dvd-lsdvd.txt', '## lsdvd junk.iso', '##').join('\n');
    assert.equal(lsdvdError(junk, 3), "This is not a readable DVD-Video disc: it has no usable VIDEO_TS");
    assert.equal(lsdvdError('', 5), 'Reading the DVD\'s title list failed with exit code 5');
  });

  it('detects the no-css banner without treating it as an error', () => {
    const output = lsdvdXmlOutput();
    assert.equal(cssLibraryMissing(output), true);
    assert.equal(parseLsdvdXml(output).titles.length, 3);
    assert.equal(cssLibraryMissing('<?xml version="1.0"?><lsdvd/>'), false);
  });

  it('reads the audio and subpicture streams of the two-language disc (lsdvd -a -s, captured)', () => {
    const [title] = parseLsdvdXml(sampleText('dvd-lsdvd-multilang.txt')).titles;
    assert.deepEqual(title.audio, [
      { language: 'deu', codec: 'ac3', channels: 6, streamId: 0x80, commentary: false, visualImpaired: false },
      { language: 'eng', codec: 'ac3', channels: 2, streamId: 0x81, commentary: false, visualImpaired: false },
    ]);
    assert.deepEqual(title.subtitles, [
      { language: 'deu', forced: false, streamId: 0x20, hearingImpaired: false, commentary: false },
      { language: 'eng', forced: false, streamId: 0x21, hearingImpaired: false, commentary: false },
    ]);
  });

  it('reads the title\'s palette (-P) and video standard (-v) of the two-language disc (captured)', () => {
    const [title] = parseLsdvdXml(sampleText('dvd-lsdvd-multilang.txt')).titles;
    assert.deepEqual(title.palette, [0xeb8080, ...Array<number>(15).fill(0x108080)], 'white, then black: the colours spumux gave dvdauthor');
    assert.equal(title.videoFormat, 'PAL');
    assert.equal(title.videoHeight, 576);
  });

  it('has no palette unless lsdvd printed 16 colours of six hex digits, and no standard without -v', () => {
    const track = (palette: string) => `<?xml version="1.0"?><lsdvd><track><ix>1</ix><length>5</length><format>SECAM</format>${palette}</track></lsdvd>`;
    const colors = (list: string[]) => `<palette>${list.map((c) => `<color>${c}</color>`).join('')}</palette>`;
    assert.deepEqual(parseLsdvdXml(track(colors(Array<string>(15).fill('108080')))).titles[0].palette, []);
    assert.deepEqual(parseLsdvdXml(track(colors([...Array<string>(15).fill('108080'), 'zz8080']))).titles[0].palette, []);
    assert.deepEqual(parseLsdvdXml(track(colors(Array<string>(16).fill('2A80C0')))).titles[0].palette, Array<number>(16).fill(0x2a80c0));
    assert.equal(parseLsdvdXml(track('')).titles[0].videoFormat, null);
    const older = parseLsdvdXml(lsdvdXmlOutput()).titles[0];
    assert.deepEqual(older.palette, [], 'the older capture without -P');
    assert.equal(older.videoFormat, null);
  });

  it('marks a subpicture stream whose content code is Forced', () => {
    const xml = '<?xml version="1.0"?><lsdvd><track><ix>1</ix><length>5</length><subp><ix>1</ix><langcode>en</langcode><content>Forced</content><streamid>0x22</streamid></subp></track></lsdvd>';
    assert.deepEqual(parseLsdvdXml(xml).titles[0].subtitles, [{ language: 'eng', forced: true, streamId: 0x22, hearingImpaired: false, commentary: false }]);
  });

  it('reads the roles of the content codes: audio description, commentary, forced, closed captions (lsdvd -Ox on a dvdauthor disc, captured)', () => {
    // The two-language disc authored with content="impaired"/"comments1" on the audio and
    // "forced"/"normal_cc" on the subpictures.
    const [title] = parseLsdvdXml(sampleText('dvd-lsdvd-roles.txt')).titles;
    assert.deepEqual(
      title.audio.map((a) => [a.language, a.visualImpaired, a.commentary]),
      [
        ['deu', true, false],
        ['eng', false, true],
      ],
    );
    assert.deepEqual(
      title.subtitles.map((s) => [s.language, s.forced, s.hearingImpaired, s.commentary]),
      [
        ['deu', true, false, false],
        ['eng', false, true, false],
      ],
    );
  });

  it('reads every content code lsdvd names: Comments2, Large_CC, Children_CC, Director and its kinds; Normal and Undefined are no role', () => {
    const audio = (content: string): string => `<audio><ix>1</ix><langcode>en</langcode><content>${content}</content></audio>`;
    const subp = (content: string): string => `<subp><ix>1</ix><langcode>en</langcode><content>${content}</content></subp>`;
    const xml = `<?xml version="1.0"?><lsdvd><track><ix>1</ix><length>5</length>${['Comments2', 'Normal', 'Undefined'].map(audio).join('')}${['Large_CC', 'Children_CC', 'Director', 'Large_Director', 'Children_Director', 'Large', 'reserved'].map(subp).join('')}</track></lsdvd>`;
    const [title] = parseLsdvdXml(xml).titles;
    assert.deepEqual(title.audio.map((a) => [a.commentary, a.visualImpaired]), [[true, false], [false, false], [false, false]]);
    assert.deepEqual(
      title.subtitles.map((s) => [s.forced, s.hearingImpaired, s.commentary]),
      [[false, true, false], [false, true, false], [false, false, true], [false, false, true], [false, false, true], [false, false, false], [false, false, false]],
    );
  });
});

describe('dvdbackup -I', () => {
  const info = parseDvdbackupInfo(sampleSection('dvd-backup-remux.txt', '## dvdbackup -i test.iso -I', '##').join('\n'));

  it('reads VOB bytes and titles per title set', () => {
    assert.deepEqual([...info.vobBytes], [[1, 26255360]]);
    assert.deepEqual([...info.titleSets], [[1, [1, 2, 3]]]);
  });

  it('shares a title set among its titles by length', () => {
    const sizes = estimateTitleSizes(
      [
        { number: 1, seconds: 20 },
        { number: 2, seconds: 75 },
        { number: 3, seconds: 8 },
      ],
      info,
    );
    assert.equal(sizes.get(2), Math.round((26255360 * 75) / 103));
    assert.equal([...sizes.values()].reduce((a, b) => a + b, 0), 26255360);
  });

  it('gives a lone title its whole set and unknown titles 0', () => {
    const two = parseDvdbackupInfo('\tVTS_01_1.VOB\t  1000\n\tVTS_01_0.VOB\t 50\n\tVTS_02_1.VOB\t 500\n\tVTS_02_2.VOB\t 300\nTitle set 1\n\t\t\tTitle 1:\nTitle set 2\n\t\t\tTitle 2:\n');
    const sizes = estimateTitleSizes(
      [
        { number: 1, seconds: 10 },
        { number: 2, seconds: 10 },
        { number: 9, seconds: 5 },
      ],
      two,
    );
    assert.deepEqual([...sizes], [
      [1, 1000],
      [2, 800],
      [9, 0],
    ]);
  });

  it('explains a source that cannot be opened', () => {
    const stderr = sampleSection('dvd-backup-remux.txt', '## dvdbackup -i nothere.iso -I', '##').join('\n');
    assert.equal(dvdbackupError(stderr, 255), 'The DVD nothere.iso could not be opened');
  });
});

/** One 2048-byte pack: pack header, then a PES packet of `streamId` with the given scrambling bits. */
function pack(streamId: number, scrambling: number): Uint8Array {
  const sector = new Uint8Array(DVD_SECTOR);
  sector.set([0x00, 0x00, 0x01, 0xba, 0x44, 0, 0x04, 0, 0x04, 0x01, 0x01, 0x89, 0xc3, 0xf8]);
  sector.set([0x00, 0x00, 0x01, streamId, 0x07, 0xec, 0x80 | (scrambling << 4), 0x80, 0x05], 14);
  return sector;
}

function concat(...sectors: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(sectors.length * DVD_SECTOR);
  sectors.forEach((s, i) => out.set(s, i * DVD_SECTOR));
  return out;
}

describe('scanVobSectors', () => {
  it('sees clear MPEG packs', () => {
    assert.deepEqual(scanVobSectors(concat(pack(0xe0, 0), pack(0xbd, 0), pack(0xbb, 0))), { packs: 3, scrambled: 0 });
  });

  it('counts CSS-scrambled audio/video sectors', () => {
    assert.deepEqual(scanVobSectors(concat(pack(0xe0, 1), pack(0xbd, 1), pack(0xbf, 3), new Uint8Array(DVD_SECTOR))), { packs: 3, scrambled: 2 });
  });

  it('finds no packs in random or empty data', () => {
    assert.deepEqual(scanVobSectors(new Uint8Array(DVD_SECTOR * 4)), { packs: 0, scrambled: 0 });
  });
});

describe('openDvdRip on a CSS-encrypted DVD (fake lsdvd, dvdbackup and ffmpeg)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-css-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const info = sampleSection('dvd-backup-remux.txt', '## dvdbackup -i test.iso -I', '##').join('\n');
  fs.writeFileSync(path.join(dir, 'info.txt'), `${info}\n`);
  fs.writeFileSync(path.join(dir, 'scrambled.vob'), concat(...Array.from({ length: 64 }, () => pack(0xe0, 1))));
  fs.writeFileSync(path.join(dir, 'clear.vob'), concat(...Array.from({ length: 64 }, () => pack(0xe0, 0))));
  const xmlOnly = sampleSection('dvd-lsdvd.txt', '## lsdvd -Ox -a -c test.iso').join('\n');

  /** Fakes that print the captured outputs; dvdbackup "copies" the given VOB, ffmpeg writes its output file. */
  function bins(name: string, lsdvdOut: string, vob: string) {
    const bin = path.join(dir, name);
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'lsdvd.out'), lsdvdOut);
    const script = (body: string) => `#!/bin/sh\n${body}\n`;
    // -Oy asks where the title lies: its set and its one cell of the 64 sectors the fake dvdbackup copies.
    fs.writeFileSync(path.join(bin, 'lsdvd.cells'), "'vts' : 1,\n'first_sector' : 0,\n'last_sector' : 63,\n");
    fs.writeFileSync(path.join(bin, 'lsdvd'), script(`case " $* " in *" -Oy "*) cat '${bin}/lsdvd.cells'; exit 0 ;; esac\ncat '${bin}/lsdvd.out'`), { mode: 0o755 });
    fs.writeFileSync(
      path.join(bin, 'dvdbackup'),
      script(`echo "$*" >>'${bin}/dvdbackup.args'
case " $* " in *" -I "*) cat '${dir}/info.txt'; exit 0 ;; esac
while [ $# -gt 0 ]; do case "$1" in -o) o=$2; shift ;; -n) n=$2; shift ;; esac; shift; done
mkdir -p "$o/$n/VIDEO_TS" && cp '${vob}' "$o/$n/VIDEO_TS/VTS_01_1.VOB"`),
      { mode: 0o755 },
    );
    fs.writeFileSync(path.join(bin, 'ffmpeg'), script('for a in "$@"; do last=$a; done; echo mkv >"$last"'), { mode: 0o755 });
    return { lsdvd: path.join(bin, 'lsdvd'), dvdbackup: path.join(bin, 'dvdbackup'), ffmpeg: path.join(bin, 'ffmpeg') };
  }

  it('without libdvdcss refuses and says how to add it', async () => {
    await assert.rejects(openDvdRip('/discs/test.iso', 1, path.join(dir, 'out-a', 'title.mkv'), { bins: bins('no-css', lsdvdXmlOutput(), path.join(dir, 'scrambled.vob')) }), (err: Error) => {
      assert.match(err.message, /^this DVD is encrypted \(CSS\) and this worker has no libdvdcss: add it with `sudo bash scripts\/install\.sh --with-libdvdcss`/);
      return true;
    });
    assert.deepEqual(fs.readdirSync(path.join(dir, 'out-a')), [], 'no temp folder or partial file left');
  });

  it('with libdvdcss tries the rip: a decrypted title is remuxed, one it could not decrypt needs MakeMKV', async () => {
    const out = path.join(dir, 'out-b', 'title.mkv');
    assert.deepEqual(await openDvdRip('/discs/test.iso', 1, out, { bins: bins('css-ok', xmlOnly, path.join(dir, 'clear.vob')) }), { files: [out] });
    assert.equal(fs.readFileSync(out, 'utf8'), 'mkv\n');
    await assert.rejects(openDvdRip('/discs/test.iso', 1, path.join(dir, 'out-c', 'title.mkv'), { bins: bins('css-fails', xmlOnly, path.join(dir, 'scrambled.vob')) }), /libdvdcss could not decrypt it: it needs MakeMKV/);
  });

  it('a careful rip has dvdbackup pad only the block it cannot read (-r b) and says so; a normal rip keeps its default', async () => {
    const messages: string[] = [];
    const normal = bins('normal', xmlOnly, path.join(dir, 'clear.vob'));
    await openDvdRip('/discs/test.iso', 1, path.join(dir, 'out-n', 'title.mkv'), { bins: normal, onMessage: (m) => messages.push(m) });
    const copy = (b: { dvdbackup: string }) => fs.readFileSync(`${b.dvdbackup}.args`, 'utf8').split('\n').find((l) => l.includes(' -T '));
    assert.doesNotMatch(copy(normal) ?? '', / -r /);
    assert.ok(!messages.some((m) => m.startsWith('careful read')));
    const careful = bins('careful', xmlOnly, path.join(dir, 'clear.vob'));
    await openDvdRip('/discs/test.iso', 1, path.join(dir, 'out-k', 'title.mkv'), { bins: careful, careful: true, onMessage: (m) => messages.push(m) });
    assert.match(copy(careful) ?? '', / -T 1 .* -r b$/);
    assert.ok(messages.includes('careful read: dvdbackup skips only the blocks it cannot read (-r b), it has no read retries'), JSON.stringify(messages));
  });

  it('scans titles with the DVD title number in two digits as their source, as MakeMKV (TINFO 24) and TheDiscDB name it', async () => {
    const scan = await openDvdScan('/discs/test.iso', { bins: bins('scan', xmlOnly, path.join(dir, 'clear.vob')) });
    assert.ok(scan.titles.length > 0);
    for (const t of scan.titles) assert.equal(t.originalTitleId, String(t.number).padStart(2, '0'));
    assert.deepEqual(sourceFields(scan.titles[0]), { source_file: '01', original_title_id: '01' });
  });

  it('gives the title scan the roles of the content codes, listed only where they hold', async () => {
    const scan = await openDvdScan('/discs/roles.iso', { bins: bins('roles', sampleText('dvd-lsdvd-roles.txt'), path.join(dir, 'clear.vob')) });
    assert.deepEqual(scan.titles[0].audio, [
      { index: 1, language: 'deu', codec: 'ac3', channels: 6, visual_impaired: true },
      { index: 2, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
    ]);
    assert.deepEqual(scan.titles[0].subtitles, [
      { index: 1, language: 'deu', codec: 'vobsub', forced: true },
      { index: 2, language: 'eng', codec: 'vobsub', forced: false, hearing_impaired: true },
    ]);
  });
});

describe('the remux writes the roles of the content codes as track flags', () => {
  it('gives each stream with a role its dispositions (forced, comment, visual_impaired, hearing_impaired), the others none', () => {
    const [title] = parseLsdvdXml(sampleText('dvd-lsdvd-roles.txt')).titles;
    const args = streamArgs(title);
    const dispositions = args.flatMap((a, i) => (a.startsWith('-disposition:') ? [`${a} ${args[i + 1]}`] : []));
    assert.deepEqual(dispositions, ['-disposition:a:0 visual_impaired', '-disposition:a:1 comment', '-disposition:s:0 forced', '-disposition:s:1 hearing_impaired']);
    const [plain] = parseLsdvdXml(sampleText('dvd-lsdvd-multilang.txt')).titles;
    assert.ok(!streamArgs(plain).some((a) => a.startsWith('-disposition')), 'no role: no disposition');
  });
});
