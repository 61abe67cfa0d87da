import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { movieRoles, playAllTitles, unattendedTitles } from '../../../../agent/disc/title-rules.js';
import { highestEpisode } from '../../../../shared/output-name.js';

const t = (number: number, seconds: number) => ({ number, seconds });

describe('play all titles', () => {
  it('finds a title within 2 % of the sum of two or more others', () => {
    assert.deepEqual([...playAllTitles([t(1, 1320), t(2, 1310), t(3, 1330), t(4, 3960)])], [4]);
    assert.deepEqual([...playAllTitles([t(1, 1320), t(2, 1310), t(3, 1330), t(4, 2600)])], [4], 'two of three episodes');
    assert.deepEqual([...playAllTitles([t(1, 1320), t(2, 1310), t(3, 1330), t(4, 3960 * 1.021)])], [], 'just over 2 %');
    assert.deepEqual([...playAllTitles([t(1, 1320), t(2, 1310), t(3, 1330), t(4, 3960 * 0.981)])], [4], 'just under 2 %');
  });

  it('does not take one title of the same length for a play-all, nor equal episodes alone', () => {
    assert.deepEqual([...playAllTitles([t(1, 1320), t(2, 1320)])], []);
    assert.deepEqual([...playAllTitles([t(1, 1320), t(2, 1320), t(3, 1320)])], []);
    assert.deepEqual([...playAllTitles([])], []);
  });

  it('keeps long titles, drops short ones and series play-alls; a disc of only short titles keeps them', () => {
    const disc = [t(1, 30), t(2, 30), t(3, 30), t(4, 90)];
    assert.deepEqual(unattendedTitles(disc, 120, true), { keep: [t(1, 30), t(2, 30), t(3, 30)], short: [], playAll: [t(4, 90)] });
    assert.deepEqual(unattendedTitles(disc, 60, false), { keep: [t(4, 90)], short: [t(1, 30), t(2, 30), t(3, 30)], playAll: [] });
  });
});

describe('movie files: main feature, versions, extras', () => {
  it('names the longest the main feature, titles within 10 % versions, the rest extras', () => {
    assert.deepEqual(movieRoles([300, 295, 40, 25]), [{ role: 'main' }, { role: 'version', n: 2 }, { role: 'extra', n: 1 }, { role: 'extra', n: 2 }]);
    assert.deepEqual(movieRoles([40, 300, 270, 269]), [{ role: 'extra', n: 1 }, { role: 'main' }, { role: 'version', n: 2 }, { role: 'extra', n: 2 }], '270 is 10 %, 269 is more');
    assert.deepEqual(movieRoles([300]), [{ role: 'main' }]);
    assert.deepEqual(movieRoles([]), []);
  });

  it('names the main feature the rip chose by evidence, though shorter, and measures versions from it', () => {
    assert.deepEqual(movieRoles([7800, 7260, 600], 1), [{ role: 'version', n: 2 }, { role: 'main' }, { role: 'extra', n: 1 }]);
    assert.deepEqual(movieRoles([7800, 6000], 1), [{ role: 'extra', n: 1 }, { role: 'main' }], '7800 is more than 10 % longer than 6000');
    assert.deepEqual(movieRoles([300, 40], 5), [{ role: 'main' }, { role: 'extra', n: 1 }], 'an index out of range: the longest');
    assert.deepEqual(movieRoles([300, 40], null), [{ role: 'main' }, { role: 'extra', n: 1 }]);
  });
});

describe('episode numbers already in a season folder', () => {
  it('finds the highest SxxEyy of the season, double episodes included', () => {
    assert.equal(highestEpisode(['Show - S02E01.mkv', 'Show - S02E03E04.mkv', 'Show - S01E09.mkv', 'tvshow.nfo'], 2), 4);
    assert.equal(highestEpisode(['Show - s02e07.mkv'], 2), 7);
    assert.equal(highestEpisode(['Show - S02 - t01.mkv'], 2), 0);
    assert.equal(highestEpisode([], 2), 0);
  });
});
