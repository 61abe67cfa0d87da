import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { TaskFailure, type TaskContext } from '../../../../agent/tasks/rip-task.js';
import { finishTranscode, runTranscode, softwareEncoderArgs, type TranscodeHooks, type Transcoder } from '../../../../agent/tasks/transcode-task.js';
import { OutputLedger } from '../../../../agent/output/output-folder.js';
import { PRIVATE_PREFIX } from '../../../../agent/output/private-encode.js';
import type { TranscodeJob } from '../../../../shared/protocol.js';
import type { TrackFlagEdit } from '../../../../agent/tools/mkvpropedit-runner.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-transcode-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

interface Call {
  input: string;
  output: string;
  preset: string;
}

/** Encodes by writing "encoded:<input content>"; fails on the input named in failOn after writing part of it. */
function fakeTranscoder(failOn?: string, seconds: Record<string, number> = {}): Transcoder & { calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    async scan(input) {
      const s = seconds[path.basename(input)];
      if (s === undefined) throw new Error(`no scan for ${path.basename(input)}`);
      return { seconds: s, audio: [], subtitles: [] };
    },
    async transcode(input, output, preset, hooks) {
      await hooks.startWhen;
      calls.push({ input, output, preset });
      hooks.onSpawn(500 + calls.length);
      hooks.onProgress(50);
      if (failOn && path.basename(input) === failOn) {
        fs.writeFileSync(output, 'partial');
        throw new Error(`encoder died on ${path.basename(input)}`);
      }
      fs.writeFileSync(output, `encoded:${fs.readFileSync(input, 'utf8')}`);
      hooks.onProgress(100);
    },
  };
}

function context() {
  const progress: number[] = [];
  const logs: string[] = [];
  const ctx: TaskContext = {
    signal: new AbortController().signal,
    progress: (pct) => progress.push(pct),
    progressEveryMs: 0,
    log: (_level, message) => logs.push(message),
    onSpawn: () => undefined,
  };
  return { ctx, progress, logs };
}

let n = 0;
function setup(fileCount: number, overrides: Partial<TranscodeJob> = {}): TranscodeJob {
  const base = path.join(root, `case-${++n}`);
  const rawDir = path.join(base, 'raw', `job-${n}`);
  fs.mkdirSync(rawDir, { recursive: true });
  const files = Array.from({ length: fileCount }, (_, i) => {
    const f = path.join(rawDir, `title_t0${i + 1}.mkv`);
    fs.writeFileSync(f, `raw ${i + 1}`);
    return f;
  });
  return {
    job_id: `job-${n}-abcdef`,
    raw_dir: rawDir,
    files,
    target_dir: path.join(base, 'media'),
    title: 'Heat',
    year: 1995,
    series: null,
    season: null,
    preset: 'Fast 1080p30',
    keep_original: false,
    ...overrides,
  };
}


/** A transcoder that notes its scans and encodes in `steps` ("scan x", "encode x", "encoded x"); `during` runs inside each encode. */
function steppingTranscoder(steps: string[], during: (hooks: TranscodeHooks) => void = () => undefined): Transcoder {
  return {
    async scan(input) {
      steps.push(`scan ${path.basename(input)}`);
      return { seconds: 60, audio: [], subtitles: [] };
    },
    async transcode(input, output, _preset, hooks) {
      await hooks.startWhen;
      steps.push(`encode ${path.basename(input)}`);
      hooks.onSpawn(700);
      during(hooks);
      steps.push(`encoded ${path.basename(input)}`);
      fs.writeFileSync(output, 'encoded');
    },
  };
}
/**
 * The real path of the private folder an encoder wrote `output` into (private-encode.ts): held open
 * and named through /proc/<agent>/fd on Linux, its own path elsewhere.
 */
function privateFolder(output: string): string {
  if (process.platform === 'linux') assert.match(output, new RegExp(`^/proc/${process.pid}/fd/\\d+/`));
  const real = fs.realpathSync(path.dirname(output));
  assert.ok(path.basename(real).startsWith(PRIVATE_PREFIX), real);
  return real;
}

describe('runTranscode', () => {
  it('encodes every raw file into the output folder and removes the raw dir after full success', async () => {
    const args = setup(2);
    const transcoder = fakeTranscoder();
    const { ctx, progress } = context();
    const result = await runTranscode(args, transcoder, ctx);
    const dir = path.join(args.target_dir, 'Heat (1995)');
    assert.deepEqual(result, {
      output_path: dir,
      files: [path.join(dir, 'Heat (1995) - t01.mkv'), path.join(dir, 'Heat (1995) - t02.mkv')],
      raw_removed: true,
      streams: [],
      episodes_guessed: false,
    });
    assert.equal(fs.readFileSync(result.files[0], 'utf8'), 'encoded:raw 1');
    assert.equal(fs.readFileSync(result.files[1], 'utf8'), 'encoded:raw 2');
    assert.equal(fs.existsSync(args.raw_dir), false);
    assert.deepEqual(
      transcoder.calls.map((c) => [path.basename(c.input), c.preset]),
      [
        ['title_t01.mkv', 'Fast 1080p30'],
        ['title_t02.mkv', 'Fast 1080p30'],
      ],
    );
    // file 1 of 2 covers 0..50 %, file 2 50..100 %
    assert.deepEqual(progress, [25, 50, 75, 100]);
  });

  it('gives its slot back once, after the last encode and before its output is scanned or the raw files go', async () => {
    const args = setup(2);
    const steps: string[] = [];
    const transcoder = steppingTranscoder(steps, (hooks) => hooks.onProgress(100));
    const { ctx } = context();
    let rawThere: boolean | null = null;
    ctx.encoderDone = () => {
      steps.push('slot free');
      rawThere = fs.existsSync(args.raw_dir);
    };
    await runTranscode(args, transcoder, ctx);
    const last = steps.slice(steps.indexOf('encode title_t02.mkv'));
    assert.deepEqual(last.slice(0, 3), ['encode title_t02.mkv', 'encoded title_t02.mkv', 'slot free']);
    assert.match(last[3] ?? '', /^scan Heat \(1995\).*\.mkv$/, 'the scans of the written files come after');
    assert.equal(steps.filter((x) => x === 'slot free').length, 1);
    assert.equal(rawThere, true);
  });

  it('says once, during the last file\'s encode and before the slot is free, that the encoder is about to end', async () => {
    const args = setup(2);
    const steps: string[] = [];
    // Each run reports progress at once: at that rate every run is about to end.
    const transcoder = steppingTranscoder(steps, (hooks) => [50, 99, 100].forEach((pct) => hooks.onProgress(pct)));
    const { ctx } = context();
    ctx.encoderEnding = () => steps.push('ending');
    ctx.encoderDone = () => steps.push('slot free');
    await runTranscode(args, transcoder, ctx);
    assert.deepEqual(steps.filter((x) => !x.startsWith('scan ')), ['encode title_t01.mkv', 'encoded title_t01.mkv', 'encode title_t02.mkv', 'ending', 'encoded title_t02.mkv', 'slot free']);
  });

  it('takes its slot once, when all is ready for the first encode, and counts as started once that encoder has started; a task that fails before never takes one', async () => {
    const args = setup(2);
    const steps: string[] = [];
    const transcoder = steppingTranscoder(steps);
    const { ctx } = context();
    ctx.takeSlot = async () => void steps.push('slot');
    ctx.encoderStarted = () => steps.push('started');
    ctx.onSpawn = (pid) => steps.push(`pid ${pid}`);
    ctx.log = (_level, message) => {
      if (message.startsWith('transcoding ')) steps.push(message.split(' (')[0]);
    };
    await runTranscode(args, transcoder, ctx);
    const encodes = steps.filter((x) => !x.startsWith('scan ') || x === 'scan title_t01.mkv');
    assert.deepEqual(encodes.slice(0, 7), ['scan title_t01.mkv', 'slot', 'encode title_t01.mkv', 'started', 'pid 700', 'transcoding title_t01.mkv', 'encoded title_t01.mkv']);
    assert.deepEqual(encodes.slice(7, 11), ['encode title_t02.mkv', 'pid 700', 'transcoding title_t02.mkv', 'encoded title_t02.mkv'], 'the second encode logs after its start, and is no new start of the task');
    assert.deepEqual([steps.filter((x) => x === 'slot').length, steps.filter((x) => x === 'started').length], [1, 1]);
    const missing = setup(1);
    fs.rmSync(missing.files[0]);
    let took = 0;
    const failing = context().ctx;
    failing.takeSlot = async () => void took++;
    await assert.rejects(runTranscode(missing, transcoder, failing), /is missing/);
    assert.equal(took, 0);
  });

  it('frees its slot as the last encoder exits, before the transcoder has checked the output', async () => {
    const args = setup(1);
    const steps: string[] = [];
    const transcoder: Transcoder = {
      async scan() {
        return { seconds: 60, audio: [], subtitles: [] };
      },
      async transcode(_input, output, _preset, hooks) {
        hooks.onSpawn(1);
        steps.push('exit');
        hooks.onExit?.();
        await new Promise((resolve) => setTimeout(resolve, 5));
        fs.writeFileSync(output, 'encoded');
        steps.push('checked');
      },
    };
    const { ctx } = context();
    ctx.encoderDone = () => steps.push('slot free');
    await runTranscode(args, transcoder, ctx);
    assert.deepEqual(steps, ['exit', 'slot free', 'checked']);
  });

  it('scans the first raw file while it plans the output folder', async () => {
    const args = setup(1);
    const folderAtScan: boolean[] = [];
    const transcoder: Transcoder = {
      async scan(input) {
        if (input.startsWith(args.raw_dir)) folderAtScan.push(fs.existsSync(path.join(args.target_dir, 'Heat (1995)')));
        return { seconds: 60, audio: [], subtitles: [] };
      },
      async transcode(_input, output) {
        fs.writeFileSync(output, 'encoded');
      },
    };
    await runTranscode(args, transcoder, context().ctx);
    assert.deepEqual(folderAtScan, [false], 'one scan of the raw file, started before the folder was made');
  });

  it('keeps its slot when an encode fails', async () => {
    const args = setup(2);
    const { ctx } = context();
    let freed = 0;
    ctx.encoderDone = () => freed++;
    await assert.rejects(runTranscode(args, fakeTranscoder('title_t02.mkv', { 'title_t01.mkv': 60, 'title_t02.mkv': 60 }), ctx), /encoder died/);
    assert.equal(freed, 0, 'the pool frees it when the task ends');
  });

  it('gives a single file the folder name and keeps the raw dir with keep_original', async () => {
    const args = setup(1, { keep_original: true });
    const result = await runTranscode(args, fakeTranscoder(), context().ctx);
    assert.deepEqual(result.files, [path.join(args.target_dir, 'Heat (1995)', 'Heat (1995).mkv')]);
    assert.equal(result.raw_removed, false);
    assert.equal(fs.readFileSync(args.files[0], 'utf8'), 'raw 1');
  });

  it('with keep_original moves the raw files into MEDIA_ROOT/Originale/<output folder> by rename, then removes the raw dir', async () => {
    const args = setup(2, { keep_original: true });
    const mediaRoot = path.dirname(args.target_dir);
    const renames: string[] = [];
    const ops = { rename: async (a: string, b: string) => { renames.push(path.basename(a)); await fs.promises.rename(a, b); }, free: async () => { throw new Error('no space check on a rename'); } };
    const { ctx, logs } = context();
    const result = await runTranscode(args, fakeTranscoder(), ctx, { mediaRoot, ops });
    const kept = path.join(mediaRoot, 'Originale', 'Heat (1995)', args.job_id);
    assert.deepEqual(fs.readdirSync(kept).sort(), ['title_t01.mkv', 'title_t02.mkv']);
    assert.equal(fs.readFileSync(path.join(kept, 'title_t02.mkv'), 'utf8'), 'raw 2');
    assert.deepEqual(renames, ['title_t01.mkv', 'title_t02.mkv']);
    assert.equal(result.raw_removed, true);
    assert.equal(result.originals_dir, kept, 'named for the coordinator: the originals are the job\'s raw data from now on');
    assert.ok(!fs.existsSync(args.raw_dir));
    assert.ok(logs.includes(`originals kept in ${kept}`), logs.join('\n'));
    assert.equal(fs.readFileSync(result.files[0], 'utf8'), 'encoded:raw 1', 'the compressed output is in the library folder');
  });

  it('with keep_original across devices checks the free space, copies, verifies the size and removes the original', async () => {
    const exdev = async () => { throw Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' }); };
    const args = setup(1, { keep_original: true, series: 'Show', season: 2 });
    const mediaRoot = path.dirname(args.target_dir);
    const asked: string[] = [];
    const result = await runTranscode(args, fakeTranscoder(), context().ctx, { mediaRoot, ops: { rename: exdev, free: async (dir) => { asked.push(dir); return 1e12; } } });
    const kept = path.join(mediaRoot, 'Originale', 'Show', 'Season 02', args.job_id);
    assert.deepEqual(asked, [kept]);
    assert.equal(fs.readFileSync(path.join(kept, 'title_t01.mkv'), 'utf8'), 'raw 1');
    assert.equal(result.raw_removed, true);
    assert.ok(!fs.existsSync(args.raw_dir));

    // Not enough room there: the originals stay in the raw dir, the job still ends with its output, a warning says why.
    const full = setup(1, { keep_original: true });
    const { ctx, logs } = context();
    const again = await runTranscode(full, fakeTranscoder(), ctx, { mediaRoot: path.dirname(full.target_dir), ops: { rename: exdev, free: async () => 3 } });
    assert.equal(again.raw_removed, false);
    assert.equal(fs.readFileSync(full.files[0], 'utf8'), 'raw 1');
    assert.ok(!fs.existsSync(path.join(path.dirname(full.target_dir), 'Originale', 'Heat (1995)', full.job_id, 'title_t01.mkv')), 'no partial copy left');
    assert.equal(again.originals_dir, undefined, 'nothing moved: the raw folder stays the raw data');
    assert.ok(logs.some((l) => l.startsWith(`the originals stay in ${full.raw_dir}`) && l.includes('not enough free space')), logs.join('\n'));
    assert.equal(fs.readFileSync(again.files[0], 'utf8'), 'encoded:raw 1');
  });

  it('on a failure removes the finished and the partial outputs and the empty folder, and keeps the raw dir', async () => {
    const args = setup(3);
    const transcoder = fakeTranscoder('title_t02.mkv');
    await assert.rejects(runTranscode(args, transcoder, context().ctx), /encoder died on title_t02\.mkv/);
    assert.equal(transcoder.calls.length, 2, 'the third file is not started');
    assert.equal(fs.existsSync(path.join(args.target_dir, 'Heat (1995)')), false, 'no outputs and no empty folder are left');
    assert.deepEqual(fs.readdirSync(args.raw_dir).sort(), ['title_t01.mkv', 'title_t02.mkv', 'title_t03.mkv']);
  });

  it('enters each output in the ledger before its encoder starts and its identity once it ended; a failure leaves no ledger', async () => {
    const args = setup(2);
    const ledger = new OutputLedger(path.join(root, `ledger-${n}.json`), args.job_id);
    const seen: unknown[] = [];
    const transcoder = fakeTranscoder();
    const encode = transcoder.transcode.bind(transcoder);
    transcoder.transcode = async (input, output, preset, hooks) => {
      // What an agent killed now would find: this output claimed, without an identity yet (the encoder
      // writes into a private folder beside it: private-encode.ts).
      const final = path.join(path.dirname(privateFolder(output)), path.basename(output));
      // Its private folder is recorded too: a run cut off now leaves it, and removeOwnOutputs removes it.
      assert.ok(JSON.parse(fs.readFileSync(ledger.file, 'utf8')).private.includes(privateFolder(output)));
      seen.push(JSON.parse(fs.readFileSync(ledger.file, 'utf8')).files.find((f: { path: string }) => f.path === final));
      return encode(input, output, preset, hooks);
    };
    const result = await runTranscode(args, transcoder, context().ctx, undefined, ledger);
    assert.deepEqual(seen, result.files.map((f) => ({ path: f })));
    const recorded = JSON.parse(fs.readFileSync(ledger.file, 'utf8')) as { files: { path: string; identity?: { ino: number; size: number } }[]; dirs: string[]; raw_released?: boolean };
    assert.equal(recorded.raw_released, true, 'the raw dir was removed: from then on the outputs may be the only encode');
    assert.deepEqual(recorded.files.map((f) => [f.path, f.identity?.ino, f.identity?.size]), result.files.map((f) => [f, fs.statSync(f).ino, fs.statSync(f).size]));
    assert.deepEqual(recorded.dirs, [result.output_path]);
    assert.deepEqual((recorded as { encoded?: unknown }).encoded, { output_path: result.output_path, files: result.files, episodes_guessed: false }, 'every encode ended: a restart finishes from here');

    const failing = setup(1);
    const l2 = new OutputLedger(path.join(root, `ledger-${n}.json`), failing.job_id);
    await assert.rejects(runTranscode(failing, fakeTranscoder('title_t01.mkv'), context().ctx, undefined, l2));
    assert.equal(fs.existsSync(l2.file), false, 'its outputs were removed on the spot');
  });

  it('finishes a transcode whose encodes ended before a restart without encoding again: scans, moves the originals left, describes the folder', async () => {
    const args = setup(2, { keep_original: true, library: { profile: 'jellyfin', kind: 'movie', title: 'Heat', year: 1995, overview: null, poster_url: null, tmdb_id: 949, imdb_id: null } });
    const mediaRoot = path.dirname(args.target_dir);
    const dir = path.join(args.target_dir, 'Heat (1995)');
    fs.mkdirSync(dir, { recursive: true });
    const outputs = [path.join(dir, 'Heat (1995) - t01.mkv'), path.join(dir, 'Heat (1995) - t02.mkv')];
    for (const f of outputs) fs.writeFileSync(f, 'encoded before the restart');
    // The run before the restart had moved the first original already.
    const kept = path.join(mediaRoot, 'Originale', 'Heat (1995)', args.job_id);
    fs.mkdirSync(kept, { recursive: true });
    fs.renameSync(args.files[0], path.join(kept, 'title_t01.mkv'));
    const steps: string[] = [];
    const { ctx, logs } = context();
    const result = await finishTranscode(args, { output_path: dir, files: outputs, episodes_guessed: true }, steppingTranscoder(steps), ctx, { mediaRoot }, undefined, true);
    assert.deepEqual(steps, ['scan Heat (1995) - t01.mkv', 'scan Heat (1995) - t02.mkv'], 'no encode');
    assert.deepEqual(result, {
      output_path: dir,
      files: outputs,
      raw_removed: true,
      originals_dir: kept,
      streams: outputs.map((f) => ({ file: path.basename(f), audio: [], subtitles: [] })),
      episodes_guessed: true,
    });
    assert.deepEqual(fs.readdirSync(kept).sort(), ['title_t01.mkv', 'title_t02.mkv'], 'the original left in the raw folder joined the one moved before');
    assert.equal(fs.existsSync(args.raw_dir), false);
    assert.ok(fs.readdirSync(dir).some((f) => f.endsWith('.nfo')), `the media server's files are written: ${fs.readdirSync(dir).join(', ')}`);
    assert.ok(logs.includes(`originals kept in ${kept}`), logs.join('\n'));
  });

  it('refuses missing raw files with a plain reason before encoding anything', async () => {
    const args = setup(2);
    fs.rmSync(args.files[1]);
    const transcoder = fakeTranscoder();
    await assert.rejects(
      runTranscode(args, transcoder, context().ctx),
      (err: unknown) => err instanceof TaskFailure && err.message === `the raw file ${args.files[1]} is missing: retry the rip`,
    );
    assert.deepEqual(transcoder.calls, []);
    assert.equal(fs.existsSync(args.target_dir), false, 'no output folder is created');
    assert.equal(fs.existsSync(args.files[0]), true);
  });

  it('takes a folder where a raw file should be as missing', async () => {
    const args = setup(1);
    fs.rmSync(args.files[0]);
    fs.mkdirSync(args.files[0]);
    await assert.rejects(runTranscode(args, fakeTranscoder(), context().ctx), /is missing: retry the rip/);
  });

  it('gives two discs of one season encoded at the same time different file names', async () => {
    const disc1 = setup(1, { series: 'Show', season: 3 });
    const disc2 = setup(1, { series: 'Show', season: 3, target_dir: disc1.target_dir });
    fs.writeFileSync(disc2.files[0], 'raw of disc 2');
    const slow: Transcoder = {
      scan: async () => ({ seconds: 0, audio: [], subtitles: [] }),
      async transcode(input, output) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        fs.writeFileSync(output, `encoded:${fs.readFileSync(input, 'utf8')}`);
      },
    };
    const [r1, r2] = await Promise.all([runTranscode(disc1, slow, context().ctx), runTranscode(disc2, slow, context().ctx)]);
    assert.notEqual(r1.files[0], r2.files[0]);
    assert.equal(fs.readFileSync(r1.files[0], 'utf8'), 'encoded:raw 1');
    assert.equal(fs.readFileSync(r2.files[0], 'utf8'), 'encoded:raw of disc 2');
  });

  it('does not overwrite an earlier disc of the same season, neither on success nor on failure', async () => {
    const first = setup(1, { series: 'Show', season: 2 });
    const r1 = await runTranscode(first, fakeTranscoder(), context().ctx);
    const seasonDir = path.join(first.target_dir, 'Show', 'Season 02');
    assert.deepEqual(r1.files, [path.join(seasonDir, 'Show - S02E01.mkv')]);
    assert.equal(r1.episodes_guessed, true);

    const failing = setup(1, { series: 'Show', season: 2, target_dir: first.target_dir });
    await assert.rejects(runTranscode(failing, fakeTranscoder('title_t01.mkv'), context().ctx));
    assert.equal(fs.readFileSync(r1.files[0], 'utf8'), 'encoded:raw 1', 'a failed second disc leaves the first one alone');

    const second = setup(1, { series: 'Show', season: 2, target_dir: first.target_dir });
    const r2 = await runTranscode(second, fakeTranscoder(), context().ctx);
    assert.equal(r2.output_path, seasonDir);
    assert.notEqual(r2.files[0], r1.files[0]);
    assert.equal(fs.readFileSync(r1.files[0], 'utf8'), 'encoded:raw 1');
    assert.deepEqual(fs.readdirSync(seasonDir).sort(), ['Show - S02E01.mkv', 'Show - S02E02.mkv'], 'the second disc counts on after the first');
  });
});

describe('runTranscode with a language choice', () => {
  const audio = [
    { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
    { index: 2, language: 'eng', codec: 'ac3', channels: 2 },
  ];
  const subtitles = [{ index: 1, language: 'deu', codec: 'vobsub', forced: false }];

  it('hands the stream arguments to the encoder, logs the choice and reports the output streams', async () => {
    const args = setup(1, {
      audio_languages: ['eng', 'deu'],
      subtitle_languages: ['deu'],
      audio: { keep_surround: true, stereo_companion: false, burn_forced_subtitles: false, original_language: null },
    });
    const seen: string[][] = [];
    const transcoder: Transcoder = {
      scan: async (input) => (input.startsWith(args.raw_dir) ? { seconds: 12, audio, subtitles } : { seconds: 12, audio: [audio[1], audio[0]], subtitles }),
      async transcode(_input, output, _preset, hooks) {
        seen.push(hooks.streamArgs);
        fs.writeFileSync(output, 'encoded');
      },
    };
    const { ctx, logs } = context();
    const result = await runTranscode(args, transcoder, ctx);
    assert.deepEqual(seen, [['-a', '2,1', '-E', 'copy,copy', '-6', 'none,none', '--audio-copy-mask', 'ac3,eac3,dts,dtshd,truehd', '--audio-fallback', 'av_aac', '-s', '1', '--subtitle-burned=none', '--subtitle-default=none']]);
    assert.ok(logs.includes('title_t01.mkv: keeping audio eng passthrough, deu passthrough; subtitles deu'), logs.join('\n'));
    assert.deepEqual(result.streams, [{ file: 'Heat (1995).mkv', audio: [audio[1], audio[0]], subtitles }]);
  });

  it('falls back to the preset alone, and says so, when the raw file cannot be scanned', async () => {
    const args = setup(1, { audio_languages: ['deu'], subtitle_languages: [], audio: { keep_surround: true, stereo_companion: false, burn_forced_subtitles: false, original_language: null } });
    const seen: string[][] = [];
    const transcoder: Transcoder = {
      scan: async () => {
        throw new Error('scan found no title');
      },
      async transcode(_input, output, _preset, hooks) {
        seen.push(hooks.streamArgs);
        fs.writeFileSync(output, 'encoded');
      },
    };
    const { ctx, logs } = context();
    const result = await runTranscode(args, transcoder, ctx);
    assert.deepEqual(seen, [[]]);
    assert.ok(logs.some((l) => l === "the streams of title_t01.mkv could not be read (scan found no title): the preset's own audio and subtitle choice applies"), logs.join('\n'));
    assert.deepEqual(result.streams, [], 'an output that cannot be scanned is listed without streams');
  });
});

describe('runTranscode: track roles', () => {
  const audio = [
    { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
    { index: 2, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
  ];
  const subtitles = [
    { index: 1, language: 'deu', codec: 'vobsub', forced: false },
    { index: 2, language: 'deu', codec: 'vobsub', forced: false },
  ];
  const options = { keep_surround: true, stereo_companion: false, burn_forced_subtitles: false, original_language: null, keep_commentary: true };

  /** A transcoder with the roles above in its raw file, counting `events`; `failFlags` makes its flag step fail. */
  function rolesTranscoder(steps: string[], events: (number | null)[] | Error, failFlags?: string): Transcoder & { flagged: { file: string; flags: TrackFlagEdit[] }[]; seen: string[][] } {
    const flagged: { file: string; flags: TrackFlagEdit[] }[] = [];
    const seen: string[][] = [];
    return {
      flagged,
      seen,
      scan: async (input) => {
        steps.push(`scan ${path.basename(input)}`);
        return { seconds: 12, audio, subtitles };
      },
      subtitleEvents: async (input) => {
        steps.push(`count ${path.basename(input)}`);
        if (events instanceof Error) throw events;
        return events;
      },
      async transcode(input, output, _preset, hooks) {
        steps.push(`encode ${path.basename(input)}`);
        seen.push(hooks.streamArgs);
        fs.writeFileSync(output, 'encoded');
        hooks.onExit?.();
      },
      async setTrackFlags(file, flags) {
        steps.push(`flags ${path.basename(file)}`);
        if (failFlags) throw new Error(failFlags);
        flagged.push({ file, flags });
      },
    };
  }

  it('recognises the unflagged forced track, encodes, then sets the flags before the output is described', async () => {
    const args = setup(1, { audio_languages: ['deu', 'eng'], subtitle_languages: ['deu'], audio: options });
    const steps: string[] = [];
    const transcoder = rolesTranscoder(steps, [840, 21]);
    const { ctx, logs } = context();
    const result = await runTranscode(args, transcoder, ctx);
    assert.deepEqual(steps, ['scan title_t01.mkv', 'count title_t01.mkv', 'encode title_t01.mkv', 'flags Heat (1995).mkv', 'scan Heat (1995).mkv']);
    assert.deepEqual(transcoder.seen[0].slice(-3), ['1,2', '--subtitle-burned=none', '--subtitle-default=2']);
    // The flags are set in the private folder, before the proof and the move to the final name (private-encode.ts).
    const flagged = transcoder.flagged[0].file;
    assert.equal(path.basename(flagged), path.basename(result.files[0]));
    assert.notEqual(flagged, result.files[0]);
    assert.deepEqual(transcoder.flagged, [{ file: flagged, flags: [{ track: 'a2', flags: ['commentary'] }, { track: 's2', flags: ['forced'] }] }]);
    assert.ok(logs.includes('title_t01.mkv: subtitle stream 2 (deu) has 21 events against 840 of the fullest deu track: taken for the forced subtitles'), logs.join('\n'));
    assert.ok(logs.includes('Heat (1995).mkv: track flags set: a2 commentary, s2 forced'), logs.join('\n'));
  });

  it('fails the job with a clear reason when the flags cannot be set, and removes the output', async () => {
    const args = setup(1, { audio_languages: ['deu', 'eng'], subtitle_languages: ['deu'], audio: options });
    const transcoder = rolesTranscoder([], [840, 21], "mkvpropedit failed with exit code 2: The file 'x' is not a Matroska file or it could not be found.");
    const { ctx } = context();
    await assert.rejects(runTranscode(args, transcoder, ctx), (err: Error) => {
      assert.ok(err instanceof TaskFailure);
      assert.equal(err.message, "the track flags of Heat (1995).mkv (a2 commentary, s2 forced) could not be set: mkvpropedit failed with exit code 2: The file 'x' is not a Matroska file or it could not be found.");
      return true;
    });
    assert.equal(fs.existsSync(path.join(args.target_dir, 'Heat (1995)')), false, 'no half-flagged output is left');
    assert.ok(fs.existsSync(args.files[0]), 'the raw file stays for a retry');
  });

  it('goes on without the recognition when the events cannot be counted, and says so', async () => {
    const args = setup(1, { audio_languages: ['deu'], subtitle_languages: ['deu'], audio: { ...options, keep_commentary: false } });
    const steps: string[] = [];
    const transcoder = rolesTranscoder(steps, new Error('ffprobe could not read it'));
    const { ctx, logs } = context();
    await runTranscode(args, transcoder, ctx);
    assert.ok(logs.includes('title_t01.mkv: the subtitle events could not be counted (ffprobe could not read it): an unflagged forced track is not looked for'), logs.join('\n'));
    assert.ok(!steps.some((s) => s.startsWith('flags')), 'no role is kept: nothing to flag');
  });

  it('counts no events where no forced track can hide (one track per language)', async () => {
    const args = setup(1, { audio_languages: ['deu'], subtitle_languages: ['deu'], audio: { ...options, keep_commentary: false } });
    const steps: string[] = [];
    const transcoder = rolesTranscoder(steps, [1]);
    transcoder.scan = async () => ({ seconds: 12, audio, subtitles: subtitles.slice(0, 1) });
    const { ctx } = context();
    await runTranscode(args, transcoder, ctx);
    assert.ok(!steps.some((s) => s.startsWith('count')), steps.join(', '));
  });
});

describe('runTranscode: main feature, versions and extras of a movie', () => {
  it('names the longest title the movie, a title within 10 % a version and the rest extras in the extras folder', async () => {
    const args = setup(4, { extras_folder: 'Extras' });
    const lengths: Record<string, number> = { 'title_t01.mkv': 40, 'title_t02.mkv': 300, 'title_t03.mkv': 295, 'title_t04.mkv': 25 };
    const { ctx, logs } = context();
    const result = await runTranscode(args, fakeTranscoder(undefined, lengths), ctx);
    const dir = path.join(args.target_dir, 'Heat (1995)');
    assert.deepEqual(result.files, [
      path.join(dir, 'Extras', 'Heat (1995) - Extra 01.mkv'),
      path.join(dir, 'Heat (1995).mkv'),
      path.join(dir, 'Heat (1995) - Version 2.mkv'),
      path.join(dir, 'Extras', 'Heat (1995) - Extra 02.mkv'),
    ]);
    assert.equal(fs.readFileSync(path.join(dir, 'Heat (1995).mkv'), 'utf8'), 'encoded:raw 2');
    assert.ok(logs.some((l) => l.startsWith('main feature, versions and extras by length: title_t01.mkv (40 s) → Extras/Heat (1995) - Extra 01.mkv;')), logs.join('\n'));
  });

  it('puts Plex\'s extras into the folder the coordinator names', async () => {
    const args = setup(2, { extras_folder: 'Other' });
    const dir = path.join(args.target_dir, 'Heat (1995)');
    const result = await runTranscode(args, fakeTranscoder(undefined, { 'title_t01.mkv': 300, 'title_t02.mkv': 30 }), context().ctx);
    assert.deepEqual(result.files, [path.join(dir, 'Heat (1995).mkv'), path.join(dir, 'Other', 'Heat (1995) - Extra 01.mkv')]);
  });
});

/**
 * A transcoder whose outputs are proven: an encode writes "encoded:<input>"; the proof's facts say the
 * output is `short` (half the title) when the input contains "bad timestamps" (as a raw file whose
 * timestamps trip the encoder) and the preset is not the software fallback's; the remux writes
 * "remuxed:<input>" without the fault. `remux: false`: no remux on this host.
 */
function provingTranscoder(opts: { remux?: boolean; remuxFixes?: boolean } = {}) {
  const calls: { input: string; output: string; preset: string; args: string[] }[] = [];
  const remuxed: string[] = [];
  const transcoder: Transcoder = {
    async scan() {
      return { seconds: 6610, audio: [], subtitles: [] };
    },
    async transcode(input, output, preset, hooks) {
      await hooks.startWhen;
      calls.push({ input, output, preset, args: hooks.streamArgs });
      hooks.onSpawn(900 + calls.length);
      fs.writeFileSync(output, `encoded:${fs.readFileSync(input, 'utf8')}${hooks.streamArgs.includes('x265') ? ' in software' : ''}`);
    },
    async inspect(file) {
      const text = fs.readFileSync(file, 'utf8');
      const broken = text.includes('bad timestamps') && !text.includes('in software');
      return { seconds: broken ? 6610 - 38 * 60 : 6610, samples: [{ at: 2, frames: 50, errors: [] }] };
    },
  };
  if (opts.remux !== false) {
    transcoder.remux = async (input, output) => {
      remuxed.push(output);
      const text = fs.readFileSync(input, 'utf8');
      fs.writeFileSync(output, `remuxed:${opts.remuxFixes === false ? text : text.replace('bad timestamps', 'new timestamps')}`);
    };
  }
  return { transcoder, calls, remuxed };
}

describe('runTranscode: proven before deleted', () => {
  const broken = (args: TranscodeJob): void => fs.writeFileSync(args.files[0], 'raw with bad timestamps');

  it('fails the job with the proof\'s reason when no second attempt can help, removes the output and keeps the raw data', async () => {
    const args = setup(1);
    broken(args);
    const { transcoder, calls } = provingTranscoder({ remux: false });
    const { ctx, logs } = context();
    await assert.rejects(runTranscode(args, transcoder, ctx), (err: Error) => {
      assert.ok(err instanceof TaskFailure);
      assert.equal(err.message, 'title_t01.mkv: the output is 38 minutes shorter than the title (1:12:10 of 1:50:10); the raw data is kept');
      return true;
    });
    assert.equal(calls.length, 1, 'a software preset and no remux: no second attempt');
    assert.ok(logs.includes('Heat (1995).mkv: attempt 1 failed the proof: the output is 38 minutes shorter than the title (1:12:10 of 1:50:10)'), logs.join('\n'));
    assert.ok(fs.existsSync(args.files[0]), 'the raw file stays for a retry');
    assert.equal(fs.existsSync(path.join(args.target_dir, 'Heat (1995)')), false, 'no output and no private folder are left');
  });

  it('makes the output from the remuxed raw file when the first attempt fails the proof, and says which attempt made it', async () => {
    const args = setup(1);
    broken(args);
    const { transcoder, calls, remuxed } = provingTranscoder();
    const { ctx, logs } = context();
    const result = await runTranscode(args, transcoder, ctx);
    assert.deepEqual(calls.map((c) => path.basename(c.input)), ['title_t01.mkv', 'title_t01.mkv']);
    assert.equal(calls[1].input, remuxed[0]);
    assert.equal(path.dirname(remuxed[0]), path.join(args.raw_dir, '.ripwerk-remux'), 'the remux goes into the raw folder\'s work area');
    assert.equal(fs.readFileSync(result.files[0], 'utf8'), 'encoded:remuxed:raw with new timestamps');
    assert.ok(logs.includes('Heat (1995).mkv: attempt 2 (raw remuxed) made the output, and it passed the proof'), logs.join('\n'));
    assert.ok(logs.includes('Heat (1995).mkv: proven: 1:50:10 of 1:50:10, 0 audio and 0 subtitle track(s), 1 sample(s) decoded cleanly'), logs.join('\n'));
    assert.equal(result.raw_removed, true, 'proven: the raw data goes');
  });

  it('fails with the second attempt\'s reason when the remux does not help either, and leaves no remux behind', async () => {
    const args = setup(1, { keep_original: true });
    broken(args);
    const { transcoder, calls } = provingTranscoder({ remuxFixes: false });
    const { ctx } = context();
    await assert.rejects(runTranscode(args, transcoder, ctx), /^Error: title_t01\.mkv: the output is 38 minutes shorter than the title \(1:12:10 of 1:50:10\); the raw data is kept$/);
    assert.equal(calls.length, 2);
    assert.deepEqual(fs.readdirSync(args.raw_dir), ['title_t01.mkv']);
  });

  it('encodes a hardware preset\'s second attempt in software at the preset\'s quality', async () => {
    assert.deepEqual(softwareEncoderArgs('H.265 NVENC 1080p'), ['-e', 'x265', '--encoder-preset', 'medium']);
    assert.deepEqual(softwareEncoderArgs('H.264 QSV 1080p'), ['-e', 'x264', '--encoder-preset', 'medium']);
    assert.deepEqual(softwareEncoderArgs('AV1 QSV 2160p 4K'), ['-e', 'svt_av1', '--encoder-preset', 'medium']);
    assert.deepEqual(softwareEncoderArgs('H.265 VCN 2160p 4K'), ['-e', 'x265', '--encoder-preset', 'medium']);
    assert.equal(softwareEncoderArgs('H.265 MKV 1080p30'), null);
    assert.equal(softwareEncoderArgs('Fast 1080p30'), null);
    const args = setup(1, { preset: 'H.265 NVENC 1080p' });
    broken(args);
    const { transcoder, calls } = provingTranscoder({ remux: false });
    const { ctx, logs } = context();
    const result = await runTranscode(args, transcoder, ctx);
    assert.deepEqual(calls.map((c) => c.args), [[], ['-e', 'x265', '--encoder-preset', 'medium']]);
    assert.equal(fs.readFileSync(result.files[0], 'utf8'), 'encoded:raw with bad timestamps in software');
    assert.ok(logs.includes('Heat (1995).mkv: attempt 2 (software encoder x265) made the output, and it passed the proof'), logs.join('\n'));
  });

  it('proves the outputs of a resumed transcode before the raw data goes: a cut-off one fails it and the raw data stays', async () => {
    const args = setup(1);
    const dir = path.join(args.target_dir, 'Heat (1995)');
    fs.mkdirSync(dir, { recursive: true });
    const output = path.join(dir, 'Heat (1995).mkv');
    fs.writeFileSync(output, 'encoded:raw with bad timestamps');
    const { transcoder } = provingTranscoder();
    await assert.rejects(finishTranscode(args, { output_path: dir, files: [output], episodes_guessed: false }, transcoder, context().ctx, undefined, undefined, true), /the output is 38 minutes shorter than the title/);
    assert.ok(fs.existsSync(args.files[0]), 'the raw file stays for a retry');
    assert.equal(fs.existsSync(output), false, 'the cut-off output is removed');
    fs.writeFileSync(output, 'encoded:raw 1');
    const result = await finishTranscode(args, { output_path: dir, files: [output], episodes_guessed: false }, transcoder, context().ctx, undefined, undefined, true);
    assert.equal(result.raw_removed, true);
  });

  it('writes nothing outside when the output folder is swapped for a link between its check and the encode, and fails with the reason', async () => {
    const args = setup(1);
    const outside = fs.mkdtempSync(path.join(root, 'outside-'));
    const { transcoder, calls } = provingTranscoder();
    const { ctx } = context();
    const folder = path.join(args.target_dir, 'Heat (1995)');
    // The slot is taken right before the encode, after the folder was planned and checked.
    ctx.takeSlot = async () => {
      fs.renameSync(folder, `${folder}.moved`);
      fs.symlinkSync(outside, folder);
    };
    await assert.rejects(runTranscode(args, transcoder, ctx), /the folder .*Heat \(1995\) was swapped for a link leading elsewhere before the encode: refused, nothing was written there/);
    assert.equal(calls.length, 0, 'no encoder was started');
    assert.deepEqual(fs.readdirSync(outside), [], 'nothing was written outside');
    assert.ok(fs.existsSync(args.files[0]), 'the raw file stays');
  });

  it('writes nothing outside when the output folder is swapped for a link during the encode, and fails with the reason', async () => {
    const args = setup(1);
    const outside = fs.mkdtempSync(path.join(root, 'outside-'));
    const { transcoder } = provingTranscoder();
    const encode = transcoder.transcode.bind(transcoder);
    transcoder.transcode = async (input, output, preset, hooks) => {
      await encode(input, output, preset, hooks);
      // A share user swaps the checked folder for a link to elsewhere while the encoder writes.
      const folder = path.dirname(privateFolder(output));
      fs.renameSync(folder, `${folder}.moved`);
      fs.symlinkSync(outside, folder);
    };
    await assert.rejects(runTranscode(args, transcoder, context().ctx), /the folder .*Heat \(1995\) was swapped for a link leading elsewhere during the encode: refused, the output was not moved there/);
    assert.deepEqual(fs.readdirSync(outside), [], 'nothing was written outside');
    assert.deepEqual(fs.readdirSync(path.join(args.target_dir, 'Heat (1995).moved')), [], 'the private folder is gone');
    assert.ok(fs.existsSync(args.files[0]), 'the raw file stays');
  });
});
