/** Issue 40: the rules of a box-set session (coordinator/sessions/session-plan.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { discPlace, endText, episodeNumbering, missingDiscs, nextDisc, nextDiscText, roleEpisodes, type Session, type SessionDisc } from '../../../../coordinator/sessions/session-plan.js';

const disc = (disc_number: number, state: SessionDisc['state'], files: number | null = null, range: [number, number] | null = null): SessionDisc => ({
  disc_number,
  job_id: `job-${disc_number}`,
  state,
  files,
  episode_first: range?.[0] ?? null,
  episode_last: range?.[1] ?? null,
  waiting: false,
});

const session = (discs: SessionDisc[], disc_total: number | null = 3): Session => ({
  id: 's1',
  kind: 'series',
  series: 'Show',
  season: 1,
  disc_total,
  drive: null,
  release: null,
  origin: 'dialog',
  state: 'open',
  created_at: '2026-11-28T00:00:00.000Z',
  ended_at: null,
  discs,
});

describe('a disc’s place in the session', () => {
  it('takes the number the disc names (label D<n>, TheDiscDB, MusicBrainz medium) before insertion order', () => {
    assert.deepEqual(discPlace(session([]), 2), { disc_number: 2 });
    assert.deepEqual(discPlace(session([disc(1, 'done')]), null), { disc_number: 2 });
    assert.deepEqual(discPlace(session([disc(1, 'done'), disc(3, 'ripping')]), null), { disc_number: 2 });
  });

  it('gives a failed disc’s place to a new try and refuses a place held or outside the set, in words', () => {
    assert.deepEqual(discPlace(session([disc(1, 'failed')]), null), { disc_number: 1 });
    assert.match((discPlace(session([disc(2, 'done')]), 2) as { refusal: string }).refusal, /disc 2 of the session is ripped already \(job job-2\)/);
    assert.match((discPlace(session([]), 4) as { refusal: string }).refusal, /disc 4, but the session has 3 discs/);
    assert.match((discPlace(session([disc(1, 'done'), disc(2, 'done'), disc(3, 'ripping')]), null) as { refusal: string }).refusal, /all 3 discs/);
  });
});

describe('episode numbers across the discs', () => {
  it('continues each disc after the one before it in disc order: E01-E09 over three discs of three', () => {
    assert.deepEqual(episodeNumbering([disc(1, 'done', 3)]), [{ job_id: 'job-1', disc_number: 1, first: 1, last: 3 }]);
    assert.deepEqual(episodeNumbering([disc(1, 'done', 3, [1, 3]), disc(2, 'done', 3)]), [{ job_id: 'job-2', disc_number: 2, first: 4, last: 6 }]);
    assert.deepEqual(episodeNumbering([disc(1, 'done', 3, [1, 3]), disc(2, 'done', 3, [4, 6]), disc(3, 'done', 3)]), [{ job_id: 'job-3', disc_number: 3, first: 7, last: 9 }]);
  });

  it('numbers nothing after a gap: disc 3 ripped before disc 2 waits, and is numbered once disc 2 is', () => {
    assert.deepEqual(episodeNumbering([disc(1, 'done', 3, [1, 3]), disc(3, 'done', 4)]), []);
    assert.deepEqual(episodeNumbering([disc(1, 'done', 3, [1, 3]), disc(2, 'ripping'), disc(3, 'done', 4)]), []);
    assert.deepEqual(episodeNumbering([disc(1, 'done', 3, [1, 3]), disc(2, 'done', 2), disc(3, 'done', 4)]), [
      { job_id: 'job-2', disc_number: 2, first: 4, last: 5 },
      { job_id: 'job-3', disc_number: 3, first: 6, last: 9 },
    ]);
  });

  it('counts on after a disc the database numbered, even behind a gap', () => {
    assert.deepEqual(episodeNumbering([disc(2, 'done', 3, [4, 6]), disc(3, 'done', 3)]), [{ job_id: 'job-3', disc_number: 3, first: 7, last: 9 }]);
  });

  it('takes the episode range from TheDiscDB’s roles', () => {
    const ep = (first: number, last: number) => ({ role: 'episode' as const, season: 1, episodes: { first, last }, name: null });
    assert.deepEqual(roleEpisodes([ep(5, 5), null, ep(6, 7)] as never), { first: 5, last: 7 });
    assert.equal(roleEpisodes([null, undefined]), null);
  });
});

describe('progress, next disc and the end', () => {
  it('names the missing discs (a failed disc counts as missing) and the disc to insert next', () => {
    const s = session([disc(1, 'done'), disc(3, 'failed')], 4);
    assert.deepEqual(missingDiscs(s), [2, 3, 4]);
    assert.equal(nextDisc(s), 2);
    assert.equal(nextDiscText(s, 2), 'insert disc 2 of 4 of "Show", season 1');
    assert.equal(nextDisc(session([disc(1, 'done'), disc(2, 'done'), disc(3, 'ripping')])), null);
  });

  it('asks for the disc after the highest when the set’s size is unknown (a label names no total)', () => {
    const s = session([disc(1, 'done'), disc(2, 'done')], null);
    assert.equal(nextDisc(s), 3);
    assert.equal(nextDiscText(s, 3), 'insert disc 3 of "Show", season 1');
  });

  it('says at the end which discs are done, missing and failed', () => {
    assert.equal(endText(session([disc(1, 'done'), disc(3, 'done')])), 'session "Show", season 1 ended: 2 of 3 disc(s) done; missing: disc 2');
    assert.equal(endText(session([disc(1, 'done'), disc(2, 'failed')], 2)), 'session "Show", season 1 ended: 1 of 2 disc(s) done; failed: disc 2');
  });
});
