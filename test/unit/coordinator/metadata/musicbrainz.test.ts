import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { albumForJob, albumFromRelease, fallbackAlbum, rankReleases, storedAlbum } from '../../../../coordinator/metadata/album-choice.js';
import { discLookup, MusicLookup } from '../../../../coordinator/metadata/music-lookup.js';
import { MusicBrainzClient, MusicBrainzError, musicbrainzUserAgent, parseRelease, type MbRelease } from '../../../../coordinator/metadata/musicbrainz.js';
import { FOUND_TTL_MS, MusicBrainzCache, NOT_FOUND_TTL_MS } from '../../../../coordinator/metadata/musicbrainz-cache.js';
import { RateLimiter } from '../../../../coordinator/metadata/rate-limiter.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { labelIdentity } from '../../../../coordinator/metadata/disc-identity.js';
import { Prescan } from '../../../../coordinator/discs/prescan.js';
import { SettingsStore, validateSetting } from '../../../../coordinator/system/settings-store.js';
import { ConfigError, readCoordinatorConfig } from '../../../../shared/config.js';
import { Logger } from '../../../../shared/log.js';
import type { DiscInfo } from '../../../../shared/protocol.js';
import { openDatabase } from '../../../../shared/sqlite.js';
import { mbRelease, startMusicBrainzServer, type MusicBrainzServer, type ReleaseSpec } from '../../../fixtures/musicbrainz-server.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-mb-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const db = () => openDatabase(path.join(root, `mb-${++n}.sqlite`), coordinatorMigrations);

const DISC_ID = 'Dr2EtzSM39D9_zS0uLw6CQcfvEw-';
const TOC = '1 3 1325 150 525 1090';
const TRACKS = [
  { title: 'Kammerton: A 440', id: 't1', recording: 'r1', ms: 5000 },
  { title: 'E 660', id: 't2', recording: 'r2', ms: 7533, artist: 'Gastton' },
  { title: 'C 523', id: 't3', recording: 'r3', ms: 3133 },
];

function spec(id: string, country: string, extra: Partial<ReleaseSpec> = {}): ReleaseSpec {
  return { id, title: 'Töne: Ein Sampler', artist: 'Die Testtöne', artistId: 'a1', date: '2019-03-08', country, discId: DISC_ID, offsets: [150, 525, 1090], sectors: 1325, tracks: TRACKS, front: true, ...extra };
}
const parsed = (s: ReleaseSpec): MbRelease => parseRelease(mbRelease(s))!;

function cdDisc(extra: Partial<DiscInfo> = {}): DiscInfo {
  return {
    label: '', title: 'Ripwerk Test Tones - Sine Sampler', year: null, type: 'cd', size_bytes: 2_763_600, fingerprint: 'fp-cd', source: '/d/disc.cue', audio_tracks: 3,
    audio_cd: { musicbrainz_disc_id: DISC_ID, toc: TOC, cd_text: { title: 'Sine Sampler', performer: 'Ripwerk Test Tones', tracks: [{ number: 1, title: 'A 440', performer: 'Ripwerk Test Tones' }, { number: 2, title: 'E 660', performer: 'Ripwerk Test Tones' }, { number: 3, title: 'C 523', performer: 'Ripwerk Test Tones' }] } },
    ...extra,
  };
}

describe('MusicBrainz release JSON', () => {
  it('reads artist credit, countries, cover flag, the medium with its disc ids and tracks with recording ids', () => {
    const r = parsed(spec('rel-de', 'DE'));
    assert.deepEqual([r.id, r.title, r.artist, r.date, r.countries, r.status, r.has_front], ['rel-de', 'Töne: Ein Sampler', 'Die Testtöne', '2019-03-08', ['DE'], 'Official', true]);
    assert.deepEqual(r.media[0].disc_ids, [DISC_ID]);
    assert.deepEqual(r.media[0].tracks.map((t) => [t.position, t.title, t.artist, t.recording_id, t.track_id]), [
      [1, 'Kammerton: A 440', 'Die Testtöne', 'r1', 't1'],
      [2, 'E 660', 'Gastton', 'r2', 't2'],
      [3, 'C 523', 'Die Testtöne', 'r3', 't3'],
    ]);
  });

  it('joins a credit of several artists by their join phrases', () => {
    const doc = mbRelease(spec('x', 'DE'));
    doc['artist-credit'] = [{ name: 'A', joinphrase: ' feat. ', artist: { id: '1', name: 'A' } }, { name: 'B', joinphrase: '', artist: { id: '2', name: 'B' } }];
    assert.equal(parseRelease(doc)?.artist, 'A feat. B');
  });
});

describe('release choice', () => {
  it('takes the release whose medium carries the disc id (exact TOC) before a merely close TOC, even from the home country', () => {
    const close = parsed(spec('close-de', 'DE', { discId: null }));
    const exact = parsed(spec('exact-gb', 'GB'));
    const ranked = rankReleases([close, exact], DISC_ID, 3, 'DE');
    assert.deepEqual(ranked.map((c) => [c.release.id, c.exact, c.home]), [['exact-gb', true, false], ['close-de', false, true]]);
  });

  it('among exact releases prefers the user\'s country, then official ones, then the earliest', () => {
    const releases = [parsed(spec('gb', 'GB', { date: '2018-01-01' })), parsed(spec('de-late', 'DE', { date: '2021' })), parsed(spec('de', 'DE', { date: '2019-03-08' })), parsed(spec('us', 'US', { date: '2017' }))];
    assert.deepEqual(rankReleases(releases, DISC_ID, 3, 'de').map((c) => c.release.id), ['de', 'de-late', 'us', 'gb']);
    assert.deepEqual(rankReleases(releases, DISC_ID, 3, 'GB').map((c) => c.release.id), ['gb', 'us', 'de', 'de-late']);
  });

  it('skips a release with neither the disc id nor a medium of as many tracks', () => {
    assert.deepEqual(rankReleases([parsed(spec('other', 'DE', { discId: null, tracks: TRACKS.slice(0, 2) }))], DISC_ID, 3, 'DE'), []);
  });

  it('turns the chosen release into the album: year, disc number, per-track artist only when it differs, the cover address', () => {
    const [best] = rankReleases([parsed(spec('rel-1', 'DE', { position: 2 }))], DISC_ID, 3, 'DE');
    const album = albumFromRelease(best, 'http://covers.test');
    const { details, ...rest } = album;
    assert.deepEqual(rest, {
      artist: 'Die Testtöne', album: 'Töne: Ein Sampler', year: 2019, disc_number: 2, disc_total: 1, release_id: 'rel-1', cover_url: 'http://covers.test/release/rel-1/front', source: 'musicbrainz',
      tracks: [
        { number: 1, title: 'Kammerton: A 440', artist: null, recording_id: 'r1', track_id: 't1', artist_ids: ['a1'], artist_sort: 'Die Testtöne' },
        { number: 2, title: 'E 660', artist: 'Gastton', recording_id: 'r2', track_id: 't2', artist_ids: ['artist-1'], artist_sort: 'Gastton' },
        { number: 3, title: 'C 523', artist: null, recording_id: 'r3', track_id: 't3', artist_ids: ['a1'], artist_sort: 'Die Testtöne' },
      ],
    });
    assert.equal(details?.date, '2019-03-08');
    assert.equal(albumFromRelease(rankReleases([parsed(spec('nocover', 'DE', { front: false }))], DISC_ID, 3, 'DE')[0], 'http://c').cover_url, null);
  });
});

describe('fallback names', () => {
  it('uses the CD-Text when MusicBrainz has nothing', () => {
    const a = fallbackAlbum(cdDisc());
    assert.deepEqual([a.artist, a.album, a.year, a.source, a.release_id], ['Ripwerk Test Tones', 'Sine Sampler', null, 'cd-text', null]);
    assert.deepEqual(a.tracks.map((t) => [t.number, t.title, t.artist]), [[1, 'A 440', null], [2, 'E 660', null], [3, 'C 523', null]]);
  });

  it('without CD-Text: "Unbekannter Interpret" / "Audio-CD <disc id>" and tracks "Titel N"', () => {
    const a = fallbackAlbum(cdDisc({ audio_cd: { musicbrainz_disc_id: DISC_ID, toc: TOC, cd_text: null } }));
    assert.deepEqual([a.artist, a.album, a.source], ['Unbekannter Interpret', `Audio-CD ${DISC_ID}`, 'none']);
    assert.deepEqual(a.tracks.map((t) => t.title), ['Titel 1', 'Titel 2', 'Titel 3']);
  });

  it('a job\'s own title renames the album, its year replaces the year; the pre-scan title changes nothing', () => {
    const base = fallbackAlbum(cdDisc());
    assert.equal(albumForJob(base, 'Ripwerk Test Tones - Sine Sampler', null).album, 'Sine Sampler');
    assert.deepEqual([albumForJob(base, 'Mein Mix', 2024).album, albumForJob(base, 'Mein Mix', 2024).year, albumForJob(base, 'Mein Mix', 2024).artist], ['Mein Mix', 2024, 'Ripwerk Test Tones']);
  });
});

describe('rate limiter (injected clock, no sleeping)', () => {
  it('lets the first request go at once and spaces the next ones one second apart, in order', async () => {
    let now = 10_000;
    const slept: number[] = [];
    const limiter = new RateLimiter(1000, () => now, async (ms) => {
      slept.push(ms);
      now += ms;
    });
    const went: [number, number][] = [];
    await Promise.all([1, 2, 3].map((i) => limiter.acquire().then(() => went.push([i, now]))));
    assert.deepEqual(went, [[1, 10_000], [2, 11_000], [3, 12_000]]);
    assert.deepEqual(slept, [1000, 1000]);
    now += 5000;
    await limiter.acquire();
    assert.deepEqual(slept, [1000, 1000], 'after a pause no wait');
    now += 300;
    await limiter.acquire();
    assert.deepEqual(slept, [1000, 1000, 700]);
  });
});

describe('MusicBrainz cache', () => {
  it('keeps a found disc 30 days and an unknown one a day, then forgets it', () => {
    let now = Date.parse('2026-11-23T10:00:00Z');
    const cache = new MusicBrainzCache(db(), () => now);
    const r = parsed(spec('rel', 'DE'));
    cache.put('found', [r]);
    cache.put('unknown', []);
    assert.deepEqual(cache.get('found'), [r]);
    assert.deepEqual(cache.get('unknown'), []);
    assert.equal(cache.get('never'), undefined);
    now += NOT_FOUND_TTL_MS;
    assert.equal(cache.get('unknown'), undefined);
    assert.deepEqual(cache.get('found')?.map((x) => x.id), ['rel']);
    now += FOUND_TTL_MS;
    assert.equal(cache.get('found'), undefined);
  });
});

describe('MusicBrainz client and lookup against the loopback service', () => {
  let mb: MusicBrainzServer;
  const noWait = () => new RateLimiter(1000, () => 0, async () => undefined);
  before(async () => {
    mb = await startMusicBrainzServer();
    mb.discs[DISC_ID] = [mbRelease(spec('rel-gb', 'GB')), mbRelease(spec('rel-de', 'DE'))];
  });
  after(() => mb.close());

  it('asks /discid/<id> with the toc, the includes and JSON, sending the User-Agent with the contact', async () => {
    const ua = musicbrainzUserAgent('0.1.0', 'admin@example.org');
    assert.equal(ua, 'Ripwerk/0.1.0 ( admin@example.org )');
    const client = new MusicBrainzClient(mb.mbBase, ua, noWait());
    const releases = await client.discReleases(DISC_ID, TOC);
    assert.deepEqual(releases.map((r) => r.id), ['rel-gb', 'rel-de']);
    const req = mb.requests.at(-1)!;
    assert.equal(req.path, `/ws/2/discid/${DISC_ID}`);
    assert.deepEqual([req.query.toc, req.query.inc, req.query.fmt, req.userAgent], [TOC, 'artist-credits labels recordings release-groups', 'json', ua]);
  });

  it('answers an unknown disc with no releases (404), a 503 with a MusicBrainzError', async () => {
    const client = new MusicBrainzClient(mb.mbBase, 'Ripwerk/t ( self-hosted )', noWait());
    assert.deepEqual(await client.discReleases('unknownDiscId00000000000000-', null), []);
    mb.mode = '503';
    try {
      await assert.rejects(client.discReleases(DISC_ID, TOC), (err: unknown) => err instanceof MusicBrainzError && err.status === 503 && /503/.test(err.message));
    } finally {
      mb.mode = 'ok';
    }
  });

  it('names the CD from the home-country release, offers the other as a suggestion, and asks MusicBrainz once per disc id', async () => {
    const d = db();
    const settings = new SettingsStore(d);
    const lookup = new MusicLookup(new MusicBrainzClient(mb.mbBase, 'Ripwerk/t ( self-hosted )', noWait()), new MusicBrainzCache(d), settings, mb.coverBase, new Logger('t', true));
    const before = mb.requests.length;
    const disc = cdDisc();
    const id = await lookup.identify(disc, labelIdentity(disc));
    assert.deepEqual([id.title, id.year, id.kind, id.source, id.source_id, id.confidence, id.poster], ['Die Testtöne - Töne: Ein Sampler', 2019, 'music', 'musicbrainz', 'rel-de', 1, `${mb.coverBase}/release/rel-de/front`]);
    assert.deepEqual(id.suggestions, [{ release_id: 'rel-gb', artist: 'Die Testtöne', album: 'Töne: Ein Sampler', year: 2019, country: 'GB', disc_number: 1, exact: true }]);
    settings.set({ musicCountry: 'GB' });
    const again = await lookup.identify(disc, labelIdentity(disc));
    assert.equal(again.album?.release_id, 'rel-gb', 'the cached answer is ranked by the current setting');
    assert.equal(mb.requests.length - before, 1, 'the second identification came from the cache');
  });

  it('falls back to the CD-Text when MusicBrainz fails, without caching the failure', async () => {
    const d = db();
    const cache = new MusicBrainzCache(d);
    const lookup = new MusicLookup(new MusicBrainzClient(mb.mbBase, 'Ripwerk/t ( self-hosted )', noWait()), cache, new SettingsStore(d), mb.coverBase, new Logger('t', true));
    mb.mode = '503';
    try {
      const disc = cdDisc();
      const id = await lookup.identify(disc, labelIdentity(disc));
      assert.deepEqual([id.title, id.source, id.confidence, id.album?.source], ['Ripwerk Test Tones - Sine Sampler', 'cd-text', 0, 'cd-text']);
      assert.equal(cache.get(DISC_ID), undefined);
    } finally {
      mb.mode = 'ok';
    }
  });

  it('takes disc 2 of a release found only by its approximate TOC as disc 2 when both discs have as many tracks', async () => {
    // Disc 2's TOC: tracks of 400, 600 and 300 frames; disc 1 is the test image (375, 565, 235).
    const disc2Toc = '1 3 1450 150 550 1150';
    const disc2Id = 'disc2DiscIdNotInMusicBrainz0-';
    const media = [
      { position: 1, discId: DISC_ID, offsets: [150, 525, 1090], sectors: 1325, tracks: TRACKS.map((t) => ({ ...t, title: `CD1 ${t.title}` })) },
      { position: 2, discId: null, offsets: [], sectors: 0, tracks: [5333, 8000, 4000].map((ms, i) => ({ title: `CD2 Titel ${i + 1}`, id: `t2-${i + 1}`, recording: `r2-${i + 1}`, ms })) },
    ];
    mb.fuzzy = [mbRelease(spec('rel-2cd', 'DE', { media }))];
    try {
      const d = db();
      const lookup = new MusicLookup(new MusicBrainzClient(mb.mbBase, 'Ripwerk/t ( self-hosted )', noWait()), new MusicBrainzCache(d), new SettingsStore(d), mb.coverBase, new Logger('t', true));
      const disc = cdDisc({ fingerprint: 'fp-cd2', audio_cd: { musicbrainz_disc_id: disc2Id, toc: disc2Toc, cd_text: null } });
      const id = await lookup.identify(disc, labelIdentity(disc));
      assert.deepEqual([id.album?.release_id, id.album?.disc_number, id.album?.disc_total, id.confidence], ['rel-2cd', 2, 2, 0.7]);
      assert.deepEqual(id.album?.tracks.map((t) => [t.title, t.recording_id]), [['CD2 Titel 1', 'r2-1'], ['CD2 Titel 2', 'r2-2'], ['CD2 Titel 3', 'r2-3']]);
      assert.equal(id.album?.details?.disc_id, null, 'the disc id is not on the medium');
    } finally {
      mb.fuzzy = [];
    }
  });

  it('takes MusicBrainz refusing a TOC (400 "Invalid TOC") as no release, cached like an unknown disc, not as an outage', async () => {
    const d = db();
    const cache = new MusicBrainzCache(d);
    const logs: string[] = [];
    const log = new Logger('t', true);
    log.warn = (m: string) => void logs.push(m);
    const lookup = new MusicLookup(new MusicBrainzClient(mb.mbBase, 'Ripwerk/t ( self-hosted )', noWait()), cache, new SettingsStore(d), mb.coverBase, log);
    // How Ripwerk used to send a mixed-mode CD: the TOC from the first audio track (2).
    const disc = cdDisc({ audio_cd: { musicbrainz_disc_id: 'mixedModeOldDiscId000000000-', toc: '2 9 152150 18150 33150 51150 70150 88150 101150 119150 136150', cd_text: null } });
    const id = await lookup.identify(disc, labelIdentity(disc));
    assert.equal(mb.requests.at(-1)?.query.toc, '2 9 152150 18150 33150 51150 70150 88150 101150 119150 136150');
    assert.equal(id.album?.source, 'none');
    assert.deepEqual(cache.get('mixedModeOldDiscId000000000-'), [], 'the next insert does not ask again');
    assert.deepEqual(logs, []);
  });

  it('sends audio CDs to the music lookup and every other disc to the chain', async () => {
    const calls: string[] = [];
    const lookup = discLookup({ identify: async () => (calls.push('chain'), null) }, { identify: async (_d, l) => (calls.push('music'), l) });
    const cd = cdDisc();
    await lookup.identify(cd, labelIdentity(cd));
    const dvd: DiscInfo = { ...cd, type: 'dvd', title: 'Film', audio_tracks: null, audio_cd: null };
    await lookup.identify(dvd, labelIdentity(dvd));
    assert.deepEqual(calls, ['music', 'chain']);
  });
});

describe('configuration and the musicCountry setting', () => {
  it('reads MUSICBRAINZ_BASE_URL, COVERART_BASE_URL and a contact that is an e-mail address or URL', () => {
    const c = readCoordinatorConfig({ MUSICBRAINZ_BASE_URL: 'http://127.0.0.1:9/ws/2/', COVERART_BASE_URL: 'http://127.0.0.1:9', MUSICBRAINZ_CONTACT: 'ich@example.org' });
    assert.deepEqual([c.musicbrainzBaseUrl, c.coverArtBaseUrl, c.musicbrainzContact], ['http://127.0.0.1:9/ws/2', 'http://127.0.0.1:9', 'ich@example.org']);
    const d = readCoordinatorConfig({});
    assert.deepEqual([d.musicbrainzBaseUrl, d.coverArtBaseUrl, d.musicbrainzContact], ['https://musicbrainz.org/ws/2', 'https://coverartarchive.org', null]);
    assert.equal(readCoordinatorConfig({ MUSICBRAINZ_CONTACT: 'https://example.org/ripwerk' }).musicbrainzContact, 'https://example.org/ripwerk');
    assert.throws(() => readCoordinatorConfig({ MUSICBRAINZ_CONTACT: 'just words' }), (e: unknown) => e instanceof ConfigError && /MUSICBRAINZ_CONTACT must be an e-mail address or an http\(s\) URL/.test((e as Error).message));
  });

  it('takes a two-letter country code, upper-cased, and refuses anything else', () => {
    assert.equal(new SettingsStore(db()).get('musicCountry'), 'DE');
    assert.equal(validateSetting('musicCountry', 'at'), 'AT');
    assert.throws(() => validateSetting('musicCountry', 'Deutschland'), /two-letter country code/);
    assert.throws(() => validateSetting('musicCountry', 49), /two-letter country code/);
  });
});

describe('audio CDs in the pre-scan and in retries', () => {
  it('asks the music lookup on every insert (no pre-scan cache: the MusicBrainz cache sits below it)', async () => {
    let calls = 0;
    const p = new Prescan(db(), { identify: async (_d, l) => (calls++, { ...l, confidence: 1, source: 'musicbrainz' }) }, new Logger('t', true));
    await p.run(cdDisc());
    await p.run(cdDisc());
    assert.equal(calls, 2);
    assert.equal(p.get('fp-cd')?.source, 'musicbrainz');
  });

  it('reads an album back from a job\'s meta, and nothing from something else', () => {
    const album = albumFromRelease(rankReleases([parsed(spec('rel-1', 'DE'))], DISC_ID, 3, 'DE')[0], 'http://c');
    assert.deepEqual(storedAlbum(JSON.parse(JSON.stringify(album))), album);
    assert.equal(storedAlbum(null), null);
    assert.equal(storedAlbum({ artist: 'A', album: 3, tracks: [] }), null);
    assert.deepEqual(storedAlbum({ artist: 'A', album: 'B', tracks: [{ number: 1, title: 'T' }, { title: 'no number' }] }), { artist: 'A', album: 'B', year: null, disc_number: 1, release_id: null, tracks: [{ number: 1, title: 'T', artist: null, recording_id: null, track_id: null }], cover_url: null, source: 'none' });
  });
});
