import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ffprobeStreams } from '../../../../agent/tools/ffprobe-runner.js';
import { parseMatroskaHead, readMatroskaStreams } from '../../../../agent/tools/matroska-head.js';

// ---- a small EBML writer for heads ffmpeg does not write (default language, DTS, BCP 47, tracks behind a cluster)

function vintSize(n: number): Buffer {
  for (let length = 1; length <= 8; length++) {
    if (n < 2 ** (7 * length) - 1) {
      const b = Buffer.alloc(length);
      let v = n;
      for (let i = length - 1; i >= 0; i--) {
        b[i] = v % 256;
        v = Math.floor(v / 256);
      }
      b[0] |= 0x80 >> (length - 1);
      return b;
    }
  }
  throw new Error('too large');
}

function idBytes(id: number): Buffer {
  const hex = id.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
}

const el = (id: number, ...body: Buffer[]): Buffer => {
  const data = Buffer.concat(body);
  return Buffer.concat([idBytes(id), vintSize(data.length), data]);
};
const u = (id: number, v: number): Buffer => el(id, Buffer.from([v]));
const s = (id: number, v: string): Buffer => el(id, Buffer.from(v, 'latin1'));
const f64 = (id: number, v: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return el(id, b);
};

const ebmlHeader = (docType = 'matroska'): Buffer => el(0x1a45dfa3, s(0x4282, docType));
const info = (ms: number | null): Buffer => el(0x1549a966, el(0x2ad7b1, Buffer.from([0x0f, 0x42, 0x40])), ...(ms === null ? [] : [f64(0x4489, ms)]));
const audioTrack = (codec: string, channels: number | null, language?: string, extra: Buffer[] = []): Buffer =>
  el(0xae, u(0x83, 2), s(0x86, codec), ...(language === undefined ? [] : [s(0x22b59c, language)]), ...(channels === null ? [] : [el(0xe1, u(0x9f, channels))]), ...extra);
const subtitleTrack = (codec: string, language: string, forced: boolean): Buffer => el(0xae, u(0x83, 17), s(0x86, codec), s(0x22b59c, language), ...(forced ? [u(0x55aa, 1)] : []));
const videoTrack = (): Buffer => el(0xae, u(0x83, 1), s(0x86, 'V_MPEG2'));
const cluster = (): Buffer => el(0x1f43b675, u(0xe7, 0));
/** A segment of unknown size, as a muxer writing a stream leaves it. */
const segment = (...children: Buffer[]): Buffer => Buffer.concat([idBytes(0x18538067), Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), ...children]);

describe('parseMatroskaHead', () => {
  it('reads the duration and the audio and subtitle tracks in track order, with Matroska\'s defaults', () => {
    const head = Buffer.concat([
      ebmlHeader(),
      segment(
        el(0xec, Buffer.alloc(20)),
        info(5_400_000),
        el(0x1654ae6b, videoTrack(), audioTrack('A_AC3', 6, 'ger'), audioTrack('A_TRUEHD', 8), audioTrack('A_AAC', null, 'und'), subtitleTrack('S_VOBSUB', 'ger', false), subtitleTrack('S_HDMV/PGS', 'eng', true)),
        cluster(),
      ),
    ]);
    assert.deepEqual(parseMatroskaHead(head), {
      seconds: 5400,
      audio: [
        { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
        { index: 2, language: 'eng', codec: 'truehd', channels: 8 },
        { index: 3, language: 'und', codec: 'aac', channels: 1 },
      ],
      subtitles: [
        { index: 1, language: 'deu', codec: 'vobsub', forced: false },
        { index: 2, language: 'eng', codec: 'pgs', forced: true },
      ],
    });
  });

  it('reads the role flags: commentary and visual impaired audio, hearing impaired and commentary subtitles (FlagCommentary, FlagVisualImpaired, FlagHearingImpaired)', () => {
    const head = Buffer.concat([
      ebmlHeader(),
      segment(
        info(1000),
        el(
          0x1654ae6b,
          audioTrack('A_AC3', 2, 'eng', [u(0x55af, 1)]),
          audioTrack('A_AC3', 2, 'ger', [u(0x55ac, 1)]),
          audioTrack('A_AC3', 6, 'ger', [u(0x55af, 0), u(0x55ac, 0), u(0x55ae, 1)]),
          el(0xae, u(0x83, 17), s(0x86, 'S_VOBSUB'), s(0x22b59c, 'ger'), u(0x55ab, 1)),
          el(0xae, u(0x83, 17), s(0x86, 'S_VOBSUB'), s(0x22b59c, 'eng'), u(0x55af, 1), u(0x55aa, 1)),
        ),
      ),
    ]);
    assert.deepEqual(parseMatroskaHead(head), {
      seconds: 1,
      audio: [
        { index: 1, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
        { index: 2, language: 'deu', codec: 'ac3', channels: 2, visual_impaired: true },
        { index: 3, language: 'deu', codec: 'ac3', channels: 6 },
      ],
      subtitles: [
        { index: 1, language: 'deu', codec: 'vobsub', forced: false, hearing_impaired: true },
        { index: 2, language: 'eng', codec: 'vobsub', forced: true, commentary: true },
      ],
    });
  });

  it('leaves to ffprobe what the head does not tell surely', () => {
    const tracks = el(0x1654ae6b, audioTrack('A_AC3', 2, 'eng'));
    const good = Buffer.concat([ebmlHeader(), segment(info(1000), tracks)]);
    assert.notEqual(parseMatroskaHead(good), null);
    const cases: [string, Buffer][] = [
      ['DTS, whose HD profile is in the bitstream', Buffer.concat([ebmlHeader(), segment(info(1000), el(0x1654ae6b, audioTrack('A_DTS', 6, 'eng')))])],
      ['a BCP 47 language', Buffer.concat([ebmlHeader(), segment(info(1000), el(0x1654ae6b, audioTrack('A_AC3', 2, 'eng', [s(0x22b59d, 'de-CH')])))])],
      ['no duration in the head', Buffer.concat([ebmlHeader(), segment(info(null), tracks)])],
      ['tracks behind the first cluster', Buffer.concat([ebmlHeader(), segment(info(1000), cluster(), tracks)])],
      ['tracks cut off by the end of the head', good.subarray(0, good.length - 3)],
      ['another EBML document', Buffer.concat([ebmlHeader('notmatroska'), segment(info(1000), tracks)])],
      ['no EBML at all', Buffer.from('ftypisom\0\0\0\0mp41')],
      ['nothing', Buffer.alloc(0)],
    ];
    for (const [what, buf] of cases) assert.equal(parseMatroskaHead(buf), null, what);
  });
});

describe('readMatroskaStreams against ffprobe on files ffmpeg wrote', () => {
  let dir: string;
  const make = (name: string, args: string[]): string => {
    const file = path.join(dir, name);
    execFileSync('ffmpeg', ['-v', 'error', '-nostdin', ...args, '-y', file], { stdio: 'pipe' });
    return file;
  };

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-matroska-'));
    fs.writeFileSync(path.join(dir, 'sub.srt'), '1\n00:00:00,500 --> 00:00:01,000\nHallo\n');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads what ffprobe reads: two languages of audio, a forced subtitle, the length', async () => {
    const file = make('two languages.mkv', [
      '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25',
      '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
      '-i', path.join(dir, 'sub.srt'),
      '-t', '2', '-map', '0:v', '-map', '1:a', '-map', '1:a', '-map', '2:s', '-map', '2:s',
      '-c:v', 'mpeg2video', '-c:a:0', 'ac3', '-ac:a:0', '6', '-c:a:1', 'aac', '-ac:a:1', '2', '-c:s', 'srt',
      '-metadata:s:a:0', 'language=ger', '-metadata:s:a:1', 'language=eng',
      '-metadata:s:s:0', 'language=ger', '-metadata:s:s:1', 'language=fre', '-disposition:s:1', 'forced',
    ]);
    const own = await readMatroskaStreams(file);
    assert.deepEqual(own, await ffprobeStreams('ffprobe', file));
    assert.deepEqual(own?.audio.map((a) => [a.language, a.codec, a.channels]), [['deu', 'ac3', 6], ['eng', 'aac', 2]]);
    assert.deepEqual(own?.subtitles.map((x) => [x.language, x.codec, x.forced]), [['deu', 'srt', false], ['fra', 'srt', true]]);
    assert.ok(own && own.seconds > 1.9 && own.seconds < 2.1, String(own?.seconds));
  });

  it('reads a file without language tags as ffprobe does ("und")', async () => {
    const file = make('untagged.mkv', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '1', '-c:a', 'flac']);
    const own = await readMatroskaStreams(file);
    assert.deepEqual(own, await ffprobeStreams('ffprobe', file));
    assert.deepEqual(own?.audio.map((a) => [a.language, a.codec]), [['und', 'flac']]);
  });

  it('reads a file written as a stream (a segment of unknown size) as ffprobe does', async () => {
    const streamed = path.join(dir, 'streamed.mkv');
    fs.writeFileSync(streamed, execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '1', '-c:a', 'ac3', '-metadata:s:a:0', 'language=jpn', '-f', 'matroska', 'pipe:1'], { maxBuffer: 1 << 24 }));
    const own = await readMatroskaStreams(streamed);
    assert.deepEqual(own, await ffprobeStreams('ffprobe', streamed));
    assert.deepEqual(own?.audio.map((a) => [a.language, a.codec]), [['jpn', 'ac3']]);
  });

  it('stops waiting for a read once its task is canceled', async () => {
    const fifo = path.join(dir, 'never-written.mkv');
    execFileSync('mkfifo', [fifo]);
    const controller = new AbortController();
    const read = readMatroskaStreams(fifo, controller.signal);
    setTimeout(() => controller.abort(new Error('canceled')), 50);
    await assert.rejects(read, /canceled/);
    // The open still waits in the thread pool: a writer lets it go.
    fs.writeFileSync(fifo, 'x');
    await assert.rejects(readMatroskaStreams(fifo, controller.signal), /canceled/, 'an aborted signal reads nothing');
  });

  it('leaves an MP4 and a missing file to ffprobe', async () => {
    const mp4 = make('film.mp4', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '1', '-c:a', 'aac']);
    assert.equal(await readMatroskaStreams(mp4), null);
    assert.equal(await readMatroskaStreams(path.join(dir, 'missing.mkv')), null);
  });
});
