/**
 * Issue 38: a made-up TMDB key was saved without a check. A key is tried with its service before it
 * is saved: against the loopback stand-in of TMDB and OMDb (test/fixtures/metadata-server.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { keyRefusal } from '../../../../coordinator/system/setting-live-checks.js';
import { emptyCatalogue, OMDB_KEY, startMetadataServer, TMDB_V3_KEY, TMDB_V4_TOKEN, type MetadataServer } from '../../../fixtures/metadata-server.js';

describe('metadata keys tried before they are saved', () => {
  let meta: MetadataServer;
  let bases: { tmdb: string; tmdbImages: string; omdb: string };
  before(async () => {
    const catalogue = emptyCatalogue();
    // The title OMDb's check asks for.
    catalogue.omdbDetail.tt0133093 = { Response: 'True', Title: 'The Matrix', Year: '1999', imdbID: 'tt0133093', Type: 'movie' };
    meta = await startMetadataServer(catalogue);
    bases = { tmdb: meta.tmdbBase, tmdbImages: meta.imageBase, omdb: meta.omdbBase };
  });
  after(() => meta.close());

  it('takes a valid TMDB v3 key and v4 token, and the empty key without asking', async () => {
    assert.equal(await keyRefusal('tmdbApiKey', TMDB_V3_KEY, bases), null);
    assert.equal(await keyRefusal('tmdbApiKey', TMDB_V4_TOKEN, bases), null);
    const asked = meta.requests.length;
    assert.equal(await keyRefusal('tmdbApiKey', '', bases), null);
    assert.equal(meta.requests.length, asked);
  });

  it('refuses a made-up TMDB key with TMDB\'s own answer', async () => {
    const r = await keyRefusal('tmdbApiKey', 'ffffffffffffffffffffffffffffffff', bases);
    assert.equal(r?.code, 'tmdbKeyRefused');
    assert.match(r?.params.answer ?? '', /401: Invalid API key: You must be granted a valid key\./);
    assert.match(r?.text ?? '', /^tmdbApiKey refused: TMDB did not take the key .*; the stored key is kept$/);
  });

  it('takes an OMDb key OMDb answers with, refuses one it does not take', async () => {
    const r = await keyRefusal('omdbApiKey', 'nope1234', bases);
    assert.equal(r?.code, 'omdbKeyRefused');
    assert.match(r?.params.answer ?? '', /Invalid API key!/);
    assert.equal(await keyRefusal('omdbApiKey', OMDB_KEY, bases), null);
  });

  it('refuses a key it cannot check when the service is unreachable, naming the reason', async () => {
    const r = await keyRefusal('tmdbApiKey', TMDB_V3_KEY, { ...bases, tmdb: 'http://127.0.0.1:9/tmdb' });
    assert.equal(r?.code, 'keyCheckUnreachable');
    assert.equal(r?.params.service, 'TMDB');
    assert.match(r?.text ?? '', /could not be asked to check the key \(TMDB is not reachable/);
  });
});
