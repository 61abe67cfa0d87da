import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { abcdeFailure, abcdePercent, applyAbcdeLine, createAbcdeProgress } from '../../../../agent/cd/abcde-output.js';
import { imageKind, MAX_COVER_BYTES, planAlbumFolder, saveCover, trackFileName, vorbisTags } from '../../../../agent/cd/album-files.js';
import { parseCdInfoCdText } from '../../../../agent/cd/cd-info.js';
import { readDriveCdIdentity } from '../../../../agent/cd/drive-cd-identity.js';
import { discFingerprint } from '../../../../agent/disc/disc-info.js';
import { physicalDisc } from '../../../../agent/drives/drive-manager.js';
import type { PhysicalDriveReading } from '../../../../agent/drives/physical-drive.js';
import { abcdeArgs, abcdeConfig, ripAudioCd, scanAudioCd, type AudioCdTools } from '../../../../agent/tasks/audio-cd-ripper.js';
import { freedbDiscId, musicbrainzDiscId, tocFromTracks, type CdToc } from '../../../../agent/cd/cd-toc.js';
import { paranoiaFailure, parseParanoiaToc } from '../../../../agent/cd/cdparanoia-toc.js';
import { cueTimeToFrames, parseCueSheet, trackSpans } from '../../../../agent/cd/cue-sheet.js';
import type { TaskContext } from '../../../../agent/tasks/rip-task.js';
import type { AlbumInfo, RipJob } from '../../../../shared/protocol.js';
import { smallJpeg, startMusicBrainzServer, type MusicBrainzServer } from '../../../fixtures/musicbrainz-server.js';
import { FIXTURES_DIR, sampleText as sample } from '../../../fixtures/tools-samples.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-cd-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('cue sheet', () => {
  const sheet = parseCueSheet(sample('cd-test.cue'));
  it('reads disc and track titles, the file and INDEX 00/01 in frames (ff = 1/75 s)', () => {
    assert.deepEqual([sheet.title, sheet.performer, sheet.file, sheet.fileType], ['Sine Sampler', 'Ripwerk Test Tones', 'disc.bin', 'BINARY']);
    assert.deepEqual(sheet.tracks.map((t) => [t.number, t.title, t.start, t.pregap]), [[1, 'A 440', 0, null], [2, 'E 660', 375, 350], [3, 'C 523', 940, null]]);
    assert.equal(cueTimeToFrames('00:12:40'), 940);
    assert.equal(cueTimeToFrames('00:12:75'), null, 'frames run 0..74');
  });

  it('gives each track the frames up to the next INDEX 01 (the pregap stays with the track before)', () => {
    assert.deepEqual(trackSpans(sheet, 1175 * 2352), [{ number: 1, start: 0, frames: 375, byteStart: 0 }, { number: 2, start: 375, frames: 565, byteStart: 375 * 2352 }, { number: 3, start: 940, frames: 235, byteStart: 940 * 2352 }]);
  });
});

describe('disc ids (audio-cd.md §4 table)', () => {
  const cases: [CdToc, string, string][] = [
    [{ first: 1, last: 3, leadout: 1325, offsets: [150, 525, 1090] }, 'Dr2EtzSM39D9_zS0uLw6CQcfvEw-', '0e000f03'],
    [{ first: 1, last: 6, leadout: 95462, offsets: [150, 15363, 32314, 46592, 63414, 80489] }, '49HHV7Eb8UKF3aQiNmu1GR8vKTY-', '3404f606'],
  ];
  it('computes the MusicBrainz and freedb ids', () => {
    for (const [toc, mb, freedb] of cases) {
      assert.equal(musicbrainzDiscId(toc), mb);
      assert.equal(freedbDiscId(toc), freedb);
    }
  });

  it('builds the TOC of the test image from its cue sheet', () => {
    const toc = tocFromTracks(trackSpans(parseCueSheet(sample('cd-test.cue')), 1175 * 2352));
    assert.deepEqual(toc, cases[0][0]);
  });
});

describe('cdparanoia and abcde output', () => {
  it('reads the TOC rows of cdparanoia -Q', () => {
    assert.deepEqual(parseParanoiaToc(sample('cd-cdparanoia-Q.txt')), [{ number: 1, frames: 375, start: 0 }, { number: 2, frames: 565, start: 375 }, { number: 3, frames: 235, start: 940 }]);
    assert.equal(paranoiaFailure('Unable to open cdrom drive; -v will give more information.\n', '/dev/sr0'), 'the drive /dev/sr0 cannot be opened: is an audio CD inside?');
  });

  it('follows abcde through reading, encoding and the end, and logs only its progress lines', () => {
    const p = createAbcdeProgress(3);
    const logged: string[] = [];
    const seen: number[] = [];
    for (const line of sample('cd-abcde-flac-image-run.txt').split('\n')) {
      if (applyAbcdeLine(p, line)) logged.push(line.trim());
      seen.push(abcdePercent(p));
    }
    assert.deepEqual(logged.slice(0, 4), ['Grabbing entire CD - tracks:  01 02 03', '---- Unknown Artist / Unknown Album ----', 'Grabbing track 01: Track 1...', 'Grabbing track 02: Track 2...']);
    assert.ok(!logged.some((l) => l.startsWith('flac 1.4.2') || l.startsWith('Copyright')));
    assert.equal(logged.at(-1), 'Finished.');
    assert.ok(seen.includes(50), 'all tracks read is half way');
    assert.deepEqual(seen.filter((v, i) => i > 0 && v < seen[i - 1]), [], 'never goes back');
    assert.equal(seen.at(-1), 100);
    assert.equal(abcdeFailure('[ERROR] abcde: CDROM device cannot be found.', '/dev/sr1'), 'the drive /dev/sr1 cannot be opened: is an audio CD inside?');
  });

  it('gives abcde its eject option only with auto-eject, and quotes config paths for sh', () => {
    assert.deepEqual(abcdeArgs('/r/abcde.conf', '/dev/sr0', false, []), ['-c', '/r/abcde.conf', '-N', '-o', 'flac', '-d', '/dev/sr0']);
    assert.deepEqual(abcdeArgs('/r/abcde.conf', '/dev/sr0', true, [2, 3]), ['-c', '/r/abcde.conf', '-N', '-o', 'flac', '-d', '/dev/sr0', '-x', '2', '3']);
    const conf = abcdeConfig("/m/Bob's Album", '/r/wav');
    assert.match(conf, /^OUTPUTDIR='\/m\/Bob'\\''s Album'$/m);
    assert.match(conf, /^NOCDDBQUERY=y$/m);
    assert.match(conf, /^EJECTCD=n$/m);
    const out = execFileSync('sh', ['-c', `${conf}\nprintf %s "$OUTPUTDIR"`]).toString();
    assert.equal(out, "/m/Bob's Album");
  });

  it('has cdparanoia correct the drive\'s read offset, and leaves its options alone without one', () => {
    const opts = (offset?: number): string => execFileSync('sh', ['-c', `${abcdeConfig('/m', '/r/wav', offset)}\nprintf %s "\${CDPARANOIAOPTS-unset}"`]).toString();
    assert.equal(opts(6), '--sample-offset=6');
    assert.equal(opts(-472), '--sample-offset=-472');
    assert.equal(opts(0), 'unset');
    assert.equal(opts(), 'unset');
  });
});

function ctx(): TaskContext & { logs: string[]; pcts: number[] } {
  const logs: string[] = [];
  const pcts: number[] = [];
  return { logs, pcts, signal: new AbortController().signal, progress: (p) => pcts.push(p), log: (_l, m) => logs.push(m), onSpawn: () => undefined };
}

function args(name: string, extra: Partial<RipJob> = {}): RipJob {
  return {
    job_id: `job-${name}`, drive: 'sr0', titles: [], main_feature_only: false, raw_dir: path.join(root, name, 'raw', `job-${name}`), target_dir: path.join(root, name, 'Musik'),
    title: 'Unknown Album', year: null, series: null, season: null, transcode: false, keep_original: false, auto_eject: true, ...extra,
  };
}

describe('audio CD in a drive (abcde and cdparanoia stand-ins)', () => {
  const flac = path.join(root, 'one.flac');
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100', '-t', '1', '-ac', '2', '-sample_fmt', 's16', '-c:a', 'flac', '-y', flac]);
  const tools: AudioCdTools = { abcde: path.join(FIXTURES_DIR, 'abcde'), cdparanoia: path.join(FIXTURES_DIR, 'cdparanoia'), ffmpeg: 'ffmpeg', metaflac: 'metaflac', flac: 'flac', cdInfo: 'cd-info', accurateRipUrl: null, readOffsets: {} };

  it('scans the tracks with cdparanoia -Q', async () => {
    const tracks = await scanAudioCd({ kind: 'device', path: '/dev/sr0' }, new AbortController().signal, tools);
    assert.deepEqual(tracks.map((t) => [t.number, t.seconds, t.size_bytes]), [[1, 5, 375 * 2352], [2, 7.53, 565 * 2352], [3, 3.13, 235 * 2352]]);
  });

  it('rips with abcde into the music folder, with -x only when auto-eject is on', async () => {
    for (const autoEject of [true, false]) {
      const argsFile = path.join(root, `argv-${autoEject}`);
      process.env.FAKE_ABCDE_ARGS = argsFile;
      process.env.FAKE_ABCDE_FLAC = flac;
      const a = args(`dev-${autoEject}`, { auto_eject: autoEject });
      const c = ctx();
      const result = await ripAudioCd(a, { kind: 'device', path: '/dev/sr0' }, c, tools);
      const argv = fs.readFileSync(argsFile, 'utf8').trim().split('\n');
      assert.equal(argv.includes('-x'), autoEject);
      assert.deepEqual(argv.slice(0, 7), ['-c', path.join(a.raw_dir, 'abcde.conf'), '-N', '-o', 'flac', '-d', '/dev/sr0']);
      assert.equal(result.output?.output_path, path.join(a.target_dir, 'Unknown Album'));
      assert.deepEqual(fs.readdirSync(result.output!.output_path), ['01 - Track_1.flac', '02 - Track_2.flac', '03 - Track_3.flac']);
      assert.ok(!fs.existsSync(a.raw_dir), 'the raw folder is removed');
      assert.equal(c.pcts.at(-1), 100);
      assert.ok(c.logs.includes('Encoding track 03 of 03: Track 3...'));
    }
  });

  it('fails with a plain reason when the drive cannot be opened, leaving no album folder', async () => {
    process.env.FAKE_ABCDE_MODE = 'nodisc';
    try {
      const a = args('nodisc', { titles: [1] });
      await assert.rejects(ripAudioCd(a, { kind: 'device', path: '/dev/sr0' }, ctx(), tools), { message: 'the drive /dev/sr0 cannot be opened: is an audio CD inside?' });
      assert.deepEqual(fs.readdirSync(a.target_dir), []);
    } finally {
      delete process.env.FAKE_ABCDE_MODE;
    }
  });
});

const ALBUM: AlbumInfo = {
  artist: 'AC/DC', album: 'Töne: Ein Sampler', year: 2019, disc_number: 2, release_id: 'rel-1', cover_url: null, source: 'musicbrainz',
  tracks: [
    { number: 1, title: 'Kammerton: A 440', artist: null, recording_id: 'r1', track_id: 't1' },
    { number: 2, title: 'E 660?', artist: 'Gastton', recording_id: 'r2', track_id: 't2' },
    { number: 3, title: 'C 523', artist: null, recording_id: 'r3', track_id: 't3' },
  ],
};
const tagsOf = (file: string): string => execFileSync('metaflac', ['--no-utf8-convert', '--export-tags-to=-', file], { env: { PATH: process.env.PATH ?? '' } }).toString().trim();

describe('album names and tags', () => {
  it('names files "NN - Title.flac" with the project\'s name rules', () => {
    assert.deepEqual([1, 2, 3, 4].map((n) => trackFileName(ALBUM, n)), ['01 - Kammerton - A 440.flac', '02 - E 660.flac', '03 - C 523.flac', '04 - Titel 4.flac']);
  });

  it('puts the album in <Artist>/<Album> (<Year>), with the job id when that folder holds files already', async () => {
    const target = path.join(root, 'plan', 'Musik');
    const first = await planAlbumFolder(target, ALBUM, 'job-aaaaaaaa1');
    assert.equal(first, path.join(target, 'AC-DC', 'Töne - Ein Sampler (2019)'));
    assert.equal(await planAlbumFolder(target, ALBUM, 'job-bbbbbbbb2'), first, 'an empty folder is no collision');
    fs.writeFileSync(path.join(first, '01 - x.flac'), '');
    assert.equal(await planAlbumFolder(target, ALBUM, 'jobbbbbbbb2'), path.join(target, 'AC-DC', 'Töne - Ein Sampler (2019) [jobbbbbb]'));
    assert.equal(await planAlbumFolder(target, { ...ALBUM, year: null, album: 'Ohne Jahr' }, 'j1'), path.join(target, 'AC-DC', 'Ohne Jahr'));
  });

  it('gives each track the Vorbis comments media servers read, the track artist on a sampler track, no empty ones', () => {
    assert.deepEqual(vorbisTags(ALBUM, 2, 3), [
      ['ARTIST', 'Gastton'], ['ALBUMARTIST', 'AC/DC'], ['ALBUM', 'Töne: Ein Sampler'], ['TITLE', 'E 660?'], ['TRACKNUMBER', '2'], ['TRACKTOTAL', '3'], ['TOTALTRACKS', '3'], ['DISCNUMBER', '2'], ['DISCTOTAL', '2'], ['TOTALDISCS', '2'], ['DATE', '2019'],
      ['MUSICBRAINZ_ALBUMID', 'rel-1'], ['MUSICBRAINZ_TRACKID', 'r2'], ['MUSICBRAINZ_RELEASETRACKID', 't2'],
    ]);
    const unknown: AlbumInfo = { ...ALBUM, year: null, release_id: null, tracks: [{ number: 1, title: 'Zeile\nzwei', artist: null, recording_id: null, track_id: null }] };
    assert.deepEqual(vorbisTags(unknown, 1, 1).map(([k, v]) => `${k}=${v}`), ['ARTIST=AC/DC', 'ALBUMARTIST=AC/DC', 'ALBUM=Töne: Ein Sampler', 'TITLE=Zeile zwei', 'TRACKNUMBER=1', 'TRACKTOTAL=1', 'TOTALTRACKS=1', 'DISCNUMBER=2', 'DISCTOTAL=2', 'TOTALDISCS=2']);
  });

  it('knows JPEG and PNG by their first bytes', () => {
    assert.equal(imageKind(smallJpeg()), 'jpg');
    assert.equal(imageKind(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])), 'png');
    assert.equal(imageKind(Buffer.from('<html>')), null);
  });
});

describe('audio CD with an album: names, tags and cover', () => {
  let mb: MusicBrainzServer;
  const flac = path.join(root, 'album-one.flac');
  const tools: AudioCdTools = { abcde: path.join(FIXTURES_DIR, 'abcde'), cdparanoia: path.join(FIXTURES_DIR, 'cdparanoia'), ffmpeg: 'ffmpeg', metaflac: 'metaflac', flac: 'flac', cdInfo: 'cd-info', accurateRipUrl: null, readOffsets: {} };
  const jpeg = smallJpeg();
  let closedPort = 0;
  before(async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    mb = await startMusicBrainzServer();
    mb.covers['rel-1'] = jpeg;
    execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100', '-t', '1', '-ac', '2', '-sample_fmt', 's16', '-metadata', 'TITLE=Track 1', '-c:a', 'flac', '-y', flac]);
  });
  after(() => mb.close());

  it('renames abcde\'s files after the album, replaces its tags and saves the front cover as cover.jpg', async () => {
    process.env.FAKE_ABCDE_FLAC = flac;
    const a = args('album-dev', { album: { ...ALBUM, cover_url: `${mb.coverBase}/release/rel-1/front` } });
    const c = ctx();
    // Agents run as services, often without a UTF-8 locale: the tags must keep their umlauts anyway.
    const locale = { LANG: process.env.LANG, LC_ALL: process.env.LC_ALL };
    delete process.env.LANG;
    delete process.env.LC_ALL;
    const result = await ripAudioCd(a, { kind: 'device', path: '/dev/sr0' }, c, tools).finally(() => {
      for (const [k, v] of Object.entries(locale)) if (v !== undefined) process.env[k] = v;
    });
    const dir = path.join(a.target_dir, 'AC-DC', 'Töne - Ein Sampler (2019)');
    assert.equal(result.output?.output_path, dir);
    assert.deepEqual(fs.readdirSync(dir), ['01 - Kammerton - A 440.flac', '02 - E 660.flac', '03 - C 523.flac', 'cover.jpg']);
    assert.deepEqual(result.files.map((f) => path.basename(f)), ['01 - Kammerton - A 440.flac', '02 - E 660.flac', '03 - C 523.flac']);
    assert.equal(tagsOf(path.join(dir, '01 - Kammerton - A 440.flac')), ['ARTIST=AC/DC', 'ALBUMARTIST=AC/DC', 'ALBUM=Töne: Ein Sampler', 'TITLE=Kammerton: A 440', 'TRACKNUMBER=1', 'TRACKTOTAL=3', 'TOTALTRACKS=3', 'DISCNUMBER=2', 'DISCTOTAL=2', 'TOTALDISCS=2', 'DATE=2019', 'MUSICBRAINZ_ALBUMID=rel-1', 'MUSICBRAINZ_TRACKID=r1', 'MUSICBRAINZ_RELEASETRACKID=t1'].join('\n'));
    assert.deepEqual(fs.readFileSync(path.join(dir, 'cover.jpg')), jpeg);
    assert.ok(c.logs.includes('front cover saved as cover.jpg'));
  });

  it('finishes the rip with a warning when the cover is missing or not an image', async () => {
    process.env.FAKE_ABCDE_FLAC = flac;
    mb.covers['rel-html'] = Buffer.from('<html>not an image</html>');
    for (const [name, url, why] of [
      ['nocover', `${mb.coverBase}/release/rel-none/front`, 'no cover.jpg: the cover archive answered 404'],
      ['htmlcover', `${mb.coverBase}/release/rel-html/front`, 'no cover.jpg: the cover archive sent something that is not a JPEG or PNG image'],
      ['deadcover', `http://127.0.0.1:${closedPort}/release/x/front`, 'no cover.jpg: the cover could not be fetched (ECONNREFUSED)'],
    ]) {
      const a = args(name, { album: { ...ALBUM, cover_url: url } });
      const c = ctx();
      const result = await ripAudioCd(a, { kind: 'device', path: '/dev/sr0' }, c, tools);
      assert.equal(result.files.length, 3);
      assert.ok(!fs.readdirSync(result.output!.output_path).some((f) => f.startsWith('cover.')));
      assert.ok(c.logs.includes(why), `${name}: ${c.logs.join(' | ')}`);
    }
    assert.equal(MAX_COVER_BYTES, 10 * 1024 * 1024);
  });

  it('refuses a cover above the size cap before writing anything', async () => {
    mb.covers['rel-big'] = Buffer.concat([jpeg.subarray(0, 3), Buffer.alloc(MAX_COVER_BYTES)]);
    const dir = fs.mkdtempSync(path.join(root, 'big-'));
    assert.deepEqual(await saveCover(`${mb.coverBase}/release/rel-big/front`, dir, 'Ripwerk (test)', new AbortController().signal), { why: 'the cover is larger than 10 MB' });
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('cuts a cue image into album-named, tagged files', async () => {
    const dir = path.join(root, 'cue-album');
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES_DIR, 'samples', 'cd-test.cue'), path.join(dir, 'disc.cue'));
    fs.writeFileSync(path.join(dir, 'disc.bin'), Buffer.alloc(1175 * 2352));
    const a = args('cue-album', { album: { ...ALBUM, tracks: ALBUM.tracks.slice(0, 2) } });
    const result = await ripAudioCd(a, { kind: 'cue', path: path.join(dir, 'disc.cue') }, ctx(), tools);
    assert.deepEqual(fs.readdirSync(result.output!.output_path), ['01 - Kammerton - A 440.flac', '02 - E 660.flac', '03 - C 523.flac'], 'a track the album lacks keeps its cue title');
    assert.match(tagsOf(path.join(result.output!.output_path, '03 - C 523.flac')), /^ARTIST=AC\/DC\nALBUMARTIST=AC\/DC\nALBUM=Töne: Ein Sampler\nTITLE=C 523\nTRACKNUMBER=3\nTRACKTOTAL=3\nTOTALTRACKS=3\nDISCNUMBER=2\nDISCTOTAL=2\nTOTALDISCS=2\nDATE=2019\nMUSICBRAINZ_ALBUMID=rel-1$/);
  });
});

describe('cue images with data tracks', () => {
  const tools: AudioCdTools = { abcde: 'abcde', cdparanoia: 'cdparanoia', ffmpeg: 'ffmpeg', metaflac: 'metaflac', flac: 'flac', cdInfo: 'cd-info', accurateRipUrl: null, readOffsets: {} };
  const samples = (file: string): number => Number(execFileSync('metaflac', ['--show-total-samples', file]).toString().trim());
  function image(name: string, cue: string, bytes: number): string {
    const dir = path.join(root, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'disc.cue'), cue);
    fs.writeFileSync(path.join(dir, 'disc.bin'), Buffer.alloc(bytes));
    return path.join(dir, 'disc.cue');
  }

  it('ends the last audio track of an enhanced CD where its data track starts in the same .bin', async () => {
    // 2 audio tracks (375 and 565 frames), then 300 frames of a MODE1/2352 data track.
    const cue = image('enhanced', 'FILE "disc.bin" BINARY\n  TRACK 01 AUDIO\n    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n    INDEX 01 00:05:00\n  TRACK 03 MODE1/2352\n    INDEX 01 00:12:40\n', (940 + 300) * 2352);
    assert.deepEqual((await scanAudioCd({ kind: 'cue', path: cue }, new AbortController().signal, tools)).map((t) => [t.number, t.seconds]), [[1, 5], [2, 7.53]]);
    const result = await ripAudioCd(args('enhanced'), { kind: 'cue', path: cue }, ctx(), tools);
    assert.deepEqual(result.files.map((f) => [path.basename(f), samples(f)]), [['01 - Track 1.flac', 375 * 588], ['02 - Track 2.flac', 565 * 588]], 'no data sectors as noise in the last file');
  });

  it('finds the audio after a mixed-mode CD\'s data track of 2048-byte sectors in the same .bin', async () => {
    const cue = image('mixed', 'FILE "disc.bin" BINARY\n  TRACK 01 MODE1/2048\n    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n    INDEX 01 00:02:00\n', 150 * 2048 + 375 * 2352);
    const result = await ripAudioCd(args('mixed'), { kind: 'cue', path: cue }, ctx(), tools);
    assert.deepEqual(result.files.map((f) => [path.basename(f), samples(f)]), [['02 - Track 2.flac', 375 * 588]]);
  });
});

describe('a release of two discs', () => {
  const tools: AudioCdTools = { abcde: 'abcde', cdparanoia: 'cdparanoia', ffmpeg: 'ffmpeg', metaflac: 'metaflac', flac: 'flac', cdInfo: 'cd-info', accurateRipUrl: null, readOffsets: {} };
  const disc = (n: number): AlbumInfo => ({
    ...ALBUM, disc_number: n, disc_total: 2, release_id: 'rel-2cd', cover_url: null,
    tracks: [1, 2, 3].map((t) => ({ number: t, title: `CD${n} Titel ${t}`, artist: null, recording_id: `r${n}${t}`, track_id: `t${n}${t}` })),
  });
  function cue(name: string): string {
    const dir = path.join(root, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES_DIR, 'samples', 'cd-test.cue'), path.join(dir, 'disc.cue'));
    fs.writeFileSync(path.join(dir, 'disc.bin'), Buffer.alloc(1175 * 2352));
    return path.join(dir, 'disc.cue');
  }

  it('puts both discs into one album folder as D-NN files with the disc total, whichever comes first', async () => {
    const target = path.join(root, 'two-discs', 'Musik');
    const second = await ripAudioCd({ ...args('cd2'), target_dir: target, album: disc(2) }, { kind: 'cue', path: cue('cd2') }, ctx(), tools);
    const first = await ripAudioCd({ ...args('cd1'), target_dir: target, album: disc(1) }, { kind: 'cue', path: cue('cd1') }, ctx(), tools);
    const dir = path.join(target, 'AC-DC', 'Töne - Ein Sampler (2019)');
    assert.deepEqual([first.output?.output_path, second.output?.output_path], [dir, dir]);
    assert.deepEqual(fs.readdirSync(path.join(target, 'AC-DC')), ['Töne - Ein Sampler (2019)']);
    assert.deepEqual(fs.readdirSync(dir), ['1-01 - CD1 Titel 1.flac', '1-02 - CD1 Titel 2.flac', '1-03 - CD1 Titel 3.flac', '2-01 - CD2 Titel 1.flac', '2-02 - CD2 Titel 2.flac', '2-03 - CD2 Titel 3.flac']);
    assert.match(tagsOf(path.join(dir, '2-03 - CD2 Titel 3.flac')), /\nTRACKNUMBER=3\nTRACKTOTAL=3\nTOTALTRACKS=3\nDISCNUMBER=2\nDISCTOTAL=2\nTOTALDISCS=2\n/);
  });

  it('does not mix a disc ripped again, or another release, into the folder', async () => {
    const target = path.join(root, 'two-discs', 'Musik');
    const again = await ripAudioCd({ ...args('cd2-again'), job_id: 'jobcd2again', target_dir: target, album: disc(2) }, { kind: 'cue', path: cue('cd2-again') }, ctx(), tools);
    assert.equal(again.output?.output_path, path.join(target, 'AC-DC', 'Töne - Ein Sampler (2019) [jobcd2ag]'));
    const other = await ripAudioCd({ ...args('other'), job_id: 'jobother00', target_dir: target, album: { ...disc(3), release_id: 'rel-other', disc_total: 3 } }, { kind: 'cue', path: cue('other') }, ctx(), tools);
    assert.equal(other.output?.output_path, path.join(target, 'AC-DC', 'Töne - Ein Sampler (2019) [jobother]'));
  });
});

describe('audio CD identity from a drive (cdparanoia -Q and cd-info stand-ins)', () => {
  const fakeCdInfo = path.join(root, 'cd-info');
  fs.writeFileSync(fakeCdInfo, `#!/bin/sh\n[ "$1 $2 $3" = "--no-device-info -C /dev/sr0" ] || exit 2\ngrep -v '^[#$]' '${path.join(FIXTURES_DIR, 'samples', 'cd-info-cue-image.txt')}' | grep -v '^\\[exit'\n`, { mode: 0o755 });
  const cdparanoia = path.join(FIXTURES_DIR, 'cdparanoia');

  it('reads the CD-Text blocks of cd-info', () => {
    assert.deepEqual(parseCdInfoCdText(sample('cd-info-cue-image.txt')), {
      title: 'Sine Sampler', performer: 'Ripwerk Test Tones',
      tracks: [{ number: 1, title: 'A 440', performer: 'Ripwerk Test Tones' }, { number: 2, title: 'E 660', performer: 'Ripwerk Test Tones' }, { number: 3, title: 'C 523', performer: 'Ripwerk Test Tones' }],
    });
    assert.equal(parseCdInfoCdText('CD Analysis Report\nNo CD-TEXT on this disc.\n'), null);
    const twoLanguages = "Language 0 'German':\nCD-TEXT for Disc:\n\tTITLE: Eins\nLanguage 1 'English':\nCD-TEXT for Disc:\n\tTITLE: One\n";
    assert.equal(parseCdInfoCdText(twoLanguages)?.title, 'Eins');
  });

  it('computes the disc id from cdparanoia\'s TOC and takes the CD-Text from cd-info', async () => {
    assert.deepEqual(await readDriveCdIdentity('/dev/sr0', { cdparanoia, cdInfo: fakeCdInfo }), {
      musicbrainz_disc_id: 'Dr2EtzSM39D9_zS0uLw6CQcfvEw-', toc: '1 3 1325 150 525 1090',
      cd_text: { title: 'Sine Sampler', performer: 'Ripwerk Test Tones', tracks: [{ number: 1, title: 'A 440', performer: 'Ripwerk Test Tones' }, { number: 2, title: 'E 660', performer: 'Ripwerk Test Tones' }, { number: 3, title: 'C 523', performer: 'Ripwerk Test Tones' }] },
    });
    const withoutCdInfo = await readDriveCdIdentity('/dev/sr0', { cdparanoia, cdInfo: path.join(root, 'no-such-cd-info') });
    assert.deepEqual([withoutCdInfo?.musicbrainz_disc_id, withoutCdInfo?.cd_text], ['Dr2EtzSM39D9_zS0uLw6CQcfvEw-', null]);
    process.env.FAKE_ABCDE_MODE = 'nodisc';
    try {
      assert.equal(await readDriveCdIdentity('/dev/sr0', { cdparanoia, cdInfo: fakeCdInfo }), null);
    } finally {
      delete process.env.FAKE_ABCDE_MODE;
    }
  });

  it('fingerprints a drive\'s CD by its disc id and titles it from the CD-Text', async () => {
    const reading = { status: 'disc_present', driveStatus: null, media: { mediaPresent: true, mediaKind: 'cd', audioTracks: 3, dataTracks: 0, fsLabel: null, fsType: null }, sizeBytes: 2_763_600, problem: null } as unknown as PhysicalDriveReading;
    const read = (dev: string) => readDriveCdIdentity(dev, { cdparanoia, cdInfo: fakeCdInfo });
    const disc = await physicalDisc('/dev/sr0', reading, read);
    assert.deepEqual([disc.title, disc.type, disc.audio_tracks, disc.audio_cd?.musicbrainz_disc_id], ['Ripwerk Test Tones - Sine Sampler', 'cd', 3, 'Dr2EtzSM39D9_zS0uLw6CQcfvEw-']);
    const unread = await physicalDisc('/dev/sr0', reading, async () => null);
    assert.deepEqual([unread.title, unread.audio_cd], ['Audio CD', null]);
    assert.notEqual(disc.fingerprint, unread.fingerprint, 'the disc id is part of the fingerprint');
    assert.equal(disc.fingerprint, 'mb:Dr2EtzSM39D9_zS0uLw6CQcfvEw-', 'a CD whose TOC was read is keyed on its MusicBrainz disc id');
    assert.equal(disc.label_fingerprint, discFingerprint('musicbrainz:Dr2EtzSM39D9_zS0uLw6CQcfvEw-', 2_763_600), 'the label fingerprint is what the fingerprint was');
    assert.equal(unread.fingerprint, discFingerprint('AUDIO_CD_3_TRACKS', 2_763_600), 'no TOC: the label fingerprint is the key');
    assert.equal(unread.label_fingerprint, unread.fingerprint);
  });
});
