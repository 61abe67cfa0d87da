import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { checkFreeSpace, chooseTitles, messageBudget, ownName, readErrorLog, RIP_MESSAGE_LIMIT, RIP_READ_ERROR_LIMIT, runRip, selectTitles, TaskFailure, type TaskContext } from '../../../../agent/tasks/rip-task.js';
import { parseMakemkvInfo } from '../../../../agent/tools/makemkv-parser.js';
import { sourceFields, type Ripper, type RipHooks } from '../../../../agent/tools/rippers.js';
import type { DiscSource } from '../../../../agent/disc/image-drive.js';
import { knownTitles, plannedTitles, type TitleChoice } from '../../../../coordinator/discs/title-plan.js';
import { discTitles } from '../../../../coordinator/metadata/thediscdb/title-matcher.js';
import { parseDisc, type TddbDisc } from '../../../../coordinator/metadata/thediscdb/types.js';
import type { PlannedTitle, RipJob, Track } from '../../../../shared/protocol.js';
import { fixtureJson, TDDB_FIXTURES } from '../../../fixtures/thediscdb-mirror.js';
import { obfuscatedDisc } from '../../../fixtures/obfuscated-bluray.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-rip-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const track = (number: number, seconds: number, size_bytes = 1000): Track => ({ number, seconds, size_bytes, chapters: 1 });

describe('selectTitles', () => {
  // Titles 2 and 4 are equally long, 4 is smaller: two cuts, not one title twice.
  const tracks = [track(1, 600), track(2, 5400), track(3, 120), track(4, 5400, 900)];

  it('takes the chosen titles in the chosen order', () => {
    assert.deepEqual(
      selectTitles(tracks, [3, 1], true).titles.map((t) => t.number),
      [3, 1],
    );
  });

  it('refuses a chosen title the disc does not have, naming it and the titles on the disc', () => {
    assert.throws(
      () => selectTitles(tracks, [2, 9, 11], false),
      (err: unknown) => err instanceof TaskFailure && /no title 9, 11/.test(err.message) && /1, 2, 3, 4/.test(err.message),
    );
  });

  it('takes the main feature for main feature only: the longest, of equally long ones the larger, then the first', () => {
    assert.deepEqual(
      selectTitles(tracks, [], true).titles.map((t) => t.number),
      [2],
    );
    const twins = [track(1, 600, 100), track(2, 5400, 900), track(3, 5400, 900)];
    assert.deepEqual(selectTitles(twins, [], true).titles.map((t) => t.number), [2], 'the first of two alike');
    assert.deepEqual(selectTitles(twins, [], true).main, 'main feature: title 2 (longest, largest)');
  });

  it('leaves a title of the same length and size as one taken: a duplicate', () => {
    const picked = selectTitles([track(1, 600), track(2, 5400, 900), track(3, 5400, 900)], [], false);
    assert.deepEqual(picked.titles.map((t) => t.number), [1, 2]);
    assert.deepEqual(picked.notes, ['title 3 of 1:30:00 left: duplicates of title 2 (same segments, or same length and size)']);
  });

  it('takes all titles otherwise', () => {
    assert.deepEqual(
      selectTitles(tracks, [], false).titles.map((t) => t.number),
      [1, 2, 3, 4],
    );
  });

  it('leaves titles shorter than minTitleSeconds out of an unattended rip, never out of a chosen one', () => {
    const picked = selectTitles(tracks, [], false, { minSeconds: 600, series: false });
    assert.deepEqual(picked.titles.map((t) => t.number), [1, 2, 4]);
    assert.deepEqual(picked.notes, ['title(s) 3 skipped: shorter than 600 s (minTitleSeconds)']);
    assert.deepEqual(selectTitles(tracks, [3], false, { minSeconds: 600, series: false }).titles.map((t) => t.number), [3]);
    const allShort = [track(1, 12), track(2, 6)];
    assert.deepEqual(selectTitles(allShort, [], false, { minSeconds: 120, series: false }).titles.map((t) => t.number), [1, 2], 'a disc without a long title keeps all');
  });

  it('skips the "play all" title of a series disc', () => {
    const disc = [track(1, 2640), track(2, 2650), track(3, 2630), track(4, 7935), track(5, 45)];
    const picked = selectTitles(disc, [], false, { minSeconds: 120, series: true });
    assert.deepEqual(picked.titles.map((t) => t.number), [1, 2, 3]);
    assert.deepEqual(picked.notes, ['title(s) 5 skipped: shorter than 120 s (minTitleSeconds)', 'title(s) 4 skipped: "play all" of other titles']);
    assert.deepEqual(selectTitles(disc, [], false, { minSeconds: 120, series: false }).titles.map((t) => t.number), [1, 2, 3, 4], 'a movie keeps it');
  });

  it('fails for a disc without titles', () => {
    assert.throws(() => selectTitles([], [], false), TaskFailure);
    assert.throws(() => selectTitles([], [1], false), /no titles/);
  });
});

describe('checkFreeSpace', () => {
  it('passes when the rip fits', async () => {
    await checkFreeSpace(root, 1);
    await checkFreeSpace(root, 0);
  });

  it('refuses a rip larger than the free space, with both sizes in GB', async () => {
    await assert.rejects(
      checkFreeSpace(root, 1e18),
      (err: unknown) => err instanceof TaskFailure && /not enough free space/.test(err.message) && /needs about 1000000000\.0 GB/.test(err.message),
    );
  });

  it('fails for a missing folder', async () => {
    await assert.rejects(checkFreeSpace(path.join(root, 'missing'), 1), { code: 'ENOENT' });
  });
});

interface FakeRipper extends Ripper {
  ripped: number[];
}

/** Writes one file per title into the raw dir, reporting 0, 50 and 100 %. */
function fakeRipper(tracks: Track[]): FakeRipper {
  const ripped: number[] = [];
  return {
    name: 'open-dvd',
    ripped,
    async scan() {
      return tracks;
    },
    async rip(_source: DiscSource, t: Track, rawDir: string, hooks: RipHooks) {
      ripped.push(t.number);
      hooks.onSpawn(1000 + t.number);
      hooks.onMessage(`ripping title ${t.number}`);
      const file = path.join(rawDir, `title_t${String(t.number).padStart(2, '0')}.mkv`);
      for (const pct of [0, 50, 100]) hooks.onProgress(pct);
      fs.writeFileSync(file, `title ${t.number}`);
      return [file];
    },
  };
}

function context() {
  const progress: number[] = [];
  const logs: string[] = [];
  const pids: number[] = [];
  const ctx: TaskContext = {
    signal: new AbortController().signal,
    progress: (pct) => progress.push(pct),
    progressEveryMs: 0,
    log: (_level, message) => logs.push(message),
    onSpawn: (pid) => pids.push(pid),
  };
  return { ctx, progress, logs, pids };
}

let n = 0;
function ripArgs(overrides: Partial<RipJob> = {}): RipJob {
  const base = path.join(root, `case-${++n}`);
  return {
    job_id: `job-${n}-0123456789`,
    drive: 'image0',
    titles: [],
    main_feature_only: false,
    raw_dir: path.join(base, 'raw', `job-${n}`),
    target_dir: path.join(base, 'media'),
    title: 'Heat',
    year: 1995,
    series: null,
    season: null,
    transcode: true,
    keep_original: false,
    auto_eject: false,
    ...overrides,
  };
}

const source: DiscSource = { kind: 'iso', path: '/images/heat.iso' };

describe('runRip', () => {
  it('shares progress among titles in proportion of their seconds', async () => {
    const ripper = fakeRipper([track(1, 100), track(2, 300)]);
    const { ctx, progress, pids } = context();
    const args = ripArgs();
    const result = await runRip(args, source, ripper, ctx);
    // title 1 is a quarter of the time: 0, 12.5, 25; title 2 the rest: 62.5, 100 (25 again is held back)
    assert.deepEqual(progress, [0, 12.5, 25, 62.5, 100]);
    assert.deepEqual(pids, [1001, 1002]);
    assert.deepEqual(result.files, [path.join(args.raw_dir, 'title_t01.mkv'), path.join(args.raw_dir, 'title_t02.mkv')]);
    assert.equal(result.output, undefined);
  });

  it('keeps the raw files for the transcode stage and creates no output folder', async () => {
    const ripper = fakeRipper([track(1, 100)]);
    const { ctx, logs } = context();
    const args = ripArgs({ transcode: true });
    const result = await runRip(args, source, ripper, ctx);
    assert.equal(fs.readFileSync(result.files[0], 'utf8'), 'title 1');
    assert.equal(fs.existsSync(args.target_dir), false);
    assert.ok(logs.some((l) => l.includes('ripping 1 title(s) (1) with open-dvd')));
    assert.ok(logs.includes('ripping title 1'), 'tool messages reach the job log');
  });

  it('rips only the chosen titles, or the longest for main feature only', async () => {
    const chosen = fakeRipper([track(1, 100), track(2, 3000), track(3, 200)]);
    await runRip(ripArgs({ titles: [3, 1] }), source, chosen, context().ctx);
    assert.deepEqual(chosen.ripped, [3, 1]);
    const main = fakeRipper([track(1, 100), track(2, 3000), track(3, 200)]);
    await runRip(ripArgs({ main_feature_only: true }), source, main, context().ctx);
    assert.deepEqual(main.ripped, [2]);
  });

  it('an obfuscated Blu-ray: rips the playlist in order and the featurettes, never the 120 decoys, and logs why', async () => {
    const disc = obfuscatedDisc();
    const scanned = parseMakemkvInfo(disc.capture.split('\n')).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: 1000, chapters: t.chapters, ...sourceFields(t), audio: t.audio }));
    const ripper = fakeRipper(scanned);
    const { ctx, logs } = context();
    const result = await runRip(ripArgs({ min_title_seconds: 120, max_similar_titles: 3 }), source, ripper, ctx);
    assert.deepEqual(ripper.ripped, [2, 3, 7]);
    assert.deepEqual(result.titles.map((t) => [t.number, t.main_feature ?? false]), [[2, false], [3, false], [7, true]], 'the transcode names title 7 the film');
    assert.ok(logs.includes('main feature: title 7 (segments in order, longest, largest)'), logs.join('\n'));
    assert.ok(logs.includes('120 titles of 1:52:10 left: segments out of order (playlist obfuscation); title 7 plays them in order'), logs.join('\n'));
    assert.ok(logs.includes('title(s) 0, 1 skipped: shorter than 120 s (minTitleSeconds)'));

    const only = fakeRipper(scanned);
    await runRip(ripArgs({ min_title_seconds: 120, main_feature_only: true }), source, only, context().ctx);
    assert.deepEqual(only.ripped, [7], 'main feature only: the one in order, not the first of the longest');
  });

  it('caps titles of one length at maxSimilarTitles and takes the one of TMDB\'s runtime as the main feature', async () => {
    const alike = [track(1, 7000, 3000), track(2, 7000, 3001), track(3, 7001, 3002), track(4, 7000, 3003), track(5, 6480, 2800)];
    const ripper = fakeRipper(alike);
    const { ctx, logs } = context();
    await runRip(ripArgs({ max_similar_titles: 2, runtime_minutes: 108 }), source, ripper, ctx);
    assert.deepEqual(ripper.ripped, [3, 4, 5]);
    assert.ok(logs.includes('main feature: title 5 (runtime like TMDB (108 min))'), logs.join('\n'));
    assert.ok(logs.includes('titles 2, 1 of 1:56:41 left: more than 2 titles of near-identical length (maxSimilarTitles); title 3 and the best others are taken'), logs.join('\n'));
  });

  it('leaves a series disc\'s episodes of one length alone', async () => {
    const episodes = [track(1, 1320, 5e8), track(2, 1320, 5e8), track(3, 1321, 5e8 + 1), track(4, 1320, 5e8 + 2)];
    const ripper = fakeRipper(episodes);
    const { ctx, logs } = context();
    await runRip(ripArgs({ series: 'Show', season: 1, max_similar_titles: 1 }), source, ripper, ctx);
    assert.deepEqual(ripper.ripped, [1, 2, 3, 4]);
    assert.ok(!logs.some((l) => l.startsWith('main feature')));
  });

  it('moves the files into Title (Year) and removes the raw dir when there is no transcode stage', async () => {
    const ripper = fakeRipper([track(1, 100), track(2, 300)]);
    const args = ripArgs({ transcode: false });
    const result = await runRip(args, source, ripper, context().ctx);
    const dir = path.join(args.target_dir, 'Heat (1995)');
    assert.deepEqual(result.output, {
      output_path: dir,
      files: [path.join(dir, 'Heat (1995) - t01.mkv'), path.join(dir, 'Heat (1995) - t02.mkv')],
    });
    assert.equal(fs.readFileSync(path.join(dir, 'Heat (1995) - t01.mkv'), 'utf8'), 'title 1');
    assert.equal(fs.readFileSync(path.join(dir, 'Heat (1995) - t02.mkv'), 'utf8'), 'title 2');
    assert.equal(fs.existsSync(args.raw_dir), false, 'the raw dir is removed');
  });

  it('names a single title like its folder', async () => {
    const args = ripArgs({ transcode: false, title: 'Alien: Covenant', year: 2017 });
    const result = await runRip(args, source, fakeRipper([track(5, 100)]), context().ctx);
    assert.deepEqual(result.output?.files, [path.join(args.target_dir, 'Alien - Covenant (2017)', 'Alien - Covenant (2017).mkv')]);
  });

  it('copies and keeps the raw dir with keep_original', async () => {
    const args = ripArgs({ transcode: false, keep_original: true });
    const result = await runRip(args, source, fakeRipper([track(1, 100)]), context().ctx);
    assert.equal(fs.readFileSync(path.join(args.raw_dir, 'title_t01.mkv'), 'utf8'), 'title 1');
    assert.equal(fs.readFileSync(result.output?.files[0] ?? '', 'utf8'), 'title 1');
  });

  it('leaves no empty placeholder in the output folder when a move fails', async () => {
    const ripper = fakeRipper([track(1, 100)]);
    const rip = ripper.rip.bind(ripper);
    ripper.rip = async (...a) => {
      const files = await rip(...a);
      fs.rmSync(files[0]); // the raw file vanishes before the move
      return files;
    };
    const args = ripArgs({ transcode: false });
    await assert.rejects(runRip(args, source, ripper, context().ctx), { code: 'ENOENT' });
    assert.deepEqual(fs.readdirSync(path.join(args.target_dir, 'Heat (1995)')), []);
  });

  it('refuses a rip that does not fit before ripping anything', async () => {
    const ripper = fakeRipper([track(1, 100, 1e18)]);
    await assert.rejects(runRip(ripArgs(), source, ripper, context().ctx), TaskFailure);
    assert.deepEqual(ripper.ripped, []);
  });

  it('does not overwrite the files of an earlier disc of the same season', async () => {
    const first = ripArgs({ transcode: false, series: 'Show', season: 1, title: 'Disc 1' });
    const r1 = await runRip(first, source, fakeRipper([track(1, 100)]), context().ctx);
    const seasonDir = path.join(first.target_dir, 'Show', 'Season 01');
    assert.deepEqual(r1.output?.files, [path.join(seasonDir, 'Show - S01 - t01.mkv')]);

    const second = ripArgs({ transcode: false, series: 'Show', season: 1, title: 'Disc 2', target_dir: first.target_dir });
    const ripper2 = fakeRipper([track(7, 100)]);
    const r2 = await runRip(second, source, ripper2, context().ctx);
    assert.equal(r2.output?.output_path, seasonDir);
    assert.equal(r2.output?.files.length, 1);
    assert.notEqual(r2.output?.files[0], r1.output?.files[0]);
    assert.equal(fs.readFileSync(path.join(seasonDir, 'Show - S01 - t01.mkv'), 'utf8'), 'title 1', 'the first disc survives');
    assert.equal(fs.readFileSync(r2.output?.files[0] ?? '', 'utf8'), 'title 7');
  });
});

describe('ripper messages of one rip', () => {
  it('passes each message once and at most 40 over all ripper calls', () => {
    const written: string[] = [];
    const pass = messageBudget(RIP_MESSAGE_LIMIT, (t) => written.push(t));
    pass('Opening disc');
    pass('Opening disc');
    for (let i = 0; i < 60; i++) pass(`message ${i}`);
    assert.equal(written.length, 40);
    assert.deepEqual(written.slice(0, 2), ['Opening disc', 'message 0']);
    assert.equal(written.at(-1), 'message 38');
  });
});

describe('read errors of one rip', () => {
  it('lists each read error once as a warning, at most 20, and counts them all', () => {
    assert.equal(RIP_READ_ERROR_LIMIT, 20);
    const written: string[] = [];
    const log = readErrorLog(RIP_READ_ERROR_LIMIT, (t) => written.push(t));
    assert.equal(log.summary(), null, 'no read error: nothing to say');
    log.add('read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090');
    log.add('read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090');
    for (let i = 0; i < 30; i++) log.add(`read error in /VIDEO_TS/VTS_01_2.VOB at ${i}.0 MiB (sector ${i * 512} of the file): Scsi error - MEDIUM ERROR:1090`);
    assert.equal(written.length, 20);
    assert.equal(log.summary(), 'the ripper reported 32 read error(s) (12 not listed): the raw files may have gaps where the disc could not be read');
  });

  it('logs a ripper\'s read errors as warnings apart from its other messages, with the count at the end, also when the rip fails', async () => {
    const ripper = fakeRipper([track(1, 100)]);
    const rip = ripper.rip.bind(ripper);
    ripper.rip = async (source, t, rawDir, hooks) => {
      hooks.onMessage('read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090');
      return rip(source, t, rawDir, hooks);
    };
    const warnings: string[] = [];
    const { ctx, logs } = context();
    const log = ctx.log;
    ctx.log = (level, message) => {
      if (level === 'warn') warnings.push(message);
      log(level, message);
    };
    await runRip(ripArgs(), source, ripper, ctx);
    assert.deepEqual(warnings, [
      'read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090',
      'the ripper reported 1 read error(s): the raw files may have gaps where the disc could not be read',
    ]);
    assert.ok(logs.includes('ripping title 1'), 'the other messages still go through the message budget');

    const failing = fakeRipper([track(1, 100)]);
    failing.rip = async (_source, _t, _rawDir, hooks) => {
      hooks.onMessage('read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090');
      throw new Error('MakeMKV failed to save the title');
    };
    const second = context();
    await assert.rejects(runRip(ripArgs(), source, failing, second.ctx), /failed to save/);
    assert.equal(second.logs.at(-1), 'the ripper reported 1 read error(s): the raw files may have gaps where the disc could not be read');
  });

  it('sends the read error count with the closing line (the job keeps it) and asks the ripper to read carefully only on a careful rip', async () => {
    const seen: (boolean | undefined)[] = [];
    const ripper = fakeRipper([track(1, 100)]);
    const rip = ripper.rip.bind(ripper);
    ripper.rip = async (src, t, rawDir, hooks) => {
      seen.push(hooks.careful);
      hooks.onMessage('read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090');
      hooks.onMessage('read error in /VIDEO_TS/VTS_01_1.VOB at 1128.8 MiB (sector 577920 of the file): Scsi error - MEDIUM ERROR:1090');
      return rip(src, t, rawDir, hooks);
    };
    const fields: unknown[] = [];
    const { ctx } = context();
    const log = ctx.log;
    ctx.log = (level, message, extra) => {
      if (extra) fields.push([message, extra]);
      log(level, message);
    };
    await runRip(ripArgs(), source, ripper, ctx);
    assert.deepEqual(fields, [['the ripper reported 2 read error(s) (1 not listed): the raw files may have gaps where the disc could not be read', { read_errors: 2 }]]);
    await runRip({ ...ripArgs(), careful: true }, source, ripper, context().ctx);
    assert.deepEqual(seen, [undefined, true]);
  });
});

/** The scan the agent makes of a TheDiscDB capture (its HSH: lines are TheDiscDB's, not MakeMKV's). */
function scanOf(capture: string): Track[] {
  const lines = fs.readFileSync(path.join(TDDB_FIXTURES, capture), 'utf8').split(/\r?\n/).filter((l) => !l.startsWith('HSH:'));
  return parseMakemkvInfo(lines).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters, ...sourceFields(t) }));
}

/** The plan the coordinator sends for a disc with nothing in the library yet. */
function planOf(fixture: string, choice: TitleChoice): PlannedTitle[] {
  return plannedTitles(knownTitles(discTitles(parseDisc(fixtureJson(fixture)) as TddbDisc), [], choice));
}

const odysseyScan = scanOf('2001-2011-dvd-disc01.txt');
const odysseyPlan = planOf('2001-2011-dvd-disc01.json', { kinds: ['main_feature', 'extras'], mainFeatureOnly: false, minSeconds: 120 });
const officeScan = scanOf('the-office-s4d1-sample-disc-log.txt');
const officePlan = planOf('the-office-2021-season-4-blu-ray-disc01.json', { kinds: ['episodes'], mainFeatureOnly: false, minSeconds: 120 });

describe('chooseTitles: a recognised disc\'s plan, chosen titles, or the usual rules', () => {
  const base = { titles: [] as number[], main_feature_only: false, min_title_seconds: 120, series: null };

  it('takes the titles the plan takes, found in the scan by their evidence, with the role of each paired title', () => {
    const r = chooseTitles(odysseyScan, { ...base, disc_titles: odysseyPlan });
    assert.deepEqual(r.titles.map((t) => t.number), [0, 7], 'the 111 s trailer, though shorter than min_title_seconds');
    assert.equal(r.roles.size, 8);
    assert.deepEqual(r.roles.get(7), { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null });
    assert.match(r.notes[0], /^titles by TheDiscDB: 0 \(01\) = main movie/);
  });

  it('takes chosen titles as they are, and still knows their roles', () => {
    const r = chooseTitles(odysseyScan, { ...base, titles: [5, 0], disc_titles: odysseyPlan });
    assert.deepEqual(r.titles.map((t) => t.number), [5, 0]);
    assert.equal(r.roles.get(5)?.role, 'extra');
    assert.equal(r.roles.get(0)?.role, 'main_movie');
  });

  it('takes The Office\'s episodes only, where the usual rules would take every title of 120 s and more', () => {
    const r = chooseTitles(officeScan, { ...base, series: 'The Office', disc_titles: officePlan });
    assert.deepEqual(r.titles.map((t) => t.source_file), ['00003.mpls', '00002.mpls', '00004.mpls']);
    const usual = chooseTitles(officeScan, { ...base, series: 'The Office' });
    assert.deepEqual(usual.titles.map((t) => t.number), [0, 1, 3, 4, 8, 9]);
    assert.equal(usual.roles.size, 0, 'no plan, no roles');
  });

  it('falls back to the usual rules with a note when none of the plan\'s titles is in the scan', () => {
    const other = officeScan.map((t) => ({ ...t }));
    const r = chooseTitles(other, { ...base, disc_titles: odysseyPlan });
    assert.deepEqual(r.titles.map((t) => t.number), [0, 1, 3, 4, 8, 9]);
    assert.equal(r.roles.size, 0);
    assert.ok(r.notes.includes('none of the titles TheDiscDB names for this rip is in the scan: the usual rules chose'), r.notes.join('\n'));
    assert.ok(r.notes.some((n) => n.startsWith('TheDiscDB title(s) not found in this scan: 01')));
  });

  it('ignores an empty plan', () => {
    const r = chooseTitles(odysseyScan, { ...base, disc_titles: [] });
    assert.deepEqual(r.titles.map((t) => t.number), [0]);
    assert.deepEqual(r.notes, ['title(s) 1, 2, 3, 4, 5, 6, 7 skipped: shorter than 120 s (minTitleSeconds)']);
  });
});

describe('ownName: a ripped file under a name of its own title', () => {
  it('adds _tNN to a name MakeMKV gives every title of a disc, and keeps one that ends so already', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'own-'));
    const same = path.join(dir, '2001 A SPACE ODYSSEY.mkv');
    fs.writeFileSync(same, 'main');
    assert.equal(await ownName(same, 0), path.join(dir, '2001 A SPACE ODYSSEY_t00.mkv'));
    assert.equal(fs.existsSync(same), false);
    fs.writeFileSync(same, 'trailer');
    assert.equal(await ownName(same, 7), path.join(dir, '2001 A SPACE ODYSSEY_t07.mkv'));
    assert.equal(fs.readFileSync(path.join(dir, '2001 A SPACE ODYSSEY_t00.mkv'), 'utf8'), 'main', 'the next title did not overwrite the first');
    assert.equal(fs.readFileSync(path.join(dir, '2001 A SPACE ODYSSEY_t07.mkv'), 'utf8'), 'trailer');

    const mine = path.join(dir, 'title_t12.mkv');
    fs.writeFileSync(mine, 'x');
    assert.equal(await ownName(mine, 12), mine);
    assert.equal(await ownName(mine, 112), path.join(dir, 'title_t12_t112.mkv'), 'only the own number counts');
  });
});

describe('runRip of a recognised disc', () => {
  /** MakeMKV on the 2001 DVD: every title's file is named by TINFO 27, the same for all. */
  function sameNameRipper(tracks: Track[]): FakeRipper {
    const ripped: number[] = [];
    return {
      name: 'makemkv',
      ripped,
      async scan() {
        return tracks;
      },
      async rip(_source: DiscSource, t: Track, rawDir: string, hooks: RipHooks) {
        ripped.push(t.number);
        hooks.onProgress(100);
        const file = path.join(rawDir, '2001 A SPACE ODYSSEY.mkv');
        fs.writeFileSync(file, `title ${t.number}`);
        return [file];
      },
    };
  }
  const disc = { type: 'dvd' as const, size_bytes: 1 };

  it('rips the plan\'s titles into files of their own and reports each with its source and role', async () => {
    const ripper = sameNameRipper(odysseyScan);
    const args = ripArgs({ title: '2001: A Space Odyssey', year: 1968, min_title_seconds: 120, disc_titles: odysseyPlan });
    const result = await runRip(args, source, ripper, context().ctx, disc);
    assert.deepEqual(ripper.ripped, [0, 7]);
    assert.deepEqual(result.files, [path.join(args.raw_dir, '2001 A SPACE ODYSSEY_t00.mkv'), path.join(args.raw_dir, '2001 A SPACE ODYSSEY_t07.mkv')]);
    assert.deepEqual(result.files.map((f) => fs.readFileSync(f, 'utf8')), ['title 0', 'title 7']);
    assert.deepEqual(result.titles, [
      { number: 0, file: result.files[0], source_file: '01', segment_map: '1-19,20-35', seconds: 8904, size_bytes: 6858530816, role: { role: 'main_movie', name: '2001: A Space Odyssey' } },
      { number: 7, file: result.files[1], source_file: '08', segment_map: '1', seconds: 111, size_bytes: 73377792, role: odysseyPlan[7].role },
    ]);
  });

  it('names the files by role when the rip is the last stage: the movie, the trailer in Trailers', async () => {
    const args = ripArgs({ transcode: false, title: '2001: A Space Odyssey', year: 1968, min_title_seconds: 120, disc_titles: odysseyPlan, extras_folder: 'Extras', extras_by_kind: true });
    const result = await runRip(args, source, sameNameRipper(odysseyScan), context().ctx, disc);
    const dir = path.join(args.target_dir, '2001 - A Space Odyssey (1968)');
    assert.deepEqual(result.output, { output_path: dir, files: [path.join(dir, '2001 - A Space Odyssey (1968).mkv'), path.join(dir, 'Trailers', 'Theatrical Trailer.mkv')] });
    assert.equal(fs.readFileSync(path.join(dir, 'Trailers', 'Theatrical Trailer.mkv'), 'utf8'), 'title 7');
    assert.deepEqual(result.titles.map((t) => t.role?.role), ['main_movie', 'extra']);
  });

  it('names a chosen title the plan does not know in the extras folder, numbered (Kodi: one extras folder)', async () => {
    const foreign: Track = { number: 9, seconds: 600, size_bytes: 1, chapters: 1, source_file: '10' };
    const args = ripArgs({ transcode: false, title: '2001: A Space Odyssey', year: 1968, titles: [0, 7, 9], disc_titles: odysseyPlan, extras_folder: 'Extras', extras_by_kind: false });
    const result = await runRip(args, source, sameNameRipper([...odysseyScan, foreign]), context().ctx, disc);
    const dir = path.join(args.target_dir, '2001 - A Space Odyssey (1968)');
    assert.deepEqual(result.output?.files, [
      path.join(dir, '2001 - A Space Odyssey (1968).mkv'),
      path.join(dir, 'Extras', 'Theatrical Trailer.mkv'),
      path.join(dir, 'Extras', '2001 - A Space Odyssey (1968) - t03.mkv'),
    ]);
    assert.equal(result.titles[2].role, null);
  });

  it('names The Office\'s episodes SxxEyy-Ezz in the season folder', async () => {
    const ripper = fakeRipper(officeScan);
    const args = ripArgs({ transcode: false, title: 'The Office', year: null, series: 'The Office', season: 4, disc_titles: officePlan });
    const result = await runRip(args, source, ripper, context().ctx, { type: 'bluray', size_bytes: 1 });
    const dir = path.join(args.target_dir, 'The Office', 'Season 04');
    assert.deepEqual(result.output?.files, [
      path.join(dir, 'The Office - S04E03-E04.mkv'),
      path.join(dir, 'The Office - S04E05-E06.mkv'),
      path.join(dir, 'The Office - S04E01-E02.mkv'),
    ]);
    assert.equal(fs.readFileSync(path.join(dir, 'The Office - S04E01-E02.mkv'), 'utf8'), 'title 3');
  });
});
