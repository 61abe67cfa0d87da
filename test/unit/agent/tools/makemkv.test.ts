import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  applyMkvLine,
  createMkvRunState,
  makemkvReadError,
  mkvOutcome,
  parseMakemkvDuration,
  parseMakemkvInfo,
  ripperMessageText,
  STREAM_FLAG,
  tokenizeMakemkvLine,
  toMessage,
} from '../../../../agent/tools/makemkv-parser.js';
import type { MakemkvMessage, MkvRunState } from '../../../../agent/tools/makemkv-parser.js';
import { FIXTURES_DIR, sampleLines, sampleSection } from '../../../fixtures/tools-samples.js';
import { discRoleEdits, hasDiscRoles, sourceFields } from '../../../../agent/tools/rippers.js';

function lineWith(name: string, needle: string): string {
  const line = sampleLines(name).find((l) => !l.startsWith('#') && l.includes(needle));
  assert.ok(line, `${needle} in ${name}`);
  return line;
}

function run(lines: string[]): MkvRunState {
  return lines.reduce(applyMkvLine, createMkvRunState());
}

function message(line: string): MakemkvMessage {
  const record = tokenizeMakemkvLine(line);
  assert.ok(record);
  const msg = toMessage(record);
  assert.ok(msg);
  return msg;
}

describe('tokenizeMakemkvLine', () => {
  it('splits a real MSG line into numbers and quoted strings', () => {
    const line = lineWith('makemkv-mkv-one-title-bd.txt', 'MSG:5014');
    assert.deepEqual(tokenizeMakemkvLine(line), {
      prefix: 'MSG',
      fields: [5014, 131072, 2, 'Saving 1 titles into directory file://./', 'Saving %1 titles into directory %2', '1', 'file://./'],
    });
  });

  it('keeps commas, escaped quotes and escaped backslashes inside quotes', () => {
    const record = tokenizeMakemkvLine(lineWith('makemkv-constructed-edge-cases.txt', 'DRV:0,2,999,12'));
    assert.deepEqual(record?.fields, [0, 2, 999, 12, 'BD-RE ASUS BW-16D1HT 3.10 KL7L9D92707', 'SHOW, "PILOT" \\ DISC 1', '/dev/sr0']);
  });

  it('unescapes the Windows path of a real 5072 line', () => {
    const record = tokenizeMakemkvLine(lineWith('makemkv-backup.txt', 'file://Z:'));
    assert.equal(record?.fields[5], 'file://Z:\\dump\\Being John Malkovich (1999)\\BEING_J_MALKOVICH_G51_A105AB2C');
  });

  it('reads a quoted list as one field, empty values and UTF-8 names', () => {
    assert.deepEqual(tokenizeMakemkvLine(lineWith('makemkv-constructed-edge-cases.txt', 'TINFO:1,26'))?.fields, [1, 26, 0, '155,156,157']);
    assert.deepEqual(tokenizeMakemkvLine(lineWith('makemkv-constructed-edge-cases.txt', 'SINFO:3,1,38'))?.fields, [3, 1, 38, 0, '']);
    assert.deepEqual(tokenizeMakemkvLine(lineWith('makemkv-constructed-edge-cases.txt', 'CINFO:2,0'))?.fields, [2, 0, 'Les Misérables']);
  });

  it('reads every record kind of a real run', () => {
    assert.deepEqual(tokenizeMakemkvLine('PRGV:65536,65531,65536'), { prefix: 'PRGV', fields: [65536, 65531, 65536] });
    assert.deepEqual(tokenizeMakemkvLine('PRGC:5017,0,"Saving to MKV file"'), { prefix: 'PRGC', fields: [5017, 0, 'Saving to MKV file'] });
    assert.deepEqual(tokenizeMakemkvLine('TCOUNT:13'), { prefix: 'TCOUNT', fields: [13] });
    assert.deepEqual(tokenizeMakemkvLine('DRV:1,256,999,0,"","",""')?.fields, [1, 256, 999, 0, '', '', '']);
  });

  it('returns null for usage text, annotations, blank and broken lines', () => {
    for (const line of sampleSection('makemkv-bad-args-usage.txt', 'PRGV:65536,65536,65536')) {
      assert.equal(tokenizeMakemkvLine(line), null, line);
    }
    assert.equal(tokenizeMakemkvLine('# REAL capture'), null);
    assert.equal(tokenizeMakemkvLine(''), null);
    assert.equal(tokenizeMakemkvLine('MSG:'), null);
    assert.equal(tokenizeMakemkvLine('CINFO:2,0,"unterminated'), null);
    assert.equal(tokenizeMakemkvLine('Source specification:'), null);
  });

  it('masks the burst flag of MSG lines', () => {
    const msg = message(lineWith('makemkv-messages-assorted.txt', 'MSG:2003,16777216'));
    assert.equal(msg.flags, 0);
    assert.deepEqual(msg.params, ['Scsi error - MEDIUM ERROR:1090', '/VIDEO_TS/VTS_01_1.VOB', '1183580160']);
  });
});

describe('parseMakemkvInfo', () => {
  it('reads the Blu-ray info capture', () => {
    const info = parseMakemkvInfo(sampleLines('makemkv-info-bd.txt'));
    assert.equal(info.opened, true);
    assert.equal(info.failed, false);
    assert.equal(info.discName, 'Demon Slayer: Kimetsu no Yaiba Swordsmith Village Arc Complete Blu-ray Set Standard Edition Disc 1');
    assert.equal(info.volumeName, 'BDROM');
    assert.deepEqual(info.titles, [
      {
        number: 0,
        seconds: 1 * 3600 + 37 * 60 + 28,
        sizeBytes: 31843694592,
        chapters: 21,
        outputFileName: 'Demon Slayer- Kimetsu no Yaiba Swordsmith Village Arc Complete Blu-ray Set Standard Edition Disc 1_t00.mkv',
        sourceFileName: '00000.mpls',
        originalTitleId: null,
        segmentCount: 4,
        segmentMap: '0,1,2,3',
        audio: [
          { index: 1, language: 'eng', codec: 'lpcm', channels: 2 },
          { index: 2, language: 'jpn', codec: 'lpcm', channels: 2 },
        ],
        subtitles: [
          { index: 1, language: 'eng', codec: 'pgs', forced: false },
          { index: 2, language: 'eng', codec: 'pgs', forced: true },
          { index: 3, language: 'eng', codec: 'pgs', forced: false },
          { index: 4, language: 'eng', codec: 'pgs', forced: true },
        ],
      },
    ]);
    assert.ok(info.messages.some((m) => m.code === 5011));
  });

  it('reads the DVD info capture', () => {
    const info = parseMakemkvInfo(sampleSection('makemkv-info-dvd.txt', 'Block 1 source', 'Block 2 source'));
    assert.equal(info.opened, true);
    assert.equal(info.titleCount, 13);
    assert.equal(info.discName, 'BETTERMAN_V1');
    assert.equal(info.volumeName, 'BETTERMAN_V1');
    // The capture elides the audio stream's attributes after its type line: an audio stream of unknown language and codec.
    assert.deepEqual(info.titles[0], { number: 0, seconds: 13, sizeBytes: 3917824, chapters: 2, outputFileName: 'A1_t00.mkv', sourceFileName: null, originalTitleId: '02', segmentCount: 1, segmentMap: '1-2', audio: [{ index: 1, language: 'und', codec: 'unknown', channels: null }], subtitles: [] });
  });

  it('reports a disc that could not be opened', () => {
    const info = parseMakemkvInfo(['MSG:5010,0,0,"Failed to open disc","Failed to open disc"', 'TCOUNT:0']);
    assert.equal(info.opened, false);
    assert.equal(info.failed, true);
    assert.deepEqual(info.titles, []);
  });

  it('needs TCOUNT >= 1 besides 5011', () => {
    const info = parseMakemkvInfo(['MSG:5011,0,0,"Operation successfully completed","Operation successfully completed"', 'TCOUNT:0']);
    assert.equal(info.opened, false);
    assert.equal(info.failed, false);
  });

  it('reads the track roles of the stream flags (SINFO 22): the commentary and the closed captions of a real DVD', () => {
    const [main] = parseMakemkvInfo(fs.readFileSync(path.join(FIXTURES_DIR, 'thediscdb', '2001-2011-dvd-disc01.txt'), 'latin1').split(/\r?\n/)).titles;
    assert.deepEqual(main.audio, [
      { index: 1, language: 'eng', codec: 'ac3', channels: 6 },
      { index: 2, language: 'fra', codec: 'ac3', channels: 6 },
      { index: 3, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
    ], 'flags 1: director\'s comments');
    assert.deepEqual(main.subtitles.map((s) => [s.language, s.codec, s.forced, s.hearing_impaired ?? false]), [
      ['eng', 'vobsub', false, false],
      ['fra', 'vobsub', false, false],
      ['spa', 'vobsub', false, false],
      ['eng', 'cc', false, true],
    ], 'a closed-caption stream (S_CC608) is for the hard of hearing');
  });

  it('reads every role bit of apdefs.h: director\'s comments 1 and 2, visually impaired 4, forced 4096; core audio and derived-stream bits are no role', () => {
    assert.deepEqual(STREAM_FLAG, { directorsComments: 1, alternateDirectorsComments: 2, visuallyImpaired: 4, forcedSubtitles: 4096 });
    const stream = (n: number, type: number, lang: string, codec: string, flags: number): string[] => [
      `SINFO:0,${n},1,${type},"${type === 6202 ? 'Audio' : 'Subtitles'}"`,
      `SINFO:0,${n},3,0,"${lang}"`,
      `SINFO:0,${n},5,0,"${codec}"`,
      `SINFO:0,${n},22,0,"${flags}"`,
    ];
    const info = parseMakemkvInfo([
      'MSG:5011,0,0,"Operation successfully completed","Operation successfully completed"',
      'TCOUNT:1',
      'TINFO:0,9,0,"1:40:00"',
      ...stream(1, 6202, 'ger', 'A_AC3', 1024),
      ...stream(2, 6202, 'ger', 'A_AC3', 4),
      ...stream(3, 6202, 'eng', 'A_AC3', 2),
      ...stream(4, 6202, 'eng', 'A_DTS', 2304),
      ...stream(5, 6203, 'ger', 'S_HDMV/PGS', 6144),
      ...stream(6, 6203, 'eng', 'S_VOBSUB', 1),
    ]);
    const [title] = info.titles;
    assert.deepEqual(title.audio.map((a) => [a.language, a.commentary ?? false, a.visual_impaired ?? false]), [
      ['deu', false, false],
      ['deu', false, true],
      ['eng', true, false],
      ['eng', false, false],
    ]);
    assert.deepEqual(title.subtitles.map((s) => [s.language, s.forced, s.commentary ?? false]), [
      ['deu', true, false],
      ['eng', false, true],
    ]);
  });

  it('parses H:MM:SS durations with an unpadded hour', () => {
    assert.equal(parseMakemkvDuration('1:37:28'), 5848);
    assert.equal(parseMakemkvDuration('0:00:13'), 13);
    assert.equal(parseMakemkvDuration('bad'), 0);
  });
});

describe('mkv run reducer', () => {
  const realRun = sampleLines('makemkv-mkv-one-title-bd.txt');

  it('takes the percent only from PRGV while PRGC 5017 is current', () => {
    const untilSaving = realRun.slice(0, realRun.findIndex((l) => l.startsWith('PRGC:5017')));
    const beforeSave = run(untilSaving);
    assert.equal(beforeSave.ripPercent, 0, 'scan/open/seamless PRGV values are not rip progress');
    assert.equal(beforeSave.currentOperation, 5057);
    const first = run([...untilSaving, 'PRGC:5017,0,"Saving to MKV file"', 'PRGV:381,0,65536']);
    assert.equal(first.ripPercent, (381 / 65536) * 100);
    const half = applyMkvLine(first, 'PRGV:32768,381,65536');
    assert.equal(half.ripPercent, 50);
    assert.equal(first.ripPercent, (381 / 65536) * 100, 'the reducer does not mutate');
  });

  it('counts the real one-title run as a success with 100 %', () => {
    const state = run(realRun);
    assert.equal(state.ripPercent, 100);
    assert.equal(state.saved, 1);
    assert.equal(state.failed, 0);
    assert.equal(state.completed, true);
    assert.deepEqual(mkvOutcome(state), { ok: true, saved: 1, failed: 0, reason: null });
  });

  it('percent rises monotonically through the real save phase', () => {
    let state = createMkvRunState();
    const seen: number[] = [];
    for (const line of realRun) {
      state = applyMkvLine(state, line);
      if (state.currentOperation === 5017) seen.push(state.ripPercent);
    }
    assert.ok(seen.length > 50);
    assert.deepEqual(seen, [...seen].sort((a, b) => a - b));
  });

  it('fails the constructed write-error tail with the 2019 reason', () => {
    const state = run(sampleLines('makemkv-constructed-edge-cases.txt'));
    const outcome = mkvOutcome(state);
    assert.equal(outcome.ok, false);
    assert.equal(outcome.saved, 0);
    assert.equal(outcome.failed, 1);
    assert.equal(
      outcome.reason,
      'MakeMKV could not write the file /srv/ripwerk/staging/job-42/title_t00.mkv: Posix error - No such file or directory (code 2019)',
    );
  });

  it('explains an expired key (5021) and an unopened disc (5010)', () => {
    const expired = run([lineWith('makemkv-messages-assorted.txt', 'MSG:5021')]);
    assert.equal(mkvOutcome(expired).reason, 'MakeMKV is too old or its beta key expired (code 5021): update MakeMKV or enter a new key');
    const unopened = run(['MSG:5010,0,0,"Failed to open disc","Failed to open disc"', 'TCOUNT:0']);
    assert.equal(mkvOutcome(unopened).reason, 'MakeMKV could not open the disc (code 5010)');
  });

  it('fails 5037 with failures and accepts 5037 with none', () => {
    const failed = run([lineWith('makemkv-messages-assorted.txt', 'MSG:5037')]);
    assert.deepEqual(mkvOutcome(failed), { ok: false, saved: 0, failed: 1, reason: 'MakeMKV saved 0 title(s) and failed 1' });
    const none = run(['MSG:5037,516,2,"Copy complete. 2 titles saved, 0 failed.","Copy complete. %1 titles saved, %2 failed.","2","0"']);
    assert.deepEqual(mkvOutcome(none), { ok: true, saved: 2, failed: 0, reason: null });
  });

  it('does not count 5011 alone as success', () => {
    const state = run(['MSG:5011,0,0,"Operation successfully completed","Operation successfully completed"']);
    assert.equal(mkvOutcome(state).ok, false);
    assert.equal(mkvOutcome(state).reason, 'MakeMKV stopped before it reported the title as saved');
  });

  it('tracks TINFO 27 when a run prints it', () => {
    const state = run([lineWith('makemkv-constructed-edge-cases.txt', 'TINFO:0,27')]);
    assert.deepEqual(state.outputFiles, { 0: 'Les_Misérables_t00.mkv' });
  });
});

describe('ripperMessageText', () => {
  it('drops debug traces (1003) and blank messages, passes the rest trimmed', () => {
    assert.equal(ripperMessageText(message(lineWith('makemkv-messages-assorted.txt', 'MSG:1003'))), null);
    assert.equal(ripperMessageText(message(lineWith('makemkv-messages-assorted.txt', 'MSG:1004'))), 'Debug logging enabled, log will be saved as file://<logfile>');
    assert.equal(ripperMessageText({ code: 5011, flags: 0, text: '   ', params: [] }), null);
    assert.equal(ripperMessageText({ code: 5011, flags: 0, text: ' Operation successfully completed ', params: [] }), 'Operation successfully completed');
  });

  it('passes repeats on: the rip drops them (messageBudget)', () => {
    const [first, second] = sampleLines('makemkv-messages-assorted.txt').filter((l) => l.includes('MEDIUM ERROR:1090'));
    assert.match(ripperMessageText(message(first)) ?? '', /MEDIUM ERROR:1090/);
    assert.match(ripperMessageText(message(second)) ?? '', /MEDIUM ERROR:1090/);
  });

  it('gives a read error (2003) its position: the file of the disc and where in it, or the place on the disc for a raw read', () => {
    const read = (needle: string) => message(lineWith('makemkv-messages-assorted.txt', needle));
    assert.deepEqual(makemkvReadError(read('MEDIUM ERROR:1090')), { error: 'Scsi error - MEDIUM ERROR:1090', where: '/VIDEO_TS/VTS_01_1.VOB', offset: 1183580160 });
    assert.equal(ripperMessageText(read('MEDIUM ERROR:1090')), 'read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090');
    assert.equal(ripperMessageText(read('TRAY OPEN')), 'read error in /BDMV/STREAM/00007.m2ts at 3556.9 MiB (sector 1821120 of the file): Scsi error - NOT READY:MEDIUM NOT PRESENT - TRAY OPEN');
    assert.equal(ripperMessageText(read('SCRAMBLED SECTOR')), 'read error on the disc (DVD+R-DL ATAPI DVD A  DH16AASH SA15) at 1.0 MiB (sector 512): Scsi error - ILLEGAL REQUEST:READ OF SCRAMBLED SECTOR WITHOUT AUTHENTICATION');
    // A SCSI command error (2004) is no read error; a 2003 without its parameters keeps its text.
    assert.equal(makemkvReadError(read('MSG:2004')), null);
    assert.equal(ripperMessageText({ code: 2003, flags: 0, text: 'Error occurred', params: [] }), 'Error occurred');
  });
});

describe('parseMakemkvInfo: the source fields TheDiscDB matches on (TINFO 16, 24, 25, 26)', () => {
  /** A TheDiscDB capture without the HSH: lines TheDiscDB appends (file sizes for its hash; no MakeMKV output). */
  const capture = (name: string) =>
    fs
      .readFileSync(path.join(FIXTURES_DIR, 'thediscdb', name), 'utf8')
      .split(/\r?\n/)
      .filter((l) => !l.startsWith('HSH:'));

  it('reads a DVD: the DVD title number (24) is the source, with cell ranges as the segment map', () => {
    const info = parseMakemkvInfo(capture('2001-2011-dvd-disc01.txt'));
    assert.equal(info.opened, true);
    assert.equal(info.titles.length, 8);
    const main = info.titles[0];
    assert.deepEqual([main.number, main.seconds, main.sizeBytes, main.sourceFileName, main.originalTitleId, main.segmentCount, main.segmentMap], [0, 2 * 3600 + 28 * 60 + 24, 6858530816, null, '01', 2, '1-19,20-35']);
    assert.deepEqual(
      info.titles.map((t) => t.originalTitleId),
      ['01', '02', '03', '04', '05', '06', '07', '08'],
    );
    assert.deepEqual(sourceFields(main), { source_file: '01', original_title_id: '01', segment_count: 2, segment_map: '1-19,20-35' });
  });

  it('reads a Blu-ray: playlists, lone clips and a suffixed playlist as the source (16), clip numbers as the segment map', () => {
    const info = parseMakemkvInfo(capture('the-office-s4d1-sample-disc-log.txt'));
    assert.equal(info.titles.length, 10);
    assert.deepEqual(
      info.titles.map((t) => [t.number, t.sourceFileName, t.originalTitleId, t.segmentCount, t.segmentMap, t.sizeBytes]),
      [
        [0, '00003.mpls', null, 1, '7', 10347927552],
        [1, '00002.mpls', null, 1, '5', 10334693376],
        [2, '00000.mpls(1)', null, 2, '1,2', 43118592],
        [3, '00004.mpls', null, 1, '9', 10367877120],
        [4, '00006.m2ts', null, 1, '6', 2776498176],
        [5, '00003.m2ts', null, 1, '3', 313921536],
        [6, '00000.m2ts', null, 1, '0', 119961600],
        [7, '00011.m2ts', null, 1, '11', 39561216],
        [8, '00010.m2ts', null, 1, '10', 1564176384],
        [9, '00008.m2ts', null, 1, '8', 2473807872],
      ],
    );
    assert.deepEqual(sourceFields(info.titles[2]), { source_file: '00000.mpls(1)', segment_count: 2, segment_map: '1,2' });
  });

  it('sends nothing of what a scan did not report', () => {
    const info = parseMakemkvInfo(['MSG:5011,0,0,"Operation successfully completed","Operation successfully completed"', 'TCOUNT:1', 'TINFO:0,9,0,"0:01:00"']);
    assert.deepEqual(sourceFields(info.titles[0]), {});
  });
});

describe('the disc\'s track roles written into the raw file', () => {
  const disc = {
    audio: [
      { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
      { index: 2, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
    ],
    subtitles: [
      { index: 1, language: 'deu', codec: 'vobsub', forced: true },
      { index: 2, language: 'eng', codec: 'cc', forced: false, hearing_impaired: true },
    ],
  };
  const raw = {
    audio: [
      { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
      { index: 2, language: 'eng', codec: 'ac3', channels: 2 },
    ],
    // MakeMKV wrote the forced flag itself; the captions became a text track.
    subtitles: [
      { index: 1, language: 'deu', codec: 'vobsub', forced: true },
      { index: 2, language: 'eng', codec: 'srt', forced: false },
    ],
  };

  it('sets the flags the file lacks, by track selector', () => {
    assert.equal(hasDiscRoles(disc), true);
    assert.deepEqual(discRoleEdits(disc, raw), [
      { track: 'a2', flags: ['commentary'] },
      { track: 's2', flags: ['hearing-impaired'] },
    ]);
  });

  it('writes nothing when the file\'s tracks are not the disc\'s streams (a stream left out, another language)', () => {
    assert.equal(discRoleEdits(disc, { ...raw, audio: raw.audio.slice(0, 1) }), null);
    assert.equal(discRoleEdits(disc, { ...raw, subtitles: [raw.subtitles[1], raw.subtitles[0]] }), null);
    assert.equal(hasDiscRoles({ audio: raw.audio, subtitles: [] }), false, 'no role: the file is not even read');
  });
});
