import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DECODE_SAMPLE_SECONDS, DECODE_SAMPLES, DURATION_TOLERANCE_SECONDS, DURATION_TOLERANCE_SHARE, durationTolerance, proofText, proveOutput, type DecodeSample, type OutputFacts } from '../../../../agent/output/output-proof.js';
import { errorLines, lastProgressBlock, progressFrames, progressSeconds, sampleStarts } from '../../../../agent/tools/ffmpeg-check-parser.js';
import { parseFfprobeStreams } from '../../../../agent/tools/ffprobe-parser.js';
import { sampleSection, sampleText } from '../../../fixtures/tools-samples.js';

const SAMPLE = 'ffmpeg-output-proof.txt';
const section = (from: string): string => sampleSection(SAMPLE, from, '## ').join('\n');
/** The streams of a real ffprobe answer (a MakeMKV DVD rip: German and English AC-3, German and English DVD subtitles). */
const probed = parseFfprobeStreams(sampleText('ffprobe-streams-multilang-mkv.json'));
const clean = (at: number): DecodeSample => ({ at, frames: 50, errors: [] });
const samples = sampleStarts(probed.seconds, DECODE_SAMPLES, DECODE_SAMPLE_SECONDS).map(clean);

function facts(over: Partial<OutputFacts> = {}): OutputFacts {
  return { claimedSeconds: probed.seconds, seconds: probed.seconds, readErrors: [], audio: probed.audio, subtitles: probed.subtitles, samples, ...over };
}

describe('ffmpeg-check-parser (captured runs)', () => {
  it('reads the real length of a cut-off file from the stream-copy pass, not the length its header claims', () => {
    const block = lastProgressBlock(section('-c copy -f null'));
    assert.equal(progressSeconds(block), 29.001);
    assert.equal(JSON.parse(section('show_entries format=duration')).format.duration, '60.046000');
  });
  it('counts no frame for a sample past the real end, and names the decoder errors of a broken one without addresses', () => {
    assert.equal(progressFrames(lastProgressBlock(section('-ss 45 -i half.mkv'))), 0);
    const errors = errorLines(section('-ss 20 -i bad.mkv'));
    assert.equal(errors.length, 5);
    assert.equal(errors[1], '[h264] left block unavailable for requested intra mode');
    assert.equal(errors[4], 'bad.mkv: corrupt decoded frame in stream 0');
  });
  it('spreads the samples over the whole file, clear of its start and end', () => {
    assert.deepEqual(sampleStarts(100, 4, 2), [2, 33.333, 64.667, 96]);
    assert.deepEqual(sampleStarts(3, 8, 2), [0]);
    assert.deepEqual(sampleStarts(0, 8, 2), []);
    const spread = sampleStarts(7200, DECODE_SAMPLES, DECODE_SAMPLE_SECONDS);
    assert.equal(spread.length, 8);
    assert.ok(spread[7] + DECODE_SAMPLE_SECONDS <= 7200 - DECODE_SAMPLE_SECONDS);
  });
});

describe('proveOutput', () => {
  const expected = { seconds: probed.seconds, audio: ['deu', 'eng'], subtitles: ['deu', 'eng'] };

  it('proves an output of the title\'s length with the chosen tracks that decodes cleanly', () => {
    assert.deepEqual(probed.audio.map((a) => a.language), ['deu', 'eng']);
    assert.deepEqual(proveOutput(expected, facts()), []);
  });

  it('allows 1 s or 0.5 % of the title, the larger: 36 s on two hours, 1 s on a short title', () => {
    assert.equal(DURATION_TOLERANCE_SECONDS, 1);
    assert.equal(DURATION_TOLERANCE_SHARE, 0.005);
    assert.equal(durationTolerance(7200), 36);
    assert.equal(durationTolerance(60), 1);
    const two = { ...expected, seconds: 7200 };
    assert.deepEqual(proveOutput(two, facts({ seconds: 7200 - 36 })), []);
    assert.equal(proveOutput(two, facts({ seconds: 7200 - 37 }))[0]?.code, 'shorter');
    assert.deepEqual(proveOutput({ ...expected, seconds: 60 }, facts({ seconds: 59.1 })), []);
    assert.equal(proveOutput({ ...expected, seconds: 60 }, facts({ seconds: 58.9 }))[0]?.code, 'shorter');
  });

  it('says by how much a cut-off output is shorter, in English and German', () => {
    const [r] = proveOutput({ ...expected, seconds: 6610 }, facts({ claimedSeconds: 6610, seconds: 6610 - 38 * 60 }));
    assert.equal(r.code, 'shorter');
    assert.deepEqual(r.params, { output_seconds: 4330, title_seconds: 6610 });
    assert.equal(r.en, 'the output is 38 minutes shorter than the title (1:12:10 of 1:50:10)');
    assert.equal(r.de, 'Ausgabe 38 Minuten kürzer als der Titel (1:12:10 von 1:50:10)');
    const [s] = proveOutput({ ...expected, seconds: 60 }, facts({ seconds: 15 }));
    assert.equal(s.en, 'the output is 45 seconds shorter than the title (0:15 of 1:00)');
  });

  it('takes an output much longer than its title for broken timestamps', () => {
    const [r] = proveOutput({ ...expected, seconds: 600 }, facts({ seconds: 1500 }));
    assert.equal(r.code, 'longer');
    assert.match(r.en, /15 minutes longer than the title .*timestamps are broken/);
  });

  it('without a source length, holds the output to the length its own header claims (the captured cut-off file)', () => {
    const claimed = Number(JSON.parse(section('show_entries format=duration')).format.duration);
    const real = progressSeconds(lastProgressBlock(section('-c copy -f null')));
    const [r] = proveOutput({ seconds: 0, audio: null, subtitles: null }, facts({ claimedSeconds: claimed, seconds: real }));
    assert.equal(r.code, 'cut_off');
    assert.equal(r.en, 'the output ends at 0:29 though it says it lasts 1:00');
    assert.deepEqual(proveOutput({ seconds: 0, audio: null, subtitles: null }, facts({ claimedSeconds: 60.046, seconds: 60.046 })), []);
  });

  it('fails an output whose whole-file read reports an error though it exits 0 (the captured cut-off file)', () => {
    const readErrors = errorLines(sampleSection(SAMPLE, '(stderr; exit 0)', '## end').join('\n'));
    assert.deepEqual(readErrors, ['[matroska,webm] File ended prematurely']);
    const reasons = proveOutput({ ...expected, seconds: 29.001 }, facts({ seconds: 29.001, readErrors }));
    assert.deepEqual(reasons.map((r) => [r.code, r.en]), [['read_error', 'the output cannot be read cleanly (up to 0:29): [matroska,webm] File ended prematurely']]);
  });

  it('names a chosen track that is missing or in another language', () => {
    const reasons = proveOutput(expected, facts({ audio: probed.audio.slice(0, 1), subtitles: [probed.subtitles[1], probed.subtitles[0]] }));
    assert.deepEqual(reasons.map((r) => r.code), ['track_missing', 'track_language', 'track_language']);
    assert.equal(reasons[0].en, 'audio track 2 (eng) is missing from the output');
    assert.equal(reasons[0].de, 'Tonspur 2 (eng) fehlt in der Ausgabe');
    assert.equal(reasons[1].en, 'subtitle track 1 of the output is eng, deu was chosen');
    // The preset's own choice (no language choice in the command): nothing to hold the tracks to.
    assert.deepEqual(proveOutput({ ...expected, audio: null, subtitles: null }, facts({ audio: [], subtitles: [] })), []);
  });

  it('fails a sample with decoder errors (the captured broken file) and a sample without a picture', () => {
    const errors = errorLines(section('-ss 20 -i bad.mkv'));
    const broken = proveOutput(expected, facts({ samples: [clean(2), { at: 1200, frames: 12, errors }] }));
    assert.deepEqual(broken.map((r) => r.code), ['decode_error']);
    assert.equal(broken[0].en, `the output cannot be decoded cleanly at 20:00: ${errors[0]}`);
    const blank = proveOutput(expected, facts({ samples: [clean(2), { at: 45, frames: 0, errors: [] }] }));
    assert.deepEqual(blank.map((r) => r.en), ['the output has no picture at 0:45']);
    // Sound only: no sample has a picture, none is missing one.
    assert.deepEqual(proveOutput(expected, facts({ samples: [{ at: 2, frames: 0, errors: [] }] })), []);
    assert.equal(proofText([...broken, ...blank]), `${broken[0].en}; ${blank[0].en}`);
  });
});
