import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { MetadataChain, withMovieRuntime } from '../../../../coordinator/metadata/chain.js';
import { JikanClient } from '../../../../coordinator/metadata/jikan.js';
import { normaliseOmdb, omdbMatch, OmdbClient, rankOmdbHits } from '../../../../coordinator/metadata/omdb.js';
import { tmdbAuth, TmdbClient } from '../../../../coordinator/metadata/tmdb.js';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { labelIdentity, type DiscIdentity } from '../../../../coordinator/metadata/disc-identity.js';
import { OVERRIDE_TTL_MS, Prescan } from '../../../../coordinator/discs/prescan.js';
import { KeydbTitles } from '../../../../coordinator/keys/keydb-titles.js';
import { Logger } from '../../../../shared/log.js';
import type { DiscInfo } from '../../../../shared/protocol.js';
import { openDatabase } from '../../../../shared/sqlite.js';
import { normaliseTitle, searchCandidates, titleSimilarity } from '../../../../coordinator/metadata/title-similarity.js';
import {
  emptyCatalogue,
  jikanAnime,
  OMDB_KEY,
  omdbDetail,
  omdbHit,
  startMetadataServer,
  TMDB_V3_KEY,
  TMDB_V4_TOKEN,
  tmdbMovie,
  tmdbSeason,
  tmdbTv,
  type MetadataServer,
} from '../../../fixtures/metadata-server.js';
import type { TheDiscDbHit } from '../../../../coordinator/metadata/thediscdb/lookup.js';

const IMG = 'https://image.tmdb.org/t/p/w500';

function disc(title: string, extra: Partial<DiscInfo> = {}): DiscInfo {
  return { label: title.toUpperCase().replace(/ /g, '_'), title, year: null, type: 'dvd', size_bytes: 4_000_000_000, fingerprint: `fp-${title}`, source: '/x.iso', audio_tracks: null, ...extra };
}

describe('title similarity and search candidates', () => {
  it('normalises case, accents, punctuation and ß', () => {
    assert.equal(normaliseTitle('Die fabelhafte Welt der Amélie!'), 'die fabelhafte welt der amelie');
    assert.equal(normaliseTitle('Straße & Co.'), 'strasse and co');
    assert.equal(titleSimilarity('The Matrix', 'the matrix'), 1);
    assert.equal(titleSimilarity('', 'x'), 0);
  });

  it('scores by edit distance over the longer title', () => {
    assert.equal(titleSimilarity('abcdefghij', 'abcdefghiX'), 0.9);
    const s = titleSimilarity('Spirited Away', 'Spirited Away Extras');
    assert.ok(s > 0.55 && s < 0.9, `similarity ${s}`);
  });

  it('strips trailing words one by one down to one word', () => {
    assert.deepEqual(searchCandidates('The Matrix Special Edition'), ['The Matrix Special Edition', 'The Matrix Special', 'The Matrix', 'The']);
    assert.deepEqual(searchCandidates('  Alien  '), ['Alien']);
  });
});

describe('OMDb rules (pure)', () => {
  it('normalises N/A to null and drops a hit with neither poster nor plot', () => {
    const d = normaliseOmdb(omdbDetail('tt1', 'Lost Film', '1999', 'movie', null, null));
    assert.equal(d.Poster, null);
    assert.equal(d.Plot, null);
    assert.equal(d.Director, null);
    assert.equal(d.Title, 'Lost Film');
    assert.equal(omdbMatch(omdbDetail('tt1', 'Lost Film', '1999', 'movie', null, null)), null);
    const withPlot = omdbMatch(omdbDetail('tt2', 'Plot Only', '2001', 'movie', null, 'Something happens.'));
    assert.equal(withPlot?.overview, 'Something happens.');
    assert.equal(withPlot?.poster_path, null);
    assert.equal(omdbMatch(omdbHit('tt3', 'Poster Only', '2002–2004', 'series', 'https://m.media-amazon.com/p3.jpg'))?.year, 2002);
  });

  it('ranks movies before episodes, with poster before without, short titles before long', () => {
    const ranked = rankOmdbHits([
      omdbHit('tt1', 'Heat: The Episode', '2001', 'episode', 'https://img/1.jpg'),
      omdbHit('tt2', 'Heat Wave Long Title', '1999', 'movie', 'https://img/2.jpg'),
      omdbHit('tt3', 'Heat', '1995', 'movie', null),
      omdbHit('tt4', 'Heat', '1995', 'movie', 'https://img/4.jpg'),
      omdbHit('tt5', 'Heat', '2010', 'series', 'https://img/5.jpg'),
    ]);
    assert.deepEqual(
      ranked.map((r) => r.imdbID),
      ['tt4', 'tt2', 'tt3', 'tt5', 'tt1'],
    );
  });
});

describe('metadata sources against the loopback fixture', () => {
  let srv: MetadataServer;
  before(async () => {
    srv = await startMetadataServer();
  });
  after(() => srv.close());
  beforeEach(() => {
    Object.assign(srv.catalogue, emptyCatalogue());
    srv.requests.length = 0;
  });

  it('sends a 32-hex v3 key as api_key and anything else as a bearer token', async () => {
    assert.equal(tmdbAuth(TMDB_V3_KEY).kind, 'v3');
    assert.equal(tmdbAuth(TMDB_V4_TOKEN).kind, 'v4');
    srv.catalogue.tmdbMovies.push(tmdbMovie(603, 'Matrix', '1999-03-30'));
    const v3 = new TmdbClient(srv.tmdbBase, () => TMDB_V3_KEY, IMG);
    assert.equal((await v3.search('Matrix', 'movie'))[0].title, 'Matrix');
    const r3 = srv.requests.at(-1)!;
    assert.equal(r3.query.api_key, TMDB_V3_KEY);
    assert.equal(r3.authorization, null);
    assert.equal(r3.query.language, 'de-DE');
    const v4 = new TmdbClient(srv.tmdbBase, () => TMDB_V4_TOKEN, IMG);
    assert.equal((await v4.search('Matrix', 'movie'))[0].poster_path, '/poster603.jpg');
    const r4 = srv.requests.at(-1)!;
    assert.equal(r4.query.api_key, undefined);
    assert.equal(r4.authorization, `Bearer ${TMDB_V4_TOKEN}`);
    const wrong = new TmdbClient(srv.tmdbBase, () => 'ffffffffffffffffffffffffffffffff', IMG);
    await assert.rejects(wrong.check(), /TMDB answered 401: Invalid API key/);
  });

  it('reads season runtimes sorted by episode', async () => {
    srv.catalogue.tmdbSeasons['1396/1'] = tmdbSeason(1396, 1, [58, 48, 47]);
    const s = await new TmdbClient(srv.tmdbBase, () => TMDB_V3_KEY, IMG).season(1396, 1);
    assert.deepEqual(
      s.episodes.map((e) => [e.episode, e.runtime_minutes, e.name]),
      [
        [1, 58, 'Folge 1'],
        [2, 48, 'Folge 2'],
        [3, 47, 'Folge 3'],
      ],
    );
  });

  it('retries Jikan once after 2 s on a 504, and gives up after the second', async () => {
    srv.catalogue.jikan.push(jikanAnime(199, 'Sen to Chihiro no Kamikakushi', 'Movie', 2001, { title_english: 'Spirited Away' }));
    const waits: number[] = [];
    const jikan = new JikanClient(srv.jikanBase, async (ms) => {
      waits.push(ms);
    });
    srv.jikan504(1);
    const hits = await jikan.search('Spirited Away');
    assert.deepEqual(waits, [2000]);
    assert.equal(hits[0].match.title, 'Spirited Away');
    assert.equal(hits[0].match.kind, 'movie');
    assert.equal(hits[0].match.poster_path, 'https://cdn.myanimelist.net/images/anime/199l.jpg');
    srv.jikan504(2);
    await assert.rejects(jikan.search('Spirited Away'), /Jikan answered 504/);
    assert.deepEqual(waits, [2000, 2000]);
  });

  describe('the chain', () => {
    let logged: string[];
    function makeChain(opts: { tmdb?: string; omdb?: string } = {}): MetadataChain {
      logged = [];
      const log = new Logger('t', true);
      log.addSink((e) => logged.push(e.message));
      return new MetadataChain(
        new TmdbClient(srv.tmdbBase, () => opts.tmdb ?? '', IMG),
        new JikanClient(srv.jikanBase, async () => undefined),
        new OmdbClient(srv.omdbBase, () => opts.omdb ?? ''),
        log,
      );
    }
    const identify = (c: MetadataChain, title: string) => {
      const d = disc(title);
      return c.identify(d, labelIdentity(d));
    };
    const asked = (prefix: string) => srv.requests.filter((r) => r.path.startsWith(prefix));

    it('asks TheDiscDB first for a video disc with content ids: an exact hit ends the chain at confidence 1', async () => {
      const asks: unknown[] = [];
      const hit: TheDiscDbHit = { title: 'The Office', year: 2005, kind: 'series', tmdb_id: 2316, imdb_id: 'tt0386676', poster_url: 'https://thediscdb.example/images/Series/the-office-2005/cover.jpg', season: 4, slug: 'the-office-2005', release: '2021-season-4-blu-ray', disc_number: 1, format: 'Blu-ray', matched_by: 'content_hash', from: 'api', titles: [], disc_titles: [{ index: 0, source_file: '00800.mpls', segment_map: '1,2', seconds: 1300, size_bytes: 0, role: { role: 'episode', name: 'Fun Run', season: 4, episodes: { first: 1, last: 2 } } }] };
      const tddb = { lookupDisc: async (ids: unknown) => (asks.push(ids), (ids as { content_hash: string | null }).content_hash === 'HIT' ? hit : null) };
      const chain = new MetadataChain(new TmdbClient(srv.tmdbBase, () => TMDB_V3_KEY, IMG), new JikanClient(srv.jikanBase, async () => undefined), new OmdbClient(srv.omdbBase, () => ''), new Logger('t', true), tddb);
      const ids = { dvd_disc_id: null, aacs_disc_id: null, content_hash: 'HIT', file_fingerprint: null };
      const before = srv.requests.length;
      const d = disc('THE OFFICE S4D1', { type: 'bluray', ids });
      const id = (await chain.identify(d, labelIdentity(d)))!;
      assert.deepEqual(
        [id.title, id.year, id.kind, id.season, id.confidence, id.source, id.source_id, id.tmdb_id, id.imdb_id, id.poster, id.disc_number],
        ['The Office', 2005, 'series', 4, 1, 'thediscdb', 'the-office-2005', 2316, 'tt0386676', hit.poster_url, 1],
      );
      assert.deepEqual(id.recognised, { source: 'thediscdb', from: 'api', matched_by: 'content_hash', release: '2021-season-4-blu-ray', disc_number: 1 });
      assert.deepEqual(id.disc_titles, hit.disc_titles);
      assert.equal(srv.requests.length, before, 'no title search');
      // A miss, or a disc without ids (an older agent), goes on to the title search; audio CDs never ask.
      const miss = disc('Unknown Disc Zz', { ids: { ...ids, content_hash: 'MISS' } });
      assert.equal((await chain.identify(miss, labelIdentity(miss)))?.source, 'none');
      const old = disc('Unknown Disc Zz');
      await chain.identify(old, labelIdentity(old));
      const cd = disc('Audio', { type: 'cd', ids });
      await chain.identify(cd, labelIdentity(cd));
      assert.equal(asks.length, 2);
    });

    it('ends at an exact TMDB title, found by stripping trailing words', async () => {
      srv.catalogue.tmdbMovies.push(tmdbMovie(603, 'Matrix', '1999-03-30'));
      srv.catalogue.jikan.push(jikanAnime(1, 'Matrix', 'Movie', 2003));
      const id = (await identify(makeChain({ tmdb: TMDB_V3_KEY, omdb: OMDB_KEY }), 'Matrix Special Edition'))!;
      assert.equal(id.title, 'Matrix');
      assert.equal(id.year, 1999);
      assert.equal(id.confidence, 1);
      assert.equal(id.source, 'tmdb');
      assert.equal(id.tmdb_id, 603);
      assert.equal(id.poster, '/poster603.jpg', 'TMDB posters stay relative to its image base');
      assert.deepEqual(
        asked('/tmdb/3/search').map((r) => r.query.query),
        ['Matrix Special Edition', 'Matrix Special', 'Matrix'],
      );
      assert.equal(asked('/jikan').length, 0, 'an exact title ends the chain');
      assert.equal(asked('/omdb').length, 0);
    });

    it('adds a TMDB movie\'s runtime from its details (the main feature\'s evidence); a series or a failing TMDB adds none', async () => {
      srv.catalogue.tmdbMovies.push(tmdbMovie(313369, 'La La Land', '2016-12-09', { runtime: 129 }));
      const id = (await identify(makeChain({ tmdb: TMDB_V3_KEY }), 'LA_LA_LAND'))!;
      assert.deepEqual([id.title, id.tmdb_id, id.runtime_minutes], ['La La Land', 313369, 129]);
      assert.equal(asked('/tmdb/3/movie/313369').at(-1)?.query.language, 'de-DE');
      const none = await withMovieRuntime({ configured: () => true, movieRuntime: async () => Promise.reject(new Error('down')) }, { ...id, runtime_minutes: null }, new Logger('t', true));
      assert.equal(none.runtime_minutes, null);
      const series = await withMovieRuntime({ configured: () => true, movieRuntime: async () => 45 }, { ...id, kind: 'series', runtime_minutes: null }, new Logger('t', true));
      assert.equal(series.runtime_minutes, null);
    });

    it('strips a long title down to its first word: no cap on the number of candidates', async () => {
      srv.catalogue.tmdbMovies.push(tmdbMovie(348, 'Alien', '1979-05-25'));
      const label = 'Alien Der Achte Passagier Director Cut Special Edition Bonus Disc';
      const id = (await identify(makeChain({ tmdb: TMDB_V3_KEY }), label))!;
      assert.equal(id.title, 'Alien');
      assert.equal(id.tmdb_id, 348);
      const queries = asked('/tmdb/3/search').map((r) => r.query.query);
      assert.equal(queries.length, 10, queries.join(' | '));
      assert.equal(queries[0], label);
      assert.equal(queries.at(-1), 'Alien');
    });

    it('ends at an exact anime title (0.9 or more) without asking OMDb', async () => {
      srv.catalogue.jikan.push(jikanAnime(199, 'Sen to Chihiro no Kamikakushi', 'Movie', 2001, { title_english: 'Spirited Away' }));
      const id = (await identify(makeChain({ omdb: OMDB_KEY }), 'Spirited Away'))!;
      assert.equal(id.source, 'jikan');
      assert.equal(id.title, 'Spirited Away');
      assert.equal(id.confidence, 1);
      assert.equal(id.poster, 'https://cdn.myanimelist.net/images/anime/199l.jpg');
      assert.equal(asked('/omdb').length, 0);
    });

    it('only remembers an anime hit between 0.55 and 0.9: OMDb is asked and wins when it has a hit', async () => {
      // "Akira Ultimate" against the disc's "Akira Ultim": similar, not exact.
      srv.catalogue.jikan.push(jikanAnime(47, 'Akira Ultimate', 'Movie', 1988));
      srv.catalogue.omdbSearch.push(omdbHit('tt0094625', 'Akira Ultim', '1988', 'movie', 'https://m.media-amazon.com/akira.jpg'));
      const id = (await identify(makeChain({ omdb: OMDB_KEY }), 'Akira Ultim'))!;
      assert.equal(id.source, 'omdb');
      assert.equal(id.imdb_id, 'tt0094625');
      assert.equal(id.poster, 'https://m.media-amazon.com/akira.jpg', 'OMDb posters are absolute URLs');
      assert.ok(asked('/omdb').length > 0);
    });

    it('makes the remembered anime hit a suggestion with confidence 0.6 when OMDb has nothing', async () => {
      srv.catalogue.jikan.push(jikanAnime(47, 'Akira Ultimate', 'Movie', 1988));
      const id = (await identify(makeChain({ omdb: OMDB_KEY }), 'Akira Ultim'))!;
      assert.equal(id.source, 'jikan');
      assert.equal(id.title, 'Akira Ultimate');
      assert.equal(id.confidence, 0.6);
      assert.ok(asked('/omdb').length > 0, 'OMDb was asked before the suggestion');
      assert.ok(logged.some((l) => /suggesting "Akira Ultimate" from jikan/.test(l)));
    });

    it('ignores an anime hit below 0.55: unknown, confidence 0.3, the disc title kept', async () => {
      srv.catalogue.jikan.push(jikanAnime(5, 'Kaze no Tani no Nausicaa and a very long subtitle', 'Movie', 1984));
      const id = (await identify(makeChain(), 'Kaze'))!;
      assert.equal(id.kind, 'unknown');
      assert.equal(id.confidence, 0.3);
      assert.equal(id.title, 'Kaze');
      assert.equal(id.source, 'none');
    });

    it('counts an OMDb hit without poster and plot as none, and re-localises a hit through TMDB find', async () => {
      srv.catalogue.omdbSearch.push(omdbHit('tt0000001', 'Das Boot', '1981', 'movie', null), omdbHit('tt0082096', 'Das Boot', '1981', 'movie', 'https://m.media-amazon.com/boot.jpg'));
      srv.catalogue.omdbDetail.tt0000001 = omdbDetail('tt0000001', 'Das Boot', '1981', 'movie', null, null);
      srv.catalogue.tmdbFind.tt0082096 = { movie_results: [tmdbMovie(387, 'Das Boot', '1981-09-17', { overview: 'U 96 läuft aus.' })], person_results: [], tv_results: [], tv_episode_results: [], tv_season_results: [] };
      const id = (await identify(makeChain({ tmdb: TMDB_V3_KEY, omdb: OMDB_KEY }), 'Das Boot'))!;
      assert.equal(id.source, 'omdb');
      assert.equal(id.imdb_id, 'tt0082096', 'the hit without poster or plot is skipped');
      assert.equal(id.tmdb_id, 387);
      assert.equal(id.overview, 'U 96 läuft aus.');
      assert.equal(id.poster, '/poster387.jpg');
      const find = asked('/tmdb/3/find/tt0082096');
      assert.equal(find.length, 1);
      assert.equal(find[0].query.external_source, 'imdb_id');
      assert.equal(find[0].query.language, 'de-DE');
      assert.deepEqual(
        asked('/omdb').filter((r) => r.query.i).map((r) => r.query.i),
        ['tt0000001'],
        'only the posterless hit needed its detail',
      );
    });

    it('skips a source with a bad key and logs why without the key', async () => {
      srv.catalogue.jikan.push(jikanAnime(199, 'Spirited Away', 'Movie', 2001));
      const id = (await identify(makeChain({ tmdb: 'ffffffffffffffffffffffffffffffff' }), 'Spirited Away'))!;
      assert.equal(id.source, 'jikan');
      assert.ok(logged.some((l) => /metadata source skipped: TMDB answered 401/.test(l)));
      assert.ok(!logged.some((l) => l.includes('ffffffff')));
    });

    it('searches series discs as series', async () => {
      srv.catalogue.tmdbTv.push(tmdbTv(1396, 'Breaking Bad', '2008-01-20'));
      const d = disc('BREAKING_BAD_S1_D2', { title: 'Breaking Bad S1 D2' });
      const label = labelIdentity(d);
      assert.equal(label.kind, 'series');
      const id = (await makeChain({ tmdb: TMDB_V4_TOKEN }).identify(d, label))!;
      assert.equal(id.kind, 'series');
      assert.equal(id.season, 1);
      assert.equal(id.tmdb_id, 1396);
      assert.ok(asked('/tmdb/3/search/tv').length > 0);
    });

    it('searches a Blu-ray TheDiscDB does not know by the title KEYDB.cfg gives its AACS disc id; a DVD never asks the KEYDB', async () => {
      const aacs = 'a1b2c3d4e5f60718293a4b5c6d7e8f9011223344';
      const keydbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-keydb-chain-')), 'KEYDB.cfg');
      fs.writeFileSync(keydbFile, `; FindVUK\n0x${aacs.toUpperCase()} = INCEPTION (2010) | D | 2010-12-03 | V | 0x00112233445566778899AABBCCDDEEFF\n0x${'B'.repeat(40)} = ZZ NOBODY KNOWS (1999) | D | 2000-01-01 | V | 0x00\n`);
      const keydb = new KeydbTitles(keydbFile);
      const keydbAsks: string[] = [];
      const spy = { identityFor: (d: DiscInfo, l: DiscIdentity) => (keydbAsks.push(d.type), keydb.identityFor(d, l)) };
      const tddbAsks: unknown[] = [];
      const tddb = { lookupDisc: async (ids: unknown) => (tddbAsks.push(ids), null) };
      logged = [];
      const log = new Logger('t', true);
      log.addSink((e) => logged.push(e.message));
      const chain = new MetadataChain(new TmdbClient(srv.tmdbBase, () => TMDB_V3_KEY, IMG), new JikanClient(srv.jikanBase, async () => undefined), new OmdbClient(srv.omdbBase, () => ''), log, tddb, spy);
      srv.catalogue.tmdbMovies.push(tmdbMovie(27205, 'Inception', '2010-07-15'));
      const ids = { dvd_disc_id: null, aacs_disc_id: aacs.toUpperCase(), content_hash: 'MISS', file_fingerprint: null };

      const d = disc('Bdrom', { type: 'bluray', ids });
      const id = (await chain.identify(d, labelIdentity(d)))!;
      assert.deepEqual([id.title, id.year, id.source, id.tmdb_id, id.confidence], ['Inception', 2010, 'tmdb', 27205, 1]);
      assert.deepEqual(asked('/tmdb/3/search').map((r) => r.query.query), ['INCEPTION'], 'the label is not searched');
      assert.equal(tddbAsks.length, 1, 'TheDiscDB was asked first');
      assert.ok(logged.some((l) => l === `KEYDB.cfg names disc ${ids.aacs_disc_id}: "INCEPTION" (2010) is searched instead of the label "Bdrom"`), logged.join(' | '));

      // Named by the KEYDB but known to no source: the unknown identity carries the KEYDB title.
      const nobody = disc('Bdrom', { type: 'uhd', ids: { ...ids, aacs_disc_id: 'B'.repeat(40) } });
      const none = (await chain.identify(nobody, labelIdentity(nobody)))!;
      assert.deepEqual([none.title, none.year, none.source, none.confidence], ['ZZ NOBODY KNOWS', 1999, 'none', 0.3]);

      // A DVD (even with an AACS id) and a Blu-ray the KEYDB does not list keep their label.
      const dvd = disc('Zz Dvd Label', { ids });
      assert.equal((await chain.identify(dvd, labelIdentity(dvd)))?.title, 'Zz Dvd Label');
      const unlisted = disc('Unknown Disc Zz', { type: 'bluray', ids: { ...ids, aacs_disc_id: 'C'.repeat(40) } });
      assert.equal((await chain.identify(unlisted, labelIdentity(unlisted)))?.title, 'Unknown Disc Zz');
      assert.deepEqual(keydbAsks, ['bluray', 'uhd', 'bluray'], 'the DVD never asked the KEYDB');
      assert.equal(keydb.reads, 1, 'the file was read once');
      fs.rmSync(path.dirname(keydbFile), { recursive: true, force: true });
    });
  });
});

describe('override memory', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-override-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('answers a corrected disc from the override for 30 days, then asks the chain again', async () => {
    let now = Date.parse('2026-11-23T10:00:00Z');
    let calls = 0;
    const lookup = {
      async identify(_d: DiscInfo, label: DiscIdentity) {
        calls++;
        return { ...label, title: 'Wrong Guess', confidence: 0.95, source: 'tmdb' };
      },
    };
    const p = new Prescan(openDatabase(path.join(root, 'o.sqlite'), coordinatorMigrations), lookup, new Logger('t', true), () => now);
    const d = disc('Heat');
    assert.equal((await p.run(d)).title, 'Wrong Guess');
    const corrected: DiscIdentity = { title: 'Heat', year: 1995, confidence: 1, poster: '/heat.jpg', kind: 'movie', season: null, source: 'override' };
    p.override(d.fingerprint, corrected);
    assert.equal(p.get(d.fingerprint)?.title, 'Heat', 'the disc card shows it at once');
    now += 29 * 24 * 3600_000;
    assert.equal((await p.run(d)).title, 'Heat');
    assert.equal(calls, 1);
    now += OVERRIDE_TTL_MS;
    const after30 = await p.run(d);
    assert.equal(after30.title, 'Wrong Guess', 'after 30 days the chain answers again');
    assert.equal(calls, 2);
  });
});
