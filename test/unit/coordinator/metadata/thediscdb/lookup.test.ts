import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TheDiscDbClient } from '../../../../../coordinator/metadata/thediscdb/client.js';
import { TheDiscDbLookup } from '../../../../../coordinator/metadata/thediscdb/lookup.js';
import { TheDiscDbMirror } from '../../../../../coordinator/metadata/thediscdb/mirror.js';
import { RateLimiter } from '../../../../../coordinator/metadata/rate-limiter.js';
import type { ScannedTitle } from '../../../../../coordinator/metadata/thediscdb/title-matcher.js';
import { Logger, type LogEntry } from '../../../../../shared/log.js';
import type { DiscIds } from '../../../../../shared/protocol.js';
import { buildMirror, fixtureJson, ODYSSEY_DVD_ID, ODYSSEY_HASH, RENTAL_DVD_ID } from '../../../../fixtures/thediscdb-mirror.js';
import { fixtureItems, startTheDiscDbServer, type TheDiscDbServer } from '../../../../fixtures/thediscdb-server.js';

const OFFICE_HASH = '5F649D4FEED70FD32A7932A987E26E0C';
const ids = (over: Partial<DiscIds>): DiscIds => ({ dvd_disc_id: null, aacs_disc_id: null, content_hash: null, file_fingerprint: null, ...over });

/** What MakeMKV with a 60 s minimum length sends for the 2001 DVD: the main movie, one warning, the trailer. */
const odysseyScan: ScannedTitle[] = [
  { number: 0, seconds: 8904, size_bytes: 6858530816, source_file: '01', segment_map: '1-19,20-35' },
  { number: 1, seconds: 78, size_bytes: 64276480, source_file: '06', segment_map: '1' },
  { number: 2, seconds: 111, size_bytes: 73377792, source_file: '08', segment_map: '1' },
];

describe('lookupDisc: TheDiscDB by the disc ids, the offline copy first', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-tddb-lookup-'));
  let srv: TheDiscDbServer;
  let mirror: TheDiscDbMirror;
  let logs: LogEntry[];
  let log: Logger;
  let folder = '';
  before(async () => {
    // The Office with the hash of its capture's file sizes, as a current entry would carry it.
    const items = fixtureItems();
    items[1].releases[0].discs[0] = { ...fixtureJson('the-office-2021-season-4-blu-ray-disc01.json'), ContentHash: OFFICE_HASH };
    srv = await startTheDiscDbServer(items);
    mirror = new TheDiscDbMirror(() => folder, new Logger('t', true), 60_000);
    folder = buildMirror(path.join(tmp, 'clone'));
    await mirror.refresh();
  });
  after(async () => {
    await srv.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  const lookup = (withMirror: boolean) => {
    logs = [];
    log = new Logger('t', true);
    log.addSink((e) => logs.push(e));
    return new TheDiscDbLookup(withMirror ? mirror : null, new TheDiscDbClient(srv.url, new RateLimiter(0), 300), log);
  };

  it('answers a DVD from the offline copy by its content hash, without asking the API', async () => {
    const before = srv.requests.length;
    const hit = await lookup(true).lookupDisc(ids({ content_hash: ODYSSEY_HASH.toLowerCase(), dvd_disc_id: ODYSSEY_DVD_ID }), odysseyScan);
    assert.equal(srv.requests.length, before);
    assert.ok(hit);
    const { titles, disc_titles, ...rest } = hit;
    assert.deepEqual(rest, {
      title: '2001: A Space Odyssey',
      year: 1968,
      kind: 'movie',
      tmdb_id: 62,
      imdb_id: null,
      poster_url: `${srv.url}/images/Movie/2001-a-space-odyssey-1968/cover.jpg`,
      season: null,
      slug: '2001-a-space-odyssey-1968',
      release: '2011-dvd',
      disc_number: 1,
      format: 'DVD',
      matched_by: 'content_hash',
      from: 'mirror',
    });
    assert.deepEqual(
      titles.map((t) => [t.number, t.index, t.role.role, t.role.role === 'extra' ? t.role.folder : null]),
      [
        [0, 0, 'main_movie', null],
        [1, 5, 'extra', 'Other'],
        [2, 7, 'extra', 'Trailers'],
      ],
    );
    // Every title of the entry, not only the scanned ones: the five logos and warnings MakeMKV's
    // minimum length hid from this scan are there too, with their evidence, in TheDiscDB's order.
    assert.deepEqual(
      disc_titles.map((t) => [t.index, t.source_file, t.seconds, t.role.role === 'extra' ? t.role.kind : t.role.role]),
      [
        [0, '01', 8904, 'main_movie'],
        [1, '02', 12, 'Other'],
        [2, '03', 12, 'Other'],
        [3, '04', 16, 'Other'],
        [4, '05', 29, 'Other'],
        [5, '06', 78, 'Other'],
        [6, '07', 21, 'Other'],
        [7, '08', 111, 'Trailer'],
      ],
    );
    assert.deepEqual(disc_titles[0], { index: 0, source_file: '01', segment_map: '1-19,20-35', seconds: 8904, size_bytes: 6858530816, role: { role: 'main_movie', name: '2001: A Space Odyssey' } });
    assert.deepEqual(disc_titles[7].role, { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null });
    // Each scanned title's mapping names a title of disc_titles with the same role.
    for (const t of titles) assert.deepEqual(disc_titles.find((d) => d.index === t.index)?.role, t.role);
  });

  it('finds a disc a .ref names by its own disc id', async () => {
    const hit = await lookup(true).lookupDisc(ids({ dvd_disc_id: RENTAL_DVD_ID.toLowerCase() }), []);
    assert.deepEqual([hit?.title, hit?.release, hit?.matched_by, hit?.from, hit?.titles], ['2001: A Space Odyssey', '2011-dvd-rental', 'global_disc_id', 'mirror', []]);
    // Without a scan no title is mapped, yet the disc the .ref points at gives all its titles.
    assert.deepEqual(
      hit?.disc_titles.map((t) => t.source_file),
      ['01', '02', '03', '04', '05', '06', '07', '08'],
    );
  });

  it('asks the API when the copy does not know the disc: by hash, then by disc id', async () => {
    const before = srv.requests.length;
    const hit = await lookup(true).lookupDisc(ids({ content_hash: '0123456789ABCDEF0123456789ABCDEF', dvd_disc_id: ODYSSEY_DVD_ID }), odysseyScan);
    // The mirror knows the DVD id too: the copy answers before the API is asked.
    assert.deepEqual([hit?.from, hit?.matched_by, srv.requests.length - before], ['mirror', 'global_disc_id', 0]);

    const api = await lookup(false).lookupDisc(ids({ content_hash: '0123456789ABCDEF0123456789ABCDEF', dvd_disc_id: ODYSSEY_DVD_ID }), odysseyScan);
    assert.deepEqual([api?.from, api?.matched_by, api?.titles.length], ['api', 'global_disc_id', 3]);
    assert.deepEqual(
      srv.requests.slice(before).map((r) => r.variables.id),
      ['0123456789ABCDEF0123456789ABCDEF', ODYSSEY_DVD_ID],
    );
  });

  it('answers a series Blu-ray from the API with its season, ids and the role of each title', async () => {
    const scan: ScannedTitle[] = [
      { number: 0, seconds: 2523, size_bytes: 10347927552, source_file: '00003.mpls', segment_map: '7' },
      { number: 1, seconds: 983, size_bytes: 2776498176, source_file: '00006.m2ts', segment_map: '6' },
    ];
    const hit = await lookup(true).lookupDisc(ids({ content_hash: OFFICE_HASH, aacs_disc_id: 'AAF4C61DDCC5E8A2DABEDE0F3B482CD9AEA9434D' }), scan);
    assert.deepEqual([hit?.title, hit?.kind, hit?.season, hit?.tmdb_id, hit?.imdb_id, hit?.from, hit?.format], ['The Office', 'series', 4, 2316, 'tt0386676', 'api', 'Blu-Ray']);
    assert.deepEqual(
      hit?.titles.map((t) => t.role),
      [
        { role: 'episode', name: 'Dunder Mifflin Infinity', season: 4, episodes: { first: 3, last: 4 } },
        { role: 'extra', name: 'Fun Run Deleted Scenes', kind: 'DeletedScene', folder: 'Deleted Scenes', season: 4, episodes: { first: 1, last: 2 } },
      ],
    );
    // The API's answer carries the disc's ten titles too: three episodes (doubles), four extras, three unknown.
    assert.deepEqual(
      hit?.disc_titles.map((t) => [t.source_file, t.role.role]),
      [
        ['00003.mpls', 'episode'],
        ['00002.mpls', 'episode'],
        ['00000.mpls(1)', 'unidentified'],
        ['00004.mpls', 'episode'],
        ['00006.m2ts', 'extra'],
        ['00003.m2ts', 'unidentified'],
        ['00000.m2ts', 'unidentified'],
        ['00011.m2ts', 'extra'],
        ['00010.m2ts', 'extra'],
        ['00008.m2ts', 'extra'],
      ],
    );
    assert.deepEqual(hit?.disc_titles[1], { index: 1, source_file: '00002.mpls', segment_map: '5', seconds: 2521, size_bytes: 10334693376, role: { role: 'episode', name: 'Launch Party', season: 4, episodes: { first: 5, last: 6 } } });
  });

  it('answers null for an unknown disc, a disc without ids, and when the API fails (a warning, no throw)', async () => {
    assert.equal(await lookup(true).lookupDisc(ids({ content_hash: '00000000000000000000000000000000' }), []), null);
    assert.equal(await lookup(true).lookupDisc(ids({ file_fingerprint: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }), []), null);
    assert.equal(await lookup(true).lookupDisc(null, []), null);
    srv.fail(1);
    const l = lookup(false);
    assert.equal(await l.lookupDisc(ids({ content_hash: ODYSSEY_HASH }), []), null);
    assert.deepEqual(
      logs.filter((e) => e.level === 'warn').map((e) => e.message),
      ['metadata source skipped: TheDiscDB answered 500'],
    );
  });

  it('gives no exact answer when one id belongs to two titles alike', async () => {
    const items = fixtureItems();
    items.push({ metadata: { ...items[0].metadata, Title: '2001 (double feature)', Slug: 'double-feature' }, releases: items[0].releases });
    const twice = await startTheDiscDbServer(items);
    try {
      const l = new TheDiscDbLookup(null, new TheDiscDbClient(twice.url, new RateLimiter(0), 300), new Logger('t', true));
      assert.equal(await l.lookupDisc(ids({ content_hash: ODYSSEY_HASH }), odysseyScan), null);
    } finally {
      await twice.close();
    }
  });
});
