/**
 * A disc TheDiscDB recognises, through the whole pipeline: the real coordinator and agent, the
 * MakeMKV stand-in replaying TheDiscDB's own MakeMKV captures of the discs, TheDiscDB's GraphQL API
 * (loopback stand-in in the real answer shape) and its data repository as an offline copy.
 *
 * The discs are folders whose files have the sizes the captures' HSH: lines list (sparse files, no
 * disk space): so the agent computes the very ContentHash TheDiscDB keeps for the 2001 DVD.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Device, JobDetail, ScannedDiscTrack } from '../../shared/api-types.js';
import { obfuscatedDisc, streamFiles } from '../fixtures/obfuscated-bluray.js';
import { contentHashOf } from '../../agent/disc/disc-ids.js';
import { fixtureItems, startTheDiscDbServer, type TheDiscDbServer } from '../fixtures/thediscdb-server.js';
import { fixtureJson, ODYSSEY_HASH, TDDB_FIXTURES } from '../fixtures/thediscdb-mirror.js';
import { api, fileTree as tree, dvdImage, insertDisc, smallMkv, startAgent, startCoordinator, stopAll, tempDir, waitFor, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';

/** The files a capture's HSH: lines list: name and size. */
function hshFiles(capture: string): { name: string; size: number }[] {
  return fs
    .readFileSync(path.join(TDDB_FIXTURES, capture), 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.startsWith('HSH:'))
    .map((l) => {
      const parts = l.split(',');
      return { name: parts[1], size: Number(parts[parts.length - 1]) };
    });
}

/**
 * A disc folder (VIDEO_TS or BDMV/STREAM) of sparse files, written under a hidden name and renamed
 * into the drive. A file's `head` is written at its start (two discs of equal sizes, other content).
 */
function insertDiscFolder(driveDir: string, label: string, layout: 'dvd' | 'bluray', files: { name: string; size: number; head?: string }[]): void {
  const hidden = path.join(driveDir, `.${label}`);
  const dir = layout === 'dvd' ? path.join(hidden, 'VIDEO_TS') : path.join(hidden, 'BDMV', 'STREAM');
  fs.mkdirSync(dir, { recursive: true });
  if (layout === 'bluray') fs.writeFileSync(path.join(hidden, 'BDMV', 'index.bdmv'), Buffer.concat([Buffer.from('INDX0200'), Buffer.alloc(32)]));
  for (const f of files) {
    fs.writeFileSync(path.join(dir, f.name), f.head ?? '');
    fs.truncateSync(path.join(dir, f.name), f.size);
  }
  fs.renameSync(hidden, path.join(driveDir, label));
}

/**
 * The Office's disc has no "play all" playlist; this test adds one in the shape TheDiscDB keeps such
 * titles (type Other, the episode range with an en dash, the episodes' clips in order: compare the
 * play-all of A Sign of Affection in test/fixtures/thediscdb/), to the capture and to the entry alike.
 */
const PLAY_ALL_ENTRY = { Index: 10, SourceFile: '00800.mpls', SegmentMap: '9,7,5', Duration: '2:06:05', Size: 31050498048, Item: { Title: 'Play All', Type: 'Other', Season: '4', Episode: '1–6' } };

/** The capture with title 10: title 3's lines with the play-all playlist's source, clips, length and size. */
function withPlayAll(capture: string): string {
  const lines = capture.split(/\r?\n/);
  const extra = lines
    .filter((l) => /^(TINFO|SINFO):3,/.test(l))
    .map((l) => l.replace(/^(TINFO|SINFO):3,/, '$1:10,'))
    .map((l) => l.replace(/^TINFO:10,9,0,".*"$/, 'TINFO:10,9,0,"2:06:05"').replace(/^TINFO:10,11,0,".*"$/, 'TINFO:10,11,0,"31050498048"'))
    .map((l) => l.replace(/^TINFO:10,16,0,".*"$/, 'TINFO:10,16,0,"00800.mpls"').replace(/^TINFO:10,25,0,".*"$/, 'TINFO:10,25,0,"3"').replace(/^TINFO:10,26,0,".*"$/, 'TINFO:10,26,0,"9,7,5"'));
  const hsh = lines.findIndex((l) => l.startsWith('HSH:'));
  const at = hsh < 0 ? lines.length : hsh;
  return [...lines.slice(0, at).map((l) => (l.startsWith('TCOUNT:') ? 'TCOUNT:11' : l)), ...extra, ...lines.slice(at)].join('\n');
}


describe('TheDiscDB decides the rip: exact titles, roles, extras folders, only what is missing', () => {
  let w: World;
  let c: CoordinatorHandle;
  let agent: AgentHandle;
  let tddb: TheDiscDbServer;
  let device: string;
  /** The Office's disc, scaled down a thousandfold: its hash is the one the copy below carries. */
  const officeFiles = hshFiles('the-office-s4d1-sample-disc-log.txt').map((f) => ({ ...f, size: Math.ceil(f.size / 1000) }));
  const officeHash = contentHashOf(officeFiles) as string;

  const disc = async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((d) => d.name === device)?.disc ?? null;
  const logOf = async (id: string) => (await api<JobDetail>(c.url, 'GET', `/jobs/${id}/detail`)).body.logs.map((l) => l.message);
  /** The job the automatic rip made for the disc now in the drive. */
  const autoJob = async (before: Set<string>) =>
    waitFor('the automatic rip', async () => (await api<Job[]>(c.url, 'GET', '/jobs')).body.find((j) => !before.has(j.id)), 30_000);
  const jobIds = async () => new Set((await api<Job[]>(c.url, 'GET', '/jobs')).body.map((j) => j.id));
  /** 121 playlists of 1:52:10 with the film's clips, one of them (title 7) in order. */
  const decoyDisc = obfuscatedDisc();

  before(async () => {
    w = world();
    // The API knows the 2001 DVD (its real entry); The Office is found in the offline copy only.
    tddb = await startTheDiscDbServer(fixtureItems().slice(0, 1));
    const mirror = tempDir('ripwerk-tddb-copy-');
    const office = fixtureJson('the-office-2021-season-4-blu-ray-disc01.json');
    const officeDisc = { ...office, ContentHash: officeHash, Titles: [...(office.Titles as object[]), PLAY_ALL_ENTRY] };
    const series = path.join(mirror, 'data', 'series', 'The Office (2005)');
    fs.mkdirSync(path.join(series, '2021-season-4-blu-ray'), { recursive: true });
    fs.copyFileSync(path.join(TDDB_FIXTURES, 'the-office-metadata.json'), path.join(series, 'metadata.json'));
    fs.writeFileSync(path.join(series, '2021-season-4-blu-ray', 'release.json'), JSON.stringify({ Slug: '2021-season-4-blu-ray', Title: 'Season 4 Blu-ray', Year: 2021 }));
    fs.writeFileSync(path.join(series, '2021-season-4-blu-ray', 'disc01.json'), JSON.stringify(officeDisc));
    // The MakeMKV stand-in replays each disc's real capture, chosen by the disc's label.
    const captures = tempDir('ripwerk-captures-');
    fs.copyFileSync(path.join(TDDB_FIXTURES, '2001-2011-dvd-disc01.txt'), path.join(captures, 'ODYSSEY.txt'));
    fs.writeFileSync(path.join(captures, 'THE_OFFICE_S4D1.txt'), withPlayAll(fs.readFileSync(path.join(TDDB_FIXTURES, 'the-office-s4d1-sample-disc-log.txt'), 'utf8')));
    // A Blu-ray TheDiscDB does not know, with playlist obfuscation (generated in the shape of real captures).
    fs.writeFileSync(path.join(captures, `${decoyDisc.label}.txt`), decoyDisc.capture);

    c = await startCoordinator(w, { THEDISCDB_BASE_URL: tddb.url });
    agent = await startAgent(w, c.mqttUrl, 'tddb', {
      makemkv: true,
      extra: { FAKE_MAKEMKV_CAPTURE: captures, FAKE_MAKEMKV_SOURCE_MKV: smallMkv(3), FAKE_MAKEMKV_SECONDS: '0' },
    });
    device = `${agent.name}-drive-${agent.name}`;
    const r = await api(c.url, 'PUT', '/settings', {
      autoRipStart: true,
      autoEject: false,
      transcodePreset: 'Very Fast 480p30',
      audioLanguages: ['eng'],
      subtitleLanguages: [],
      ripTitleKinds: ['main_feature'],
      thediscdbMirror: mirror,
    });
    assert.equal(r.status, 200, r.text);
    await waitFor('the offline copy indexed', async () => {
      const status = await api<{ sources: { source: string; message: string }[] }>(c.url, 'GET', '/metadata/status');
      return status.body.sources.find((s) => s.source === 'thediscdb' && / 1 discs/.test(s.message));
    }, 30_000);
  });
  after(async () => {
    await stopAll();
    await tddb?.close();
  });

  it('refuses a setting that would never rip a recognised disc', async () => {
    const r = await api(c.url, 'PUT', '/settings', { ripTitleKinds: [] });
    assert.equal(r.status, 400);
    assert.match(r.text, /ripTitleKinds.*at least one/);
    const bad = await api(c.url, 'PUT', '/settings', { ripTitleKinds: ['main_feature', 'bonus'] });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /"bonus" is no title kind/);
  });

  it('the 2001 DVD: recognised by its content hash, only the main movie wanted, named from TheDiscDB', async () => {
    const files = hshFiles('2001-2011-dvd-disc01.txt');
    assert.equal(contentHashOf(files), ODYSSEY_HASH, 'the folder has the content hash TheDiscDB keeps');
    const before = await jobIds();
    insertDiscFolder(agent.driveDir, 'ODYSSEY', 'dvd', files);
    const job = await autoJob(before);
    const done = await waitForStatus(c.url, job.id, ['completed'], 120_000);
    const folder = path.join(w.media, 'Filme', '2001 - A Space Odyssey (1968)');
    assert.equal(done.output_path, folder);
    assert.deepEqual(tree(folder), ['2001 - A Space Odyssey (1968).mkv']);
    assert.equal(done.meta?.tmdb_id, 62);
    assert.equal(done.meta?.metadata_source, 'thediscdb');
    const log = await logOf(job.id);
    assert.ok(log.some((m) => m.startsWith('TheDiscDB knows 8 title(s) of this disc; the rip takes 1 title(s): main movie "2001: A Space Odyssey"')), log.join('\n'));
    assert.ok(log.some((m) => /^titles by TheDiscDB: 0 \(01\) = main movie .*\[source\+segments\+duration\+size\]/.test(m)), log.join('\n'));

    const d = await disc();
    assert.deepEqual(d?.recognised, { source: 'thediscdb', from: 'api', matched_by: 'content_hash', release: '2011-dvd', disc_number: 1 });
    assert.equal(d?.metadata_source, 'thediscdb');
    assert.deepEqual(d?.library, { main_feature: { total: 1, in_library: 1 }, episodes: { total: 0, in_library: 0 }, extras: { total: 1, in_library: 0 } });
    assert.equal(d?.already_ripped, true, 'everything of the kinds wanted is there');
    assert.deepEqual(
      d?.titles.map((t) => [t.source_file, t.role.role, t.in_library, t.wanted]),
      [['01', 'main_movie', true, false], ...['02', '03', '04', '05', '06', '07'].map((s) => [s, 'extra', false, false]), ['08', 'extra', false, false]],
    );
  });

  it('extras wanted too: the same disc shows what is missing, and a reinsert rips only the trailer into Trailers', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { ripTitleKinds: ['main_feature', 'episodes', 'extras'] })).status, 200);
    const d = await disc();
    assert.equal(d?.already_ripped, false, 'the trailer is missing');
    assert.deepEqual(d?.titles.filter((t) => t.wanted).map((t) => t.source_file), ['08'], 'the logos and warnings (Other, under minTitleSeconds) are no wanted extras');

    // The dialog's view of the same disc: the title scan carries each title's role and state.
    assert.equal((await api(c.url, 'POST', `/devices/${device}/scan-tracks`)).status, 202);
    const scan = await waitFor('the title scan', async () => {
      const r = await api<{ scanning: boolean; tracks: { number: number; role?: { role: string } | null; in_library?: boolean; wanted?: boolean }[] }>(c.url, 'GET', `/devices/${device}/tracks`);
      return !r.body.scanning && r.body.tracks.length > 0 ? r.body : undefined;
    }, 30_000);
    assert.deepEqual(
      scan.tracks.filter((t) => t.role?.role === 'main_movie' || t.wanted).map((t) => [t.number, t.role?.role, t.in_library, t.wanted]),
      [
        [0, 'main_movie', true, false],
        [7, 'extra', false, true],
      ],
    );

    assert.equal((await api(c.url, 'POST', `/devices/${device}/eject`)).status, 200);
    await waitFor('the drive empty', async () => !(await disc()));
    const before = await jobIds();
    insertDiscFolder(agent.driveDir, 'ODYSSEY', 'dvd', hshFiles('2001-2011-dvd-disc01.txt'));
    const job = await autoJob(before);
    const done = await waitForStatus(c.url, job.id, ['completed'], 120_000);
    const folder = path.join(w.media, 'Filme', '2001 - A Space Odyssey (1968)');
    assert.equal(done.output_path, folder, 'the missing title joins the movie folder');
    assert.deepEqual(tree(folder), ['2001 - A Space Odyssey (1968).mkv', 'Trailers/Theatrical Trailer.mkv']);
    const probe = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path.join(folder, 'Trailers/Theatrical Trailer.mkv')]).toString();
    assert.ok(Number(probe) > 2, `a real encoded file (${probe.trim()} s)`);
    const after = await disc();
    assert.equal(after?.already_ripped, true);
    assert.deepEqual(after?.library?.extras, { total: 1, in_library: 1 });

    // The household names it in German: the disc keeps the titles TheDiscDB knows of it.
    const corrected = await api(c.url, 'POST', '/metadata/override', { device, source: 'manual', title: '2001: Odyssee im Weltraum', year: 1968 });
    assert.equal(corrected.status, 200, corrected.text);
    const renamed = await disc();
    assert.deepEqual([renamed?.title, renamed?.metadata_source, renamed?.recognised?.from, renamed?.titles.length, renamed?.already_ripped], ['2001: Odyssee im Weltraum', 'override', 'api', 8, true]);
  });

  it('The Office S4 disc 1 from the offline copy: episodes named exactly, deleted scenes and extras in their folders, play-all and unknown titles left', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { transcodeEnabled: false })).status, 200);
    assert.equal((await api(c.url, 'POST', `/devices/${device}/eject`)).status, 200);
    await waitFor('the drive empty', async () => !(await disc()));
    const before = await jobIds();
    insertDiscFolder(agent.driveDir, 'THE_OFFICE_S4D1', 'bluray', officeFiles);
    const job = await autoJob(before);
    const done = await waitForStatus(c.url, job.id, ['completed'], 120_000);
    const season = path.join(w.media, 'Serien', 'The Office', 'Season 04');
    assert.equal(done.output_path, season);
    assert.deepEqual(tree(season), [
      'Deleted Scenes/Dunder Mifflin Infinity Deleted Scenes.mkv',
      'Deleted Scenes/Fun Run Deleted Scenes.mkv',
      'Deleted Scenes/Launch Party Deleted Scenes.mkv',
      'Other/Rabies - The More You Know.mkv',
      'The Office - S04E01-E02.mkv',
      'The Office - S04E03-E04.mkv',
      'The Office - S04E05-E06.mkv',
    ]);
    // TheDiscDB names the disc's release and place: it starts a box-set session, which ejects the disc for the next one.
    await waitFor('the disc ejected by its session', async () => !(await disc()));
    const sessions = (await api<{ series: string; season: number; origin: string; release: string; done: number[]; next_disc: number | null }[]>(c.url, 'GET', '/sessions')).body;
    const office = sessions.find((x) => x.series === 'The Office');
    assert.deepEqual([office?.season, office?.origin, office?.done, office?.next_disc], [4, 'thediscdb', [1], 2], JSON.stringify(sessions));
    assert.equal((await api(c.url, 'POST', `/sessions/${(office as unknown as { id: string }).id}/end`)).status, 200);
    insertDiscFolder(agent.driveDir, 'THE_OFFICE_S4D1', 'bluray', officeFiles);
    const d = await waitFor('the disc back in', disc);
    assert.deepEqual([d?.recognised?.from, d?.kind, d?.season, d?.already_ripped], ['mirror', 'series', 4, true]);
    assert.deepEqual(d?.library, { main_feature: { total: 0, in_library: 0 }, episodes: { total: 3, in_library: 3 }, extras: { total: 4, in_library: 4 } });
    assert.deepEqual(
      d?.titles.filter((t) => t.role.role === 'play_all' || t.role.role === 'unidentified').map((t) => [t.source_file, t.role.role, t.wanted]),
      [
        ['00000.mpls(1)', 'unidentified', false],
        ['00003.m2ts', 'unidentified', false],
        ['00000.m2ts', 'unidentified', false],
        ['00800.mpls', 'play_all', false],
      ],
    );
    const log = await logOf(job.id);
    assert.ok(log.some((m) => m.startsWith('title(s) left (in the library already, a kind not wanted, or play-all): ') && m.includes('10 (00800.mpls) = play all')), log.join('\n'));
    assert.equal(tddb.requests.filter((r) => r.variables.id === officeHash).length, 0, 'the copy answered: the API was not asked for it');
  });

  it('a box set: disc 2 with the label and size of the ripped disc 1 is a disc of its own, not "already ripped"', async () => {
    // Two real DVDs with one label: their titles differ, and the smaller image is padded to the other's size.
    const one = dvdImage('BOXSET', [8, 4]);
    const two = path.join(tempDir('ripwerk-iso-'), 'BOXSET.iso');
    fs.copyFileSync(dvdImage('BOXSET', [4, 8]), two);
    const size = Math.max(fs.statSync(one).size, fs.statSync(two).size);
    for (const f of [one, two]) fs.truncateSync(f, size);
    const ripOf = async (iso: string) => {
      assert.equal((await api(c.url, 'POST', `/devices/${device}/eject`)).status, 200);
      await waitFor('the drive empty', async () => !(await disc()));
      const before = await jobIds();
      insertDisc(agent.driveDir, iso);
      return autoJob(before);
    };
    const first = await ripOf(one);
    await waitForStatus(c.url, first.id, ['completed'], 60_000);
    const d1 = await disc();
    assert.equal(d1?.already_ripped, true);
    const second = await ripOf(two);
    const d2 = await disc();
    assert.equal(d2?.label_fingerprint, d1?.label_fingerprint, 'same label and size');
    assert.notEqual(d2?.fingerprint, d1?.fingerprint, 'told apart by its DVD disc id');
    assert.match(d2?.fingerprint ?? '', /^dvd:[0-9A-F]{32}$/);
    assert.equal(d2?.already_ripped, false);
    assert.notEqual(second.id, first.id, 'disc 2 is ripped by itself');
    await waitForStatus(c.url, second.id, ['completed'], 60_000);
  });

  it('an obfuscated Blu-ray TheDiscDB does not know: the automatic rip takes the playlist in order, none of its 120 decoys, the log says why and the dialog shows it', async () => {
    assert.equal((await api(c.url, 'POST', `/devices/${device}/eject`)).status, 200);
    await waitFor('the drive empty', async () => !(await disc()));
    const before = await jobIds();
    insertDiscFolder(agent.driveDir, decoyDisc.label, 'bluray', streamFiles(decoyDisc).map((name) => ({ name, size: 1_000_000 })));
    const job = await autoJob(before);
    const done = await waitForStatus(c.url, job.id, ['completed'], 120_000);
    const log = await logOf(job.id);
    assert.ok(log.includes('main feature: title 7 (segments in order, longest, largest)'), log.join('\n'));
    assert.ok(log.includes('120 titles of 1:52:10 left: segments out of order (playlist obfuscation); title 7 plays them in order'), log.join('\n'));
    const ripping = log.find((m) => m.startsWith('ripping '));
    assert.match(ripping ?? '', /^ripping 3 title\(s\) \(2, 3, 7\) with makemkv /);
    const numbers = /\(([\d, ]+)\)/.exec(ripping ?? '')?.[1].split(', ').map(Number) ?? [];
    const ofFilmLength = decoyDisc.titles.filter((t) => numbers.includes(t.number) && t.seconds === decoyDisc.seconds);
    assert.ok(ofFilmLength.length <= 3, `at most 3 titles of the film's length, ${ofFilmLength.length} ripped`);
    assert.deepEqual(ofFilmLength.map((t) => [t.number, t.playlist]), [[7, '00103.mpls']]);
    assert.equal(tree(done.output_path ?? '').length, 3, 'the film and the two featurettes');

    // The dialog's view: the scan marks the main feature with its reasons and every decoy with why it is left.
    assert.equal((await api(c.url, 'POST', `/devices/${device}/scan-tracks`)).status, 202);
    const scan = await waitFor('the title scan', async () => {
      const r = await api<{ scanning: boolean; tracks: ScannedDiscTrack[] }>(c.url, 'GET', `/devices/${device}/tracks`);
      return !r.body.scanning && r.body.tracks.length > 0 ? r.body : undefined;
    }, 30_000);
    assert.deepEqual(scan.tracks.filter((t) => t.main_feature).map((t) => [t.number, t.main_feature]), [[7, ['segments_in_order', 'longest', 'largest']]]);
    const left = scan.tracks.filter((t) => t.left);
    assert.equal(left.length, 120);
    assert.ok(left.every((t) => t.left?.reason === 'out_of_order' && t.left.of === 7 && t.seconds === decoyDisc.seconds));
  });
});
