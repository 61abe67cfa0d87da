import type { Device } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mbRelease, smallJpeg, startMusicBrainzServer, type MusicBrainzServer, type ReleaseSpec } from '../fixtures/musicbrainz-server.js';
import { accurateRipAnswer, startAccurateRipServer, whipperChecksums, type AccurateRipServer } from '../fixtures/accuraterip-server.js';
import { api, audioCdImage, startAgent, startCoordinator, stopAll, waitFor, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';

interface Album { artist: string; album: string; year: number | null; disc_number: number; release_id: string | null; source: string; cover_url: string | null; tracks: { number: number; title: string; recording_id: string | null }[] }

/** The test image's TOC (harness.audioCdImage: 375, 565 and 235 frames) and its MusicBrainz disc id (audio-cd.md §4). */
const DISC_ID = 'Dr2EtzSM39D9_zS0uLw6CQcfvEw-';

const metaflac = (file: string, ...args: string[]): string => execFileSync('metaflac', ['--no-utf8-convert', ...args, file]).toString().trim();
const device = 'musik-drive-musik';

async function theCd(c: CoordinatorHandle, what = 'the CD'): Promise<NonNullable<Device['disc']>> {
  const d = await waitFor(what, async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device && x.disc?.album), 30_000);
  return d.disc!;
}

/**
 * The test image in the AccurateRip database: track starts 0, 375, 940 and lead-out 1175 give
 * id1 0+375+940+1175 = 0x9ba, id2 1+375*2+940*3+1175*4 = 0x204f, freedb id 0e000f03 (audio-cd.md §4).
 */
const AR_ENTRY = 'dBAR-003-000009ba-0000204f-0e000f03.bin';

describe('audio CD image (cue sheet and raw CD-DA) to FLAC, MusicBrainz answering 503', () => {
  let w: World;
  let c: CoordinatorHandle;
  let musik: AgentHandle;
  let mb: MusicBrainzServer;
  let ar: AccurateRipServer;

  before(async () => {
    mb = await startMusicBrainzServer();
    mb.mode = '503';
    ar = await startAccurateRipServer();
    w = world();
    c = await startCoordinator(w, { MUSICBRAINZ_BASE_URL: mb.mbBase, COVERART_BASE_URL: mb.coverBase });
    musik = await startAgent(w, c.mqttUrl, 'musik', { extra: { ACCURATERIP_BASE_URL: ar.base } });
  });
  after(async () => {
    await stopAll();
    await mb.close();
    await ar.close();
  });

  it('shows the CD named by its CD-Text, with its track count, and scans its tracks from the cue sheet', async () => {
    audioCdImage(musik.driveDir);
    const disc = await theCd(c);
    assert.deepEqual([disc.type, disc.title, disc.audio_tracks, disc.already_ripped, disc.kind], ['cd', 'Ripwerk Test Tones - Sine Sampler', 3, false, 'music']);
    assert.deepEqual([disc.album?.artist, disc.album?.album, disc.album?.source, disc.album?.release_id], ['Ripwerk Test Tones', 'Sine Sampler', 'cd-text', null]);
    assert.ok(mb.requests.some((r) => r.path === `/ws/2/discid/${DISC_ID}` && r.query.toc === '1 3 1325 150 525 1090'), 'MusicBrainz was asked by disc id and TOC');
    assert.equal((await api(c.url, 'POST', `/devices/${device}/scan-tracks`)).status, 202);
    const tracks = await waitFor('tracks', async () => {
      const r = await api<{ scanning: boolean; tracks: { number: number; seconds: number; chapters: number }[] }>(c.url, 'GET', `/devices/${device}/tracks`);
      return r.body.tracks.length ? r.body.tracks : undefined;
    });
    assert.deepEqual(tracks.map((t) => [t.number, t.seconds, t.chapters]), [[1, 5, 0], [2, 7.53, 0], [3, 3.13, 0]]);
  });

  it('rips every track to FLAC tagged from the CD-Text into Musik/<Artist>/<Album>, sample-exact, without a transcode stage, proven by AccurateRip', async () => {
    // The database knows the disc: tracks 1 and 3 by their v2 checksums, track 2 by its v1 (whipper's numbers for the same audio).
    const sums = whipperChecksums(path.join(musik.driveDir, 'disc.bin'), [375, 565, 235], w.root);
    ar.entries.set(AR_ENTRY, accurateRipAnswer([{ id1: '000009ba', id2: '0000204f', freedb: '0e000f03', tracks: [{ confidence: 12, checksum: sums[0].v2 }, { confidence: 11, checksum: sums[1].v1 }, { confidence: 10, checksum: sums[2].v2 }] }]));
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.target_dir, path.join(w.media, 'Musik'));
    const done = await waitForStatus(c.url, created.body.id, ['completed']);
    const dir = path.join(w.media, 'Musik', 'Ripwerk Test Tones', 'Sine Sampler');
    assert.equal(done.output_path, dir);
    assert.deepEqual((done.meta?.album as Album).source, 'cd-text');
    assert.equal(done.meta?.musicbrainz_disc_id, DISC_ID);
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.flac'));
    assert.deepEqual(fs.readdirSync(dir), ['01 - A 440.flac', '02 - E 660.flac', '03 - C 523.flac', 'accuraterip.log'], 'no cover without a MusicBrainz release');
    assert.ok(ar.requests.includes(`/accuraterip/a/b/9/${AR_ENTRY}`), `asked ${ar.requests.join(', ')}`);
    const report = done.meta?.accuraterip as { status: string; read_offset_source: string; tracks: { number: number; status: string; confidence: number; v1: string; v2: string }[] };
    assert.equal(report.status, 'accurate');
    assert.equal(report.read_offset_source, 'image');
    assert.deepEqual(report.tracks.map((t) => [t.number, t.status, t.confidence, t.v1, t.v2]), sums.map((s, i) => [i + 1, 'accurate', 12 - i, s.v1, s.v2]));
    const log = fs.readFileSync(path.join(dir, 'accuraterip.log'), 'utf8');
    assert.match(log, /^AccurateRip disc id 003-000009ba-0000204f-0e000f03\nread offset: none/);
    assert.match(log, /track 02: v1 [0-9a-f]{8} v2 [0-9a-f]{8}: accurate \(confidence 11\)/);
    const detail = await api<{ logs: { message: string }[] }>(c.url, 'GET', `/jobs/${created.body.id}/detail`);
    assert.ok(detail.body.logs.some((l) => /track 03: .*accurate \(confidence 10\)/.test(l.message)), `the job log has each verdict: ${detail.text}`);
    const samples = files.map((f) => Number(metaflac(path.join(dir, f), '--show-total-samples')));
    assert.deepEqual(samples, [220500, 332220, 138180]);
    assert.equal(samples.reduce((a, b) => a + b, 0), fs.statSync(path.join(musik.driveDir, 'ejected', 'disc', 'disc.bin')).size / 4, 'every sample of the image is in the files');
    assert.equal(metaflac(path.join(dir, files[1]), '--export-tags-to=-'), ['ARTIST=Ripwerk Test Tones', 'ALBUMARTIST=Ripwerk Test Tones', 'ALBUM=Sine Sampler', 'TITLE=E 660', 'TRACKNUMBER=2', 'TRACKTOTAL=3', 'TOTALTRACKS=3', 'DISCNUMBER=1', 'DISCTOTAL=1', 'TOTALDISCS=1'].join('\n'));
    assert.deepEqual(fs.readdirSync(path.join(musik.driveDir, 'ejected', 'disc')).sort(), ['disc.bin', 'disc.cue'], 'the auto-eject moved sheet and audio together');
    assert.equal(done.transcode_node, null);
  });

  it('skips the same CD when it comes back with autoRipStart on', async () => {
    assert.equal((await api(c.url, 'PUT', '/settings', { autoRipStart: true })).status, 200);
    for (const f of ['disc.bin', 'disc.cue']) fs.renameSync(path.join(musik.driveDir, 'ejected', 'disc', f), path.join(musik.driveDir, f));
    const disc = await theCd(c, 'the CD back');
    assert.equal(disc.already_ripped, true);
    await waitFor('the skip', async () => (await api<{ message: string }[]>(c.url, 'GET', '/logs?limit=200')).body.find((l) => /automatic rip skipped: "Ripwerk Test Tones - Sine Sampler" was ripped before/.test(l.message)));
    assert.equal((await api<Job[]>(c.url, 'GET', '/jobs')).body.length, 1);
  });

  it('names a CD without CD-Text "Unbekannter Interpret" / "Audio-CD <disc id>"', async () => {
    assert.equal((await api(c.url, 'POST', `/devices/${device}/eject`)).status, 200);
    await waitFor('the drive empty', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device && !x.disc));
    const ejected = path.join(musik.driveDir, 'ejected');
    const held = fs.readdirSync(ejected).map((d) => path.join(ejected, d)).find((d) => fs.existsSync(path.join(d, 'disc.cue')));
    assert.ok(held, 'the eject put the image under ejected/');
    const cue = fs.readFileSync(path.join(held, 'disc.cue'), 'utf8');
    fs.renameSync(path.join(held, 'disc.bin'), path.join(musik.driveDir, 'disc.bin'));
    fs.writeFileSync(path.join(musik.driveDir, 'disc.cue'), cue.split('\n').filter((l) => !/^\s*(TITLE|PERFORMER)\s/.test(l)).join('\n'));
    const disc = await waitFor('the CD without CD-Text', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device && x.disc?.album?.source === 'none')?.disc, 30_000);
    assert.equal(disc.title, `Unbekannter Interpret - Audio-CD ${DISC_ID}`);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed']);
    const dir = path.join(w.media, 'Musik', 'Unbekannter Interpret', `Audio-CD ${DISC_ID}`);
    assert.equal(done.output_path, dir);
    assert.deepEqual(fs.readdirSync(dir), ['01 - Titel 1.flac', '02 - Titel 2.flac', '03 - Titel 3.flac', 'accuraterip.log']);
    assert.equal(metaflac(path.join(dir, '03 - Titel 3.flac'), '--show-tag=ARTIST', '--show-tag=ALBUM', '--show-tag=TITLE'), `ARTIST=Unbekannter Interpret\nALBUM=Audio-CD ${DISC_ID}\nTITLE=Titel 3`);
  });
});

describe('audio CD image identified through MusicBrainz, with its front cover', () => {
  let w: World;
  let c: CoordinatorHandle;
  let musik: AgentHandle;
  let mb: MusicBrainzServer;
  const jpeg = smallJpeg();
  const tracks = [
    { title: 'Kammerton: A 440', id: 'b1f0a3c2-0000-4000-8000-000000000001', recording: 'c2e0b4d3-0000-4000-8000-000000000001', ms: 5000 },
    { title: 'Quinte / E 660', id: 'b1f0a3c2-0000-4000-8000-000000000002', recording: 'c2e0b4d3-0000-4000-8000-000000000002', ms: 7533 },
    { title: 'C 523', id: 'b1f0a3c2-0000-4000-8000-000000000003', recording: 'c2e0b4d3-0000-4000-8000-000000000003', ms: 3133 },
  ];
  const releaseGroup = { id: 'a3c1d2e4-0000-4000-8000-0000000000ff', primaryType: 'Album', secondaryTypes: [], firstReleaseDate: '2018-11-02' };
  const spec = (id: string, country: string, date: string): ReleaseSpec => ({ id, title: 'Töne: Ein Sampler', artist: 'Die Testtöne', artistId: 'd7a1e0f2-0000-4000-8000-0000000000aa', artistSortName: 'Testtöne, Die', date, country, discId: DISC_ID, offsets: [150, 525, 1090], sectors: 1325, tracks, front: true, releaseGroup });
  const GB = '5a0e6f7b-0000-4000-8000-000000000001';
  const DE = '5a0e6f7b-0000-4000-8000-000000000002';

  before(async () => {
    mb = await startMusicBrainzServer();
    // The British release comes first in MusicBrainz's answer; the household's country is Germany (default).
    mb.discs[DISC_ID] = [mbRelease(spec(GB, 'GB', '2018-11-02')), mbRelease(spec(DE, 'DE', '2019-03-08'))];
    mb.covers[DE] = jpeg;
    w = world();
    c = await startCoordinator(w, { MUSICBRAINZ_BASE_URL: mb.mbBase, COVERART_BASE_URL: mb.coverBase, MUSICBRAINZ_CONTACT: 'haushalt@example.org' });
    musik = await startAgent(w, c.mqttUrl, 'musik');
  });
  after(async () => {
    await stopAll();
    await mb.close();
  });

  it('shows artist, album, year and tracks of the German release on the disc card and offers the British one', async () => {
    audioCdImage(musik.driveDir);
    const disc = await theCd(c);
    assert.deepEqual([disc.title, disc.year, disc.kind, disc.poster], ['Die Testtöne - Töne: Ein Sampler', 2019, 'music', `${mb.coverBase}/release/${DE}/front`]);
    assert.deepEqual([disc.album?.artist, disc.album?.album, disc.album?.year, disc.album?.release_id, disc.album?.source], ['Die Testtöne', 'Töne: Ein Sampler', 2019, DE, 'musicbrainz']);
    assert.deepEqual(disc.album?.tracks.map((t) => [t.number, t.title, t.recording_id]), tracks.map((t, i) => [i + 1, t.title, t.recording]));
    assert.deepEqual(disc.suggestions.map((s) => [s.release_id, s.country, s.exact]), [[GB, 'GB', true]]);
    const asked = mb.requests.filter((r) => r.path.startsWith('/ws/2/'));
    assert.equal(asked.length, 1);
    assert.match(asked[0].userAgent ?? '', /^Ripwerk\/\d+\.\d+\.\d+ \( haushalt@example\.org \)$/);
  });

  it('refuses a release id that is not one of the CD\'s, creating nothing', async () => {
    const r = await api<string>(c.url, 'POST', '/jobs', { device, musicbrainz_release_id: '00000000-0000-4000-8000-000000000000' });
    assert.equal(r.status, 400);
    assert.match(r.text, /musicbrainz_release_id "00000000-0000-4000-8000-000000000000" is not a release of this CD/);
    assert.equal((await api<Job[]>(c.url, 'GET', '/jobs')).body.length, 0);
  });

  it('rips to Musik/<Artist>/<Album> (<Year>)/NN - <Title>.flac with MusicBrainz tags and cover.jpg', async () => {
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.title, 'Die Testtöne - Töne: Ein Sampler');
    const done = await waitForStatus(c.url, created.body.id, ['completed']);
    const dir = path.join(w.media, 'Musik', 'Die Testtöne', 'Töne - Ein Sampler (2019)');
    assert.equal(done.output_path, dir);
    assert.equal((done.meta?.album as Album).release_id, DE);
    assert.deepEqual(fs.readdirSync(dir), ['01 - Kammerton - A 440.flac', '02 - Quinte - E 660.flac', '03 - C 523.flac', 'accuraterip.log', 'cover.jpg']);
    assert.deepEqual(fs.readFileSync(path.join(dir, 'cover.jpg')), jpeg);
    assert.equal(
      metaflac(path.join(dir, '02 - Quinte - E 660.flac'), '--export-tags-to=-'),
      [
        'ARTIST=Die Testtöne', 'ARTISTSORT=Testtöne, Die', 'ALBUMARTIST=Die Testtöne', 'ALBUMARTISTSORT=Testtöne, Die', 'ALBUM=Töne: Ein Sampler', 'TITLE=Quinte / E 660',
        'TRACKNUMBER=2', 'TRACKTOTAL=3', 'TOTALTRACKS=3', 'DISCNUMBER=1', 'DISCTOTAL=1', 'TOTALDISCS=1', 'DATE=2019-03-08', 'ORIGINALDATE=2018-11-02', 'ORIGINALYEAR=2018',
        'RELEASECOUNTRY=DE', 'RELEASESTATUS=official', 'RELEASETYPE=album', 'MEDIA=CD', 'LABEL=Testton Records', 'CATALOGNUMBER=TTR 001', 'BARCODE=4006381333931', 'SCRIPT=Latn',
        `MUSICBRAINZ_ALBUMID=${DE}`, 'MUSICBRAINZ_RELEASEGROUPID=a3c1d2e4-0000-4000-8000-0000000000ff', 'MUSICBRAINZ_ALBUMARTISTID=d7a1e0f2-0000-4000-8000-0000000000aa',
        'MUSICBRAINZ_ARTISTID=d7a1e0f2-0000-4000-8000-0000000000aa', `MUSICBRAINZ_TRACKID=${tracks[1].recording}`, `MUSICBRAINZ_RELEASETRACKID=${tracks[1].id}`, `MUSICBRAINZ_DISCID=${DISC_ID}`,
      ].join('\n'),
    );
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.endsWith('.flac')).map((f) => Number(metaflac(path.join(dir, f), '--show-total-samples'))), [220500, 332220, 138180]);
    const detail = await api<{ logs: { message: string }[] }>(c.url, 'GET', `/jobs/${created.body.id}/detail`);
    assert.ok(detail.body.logs.some((l) => l.message === 'front cover saved as cover.jpg'), JSON.stringify(detail.body.logs.map((l) => l.message)));
  });

  it('rips the CD again as the British release the card suggested; its missing cover is only a warning', async () => {
    for (const f of ['disc.bin', 'disc.cue']) fs.renameSync(path.join(musik.driveDir, 'ejected', 'disc', f), path.join(musik.driveDir, f));
    const disc = await theCd(c, 'the CD back');
    assert.deepEqual(disc.suggestions.map((s) => s.release_id), [GB]);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, title: disc.title, musicbrainz_release_id: GB });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed']);
    const dir = path.join(w.media, 'Musik', 'Die Testtöne', 'Töne - Ein Sampler (2018)');
    assert.equal(done.output_path, dir);
    assert.deepEqual(fs.readdirSync(dir), ['01 - Kammerton - A 440.flac', '02 - Quinte - E 660.flac', '03 - C 523.flac', 'accuraterip.log']);
    assert.equal(metaflac(path.join(dir, '01 - Kammerton - A 440.flac'), '--show-tag=MUSICBRAINZ_ALBUMID', '--show-tag=DATE'), `MUSICBRAINZ_ALBUMID=${GB}\nDATE=2018-11-02`);
    const detail = await api<{ logs: { level: string; message: string }[] }>(c.url, 'GET', `/jobs/${created.body.id}/detail`);
    assert.ok(detail.body.logs.some((l) => l.level === 'warn' && l.message === 'no cover.jpg: the cover archive answered 404'), JSON.stringify(detail.body.logs));
  });

  it('rips both discs of a release MusicBrainz finds only by their TOCs into one album folder, each disc as itself, and beets imports one album of 2 discs', async () => {
    // Neither disc id is in MusicBrainz: the fuzzy TOC search answers the release; both discs have 3 tracks.
    const TWO = '6b1f8c2d-0000-4000-8000-000000000002';
    const discTracks = (disc: number, ms: number[]) => ms.map((len, i) => ({ title: `CD${disc} Stück ${i + 1}`, id: `e1f0a3c2-0000-4000-8000-0000000000${disc}${i + 1}`, recording: `f2e0b4d3-0000-4000-8000-0000000000${disc}${i + 1}`, ms: len }));
    mb.fuzzy = [mbRelease({ ...spec(TWO, 'DE', '2020-05-01'), title: 'Zwei Scheiben', front: false, releaseGroup: { ...releaseGroup, id: 'a3c1d2e4-0000-4000-8000-000000000002', firstReleaseDate: '2020-05-01' }, media: [
      { position: 1, discId: null, offsets: [], sectors: 0, tracks: discTracks(1, [5333, 8000, 4000]) },
      { position: 2, discId: null, offsets: [], sectors: 0, tracks: discTracks(2, [6000, 7000, 5000]) },
    ] })];
    const dir = path.join(w.media, 'Musik', 'Die Testtöne', 'Zwei Scheiben (2020)');
    // Disc 2 first: the folder is the same whichever disc comes first.
    for (const [disc, frames] of [[2, [450, 525, 375]], [1, [400, 600, 300]]] as const) {
      audioCdImage(musik.driveDir, [...frames]);
      const cd = await waitFor(`disc ${disc}`, async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device && x.disc?.album?.release_id === TWO && x.disc.album.disc_number === disc)?.disc, 30_000);
      assert.deepEqual([cd.album?.disc_total, cd.album?.tracks.map((t) => t.title)], [2, [1, 2, 3].map((n) => `CD${disc} Stück ${n}`)]);
      const created = await api<Job>(c.url, 'POST', '/jobs', { device });
      assert.equal(created.status, 201, created.text);
      const done = await waitForStatus(c.url, created.body.id, ['completed']);
      assert.equal(done.output_path, dir);
      await waitFor('the drive empty', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device && !x.disc));
    }
    assert.deepEqual(fs.readdirSync(path.join(w.media, 'Musik', 'Die Testtöne')).filter((d) => d.startsWith('Zwei')), ['Zwei Scheiben (2020)']);
    // Both discs were one session of the release (issue 40): disc 2 came first and asked for disc 1, which ended it.
    const album = (await api<{ kind: string; origin: string; release: string; done: number[]; missing: number[]; state: string }[]>(c.url, 'GET', '/sessions')).body.find((x) => x.release === TWO);
    assert.deepEqual([album?.kind, album?.origin, album?.done, album?.missing, album?.state], ['album', 'musicbrainz', [1, 2], [], 'ended']);
    assert.deepEqual(fs.readdirSync(dir), ['1-01 - CD1 Stück 1.flac', '1-02 - CD1 Stück 2.flac', '1-03 - CD1 Stück 3.flac', '2-01 - CD2 Stück 1.flac', '2-02 - CD2 Stück 2.flac', '2-03 - CD2 Stück 3.flac', 'accuraterip-disc1.log', 'accuraterip-disc2.log']);
    assert.equal(metaflac(path.join(dir, '2-01 - CD2 Stück 1.flac'), '--show-tag=DISCNUMBER', '--show-tag=DISCTOTAL', '--show-tag=MUSICBRAINZ_TRACKID'), `DISCNUMBER=2\nDISCTOTAL=2\nMUSICBRAINZ_TRACKID=f2e0b4d3-0000-4000-8000-000000000021`);
    // beets (Debian) imports the folder as it is (-A: no autotagger, no network) into a library of its own.
    const beets = path.join(w.root, 'beets');
    fs.mkdirSync(beets, { recursive: true });
    fs.writeFileSync(path.join(beets, 'config.yaml'), `directory: ${beets}/lib\nlibrary: ${beets}/library.db\nplugins: []\nimport:\n  copy: no\n  move: no\n  write: no\n  resume: no\n  incremental: no\n`);
    const beet = (...a: string[]): string => execFileSync('beet', ['-c', path.join(beets, 'config.yaml'), ...a], { env: { ...process.env, HOME: beets, BEETSDIR: beets }, encoding: 'utf8' }).trim();
    beet('import', '-A', '-q', path.join(w.media, 'Musik', 'Die Testtöne', 'Zwei Scheiben (2020)'));
    assert.equal(beet('ls', '-a', '-f', '$albumartist|$album|$disctotal|$mb_albumid'), `Die Testtöne|Zwei Scheiben|02|${TWO}`);
    assert.deepEqual(beet('ls', '-f', '$disc/$disctotal $track $album_id').split('\n').sort(), ['01/02 01 1', '01/02 02 1', '01/02 03 1', '02/02 01 1', '02/02 02 1', '02/02 03 1']);
  });
});
