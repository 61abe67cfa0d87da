import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORCED_EVENT_SHARE, FORCED_MIN_EVENTS, forcedCandidateLanguages, handbrakeStreamArgs, planStreams, recogniseForced, type StreamChoice } from '../../../../agent/tasks/stream-selection.js';
import { parseFfprobeStreams } from '../../../../agent/tools/ffprobe-parser.js';
import { parseHandbrakeScan } from '../../../../agent/tools/handbrake-parser.js';
import { parseMakemkvInfo } from '../../../../agent/tools/makemkv-parser.js';
import { audioCodec, subtitleCodec } from '../../../../agent/tools/stream-codec.js';
import { matroskaLanguage, normaliseLanguage, parseLanguageList } from '../../../../shared/languages.js';
import type { AudioStream, StreamOptions, SubtitleStream } from '../../../../shared/protocol.js';
import { sampleLines, sampleText } from '../../../fixtures/tools-samples.js';

const OPTIONS: StreamOptions = { keep_surround: true, stereo_companion: false, burn_forced_subtitles: false, original_language: null };

function choice(audio: string[], subtitles: string[], options: Partial<StreamOptions> = {}): StreamChoice {
  return { audio_languages: audio, subtitle_languages: subtitles, options: { ...OPTIONS, ...options } };
}

/** The streams of the two-language test disc (dvd-make-multilang.sh) as HandBrake scans it. */
const DISC_AUDIO: AudioStream[] = [
  { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
  { index: 2, language: 'eng', codec: 'ac3', channels: 2 },
];
const DISC_SUBS: SubtitleStream[] = [
  { index: 1, language: 'deu', codec: 'vobsub', forced: false },
  { index: 2, language: 'eng', codec: 'vobsub', forced: false },
];

describe('language codes', () => {
  it('normalises ISO 639-1, 639-2/B and 639-2/T to the terminology form', () => {
    assert.equal(normaliseLanguage('de'), 'deu');
    assert.equal(normaliseLanguage('ger'), 'deu');
    assert.equal(normaliseLanguage('DEU'), 'deu');
    assert.equal(normaliseLanguage('fre'), 'fra');
    assert.equal(normaliseLanguage('eng'), 'eng');
    assert.equal(normaliseLanguage('xx'), 'und', 'DVD "unknown"');
    assert.equal(normaliseLanguage(''), 'und');
    assert.equal(normaliseLanguage(null), 'und');
  });

  it('writes the bibliographic form Matroska uses', () => {
    assert.equal(matroskaLanguage('deu'), 'ger');
    assert.equal(matroskaLanguage('de'), 'ger');
    assert.equal(matroskaLanguage('eng'), 'eng');
    assert.equal(matroskaLanguage('zho'), 'chi');
    assert.equal(matroskaLanguage('und'), 'und');
  });

  it('accepts a list of ISO 639-2 codes in order, normalised, without repeats', () => {
    assert.deepEqual(parseLanguageList(['ger', 'eng', 'deu', 'FRA'], 'audio_languages'), { ok: true, codes: ['deu', 'eng', 'fra'] });
    assert.deepEqual(parseLanguageList([], 'subtitle_languages'), { ok: true, codes: [] });
  });

  it('refuses what is not a list of ISO 639-2 codes, naming every bad code', () => {
    const bad = parseLanguageList(['deu', 'xyz', 'de', 7], 'audio_languages');
    assert.equal(bad.ok, false);
    assert.equal(!bad.ok && bad.reason, 'audio_languages: "xyz", "de", 7 are not ISO 639-2 language codes (three letters, for example "deu" or "eng")');
    const one = parseLanguageList(['und'], 'subtitle_languages');
    assert.equal(!one.ok && one.reason, 'subtitle_languages: "und" is not an ISO 639-2 language code (three letters, for example "deu" or "eng")');
    const notList = parseLanguageList('deu', 'audio_languages');
    assert.match(!notList.ok ? notList.reason : '', /must be a list of ISO 639-2 language codes/);
    const crlf = parseLanguageList(['a\r\nb'], 'audio_languages');
    assert.doesNotMatch(!crlf.ok ? crlf.reason : '', /[\r\n]/, 'no control character echoed');
  });
});

describe('stream parsers on real output', () => {
  it('reads audio and subtitle streams from makemkvcon SINFO lines (Blu-ray capture)', () => {
    const info = parseMakemkvInfo(sampleLines('makemkv-info-bd.txt'));
    const title = info.titles[0];
    assert.deepEqual(title.audio, [
      { index: 1, language: 'eng', codec: 'lpcm', channels: 2 },
      { index: 2, language: 'jpn', codec: 'lpcm', channels: 2 },
    ]);
    assert.deepEqual(
      title.subtitles.map((s) => [s.index, s.language, s.codec, s.forced]),
      [
        [1, 'eng', 'pgs', false],
        [2, 'eng', 'pgs', true],
        [3, 'eng', 'pgs', false],
        [4, 'eng', 'pgs', true],
      ],
      'StreamFlags 6144 marks the forced-only streams',
    );
  });

  it('reads the audio and subtitle lists of HandBrake\'s JSON scan of the two-language DVD (captured)', () => {
    const [title] = parseHandbrakeScan(sampleText('hb-scan-json-multilang-dvd.txt')).titles;
    assert.deepEqual(title.audio, DISC_AUDIO);
    assert.deepEqual(title.subtitles, DISC_SUBS);
    assert.equal(Math.round(title.seconds), 12);
  });

  it('reads the same streams from the scan of the open backend\'s MKV (Matroska "ger" tags become deu)', () => {
    const [title] = parseHandbrakeScan(sampleText('hb-scan-json-multilang-mkv.txt')).titles;
    assert.deepEqual(title.audio, DISC_AUDIO);
    assert.deepEqual(title.subtitles, DISC_SUBS);
  });

  it('reads the same streams from ffprobe\'s JSON of that MKV (captured), with its length', () => {
    const probed = parseFfprobeStreams(sampleText('ffprobe-streams-multilang-mkv.json'));
    assert.deepEqual(probed.audio, DISC_AUDIO);
    assert.deepEqual(probed.subtitles, DISC_SUBS);
    assert.equal(Math.round(probed.seconds), 12);
  });

  it('tells DTS-HD by its profile and a forced subtitle by its disposition (ffprobe)', () => {
    const json = JSON.stringify({
      streams: [
        { index: 0, codec_type: 'video', codec_name: 'h264' },
        { index: 1, codec_type: 'audio', codec_name: 'dts', profile: 'DTS-HD MA', channels: 8, tags: { language: 'eng' }, disposition: { forced: 0 } },
        { index: 2, codec_type: 'subtitle', codec_name: 'hdmv_pgs_subtitle', tags: { language: 'fre' }, disposition: { forced: 1 } },
      ],
      format: { duration: '5400.5' },
    });
    assert.deepEqual(parseFfprobeStreams(json), {
      seconds: 5400.5,
      audio: [{ index: 1, language: 'eng', codec: 'dtshd', channels: 8 }],
      subtitles: [{ index: 1, language: 'fra', codec: 'pgs', forced: true }],
    });
    assert.throws(() => parseFfprobeStreams('{"error":{}}'), /no stream list/);
  });

  it('reads the roles of HandBrake\'s scan of a DVD with content codes (captured): audio description, commentary, forced, closed captions', () => {
    const [title] = parseHandbrakeScan(sampleText('hb-scan-json-roles-dvd.txt')).titles;
    assert.deepEqual(title.audio, [
      { index: 1, language: 'deu', codec: 'ac3', channels: 6, visual_impaired: true },
      { index: 2, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
    ]);
    assert.deepEqual(title.subtitles, [
      { index: 1, language: 'deu', codec: 'vobsub', forced: true },
      { index: 2, language: 'eng', codec: 'vobsub', forced: false, hearing_impaired: true },
    ]);
  });

  it('reads the roles of ffprobe\'s dispositions: comment, visual_impaired, hearing_impaired', () => {
    const json = JSON.stringify({
      streams: [
        { index: 1, codec_type: 'audio', codec_name: 'ac3', channels: 2, tags: { language: 'eng' }, disposition: { comment: 1, visual_impaired: 0 } },
        { index: 2, codec_type: 'audio', codec_name: 'ac3', channels: 2, tags: { language: 'ger' }, disposition: { visual_impaired: 1 } },
        { index: 3, codec_type: 'subtitle', codec_name: 'dvd_subtitle', tags: { language: 'ger' }, disposition: { hearing_impaired: 1 } },
        { index: 4, codec_type: 'subtitle', codec_name: 'dvd_subtitle', tags: { language: 'eng' }, disposition: { comment: 1 } },
      ],
      format: { duration: '10' },
    });
    const probed = parseFfprobeStreams(json);
    assert.deepEqual(probed.audio, [
      { index: 1, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
      { index: 2, language: 'deu', codec: 'ac3', channels: 2, visual_impaired: true },
    ]);
    assert.deepEqual(probed.subtitles, [
      { index: 1, language: 'deu', codec: 'vobsub', forced: false, hearing_impaired: true },
      { index: 2, language: 'eng', codec: 'vobsub', forced: false, commentary: true },
    ]);
  });

  it('gives one codec name across the tools', () => {
    assert.equal(audioCodec('A_AC3'), 'ac3');
    assert.equal(audioCodec('AC3'), 'ac3');
    assert.equal(audioCodec('E-AC3'), 'eac3');
    assert.equal(audioCodec('DTS-HD MA', 'A_DTS'), 'dtshd');
    assert.equal(audioCodec('dca'), 'dts');
    assert.equal(audioCodec('A_TRUEHD'), 'truehd');
    assert.equal(audioCodec('mpeg2'), 'mp2');
    assert.equal(audioCodec('LPCM', 'A_PCM/INT/LIT'), 'lpcm');
    assert.equal(subtitleCodec('S_HDMV/PGS'), 'pgs');
    assert.equal(subtitleCodec('VOBSUB'), 'vobsub');
    assert.equal(subtitleCodec('S_TEXT/UTF8'), 'srt');
  });
});

describe('which streams the transcode keeps', () => {
  it('keeps German then English, passes AC-3 through, keeps German subtitles as a track, burns nothing', () => {
    const plan = planStreams(DISC_AUDIO, DISC_SUBS, choice(['deu', 'eng'], ['deu']));
    assert.deepEqual(plan.audio, [
      { source: 1, encoder: 'copy', mixdown: 'none', language: 'deu' },
      { source: 2, encoder: 'copy', mixdown: 'none', language: 'eng' },
    ]);
    assert.deepEqual(plan.subtitles, [1]);
    assert.equal(plan.burned, null);
    assert.deepEqual(handbrakeStreamArgs(plan), ['-a', '1,2', '-E', 'copy,copy', '-6', 'none,none', '--audio-copy-mask', 'ac3,eac3,dts,dtshd,truehd', '--audio-fallback', 'av_aac', '-s', '1', '--subtitle-burned=none', '--subtitle-default=none']);
    assert.equal(plan.notes[0].message, 'keeping audio deu passthrough, eng passthrough; subtitles deu');
  });

  it('follows the list order, not the disc order: English first makes English the default track', () => {
    const plan = planStreams(DISC_AUDIO, DISC_SUBS, choice(['eng', 'deu'], ['eng', 'deu']));
    assert.deepEqual(plan.audio.map((a) => a.source), [2, 1]);
    assert.deepEqual(plan.subtitles, [2, 1]);
  });

  it('keeps only English when only English is chosen', () => {
    const plan = planStreams(DISC_AUDIO, DISC_SUBS, choice(['eng'], []));
    assert.deepEqual(plan.audio.map((a) => [a.source, a.language]), [[2, 'eng']]);
    assert.deepEqual(handbrakeStreamArgs(plan).slice(-3), ['-s', 'none', '--subtitle-burned=none', '--subtitle-default=none'].slice(-3));
    assert.deepEqual(plan.subtitles, []);
  });

  it('keeps the first audio stream and says so when no stream matches the list', () => {
    const plan = planStreams(DISC_AUDIO, DISC_SUBS, choice(['fra', 'ita'], ['fra']));
    assert.deepEqual(plan.audio.map((a) => a.source), [1]);
    assert.deepEqual(plan.subtitles, []);
    const warn = plan.notes.find((n) => n.level === 'warn');
    assert.equal(warn?.message, 'no audio stream in fra, ita (the file has deu ac3 6 ch, eng ac3 2 ch): keeping the first audio stream (deu)');
    assert.ok(plan.notes.some((n) => n.message === 'no subtitles in fra (the file has deu, eng)'));
  });

  it('keeps an untagged audio stream after the chosen ones and says so: the disc does not say it is another language (issue 38)', () => {
    const audio: AudioStream[] = [...DISC_AUDIO, { index: 3, language: 'und', codec: 'ac3', channels: 2 }];
    const plan = planStreams(audio, [], choice(['deu'], []));
    assert.deepEqual(plan.audio.map((a) => [a.source, a.language]), [[1, 'deu'], [3, 'und']]);
    assert.ok(plan.notes.some((n) => n.message === 'keeping the untagged audio stream 3 (und ac3 2 ch): the disc does not say its language'), JSON.stringify(plan.notes));
    // A commentary without a tag is a role track: the commentary setting decides, not this rule.
    const withCommentary = planStreams([...DISC_AUDIO, { index: 3, language: 'und', codec: 'ac3', channels: 2, commentary: true }], [], choice(['deu'], []));
    assert.deepEqual(withCommentary.audio.map((a) => a.source), [1]);
  });

  it('adds the original language after the chosen ones when the lookup knows it', () => {
    const audio: AudioStream[] = [...DISC_AUDIO, { index: 3, language: 'jpn', codec: 'ac3', channels: 2 }];
    const plan = planStreams(audio, [], choice(['deu'], [], { original_language: 'jpn' }));
    assert.deepEqual(plan.audio.map((a) => a.language), ['deu', 'jpn']);
  });

  it('turns everything into AAC stereo without keepSurround', () => {
    const plan = planStreams(DISC_AUDIO, [], choice(['deu', 'eng'], [], { keep_surround: false }));
    assert.deepEqual(plan.audio.map((a) => [a.encoder, a.mixdown]), [['av_aac', 'dpl2'], ['av_aac', 'dpl2']]);
  });

  it('adds a stereo AAC companion only beside passed-through multichannel audio', () => {
    const plan = planStreams(DISC_AUDIO, [], choice(['deu', 'eng'], [], { stereo_companion: true }));
    assert.deepEqual(plan.audio.map((a) => [a.source, a.encoder, a.mixdown]), [[1, 'copy', 'none'], [1, 'av_aac', 'dpl2'], [2, 'copy', 'none']]);
  });

  it('encodes codecs that cannot pass through as AAC, 5.1 where the source is multichannel', () => {
    const audio: AudioStream[] = [
      { index: 1, language: 'eng', codec: 'lpcm', channels: 6 },
      { index: 2, language: 'eng', codec: 'mp2', channels: 2 },
    ];
    const plan = planStreams(audio, [], choice(['eng'], []));
    assert.deepEqual(plan.audio.map((a) => [a.encoder, a.mixdown]), [['av_aac', '5point1'], ['av_aac', 'dpl2']]);
  });

  it('burns a forced subtitle in only when asked, in the default audio language', () => {
    const subs: SubtitleStream[] = [...DISC_SUBS, { index: 3, language: 'deu', codec: 'vobsub', forced: true }];
    const off = planStreams(DISC_AUDIO, subs, choice(['deu'], ['eng']));
    assert.equal(off.burned, null);
    const on = planStreams(DISC_AUDIO, subs, choice(['deu'], ['eng'], { burn_forced_subtitles: true }));
    assert.deepEqual(on.subtitles, [2, 3]);
    assert.equal(on.burned, 2);
    assert.ok(handbrakeStreamArgs(on).includes('--subtitle-burned=2'));
    const none = planStreams(DISC_AUDIO, DISC_SUBS, choice(['deu'], [], { burn_forced_subtitles: true }));
    assert.equal(none.burned, null);
    assert.ok(none.notes.some((n) => n.message === 'no forced subtitles in deu: nothing is burned in'));
  });

  it('asks for no audio when the file has none', () => {
    const plan = planStreams([], [], choice(['deu'], []));
    assert.deepEqual(handbrakeStreamArgs(plan).slice(0, 2), ['-a', 'none']);
  });
});

describe('track roles: which role tracks the transcode keeps and how they are flagged', () => {
  /** A dubbed film: German dub 5.1, English original, an English commentary, a German audio description. */
  const AUDIO: AudioStream[] = [
    { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
    { index: 2, language: 'eng', codec: 'ac3', channels: 6 },
    { index: 3, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
    { index: 4, language: 'deu', codec: 'ac3', channels: 2, visual_impaired: true },
  ];
  /** German full, German forced (the English scenes), German for the hard of hearing, English commentary subtitles. */
  const SUBS: SubtitleStream[] = [
    { index: 1, language: 'deu', codec: 'pgs', forced: false },
    { index: 2, language: 'deu', codec: 'pgs', forced: true },
    { index: 3, language: 'deu', codec: 'pgs', forced: false, hearing_impaired: true },
    { index: 4, language: 'eng', codec: 'pgs', forced: false, commentary: true },
  ];

  it('leaves commentary and audio description out by default, and says so', () => {
    const plan = planStreams(AUDIO, SUBS, choice(['deu', 'eng'], ['deu', 'eng']));
    assert.deepEqual(plan.audio.map((a) => a.source), [1, 2]);
    assert.deepEqual(plan.subtitles, [1, 2, 3], 'the commentary subtitles are left out too');
    assert.ok(plan.notes.some((n) => n.message === 'leaving out the audio description (stream 4 deu): keepAudioDescription is off'), plan.notes.map((n) => n.message).join('\n'));
    assert.ok(plan.notes.some((n) => n.message === 'leaving out the commentary (stream 3 eng): keepCommentary is off'));
    assert.ok(plan.notes.some((n) => n.message === 'leaving out the commentary subtitles (stream 4 eng): keepCommentary is off'));
  });

  it('keeps them with keepCommentary and keepAudioDescription, after every main track, flagged and never the default', () => {
    const plan = planStreams(AUDIO, SUBS, choice(['deu', 'eng'], ['deu', 'eng'], { keep_commentary: true, keep_audio_description: true }));
    assert.deepEqual(plan.audio.map((a) => [a.source, a.language]), [[1, 'deu'], [2, 'eng'], [4, 'deu'], [3, 'eng']]);
    assert.deepEqual(plan.subtitles, [1, 2, 3, 4]);
    assert.deepEqual(plan.flags, [
      { track: 'a3', flags: ['visual-impaired'] },
      { track: 'a4', flags: ['commentary'] },
      { track: 's2', flags: ['forced'] },
      { track: 's3', flags: ['hearing-impaired'] },
      { track: 's4', flags: ['commentary'] },
    ]);
    assert.equal(plan.notes[0].message, 'keeping audio deu passthrough, eng passthrough, deu passthrough audio description, eng passthrough commentary; subtitles deu, deu (forced), deu (hearing impaired), eng (commentary)');
  });

  it('keeps only the role tracks of the kept languages', () => {
    const plan = planStreams(AUDIO, [], choice(['deu'], [], { keep_commentary: true, keep_audio_description: true }));
    assert.deepEqual(plan.audio.map((a) => a.source), [1, 4], 'the English commentary is not in a kept language');
  });

  it('keeps the forced subtitles of the default audio language flagged forced and shown by default, listed or not', () => {
    const listed = planStreams(AUDIO, SUBS, choice(['deu'], ['deu']));
    assert.equal(listed.default_subtitle, 2);
    assert.ok(handbrakeStreamArgs(listed).includes('--subtitle-default=2'));
    assert.ok(listed.notes.some((n) => n.message === 'the forced deu subtitles (stream 2) are kept as a track, flagged forced and shown by default'));
    const unlisted = planStreams(AUDIO, SUBS, choice(['deu'], []));
    assert.deepEqual(unlisted.subtitles, [2]);
    assert.deepEqual(unlisted.flags, [{ track: 's1', flags: ['forced'] }]);
    assert.deepEqual(handbrakeStreamArgs(unlisted).slice(-3), ['-s', '2', '--subtitle-burned=none', '--subtitle-default=1'].slice(-3));
    const english = planStreams(AUDIO, SUBS, choice(['eng'], ['deu']));
    assert.equal(english.default_subtitle, null, 'no forced subtitles in the default audio language (eng)');
    assert.deepEqual(english.flags, [{ track: 's2', flags: ['forced'] }, { track: 's3', flags: ['hearing-impaired'] }], 'the German forced track is listed, forced but not shown by default');
  });

  it('burns the forced subtitles in only with burnForcedSubtitles: then they are no track and get no flag', () => {
    const plan = planStreams(AUDIO, SUBS, choice(['deu'], ['deu'], { burn_forced_subtitles: true }));
    assert.deepEqual([plan.subtitles, plan.burned, plan.default_subtitle], [[1, 2, 3], 2, null]);
    assert.deepEqual(plan.flags, [{ track: 's2', flags: ['hearing-impaired'] }], 'the output\'s second subtitle track is the third kept one');
    assert.ok(handbrakeStreamArgs(plan).includes('--subtitle-burned=2'));
    assert.ok(handbrakeStreamArgs(plan).includes('--subtitle-default=none'));
  });

  it('flags the tracks in the original language original', () => {
    const plan = planStreams(AUDIO, SUBS.slice(0, 1).concat([{ index: 5, language: 'eng', codec: 'pgs', forced: false }]), choice(['deu'], ['deu', 'eng'], { original_language: 'eng' }));
    assert.deepEqual(plan.audio.map((a) => a.source), [1, 2]);
    assert.deepEqual(plan.flags, [{ track: 'a2', flags: ['original'] }, { track: 's2', flags: ['original'] }]);
  });

  it('never makes a commentary or an audio description the fallback track', () => {
    const plan = planStreams(AUDIO, [], choice(['fra'], []));
    assert.deepEqual(plan.audio.map((a) => a.source), [1]);
    const onlyRoles = planStreams(AUDIO.slice(2), [], choice(['fra'], []));
    assert.deepEqual(onlyRoles.audio.map((a) => a.source), [3], 'a file of role tracks alone still gets audio');
    const onlyCommentary = planStreams(AUDIO.slice(2, 3), [], choice(['eng'], [], { keep_commentary: true }));
    assert.deepEqual(onlyCommentary.audio.map((a) => a.source), [3], 'kept once, not again as a commentary');
    assert.ok(!planStreams(AUDIO.slice(2, 3), [], choice(['eng'], [])).notes.some((n) => n.message.startsWith('leaving out')), 'the one track kept is not said to be left out');
  });
});

describe('track roles: an unflagged forced track recognised by its few events', () => {
  const subs: SubtitleStream[] = [
    { index: 1, language: 'deu', codec: 'vobsub', forced: false },
    { index: 2, language: 'deu', codec: 'vobsub', forced: false },
    { index: 3, language: 'eng', codec: 'vobsub', forced: false },
  ];

  it('counts a track as forced below 25 % of the events of the fullest track of its language, with at least 3', () => {
    assert.equal(FORCED_EVENT_SHARE, 0.25);
    assert.equal(FORCED_MIN_EVENTS, 3);
    assert.deepEqual(forcedCandidateLanguages(subs), ['deu']);
    const { subtitles, recognised } = recogniseForced(subs, [812, 37, 790]);
    assert.deepEqual(subtitles.map((s) => s.forced), [false, true, false]);
    assert.deepEqual(recognised.map((r) => [r.stream.index, r.events, r.fullest]), [[2, 37, 812]]);
    assert.deepEqual(recogniseForced(subs, [40, 9, 790]).subtitles.map((s) => s.forced), [false, true, false], '9 of 40 is under a quarter');
    assert.deepEqual(recogniseForced(subs, [40, 10, 790]).subtitles.map((s) => s.forced), [false, false, false], '10 of 40 is a quarter: not forced');
  });

  it('leaves alone a near-empty track, a language the disc flags, role tracks and counts that do not line up', () => {
    assert.deepEqual(recogniseForced(subs, [812, 2, 790]).recognised, [], 'two events: empty or a stray');
    const flagged: SubtitleStream[] = [...subs, { index: 4, language: 'deu', codec: 'vobsub', forced: true }];
    assert.deepEqual(forcedCandidateLanguages(flagged), [], 'the disc flags a forced German track: nothing is looked for');
    assert.deepEqual(recogniseForced(flagged, [812, 37, 790, 30]).recognised, []);
    const sdh: SubtitleStream[] = [subs[0], { ...subs[1], hearing_impaired: true }];
    assert.deepEqual(recogniseForced(sdh, [812, 37]).recognised, [], 'a track with a role of its own is not taken for forced');
    assert.deepEqual(recogniseForced(subs, [812, 37]).recognised, [], 'two counts for three streams');
    assert.deepEqual(recogniseForced(subs, [812, null, 790]).recognised, [], 'no count');
  });

  it('gives the recognised track the forced subtitles\' place: kept, flagged forced, shown by default', () => {
    const { subtitles } = recogniseForced(subs, [812, 37, 790]);
    const plan = planStreams(DISC_AUDIO, subtitles, choice(['deu'], ['deu']));
    assert.deepEqual(plan.subtitles, [1, 2]);
    assert.equal(plan.default_subtitle, 2);
    assert.deepEqual(plan.flags, [{ track: 's2', flags: ['forced'] }]);
  });
});
