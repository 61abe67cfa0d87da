import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uiModules } from '../../fixtures/ui-modules.js';
import type { HistoryJob } from '../../../ui/src/history.js';

type J = HistoryJob;

// Local noon, so the browser's day is the date written whatever the time zone of the test machine.
const at = (day: string, minutes = 0) => new Date(new Date(`${day}T12:00:00`).getTime() + minutes * 60_000).toISOString();
const jobs: J[] = [
  { id: 'heat', title: 'Heat', status: 'completed', meta: { disc_type: 'bluray' }, created_at: at('2026-11-20'), finished_at: at('2026-11-20', 95) },
  { id: 'alien', title: 'Alien', status: 'failed', meta: { disc_type: 'dvd' }, created_at: at('2026-11-22'), finished_at: at('2026-11-22', 10) },
  { id: 'abba', title: 'ABBA – Gold', status: 'completed', meta: { disc_type: 'cd' }, created_at: at('2026-11-24'), finished_at: at('2026-11-24', 12) },
  { id: 'heat2', title: 'Heat (Director’s Cut)', status: 'transcoding', meta: null, created_at: at('2026-11-27'), finished_at: null },
  { id: 'old', title: 'Ärger im Paradies', status: 'canceled', meta: { disc_type: 'uhd' }, created_at: at('2026-10-01'), finished_at: at('2026-10-01', 1) },
];
const ids = (list: J[]) => list.map((j) => j.id);

describe('history list: filtered and sorted in the browser', () => {
  it('filters by status, disc kind, words of the title and a date range', async () => {
    const m = await uiModules();
    const f = (over: object) => ids(m.filterJobs(jobs, { ...m.NO_FILTER, ...over }));
    assert.deepEqual(f({}), ids(jobs));
    assert.deepEqual(f({ status: 'completed' }), ['heat', 'abba']);
    assert.deepEqual(f({ status: 'active' }), ['heat2']);
    assert.deepEqual(f({ kind: 'dvd' }), ['alien']);
    assert.deepEqual(f({ kind: 'unknown' }), ['heat2'], 'a job without a disc type is of unknown kind');
    assert.deepEqual(f({ text: 'heat' }), ['heat', 'heat2']);
    assert.deepEqual(f({ text: 'CUT heat' }), ['heat2'], 'every word, in any case and order');
    assert.deepEqual(f({ text: 'ärger' }), ['old']);
    assert.deepEqual(f({ from: '2026-11-22', to: '2026-11-24' }), ['alien', 'abba'], 'both ends of the range count');
    assert.deepEqual(f({ from: '2026-11-21', status: 'completed' }), ['abba']);
  });

  it('sorts by date, title and duration; running jobs last in both duration orders', async () => {
    const m = await uiModules();
    const collator = new Intl.Collator('de');
    assert.deepEqual(ids(m.sortJobs(jobs, 'newest', collator)), ['heat2', 'abba', 'alien', 'heat', 'old']);
    assert.deepEqual(ids(m.sortJobs(jobs, 'oldest', collator)), ['old', 'heat', 'alien', 'abba', 'heat2']);
    assert.deepEqual(ids(m.sortJobs(jobs, 'title', collator)), ['abba', 'alien', 'old', 'heat', 'heat2']);
    assert.deepEqual(ids(m.sortJobs(jobs, 'longest', collator)), ['heat', 'abba', 'alien', 'old', 'heat2']);
    assert.deepEqual(ids(m.sortJobs(jobs, 'shortest', collator)), ['old', 'alien', 'abba', 'heat', 'heat2']);
    assert.equal(m.jobSeconds(jobs[0]), 95 * 60);
    assert.equal(m.jobSeconds(jobs[3]), null);
  });

  it('says times, space and weeks in words a household reads, in German and English', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.savedWords(3_200_000_000), '3,2 GB gespart');
    assert.equal(m.savedWords(-500_000_000), '500 MB mehr als die Rohdaten');
    assert.equal(m.durationWords(95 * 60), '1 Stunde 35 Minuten');
    assert.equal(m.durationWords(7200), '2 Stunden');
    assert.equal(m.durationWords(30), 'unter einer Minute');
    assert.equal(m.durationWords(null), '–');
    assert.equal(m.weekLabel('2026-W05'), 'KW 5');
    m.setLang('en');
    assert.equal(m.savedWords(3_200_000_000), '3.2 GB saved');
    assert.equal(m.durationWords(60), '1 minute');
    assert.equal(m.weekLabel('2027-W01'), 'Wk 1');
    m.setLang('de');
  });
});
