import type { Device, JobDetail } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  api, insertDisc, listedPresetHandbrake, multiLangImage, multiLangMkv, probeStreams, startAgent, startCoordinator, stopAll, tempDir, waitFor, waitForDisc, waitForStatus, world,
  type AgentHandle, type CoordinatorHandle, type Job, type ProbedStream, type World,
} from './harness.js';

interface Stream { index: number; language: string; codec: string; channels?: number | null; forced?: boolean }
interface TrackJson { number: number; seconds: number; audio: Stream[]; subtitles: Stream[] }

/** The audio and subtitle streams of a finished job's file: [type, codec, channels, language]. */
function outputOf(done: Job): { audio: ProbedStream[]; subtitles: ProbedStream[]; all: ProbedStream[] } {
  const file = path.join(done.output_path as string, `${done.title}.mkv`);
  const all = probeStreams(file);
  return { all, audio: all.filter((s) => s.type === 'audio'), subtitles: all.filter((s) => s.type === 'subtitle') };
}

interface SubtitleRender {
  /** The canvas and palette the first subtitle track declares (its CodecPrivate, the .idx header). */
  canvas: string | null;
  palette: string[] | null;
  /** Pixels the subtitle changes when drawn over the video, and where they are. */
  changed: number;
  box: { left: number; top: number; right: number; bottom: number } | null;
}

/** One RGB frame of `file` at `seconds`, with the first subtitle track drawn over it or without. */
function frameAt(file: string, seconds: number, subtitle: { canvas: string | null; video: string } | null): Buffer {
  const input = subtitle?.canvas ? ['-canvas_size', subtitle.canvas, '-i', file] : ['-i', file];
  const [w, h] = (subtitle?.video ?? '').split('x');
  // Drawn as a player or a media server burning it in does: the track's canvas scaled onto the picture.
  const pick = subtitle ? ['-filter_complex', `[0:s:0]scale=${w}:${h}[s];[0:v][s]overlay`] : ['-map', '0:v'];
  return execFileSync('ffmpeg', ['-v', 'error', '-nostdin', ...input, ...pick, '-ss', String(seconds), '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { maxBuffer: 64 << 20 });
}

/** The first subtitle track of `file` rendered over its video at `seconds`, against the plain frame. */
function renderSubtitle(file: string, seconds: number): SubtitleRender {
  const probe = (select: string, entries: string): Record<string, string | number>[] =>
    (JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-select_streams', select, '-show_entries', entries, '-show_data', '-of', 'json', file]).toString()) as { streams: Record<string, string | number>[] }).streams;
  const [video] = probe('v:0', 'stream=width,height');
  const [sub] = probe('s:0', 'stream=extradata');
  // ffprobe -show_data prints the extradata as a hex dump: "00000000: 7369 7a65 …  size…".
  const header = Buffer.from(
    String(sub?.extradata ?? '')
      .split('\n')
      .map((l) => /^[0-9a-f]{8}: ((?:[0-9a-f]{2,4} ?)+)/.exec(l)?.[1].replace(/ /g, '') ?? '')
      .join(''),
    'hex',
  ).toString('latin1');
  const canvas = /^size:\s*(\d+x\d+)/m.exec(header)?.[1] ?? null;
  const palette = /^palette:\s*(.+)$/m.exec(header)?.[1].split(',').map((c) => c.trim()) ?? null;
  const width = Number(video.width);
  const size = `${width}x${Number(video.height)}`;
  const drawn = frameAt(file, seconds, { canvas, video: size });
  const plain = frameAt(file, seconds, null);
  assert.equal(drawn.length, plain.length);
  let changed = 0;
  let box: SubtitleRender['box'] = null;
  for (let i = 0; i < plain.length; i += 3) {
    if (drawn[i] === plain[i] && drawn[i + 1] === plain[i + 1] && drawn[i + 2] === plain[i + 2]) continue;
    changed++;
    const x = (i / 3) % width;
    const y = Math.floor(i / 3 / width);
    box = box ? { left: Math.min(box.left, x), top: Math.min(box.top, y), right: Math.max(box.right, x), bottom: Math.max(box.bottom, y) } : { left: x, top: y, right: x, bottom: y };
  }
  return { canvas, palette, changed, box };
}

const brief = (streams: ProbedStream[]): string[] => streams.map((s) => `${s.codec}${s.channels ? ` ${s.channels}ch` : ''} ${s.language}${s.default ? ' default' : ''}`);
/** A stream with its role flags (ffprobe dispositions): "ger forced default", "eng comment". */
const roles = (streams: ProbedStream[]): string[] => streams.map((s) => [s.language, ...s.roles, ...(s.default ? ['default'] : [])].join(' '));

/**
 * What MakeMKV writes for a dubbed film with every kind of role: the two-language MKV's streams plus
 * a second English audio (the disc calls it commentary), a German audio flagged for the visually
 * impaired and the German DVD subtitles flagged for the hard of hearing (the file's own flags, as
 * MakeMKV would write them), and two German text tracks: a full one (16 lines) and one of the few
 * lines of the foreign-language scenes (3), which nothing marks as forced.
 */
function rolesMkv(source: string): string {
  const dir = tempDir('ripwerk-roles-');
  const srt = (lines: number[]): string => lines.map((t, i) => `${i + 1}\n00:00:0${Math.floor(t)},${t % 1 ? '5' : '0'}00 --> 00:00:0${Math.floor(t)},${t % 1 ? '9' : '4'}00\nZeile ${i + 1}\n`).join('\n');
  fs.writeFileSync(path.join(dir, 'full.srt'), srt(Array.from({ length: 16 }, (_, i) => i / 2)));
  fs.writeFileSync(path.join(dir, 'few.srt'), srt([1, 3, 5]));
  const file = path.join(dir, 'roles.mkv');
  execFileSync('ffmpeg', [
    '-v', 'error', '-nostdin', '-i', source, '-i', path.join(dir, 'full.srt'), '-i', path.join(dir, 'few.srt'),
    '-map', '0:v', '-map', '0:a:0', '-map', '0:a:1', '-map', '0:a:1', '-map', '0:a:1', '-map', '0:s:0', '-map', '0:s:1', '-map', '1:0', '-map', '2:0',
    '-c', 'copy', '-metadata:s:a:2', 'language=eng', '-metadata:s:a:3', 'language=ger', '-metadata:s:s:2', 'language=ger', '-metadata:s:s:3', 'language=ger', '-y', file,
  ], { stdio: 'pipe' });
  execFileSync('mkvpropedit', [file, '--edit', 'track:a4', '--set', 'flag-visual-impaired=1', '--edit', 'track:s1', '--set', 'flag-hearing-impaired=1'], { stdio: 'pipe' });
  return file;
}

describe('languages: audio, surround and subtitles from disc to file (real HandBrakeCLI, both rip backends)', () => {
  let w: World;
  let c: CoordinatorHandle;
  let open: AgentHandle; // lsdvd + dvdbackup + ffmpeg
  let mkv: AgentHandle; // the MakeMKV stand-in, with the streams of the same disc
  let roleMkv: AgentHandle; // the MakeMKV stand-in with a disc whose streams have roles (rolesMkv)
  let openDrive: string;
  let mkvDrive: string;
  let roleDrive: string;

  const rip = async (device: string, agent: AgentHandle, body: Record<string, unknown>, title: string): Promise<Job> => {
    insertDisc(agent.driveDir, multiLangImage('MULTI_LANG'));
    await waitForDisc(c.url, agent);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, title, ...body });
    assert.equal(created.status, 201, created.text);
    return created.body;
  };

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    // Its HandBrakeCLI lists a preset it cannot run: the settings take it, its transcode fails (the retry test).
    open = await startAgent(w, c.mqttUrl, 'offen', { extra: { HANDBRAKE_CLI: listedPresetHandbrake('Kein Preset 9000') } });
    const source = multiLangMkv();
    mkv = await startAgent(w, c.mqttUrl, 'mkv', {
      makemkv: true,
      extra: { FAKE_MAKEMKV_SOURCE_MKV: source, FAKE_MAKEMKV_TITLES: '12', FAKE_MAKEMKV_STREAMS: 'a:deu:A_AC3:6,a:eng:A_AC3:2,s:deu:S_VOBSUB,s:eng:S_VOBSUB' },
    });
    // The disc states: the second English audio is a commentary (stream flags 1), the English DVD subtitles are forced (6144).
    roleMkv = await startAgent(w, c.mqttUrl, 'rollen', {
      makemkv: true,
      extra: {
        FAKE_MAKEMKV_SOURCE_MKV: rolesMkv(source),
        FAKE_MAKEMKV_TITLES: '12',
        FAKE_MAKEMKV_SECONDS: '0',
        FAKE_MAKEMKV_STREAMS: 'a:deu:A_AC3:6,a:eng:A_AC3:2,a:eng:A_AC3:2:commentary,a:deu:A_AC3:2,s:deu:S_VOBSUB,s:eng:S_VOBSUB:forced,s:deu:S_TEXT/UTF8,s:deu:S_TEXT/UTF8',
      },
    });
    const r = await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30', autoEject: false });
    assert.equal(r.status, 200, r.text);
    insertDisc(open.driveDir, multiLangImage('MULTI_LANG'));
    openDrive = await waitForDisc(c.url, open);
    insertDisc(mkv.driveDir, multiLangImage('MULTI_LANG'));
    insertDisc(roleMkv.driveDir, multiLangImage('MULTI_LANG'));
    mkvDrive = await waitForDisc(c.url, mkv);
    roleDrive = await waitForDisc(c.url, roleMkv);
  });
  after(stopAll);

  it('has the household defaults: German then English audio, German subtitles, surround kept', async () => {
    const r = await api<Record<string, unknown>>(c.url, 'GET', '/settings');
    assert.deepEqual(r.body.audioLanguages, ['deu', 'eng']);
    assert.deepEqual(r.body.subtitleLanguages, ['deu']);
    assert.equal(r.body.keepSurround, true);
    assert.equal(r.body.stereoCompanion, false);
    assert.equal(r.body.originalLanguage, true);
    assert.equal(r.body.burnForcedSubtitles, false);
  });

  for (const backend of ['open', 'makemkv'] as const) {
    it(`lists the audio and subtitle streams of each title in the title scan (${backend})`, async () => {
      const device = backend === 'open' ? openDrive : mkvDrive;
      assert.equal((await api(c.url, 'POST', `/devices/${device}/scan-tracks`)).status, 202);
      const tracks = await waitFor('title scan', async () => {
        const r = await api<{ scanning: boolean; tracks: TrackJson[] }>(c.url, 'GET', `/devices/${device}/tracks`);
        return !r.body.scanning && r.body.tracks.length ? r.body.tracks : undefined;
      });
      assert.equal(tracks.length, 1);
      assert.deepEqual(tracks[0].audio, [
        { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
        { index: 2, language: 'eng', codec: 'ac3', channels: 2 },
      ]);
      assert.deepEqual(tracks[0].subtitles, [
        { index: 1, language: 'deu', codec: 'vobsub', forced: false },
        { index: 2, language: 'eng', codec: 'vobsub', forced: false },
      ]);
    });
  }

  it('open backend, default choice: German 5.1 passed through as the default track, English 2.0 after it, German subtitles as a track', async () => {
    const created = await rip(openDrive, open, { titles: [1] }, 'Nordlicht');
    assert.deepEqual(created.meta?.audio_languages, ['deu', 'eng'], 'the settings\' choice is stored in the job');
    assert.deepEqual(created.meta?.subtitle_languages, ['deu']);
    const done = await waitForStatus(c.url, created.id, ['completed']);
    const out = outputOf(done);
    assert.deepEqual(brief(out.audio), ['ac3 6ch ger default', 'ac3 2ch eng']);
    assert.deepEqual(brief(out.subtitles), ['dvd_subtitle ger'], 'subtitles are a track, not burned into the picture');
    assert.equal(out.all[0].type, 'video');

    const detail = await api<JobDetail>(c.url, 'GET', `/jobs/${done.id}/detail`);
    assert.deepEqual(detail.body.audio_languages, ['deu', 'eng']);
    assert.deepEqual(detail.body.streams, [
      {
        file: 'Nordlicht.mkv',
        audio: [
          { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
          { index: 2, language: 'eng', codec: 'ac3', channels: 2 },
        ],
        subtitles: [{ index: 1, language: 'deu', codec: 'vobsub', forced: false }],
      },
    ]);
    assert.ok(detail.body.logs.some((l) => l.message === 'title_t01.mkv: keeping audio deu passthrough, eng passthrough; subtitles deu'), detail.body.logs.map((l) => l.message).join('\n'));
    assert.ok(detail.body.logs.some((l) => l.message === "subtitles: the disc's palette and canvas for 2 track(s)"), detail.body.logs.map((l) => l.message).join('\n'));

    // Issue 37: the kept subtitle renders where and as the disc shows it. The reference is HandBrake
    // reading the disc itself (it takes the palette from the IFO), same preset, German subtitle track.
    const reference = path.join(tempDir('ripwerk-ref-'), 'disc.mkv');
    execFileSync('HandBrakeCLI', ['-i', multiLangImage('MULTI_LANG'), '-t', '1', '-o', reference, '-Z', 'Very Fast 480p30', '-a', '1', '-s', '1', '--subtitle-burned=none'], { stdio: 'ignore' });
    // 2 s: "Untertitel de eins" is on screen from 1 s to 4 s (scripts/make-multilang-dvd-image.sh).
    const ours = renderSubtitle(path.join(done.output_path as string, 'Nordlicht.mkv'), 2);
    const disc = renderSubtitle(reference, 2);
    assert.equal(ours.canvas, '720x576', 'the PAL video canvas, not the 720x480 HandBrake assumes without one');
    assert.deepEqual(ours.palette, disc.palette, "the disc's colours");
    assert.equal(ours.palette?.[0], 'fefefe', 'the text colour: the IFO\'s eb8080 (white)');
    assert.ok(ours.changed > 1000 && disc.changed > 1000, `the text changes the picture: ${ours.changed} pixels, the disc ${disc.changed}`);
    assert.ok(Math.abs(ours.changed - disc.changed) <= disc.changed * 0.02, `as many changed pixels as from the disc: ${ours.changed} against ${disc.changed}`);
    assert.ok(ours.box && disc.box, 'the text has a place');
    for (const side of ['left', 'top', 'right', 'bottom'] as const) {
      assert.ok(Math.abs(ours.box[side] - disc.box[side]) <= 2, `at the disc's place (${side}): ${JSON.stringify(ours.box)} against ${JSON.stringify(disc.box)}`);
    }
  });

  it('MakeMKV backend, English only: one English track, English then German subtitles in the chosen order', async () => {
    const created = await rip(mkvDrive, mkv, { audio_languages: ['eng'], subtitle_languages: ['eng', 'ger'] }, 'Nordlicht Englisch');
    assert.deepEqual(created.meta?.audio_languages, ['eng']);
    assert.deepEqual(created.meta?.subtitle_languages, ['eng', 'deu'], 'ger is stored as deu');
    const done = await waitForStatus(c.url, created.id, ['completed']);
    const out = outputOf(done);
    assert.deepEqual(brief(out.audio), ['ac3 2ch eng default']);
    assert.deepEqual(brief(out.subtitles), ['dvd_subtitle eng', 'dvd_subtitle ger']);
  });

  it('a disc with none of the listed languages keeps its first audio track and says so', async () => {
    const created = await rip(openDrive, open, { audio_languages: ['fra', 'ita'], subtitle_languages: ['fra'] }, 'Nordlicht Franz');
    const done = await waitForStatus(c.url, created.id, ['completed']);
    const out = outputOf(done);
    assert.deepEqual(brief(out.audio), ['ac3 6ch ger default']);
    assert.deepEqual(out.subtitles, []);
    const detail = await api<JobDetail>(c.url, 'GET', `/jobs/${done.id}/detail`);
    assert.ok(
      detail.body.logs.some((l) => l.level === 'warn' && l.message === 'title_t01.mkv: no audio stream in fra, ita (the file has deu ac3 6 ch, eng ac3 2 ch): keeping the first audio stream (deu)'),
      detail.body.logs.map((l) => l.message).join('\n'),
    );
  });

  it('refuses an unknown language code with a 400 naming it, and stores nothing', async () => {
    const before = (await api<Job[]>(c.url, 'GET', '/jobs')).body.length;
    const bad = await api(c.url, 'POST', '/jobs', { device: openDrive, audio_languages: ['deu', 'xx'] });
    assert.equal(bad.status, 400);
    assert.equal(bad.text.trim(), 'audio_languages: "xx" is not an ISO 639-2 language code (three letters, for example "deu" or "eng")');
    const notList = await api(c.url, 'POST', '/jobs', { device: openDrive, subtitle_languages: 'deu' });
    assert.equal(notList.status, 400);
    assert.match(notList.text, /^subtitle_languages must be a list of ISO 639-2 language codes/);
    assert.equal((await api<Job[]>(c.url, 'GET', '/jobs')).body.length, before);
    const badSetting = await api(c.url, 'PUT', '/settings', { audioLanguages: ['deu', 'klingon'] });
    assert.equal(badSetting.status, 400);
    assert.match(badSetting.text, /"klingon" is not an ISO 639-2 language code/);
    assert.deepEqual((await api<Record<string, unknown>>(c.url, 'GET', '/settings')).body.audioLanguages, ['deu', 'eng']);
  });

  it('retry-transcode and retry-rip take the job\'s language choice over', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Kein Preset 9000' })).status, 200);
    const first = await rip(openDrive, open, { audio_languages: ['eng'], subtitle_languages: ['eng'] }, 'Nordlicht Retry');
    const failed = await waitForStatus(c.url, first.id, ['failed']);
    assert.equal(failed.can_retry, true);
    // The settings change meanwhile; the job keeps its own choice.
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30', audioLanguages: ['deu'] })).status, 200);
    assert.equal((await api(c.url, 'POST', `/jobs/${failed.id}/retry-transcode`)).status, 202);
    const done = await waitForStatus(c.url, failed.id, ['completed']);
    assert.deepEqual(brief(outputOf(done).audio), ['ac3 2ch eng default']);
    assert.deepEqual(brief(outputOf(done).subtitles), ['dvd_subtitle eng']);

    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Kein Preset 9000' })).status, 200);
    const second = await rip(mkvDrive, mkv, { audio_languages: ['eng', 'deu'], subtitle_languages: [] }, 'Nordlicht Zwei');
    const secondFailed = await waitForStatus(c.url, second.id, ['failed']);
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30' })).status, 200);
    const again = await api<Job>(c.url, 'POST', `/jobs/${secondFailed.id}/retry-rip`);
    assert.equal(again.status, 201, again.text);
    assert.deepEqual(again.body.meta?.audio_languages, ['eng', 'deu']);
    assert.deepEqual(again.body.meta?.subtitle_languages, []);
    const againDone = await waitForStatus(c.url, again.body.id, ['completed']);
    assert.deepEqual(brief(outputOf(againDone).audio), ['ac3 2ch eng default', 'ac3 6ch ger']);
    assert.deepEqual(outputOf(againDone).subtitles, []);
    await api(c.url, 'PUT', '/settings', { audioLanguages: ['deu', 'eng'] });
  });

  it('keepSurround off makes stereo AAC; stereoCompanion adds AAC stereo beside the passed-through 5.1', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { keepSurround: false })).status, 200);
    const stereo = await rip(openDrive, open, { audio_languages: ['deu'], subtitle_languages: [] }, 'Nordlicht Stereo');
    assert.deepEqual(brief(outputOf(await waitForStatus(c.url, stereo.id, ['completed'])).audio), ['aac 2ch ger default']);
    assert.equal((await api(c.url, 'PUT', '/settings', { keepSurround: true, stereoCompanion: true })).status, 200);
    const companion = await rip(mkvDrive, mkv, { audio_languages: ['deu'], subtitle_languages: [] }, 'Nordlicht Begleiter');
    assert.deepEqual(brief(outputOf(await waitForStatus(c.url, companion.id, ['completed'])).audio), ['ac3 6ch ger default', 'aac 2ch ger']);
    await api(c.url, 'PUT', '/settings', { stereoCompanion: false });
  });
  it('track roles: a forced flag on the disc arrives as forced, an unflagged forced track is recognised, commentary and audio description follow the settings (MakeMKV)', async () => {
    const r = await api<Record<string, unknown>>(c.url, 'GET', '/settings');
    assert.equal(r.body.keepCommentary, false);
    assert.equal(r.body.keepAudioDescription, false);

    // Defaults: German and English audio, German subtitles, no commentary, no audio description.
    const plain = await rip(roleDrive, roleMkv, {}, 'Rollen');
    const done = await waitForStatus(c.url, plain.id, ['completed']);
    const out = outputOf(done);
    assert.deepEqual(brief(out.audio), ['ac3 6ch ger default', 'ac3 2ch eng'], 'the commentary and the audio description are left out');
    assert.deepEqual(roles(out.subtitles), ['ger hearing_impaired', 'ger', 'ger forced default'], 'the 3-line German track is taken for the forced subtitles of the German audio');
    const detail = await api<JobDetail>(c.url, 'GET', `/jobs/${done.id}/detail`);
    const logs = detail.body.logs.map((l) => l.message);
    assert.ok(logs.includes("the disc's track roles are written into MULTI_LANG_t00.mkv: a3 commentary, s2 forced"), logs.join('\n'));
    assert.ok(logs.includes('MULTI_LANG_t00.mkv: subtitle stream 4 (deu) has 3 events against 16 of the fullest deu track: taken for the forced subtitles'), logs.join('\n'));
    assert.ok(logs.includes('MULTI_LANG_t00.mkv: leaving out the commentary (stream 3 eng): keepCommentary is off'), logs.join('\n'));
    assert.deepEqual(detail.body.streams?.[0]?.subtitles.map((s) => [s.language, s.forced, s.hearing_impaired ?? false]), [['deu', false, true], ['deu', false, false], ['deu', true, false]]);

    // English first, English subtitles, commentary and audio description kept: the disc's forced English track is the default one.
    assert.equal((await api(c.url, 'PUT', '/settings', { keepCommentary: true, keepAudioDescription: true })).status, 200);
    const kept = await rip(roleDrive, roleMkv, { audio_languages: ['eng', 'deu'], subtitle_languages: ['eng'] }, 'Rollen Alle');
    const all = outputOf(await waitForStatus(c.url, kept.id, ['completed']));
    assert.deepEqual(roles(all.audio), ['eng default', 'ger', 'ger visual_impaired', 'eng comment']);
    assert.deepEqual(brief(all.audio), ['ac3 2ch eng default', 'ac3 6ch ger', 'ac3 2ch ger', 'ac3 2ch eng']);
    assert.deepEqual(brief(all.subtitles), ['dvd_subtitle eng default']);
    assert.deepEqual(roles(all.subtitles), ['eng forced default'], 'the forced flag of the disc (MakeMKV stream flags 6144) arrives as forced');
    await api(c.url, 'PUT', '/settings', { keepCommentary: false, keepAudioDescription: false });
  });

  it('track roles: the DVD\'s content codes (lsdvd) arrive as flags: forced German subtitles shown by default, the English commentary left out (open backend)', async () => {
    for (const f of fs.readdirSync(open.driveDir)) if (f.endsWith('.iso')) fs.rmSync(path.join(open.driveDir, f));
    insertDisc(open.driveDir, multiLangImage('ROLLEN', 6, { audio: 'normal comments1', subpictures: 'forced normal_cc' }));
    await waitFor('the ROLLEN disc', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === openDrive && d.disc?.label === 'ROLLEN'), 30_000);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device: openDrive, title: 'Rollen DVD' });
    assert.equal(created.status, 201, created.text);
    const out = outputOf(await waitForStatus(c.url, created.body.id, ['completed']));
    assert.deepEqual(roles(out.audio), ['ger default'], 'Comments1: the English commentary is left out');
    assert.deepEqual(brief(out.subtitles), ['dvd_subtitle ger default']);
    assert.deepEqual(roles(out.subtitles), ['ger forced default'], 'Forced: kept, flagged forced and shown by default');
  });
});
