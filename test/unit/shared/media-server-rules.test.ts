import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import * as jellyfin from '../../fixtures/media-server-rules/jellyfin.js';
import * as jv from '../../fixtures/media-server-rules/jellyfin-vectors.js';
import * as kodi from '../../fixtures/media-server-rules/kodi.js';
import * as kv from '../../fixtures/media-server-rules/kodi-vectors.js';

// The readers the library-name tests rely on, checked against the servers' own test vectors first.

describe('the Jellyfin reader passes Jellyfin\'s naming tests', () => {
  it('CleanDateTimeTests: name and year', () => {
    for (const [input, name, year] of jv.CLEAN_DATE_TIME) {
      const r = jellyfin.cleanDateTime(path.posix.basename(input));
      assert.equal(r.name.toLowerCase(), (name ?? '').toLowerCase(), input);
      assert.equal(r.year, year, input);
    }
  });

  it('CleanStringTests: what is cleaned, and what is left alone', () => {
    for (const [input, name] of jv.CLEAN_STRING_NEEDS) assert.equal(jellyfin.cleanString(input), name, input);
    for (const [input] of jv.CLEAN_STRING_NOT) assert.equal(jellyfin.cleanString(input ?? ''), null, String(input));
  });

  it('SeasonPathParserTests: season numbers of folders, with and without the parent folder', () => {
    for (const [p, parent, season, isSeason] of jv.SEASON_PATH) assert.deepEqual(jellyfin.seasonFromPath(p, parent, true, true), { seasonNumber: season, isSeasonFolder: isSeason }, p);
    for (const [p, parent, season, isSeason] of jv.SEASON_PATH_MIXED) assert.deepEqual(jellyfin.seasonFromPath(p, parent, false, false), { seasonNumber: season, isSeasonFolder: isSeason }, p);
  });

  it('SimpleEpisodeTests and EpisodeNumberTests: season and episode of SxxEyy names', () => {
    for (const [p, season, episode] of jv.EPISODE_SXXEYY) {
      const r = jellyfin.episodeFromPath(p);
      assert.ok(r, p);
      assert.deepEqual([r.season, r.episode], [season, episode], p);
    }
  });

  it('MultiVersionTests: which folders become one movie with versions', () => {
    for (const files of jv.GROUPED_AS_VERSIONS) assert.equal(jellyfin.moviesInFolder(files).length, 1, files.join(', '));
    for (const files of jv.NOT_GROUPED) assert.equal(jellyfin.moviesInFolder(files).length, files.length, files.join(', '));
  });
});

describe('the Kodi reader passes Kodi\'s tests', () => {
  it('TestUtil CleanString: title, title and year, year', () => {
    for (const [input, cleanChars, title, titleAndYear, year] of kv.CLEAN_STRING) assert.deepEqual(kodi.cleanString(input, cleanChars), { title, titleAndYear, year }, input);
  });

  it('TestVideoInfoScanner EnumerateEpisodeItem: season and episodes', () => {
    for (const [p, season, episodes] of kv.EPISODES) assert.deepEqual(kodi.enumerateEpisodes(p), episodes.map((episode) => ({ season, episode })), p);
  });

  it('the default exclusions: "-trailer" and "sample" between separators are not scanned, other words are', () => {
    assert.equal(kodi.excludedFromScan('/movies/Heat (1995)/Heat (1995)-trailer.mkv'), true);
    assert.equal(kodi.excludedFromScan('/movies/Heat (1995)/sample/heat.mkv'), true);
    assert.equal(kodi.excludedFromScan('/movies/Heat (1995)/Heat.sample.mkv'), true);
    assert.equal(kodi.excludedFromScan('/movies/Heat (1995)/Heat (1995).mkv'), false);
    assert.equal(kodi.excludedFromScan('/movies/Samples (2001)/Samples (2001).mkv'), false);
  });
});
