import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AccurateRipChecksum } from '../../../../agent/cd/accuraterip-checksum.js';
import { parseAccurateRip, verifyTracks, type AccurateRipPressing } from '../../../../agent/cd/accuraterip-db.js';
import { accurateRipDisc } from '../../../../agent/cd/accuraterip-ids.js';
import { checksumFlac, reportFileName, reportLines, verifyAudioCd } from '../../../../agent/cd/accuraterip-verify.js';
import type { DiscLayout } from '../../../../agent/cd/cd-toc.js';
import { ConfigError, readAgentConfig } from '../../../../shared/config.js';
import { accurateRipAnswer as answer } from '../../../fixtures/accuraterip-server.js';

const tools = { flac: 'flac', metaflac: 'metaflac' };
const signal = new AbortController().signal;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-accuraterip-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Every track audio, starting at the LBAs given (MusicBrainz offsets minus the 150-frame lead-in). */
const audioLayout = (starts: number[], leadout: number, firstNumber = 1): DiscLayout => ({ tracks: starts.map((lba, i) => ({ number: firstNumber + i, lba, audio: true })), leadout });

describe('AccurateRip disc ids', () => {
  // Both discs and their ids as dBpoweramp and EAC compute them: ARver, doc/data_track.md.
  it('an enhanced CD: the data session adds nothing to the ids but its lead-out counts (Recoil, Liquid)', () => {
    const starts = [150, 12767, 40487, 63225, 93410, 118115, 151865, 184340, 215260, 247455].map((o) => o - 150);
    const layout: DiscLayout = { tracks: [...audioLayout(starts, 0).tracks, { number: 11, lba: 281585, audio: false }], leadout: 333651 };
    const disc = accurateRipDisc(layout)!;
    assert.deepEqual([disc.id1, disc.id2, disc.freedb], ['00164419', '00b9f6e2', '9e11600b']);
    assert.equal(disc.path, '/9/1/4/dBAR-010-00164419-00b9f6e2-9e11600b.bin');
    assert.deepEqual(disc.audioTracks, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a mixed-mode CD: data track 1 is left out, the audio tracks are counted from 1 (Mortal Kombat Trilogy)', () => {
    const offsets = [150, 66728, 76502, 85963, 93760, 104048, 116066, 124743, 134206, 142916, 151852, 160720, 169425, 178731, 188459, 196711, 206354, 214845, 223686, 225746, 226384, 232668, 239447, 239931, 244989, 254264, 260066, 261222, 261674];
    const layout: DiscLayout = { tracks: offsets.map((o, i) => ({ number: i + 1, lba: o - 150, audio: i > 0 })), leadout: 261976 - 150 };
    const disc = accurateRipDisc(layout)!;
    assert.equal(`${String(disc.audioTracks.length).padStart(3, '0')}-${disc.id1}-${disc.id2}-${disc.freedb}`, '028-00517a54-05a845d2-af0da31d');
    assert.equal(disc.audioTracks[0], 2);
  });

  it('no audio track, no ids', () => {
    assert.equal(accurateRipDisc({ tracks: [{ number: 1, lba: 0, audio: false }], leadout: 1000 }), null);
  });
});

describe('AccurateRip checksums, against whipper\'s accuraterip-checksum (Debian)', () => {
  const wav = path.join(root, 'noise.wav');
  const flac = path.join(root, 'noise.flac');
  before(() => {
    execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'anoisesrc=d=3:c=pink:r=44100:a=0.5:seed=7', '-ac', '2', '-c:a', 'pcm_s16le', '-y', wav]);
    execFileSync('flac', ['-s', '-f', '-o', flac, wav]);
  });
  const whipper = (version: 'v1' | 'v2', index: number, count: number): string =>
    execFileSync('accuraterip-checksum', [...(version === 'v1' ? ['--accuraterip-v1'] : []), wav, String(index), String(count)]).toString().trim().toLowerCase();
  /** The samples of the WAV: what follows its `data` chunk header (ffmpeg writes a LIST chunk before it). */
  const pcm = (): Buffer => {
    const file = fs.readFileSync(wav);
    const at = file.indexOf('data', 12, 'latin1');
    return file.subarray(at + 8, at + 8 + file.readUInt32LE(at + 4));
  };

  for (const [index, count, what] of [[1, 3, 'the first track'], [2, 3, 'a middle track'], [3, 3, 'the last track'], [1, 1, 'the only track']] as const) {
    it(`${what} (${index} of ${count}), fed in odd-sized chunks`, () => {
      const data = pcm();
      const sum = new AccurateRipChecksum({ index, count, samples: data.length / 4 });
      // Chunks that split samples: a decoder's pipe does not keep to sample boundaries.
      for (let off = 0; off < data.length; off += 4099) sum.update(data.subarray(off, off + 4099));
      assert.deepEqual(sum.digest(), { v1: whipper('v1', index, count), v2: whipper('v2', index, count) });
    });
  }

  it('a FLAC decoded by flac gives the same checksums as its WAV', async () => {
    assert.deepEqual(await checksumFlac(flac, { index: 2, count: 3 }, tools, signal), { v1: whipper('v1', 2, 3), v2: whipper('v2', 2, 3) });
  });

  it('a FLAC that does not decode fails with flac\'s reason', async () => {
    const broken = path.join(root, 'broken.flac');
    const data = fs.readFileSync(flac);
    // The header stays (the sample count is read), the audio frames are overwritten.
    data.fill(0x55, 8192, data.length - 100);
    fs.writeFileSync(broken, data);
    await assert.rejects(checksumFlac(broken, { index: 1, count: 1 }, tools, signal), /broken\.flac (does not decode|decodes to \d+ samples)/);
  });
});

describe('AccurateRip answers', () => {
  const pressings: AccurateRipPressing[] = [
    { id1: '00000aaa', id2: '00000bbb', freedb: '0c000303', tracks: [{ confidence: 37, checksum: '11111111' }, { confidence: 12, checksum: '22222222' }, { confidence: 0, checksum: '00000000' }] },
    { id1: '00000aaa', id2: '00000bbb', freedb: '0c000303', tracks: [{ confidence: 3, checksum: '1111aaaa' }, { confidence: 40, checksum: '2222bbbb' }, { confidence: 0, checksum: '00000000' }] },
  ];

  it('reads every pressing of an answer', () => {
    assert.deepEqual(parseAccurateRip(answer(pressings)), pressings);
  });

  it('refuses bytes that are no answer', () => {
    assert.throws(() => parseAccurateRip(answer(pressings).subarray(0, 30)), /cut short/);
    assert.throws(() => parseAccurateRip(Buffer.from('<html>404</html>')), RangeError);
  });

  it('judges each track by its slot: accurate (v1 or v2, the best confidence), inaccurate, unknown', () => {
    const verdicts = verifyTracks(
      [
        { number: 1, slot: 1, v1: '11111111', v2: 'ffffffff' },
        { number: 2, slot: 2, v1: '00000001', v2: '2222bbbb' },
        { number: 3, slot: 3, v1: '33333333', v2: '33333334' },
      ],
      pressings,
    );
    assert.deepEqual(verdicts, [{ status: 'accurate', confidence: 37, version: 'v1' }, { status: 'accurate', confidence: 40, version: 'v2' }, { status: 'unknown' }]);
    assert.deepEqual(verifyTracks([{ number: 1, slot: 1, v1: '0badf00d', v2: '0badf00e' }], pressings), [{ status: 'inaccurate', confidence: 37 }]);
  });
});

describe('an audio CD rip checked against a database on loopback', () => {
  let server: http.Server;
  let base = '';
  const requests: string[] = [];
  let reply: (res: http.ServerResponse) => void = (res) => res.writeHead(404).end();
  // Three tracks of one second each, cut from the noise file as a disc would be.
  const files: string[] = [];
  const layout = audioLayout([0, 75, 150], 225);
  const sums: { v1: string; v2: string }[] = [];

  before(async () => {
    const wav = path.join(root, 'disc.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'anoisesrc=d=3:c=white:r=44100:a=0.3:seed=3', '-ac', '2', '-c:a', 'pcm_s16le', '-y', wav]);
    for (let n = 1; n <= 3; n++) {
      const file = path.join(root, `track${n}.flac`);
      execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-i', wav, '-af', `atrim=start_sample=${(n - 1) * 44100}:end_sample=${n * 44100}`, '-c:a', 'flac', '-y', file]);
      files.push(file);
      const part = path.join(root, `track${n}.wav`);
      execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-i', file, '-c:a', 'pcm_s16le', '-y', part]);
      const run = (v: string[]): string => execFileSync('accuraterip-checksum', [...v, part, String(n), '3']).toString().trim().toLowerCase();
      sums.push({ v1: run(['--accuraterip-v1']), v2: run([]) });
    }
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      reply(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/accuraterip`;
  });
  after(() => server.close());

  const disc = () => accurateRipDisc(layout)!;
  const check = () => verifyAudioCd({ layout, tracks: files.map((file, i) => ({ number: i + 1, file })), readOffset: { samples: 0, source: 'image' }, baseUrl: base, tools, signal });

  it('every track in the database: accurate, with the confidence, asked at the entry\'s path', async () => {
    const d = disc();
    reply = (res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(answer([{ id1: d.id1, id2: d.id2, freedb: d.freedb, tracks: [{ confidence: 37, checksum: sums[0].v2 }, { confidence: 36, checksum: sums[1].v1 }, { confidence: 35, checksum: sums[2].v2 }] }]));
    const report = await check();
    assert.equal(requests.at(-1), `/accuraterip${d.path}`);
    assert.equal(report.status, 'accurate');
    assert.deepEqual(report.tracks.map((t) => [t.number, t.status, t.confidence]), [[1, 'accurate', 37], [2, 'accurate', 36], [3, 'accurate', 35]]);
    assert.deepEqual(report.tracks.map((t) => ({ v1: t.v1, v2: t.v2 })), sums);
    assert.match(reportLines(report).join('\n'), /track 01: v1 [0-9a-f]{8} v2 [0-9a-f]{8}: accurate \(confidence 37\)/);
  });

  it('a track that differs from a confident entry: inaccurate, and the log says which', async () => {
    const d = disc();
    reply = (res) => res.writeHead(200).end(answer([{ id1: d.id1, id2: d.id2, freedb: d.freedb, tracks: [{ confidence: 37, checksum: sums[0].v2 }, { confidence: 20, checksum: '0badf00d' }, { confidence: 35, checksum: sums[2].v2 }] }]));
    const report = await check();
    assert.equal(report.status, 'inaccurate');
    assert.match(reportLines(report).join('\n'), /track 02: .*NOT accurate \(the database has another checksum, confidence 20\)/);
  });

  it('a disc the database does not know (404), and a database that cannot be asked', async () => {
    reply = (res) => res.writeHead(404).end();
    assert.equal((await check()).status, 'not_in_database');
    reply = (res) => res.writeHead(500).end();
    const down = await check();
    assert.deepEqual([down.status, down.reason], ['unavailable', 'the AccurateRip database could not be asked: the database answered 500']);
    reply = (res) => res.writeHead(200).end(Buffer.alloc(300 * 1024, 1));
    assert.match((await check()).reason ?? '', /larger than 262144 bytes/);
    assert.ok(down.tracks.every((t) => t.status === 'unknown' && /^[0-9a-f]{8}$/.test(t.v1)));
  });

  it('names the log per disc of an album of several discs', () => {
    assert.deepEqual([reportFileName(null), reportFileName(2)], ['accuraterip.log', 'accuraterip-disc2.log']);
  });
});

describe('CD_READ_OFFSETS and ACCURATERIP_BASE_URL', () => {
  const env = { MEDIA_ROOT: '/srv/media', RAW_DIR: '/srv/raw', DATA_DIR: '/var/lib/ripwerk' };
  it('reads offsets per device, with sign', () => {
    assert.deepEqual(readAgentConfig({ ...env, CD_READ_OFFSETS: '/dev/sr0=+6, /dev/sr1=-472' }).cdReadOffsets, { '/dev/sr0': 6, '/dev/sr1': -472 });
    assert.deepEqual(readAgentConfig(env).cdReadOffsets, {});
  });
  it('refuses an offset no drive has, and a pair without a device', () => {
    assert.throws(() => readAgentConfig({ ...env, CD_READ_OFFSETS: '/dev/sr0=+60000' }), ConfigError);
    assert.throws(() => readAgentConfig({ ...env, CD_READ_OFFSETS: 'sr0=6' }), /device=samples pairs/);
  });
  it('asks accuraterip.com unless told otherwise; off turns the comparison off', () => {
    assert.equal(readAgentConfig(env).accurateRipUrl, 'http://www.accuraterip.com/accuraterip');
    assert.equal(readAgentConfig({ ...env, ACCURATERIP_BASE_URL: 'off' }).accurateRipUrl, null);
    assert.throws(() => readAgentConfig({ ...env, ACCURATERIP_BASE_URL: 'not a url' }), ConfigError);
  });
});
