import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { knownTitles, librarySummary } from '../../../../coordinator/discs/title-plan.js';
import { LibraryTitles } from '../../../../coordinator/library/library-titles.js';
import { discTitles } from '../../../../coordinator/metadata/thediscdb/title-matcher.js';
import { parseDisc, type TddbDisc } from '../../../../coordinator/metadata/thediscdb/types.js';
import type { RippedTitle } from '../../../../shared/protocol.js';
import { memoryDatabase } from '../../../../shared/sqlite.js';
import { fixtureJson } from '../../../fixtures/thediscdb-mirror.js';

const odyssey = discTitles(parseDisc(fixtureJson('2001-2011-dvd-disc01.json')) as TddbDisc);
const FP = 'dvd:FF49F5E9E708A9EF14691846C438F96B';

/** What the agent reports of a ripped 2001 title (MakeMKV with a 60 s minimum: the trailer is title 2). */
const mainRipped: RippedTitle = {
  number: 0,
  file: '/raw/j1/2001 A SPACE ODYSSEY_t00.mkv',
  source_file: '01',
  segment_map: '1-19,20-35',
  seconds: 8904,
  size_bytes: 6858530816,
  role: { role: 'main_movie', name: '2001: A Space Odyssey' },
};
const trailerRipped: RippedTitle = {
  number: 2,
  file: '/raw/j1/2001 A SPACE ODYSSEY_t02.mkv',
  source_file: '08',
  segment_map: '1',
  seconds: 111,
  size_bytes: 73377792,
  role: { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null },
};
const OUT = '/media/Filme/2001 - A Space Odyssey (1968)';

function store() {
  const db = memoryDatabase(coordinatorMigrations);
  return { db, titles: new LibraryTitles(db) };
}

describe('LibraryTitles: the titles finished jobs put into the library (migration 12)', () => {
  it('has an empty table after the migrations', () => {
    const { db, titles } = store();
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('library_titles')").all().map((c) => c.name);
    assert.deepEqual(columns, ['id', 'fingerprint', 'job_id', 'source_file', 'segment_map', 'seconds', 'size_bytes', 'role', 'output_file', 'ripped_at']);
    assert.deepEqual(titles.forDisc(FP), []);
  });

  it('remembers each title with its evidence, its role and the output file at its place', () => {
    const { titles } = store();
    titles.record(FP, 'j1', [mainRipped, trailerRipped], [`${OUT}/2001 - A Space Odyssey (1968).mkv`, `${OUT}/Trailers/Theatrical Trailer.mkv`]);
    assert.deepEqual(titles.forDisc(FP), [
      { number: 0, source_file: '01', segment_map: '1-19,20-35', seconds: 8904, size_bytes: 6858530816, role: mainRipped.role, output_file: `${OUT}/2001 - A Space Odyssey (1968).mkv`, job_id: 'j1' },
      { number: 1, source_file: '08', segment_map: '1', seconds: 111, size_bytes: 73377792, role: trailerRipped.role, output_file: `${OUT}/Trailers/Theatrical Trailer.mkv`, job_id: 'j1' },
    ]);
    assert.deepEqual(titles.forDisc('dvd:0000'), [], 'another disc identity has none');
  });

  it('keeps no output file when the counts of titles and outputs differ', () => {
    const { titles } = store();
    titles.record(FP, 'j1', [mainRipped, trailerRipped], [`${OUT}/2001 - A Space Odyssey (1968).mkv`]);
    assert.deepEqual(titles.forDisc(FP).map((t) => t.output_file), [null, null]);
  });

  it('stores whole seconds and bytes, and a title without source, segments or role', () => {
    const { titles } = store();
    titles.record(FP, 'j1', [{ number: 4, file: '/raw/x.mkv', seconds: 110.6, size_bytes: 1000.4, role: null }], ['/m/x.mkv']);
    assert.deepEqual(titles.forDisc(FP), [{ number: 0, source_file: null, segment_map: null, seconds: 111, size_bytes: 1000, role: null, output_file: '/m/x.mkv', job_id: 'j1' }]);
  });

  it('replaces a job\'s rows when the job is recorded again (a repeated job_done), and keeps other jobs\' rows', () => {
    const { titles } = store();
    titles.record(FP, 'j1', [mainRipped], ['/m/a.mkv']);
    titles.record(FP, 'j2', [trailerRipped], ['/m/b.mkv']);
    titles.record(FP, 'j1', [mainRipped], ['/m/a.mkv']);
    assert.deepEqual(
      titles.forDisc(FP).map((t) => [t.job_id, t.source_file]),
      [
        ['j2', '08'],
        ['j1', '01'],
      ],
      'oldest first: j1\'s rows are new ones now',
    );
    titles.record(FP, 'j1', [], []);
    assert.deepEqual(titles.forDisc(FP).map((t) => t.job_id), ['j2'], 'recorded with no titles: its rows are gone');
  });

  it('reads a stored role that is no role as none', () => {
    const { db, titles } = store();
    const insert = db.prepare('INSERT INTO library_titles (fingerprint, job_id, source_file, segment_map, seconds, size_bytes, role, output_file, ripped_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
    for (const role of ['{broken', '"main_movie"', '{"name":"x"}', 'null']) insert.run(FP, 'j9', '01', null, 8904, 0, role, null, '2026-11-27T00:00:00.000Z');
    assert.deepEqual(titles.forDisc(FP).map((t) => t.role), [null, null, null, null]);
  });

  it('lets the disc\'s titles find what is in the library: the main movie of a first rip, both after a second', () => {
    const { titles } = store();
    const choice = { kinds: ['main_feature', 'extras'] as const, mainFeatureOnly: false, minSeconds: 120 };
    titles.record(FP, 'j1', [mainRipped], [`${OUT}/2001 - A Space Odyssey (1968).mkv`]);
    let known = knownTitles(odyssey, titles.forDisc(FP), choice);
    assert.deepEqual(known.filter((t) => t.in_library).map((t) => t.index), [0]);
    assert.deepEqual(known.filter((t) => t.wanted).map((t) => t.index), [7]);
    assert.deepEqual(librarySummary(known, choice).main_feature, { total: 1, in_library: 1 });

    titles.record(FP, 'j2', [trailerRipped], [`${OUT}/Trailers/Theatrical Trailer.mkv`]);
    known = knownTitles(odyssey, titles.forDisc(FP), choice);
    assert.deepEqual(known.filter((t) => t.in_library).map((t) => t.index), [0, 7]);
    assert.deepEqual(known.filter((t) => t.wanted), []);
    assert.deepEqual(librarySummary(known, choice).extras, { total: 1, in_library: 1 }, 'the trailer; the logos and warnings count nowhere');
  });
});
