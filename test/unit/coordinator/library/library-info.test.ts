import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPosterPath, jobEpisodes, libraryInfo, posterUrl } from '../../../../coordinator/library/library-info.js';
import { parseJobMeta } from '../../../../coordinator/jobs/job-meta.js';

const IMG = 'https://image.tmdb.org/t/p/w500';
/** A job as the store reads it: its meta stored as JSON and read back through the meta check. */
const job = (meta: Record<string, unknown>, title = 'Heat') => ({ title, meta: parseJobMeta(JSON.stringify(meta)) });

describe('library info per media-server profile', () => {
  it('resolves poster paths: TMDB-relative under the image base, absolute URLs as they are', () => {
    assert.equal(posterUrl('/p.jpg', IMG), `${IMG}/p.jpg`);
    assert.equal(posterUrl('https://m.media-amazon.com/x.jpg', IMG), 'https://m.media-amazon.com/x.jpg');
    assert.equal(posterUrl('p.jpg', IMG), null);
    assert.equal(posterUrl(null, IMG), null);
  });

  it('takes as poster_path only TMDB image paths and http(s) URLs', () => {
    for (const ok of ['/abc123.jpg', '/x-Y_z.png', 'https://m.media-amazon.com/images/M/MV5B@._V1_SX300.jpg', 'http://nas:8080/poster.jpg']) assert.equal(isPosterPath(ok), true, ok);
    for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:image/png;base64,AAAA', '/../../etc/passwd.jpg', '/a b.jpg', 'abc.jpg', '//evil.example/x.jpg', 'https://x/"onerror=alert(1).jpg', 'ftp://x/y.jpg', '/abc.svg', 'https://']) {
      assert.equal(isPosterPath(bad), false, bad);
    }
  });

  it('gives Jellyfin, Emby and Kodi a movie description and Plex or no server nothing', () => {
    const meta = { year: 1995, poster_path: '/p.jpg', overview: 'Plot', tmdb_id: 949, imdb_id: 'tt0113277', disc_type: 'dvd' };
    for (const profile of ['jellyfin', 'emby', 'kodi']) {
      assert.deepEqual(libraryInfo(job(meta), { mediaServerType: profile }, IMG), { profile, kind: 'movie', title: 'Heat', year: 1995, overview: 'Plot', poster_url: `${IMG}/p.jpg`, poster_policy: null, tmdb_id: 949, imdb_id: 'tt0113277' });
    }
    assert.equal(libraryInfo(job(meta), { mediaServerType: 'plex' }, IMG), null);
    assert.equal(libraryInfo(job(meta), { mediaServerType: '' }, IMG), null);
    assert.equal(libraryInfo(job({ ...meta, disc_type: 'cd' }), { mediaServerType: 'kodi' }, IMG), null);
  });

  it('has a poster off the configured image server fetched under the webhook target rules, private addresses only with allowPrivateWebhooks (issue 42)', () => {
    const elsewhere = job({ poster_path: 'http://nas.local:8080/p.jpg' });
    assert.deepEqual(libraryInfo(elsewhere, { mediaServerType: 'kodi' }, IMG)?.poster_policy, { allow_private: false });
    assert.deepEqual(libraryInfo(elsewhere, { mediaServerType: 'kodi', allowPrivateWebhooks: true }, IMG)?.poster_policy, { allow_private: true });
    assert.equal(libraryInfo(job({ poster_path: 'https://image.tmdb.org/t/p/original/p.jpg' }), { mediaServerType: 'kodi' }, IMG)?.poster_policy, null, 'same origin as the image base');
    assert.deepEqual(libraryInfo(job({ poster_path: 'https://image.tmdb.org.evil.example/p.jpg' }), { mediaServerType: 'kodi' }, IMG)?.poster_policy, { allow_private: false });
  });

  it('describes a series job by its series name, and survives corrupt meta', () => {
    const info = libraryInfo(job({ series: 'Breaking Bad', season: 2, tmdb_id: 1396 }, 'BREAKING BAD S2'), { mediaServerType: 'emby' }, IMG);
    assert.equal(info?.kind, 'series');
    assert.equal(info?.title, 'Breaking Bad');
    assert.equal(libraryInfo({ title: 'X', meta: parseJobMeta('{broken') }, { mediaServerType: 'emby' }, IMG)?.kind, 'movie');
  });

  it('reads stored episode runtimes, dropping malformed entries', () => {
    assert.deepEqual(jobEpisodes(job({ episodes: [{ episode: 1, minutes: 58 }, { episode: 'x' }, null, { episode: 2, minutes: null }] })), [
      { episode: 1, minutes: 58 },
      { episode: 2, minutes: null },
    ]);
    assert.equal(jobEpisodes(job({})), null);
  });
});
