/**
 * Issue 38: a series ticked in the rip dialog landed in "Filme/<Series>/Season 01". The server
 * refuses a series rip whose target is the movies quick-pick folder or below it; the dialog moves
 * the target to the series folder when "Serie" is ticked.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { seriesTargetRefusal } from '../../../../coordinator/discs/series-target.js';
import { uiModules } from '../../../fixtures/ui-modules.js';

const root = '/srv/media';
const picks = { movies: 'Filme', series: 'Serien' };

describe('a series rip and the movies folder', () => {
  it('refuses the movies folder and folders below it, with both folders named', () => {
    for (const target of ['/srv/media/Filme', '/srv/media/Filme/', '/srv/media/Filme/Show']) {
      const reason = seriesTargetRefusal(root, picks, target);
      assert.match(reason ?? '', /series folder \/srv\/media\/Serien, not into the movies folder \/srv\/media\/Filme/, target);
    }
  });

  it('takes the series folder, other folders, and a neighbour whose name only starts like the movies folder', () => {
    for (const target of ['/srv/media/Serien', '/srv/media/Serien/Show', '/srv/media/Anime', '/srv/media/Filme-alt', '/srv/media']) {
      assert.equal(seriesTargetRefusal(root, picks, target), null, target);
    }
  });

  it('refuses nothing when series are kept inside the movies folder by the settings', () => {
    assert.equal(seriesTargetRefusal(root, { movies: 'Video', series: 'Video/Serien' }, '/srv/media/Video/Serien'), null);
    assert.equal(seriesTargetRefusal(root, { movies: 'Video', series: 'Video' }, '/srv/media/Video'), null);
  });
});

describe('ticking "Serie" in the rip dialog', () => {
  const quick = { movies: '/m/Filme', series: '/m/Serien' };
  const switchSeries: Awaited<ReturnType<typeof uiModules>>['switchSeries'] = (...a) => ui.switchSeries(...a);
  let ui: Awaited<ReturnType<typeof uiModules>>;
  before(async () => {
    ui = await uiModules();
  });

  it('moves the movies target to the series folder and names the series after the identified title', () => {
    assert.deepEqual(switchSeries(true, { series: '', title: 'Dark', targetDir: '/m/Filme' }, quick), { series: 'Dark', title: 'Dark', targetDir: '/m/Serien' });
    assert.deepEqual(switchSeries(true, { series: '', title: 'Dark', targetDir: '' }, quick), { series: 'Dark', title: 'Dark', targetDir: '/m/Serien' });
  });

  it('keeps a typed series name and a folder picked elsewhere', () => {
    assert.deepEqual(switchSeries(true, { series: 'Dark (2017)', title: 'Dark', targetDir: '/m/Anime' }, quick), { series: 'Dark (2017)', title: 'Dark', targetDir: '/m/Anime' });
  });

  it('unticked, goes back to the movies folder and keeps the series name as the title when none is typed', () => {
    assert.deepEqual(switchSeries(false, { series: 'Dark', title: '', targetDir: '/m/Serien' }, quick), { series: 'Dark', title: 'Dark', targetDir: '/m/Filme' });
  });

  it('without the quick picks (settings not loaded yet) leaves the folder alone', () => {
    assert.equal(switchSeries(true, { series: '', title: 'Dark', targetDir: '/m/Filme' }, null).targetDir, '/m/Filme');
  });
});
