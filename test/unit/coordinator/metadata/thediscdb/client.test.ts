import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONTENT_HASH_QUERY, GLOBAL_DISC_ID_QUERY, TheDiscDbClient } from '../../../../../coordinator/metadata/thediscdb/client.js';
import { SourceError } from '../../../../../coordinator/metadata/match.js';
import { RateLimiter } from '../../../../../coordinator/metadata/rate-limiter.js';
import { ODYSSEY_DVD_ID, ODYSSEY_HASH } from '../../../../fixtures/thediscdb-mirror.js';
import { startTheDiscDbServer, type TheDiscDbServer } from '../../../../fixtures/thediscdb-server.js';

describe('TheDiscDB live client (GraphQL, against the loopback stand-in)', () => {
  let srv: TheDiscDbServer;
  let client: TheDiscDbClient;
  before(async () => {
    srv = await startTheDiscDbServer();
    client = new TheDiscDbClient(srv.url, new RateLimiter(0), 300);
  });
  after(() => srv.close());

  it('finds a disc by its ContentHash, sending the id upper-case in the one variable of the query', async () => {
    const entries = await client.byContentHash(ODYSSEY_HASH.toLowerCase());
    const sent = srv.requests.at(-1);
    assert.equal(sent?.query, CONTENT_HASH_QUERY);
    assert.deepEqual(sent?.variables, { id: ODYSSEY_HASH });
    assert.equal(entries.length, 1);
    const [e] = entries;
    assert.deepEqual(e.mediaItem, { title: '2001: A Space Odyssey', year: 1968, slug: '2001-a-space-odyssey-1968', type: 'Movie', imageUrl: 'Movie/2001-a-space-odyssey-1968/cover.jpg', tmdb: '62', imdb: null });
    assert.deepEqual(e.release, { slug: '2011-dvd', title: 'DVD', year: 2011, imageUrl: 'Movie/2001-a-space-odyssey-1968/2011-dvd.jpg' });
    assert.deepEqual([e.disc.index, e.disc.format, e.disc.contentHash, e.disc.globalDiscId, e.disc.titles.length], [1, 'DVD', ODYSSEY_HASH, ODYSSEY_DVD_ID, 8]);
    assert.deepEqual(e.disc.titles[0], { index: 0, sourceFile: '01', segmentMap: '1-19,20-35', seconds: 8904, size: 6858530816, item: { title: '2001: A Space Odyssey', type: 'MainMovie', season: null, episode: null } });
  });

  it('finds a disc by its GlobalDiscId (the fallback for a legacy or missing hash)', async () => {
    const entries = await client.byGlobalDiscId(ODYSSEY_DVD_ID);
    assert.equal(srv.requests.at(-1)?.query, GLOBAL_DISC_ID_QUERY);
    assert.deepEqual(
      entries.map((e) => e.mediaItem.title),
      ['2001: A Space Odyssey'],
    );
  });

  it('answers an unknown disc with no entry', async () => {
    assert.deepEqual(await client.byContentHash('00000000000000000000000000000000'), []);
    assert.deepEqual(await client.byGlobalDiscId('0000000000000000000000000000000000000000'), []);
  });

  it('says in words when the server fails, refuses the query, or does not answer in time', async () => {
    srv.fail(1);
    await assert.rejects(client.byContentHash(ODYSSEY_HASH), (err: Error) => err instanceof SourceError && err.source === 'thediscdb' && err.status === 500 && err.message === 'TheDiscDB answered 500');
    const release = srv.hold();
    await assert.rejects(client.byContentHash(ODYSSEY_HASH), (err: Error) => err instanceof SourceError && err.message === 'TheDiscDB is not reachable (no answer within 0.3 s)');
    release();
    const closed = new TheDiscDbClient('http://127.0.0.1:9', new RateLimiter(0), 300);
    await assert.rejects(closed.byContentHash(ODYSSEY_HASH), /TheDiscDB is not reachable \(/);
  });

  it('checks the connection for the status page, and names cover URLs under /images/', async () => {
    await client.check();
    assert.equal(client.imageUrl('Movie/2001-a-space-odyssey-1968/cover.jpg'), `${srv.url}/images/Movie/2001-a-space-odyssey-1968/cover.jpg`);
    assert.equal(client.imageUrl(null), null);
  });

  it('spaces its requests with the rate limiter', async () => {
    const waits: number[] = [];
    let now = 0;
    const spaced = new TheDiscDbClient(srv.url, new RateLimiter(1000, () => now, async (ms) => { waits.push(ms); now += ms; }), 300);
    await spaced.byContentHash(ODYSSEY_HASH);
    await spaced.byGlobalDiscId(ODYSSEY_DVD_ID);
    assert.deepEqual(waits, [1000]);
  });
});
