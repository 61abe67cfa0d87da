import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergedMeta, parseJobMeta } from '../../../../coordinator/jobs/job-meta.js';

const parse = (meta: unknown) => parseJobMeta(JSON.stringify(meta));

describe('job meta: parsed and checked once', () => {
  it('is no meta when the stored value is absent, corrupt or no object', () => {
    for (const raw of [null, '', '{', 'broken', '[1,2]', '"text"', '42', 'null', 'true']) assert.equal(parseJobMeta(raw), null, String(raw));
  });

  it('keeps a meta as the current version writes it unchanged', () => {
    const meta = {
      titles: [0, 3],
      work_dir: '/media/work',
      fingerprint: 'dvd:3F2C9A7E0B1D4C5E6F708192A3B4C5D6',
      label_fingerprint: 'd94b641ab4b8f509',
      disc_ids: { dvd_disc_id: '3F2C9A7E0B1D4C5E6F708192A3B4C5D6', aacs_disc_id: null, content_hash: '8E1F0C3B5A7D9E2F4A6C8B0D1E3F5A7C', file_fingerprint: null },
      disc_label: 'HEAT',
      disc_type: 'dvd',
      year: 1995,
      series: null,
      season: null,
      main_feature_only: true,
      title_source: 'lookup',
      metadata_source: 'tmdb',
      confidence: 0.93,
      poster_path: '/p.jpg',
      overview: 'Plot',
      tmdb_id: 949,
      imdb_id: 'tt0113277',
      original_language: 'eng',
      audio_languages: ['deu', 'eng'],
      subtitle_languages: [],
      transcode_node: 'keller@nas',
      rip_fertig: true,
      raw_files: ['/media/work/x/title_t00.mkv'],
      output_files: ['Heat (1995).mkv'],
      streams: [{ file: 'Heat (1995).mkv', audio: [], subtitles: [] }],
      episodes: [{ episode: 1, minutes: 58 }, { episode: 2, minutes: null }],
      disc_number: 2,
      episodes_guessed: true,
      retry_of: '11111111-1111-4111-8111-111111111111',
      album: {
        artist: 'A',
        album: 'B',
        year: 2001,
        disc_number: 1,
        release_id: null,
        tracks: [{ number: 1, title: 'T', artist: null, recording_id: null, track_id: null }],
        cover_url: null,
        source: 'cd-text',
      },
      musicbrainz_disc_id: 'abc-',
      ripped_titles: [
        { number: 0, file: '/media/work/x/title_t00.mkv', source_file: '01', segment_map: '1-19,20-35', seconds: 8904, size_bytes: 6858530816, role: { role: 'main_movie', name: 'Heat' } },
        { number: 4, file: '/media/work/x/title_t04.mkv', source_file: null, segment_map: null, seconds: 60, size_bytes: 1000, role: null },
      ],
      library_folder: '/media/Filme/Heat (1995)',
    };
    assert.equal(JSON.stringify(parse(meta)), JSON.stringify(meta), 'the same JSON, key order included');
  });

  it('drops a value of the wrong type and keeps the rest of the row usable', () => {
    const meta = parse({
      year: '1995',
      series: 7,
      season: '2',
      titles: [1, 'two'],
      rip_fertig: 'yes',
      fingerprint: 12,
      audio_languages: ['deu', 3],
      subtitle_languages: 'eng',
      transcode_node: null,
      title_source: 'guess',
      tmdb_id: 'tt1',
      confidence: Number.NaN,
      streams: [{ file: 'a.mkv' }],
      album: { artist: 'A' },
      poster_path: '/ok.jpg',
    });
    assert.deepEqual(meta, { poster_path: '/ok.jpg' });
  });

  it('takes null where the type allows it (year, series, season) and nowhere else', () => {
    assert.deepEqual(parse({ year: null, series: null, season: null, work_dir: null, rip_fertig: null }), { year: null, series: null, season: null });
  });

  it('cleans lists the way their readers did: output files and episodes lose only their bad entries', () => {
    assert.deepEqual(parse({ output_files: ['a.mkv', 3, null, 'b.mkv'] })?.output_files, ['a.mkv', 'b.mkv']);
    assert.deepEqual(parse({ episodes: [{ episode: 1, minutes: 58 }, { episode: 'x' }, null, { episode: 2, minutes: '40' }] })?.episodes, [
      { episode: 1, minutes: 58 },
      { episode: 2, minutes: null },
    ]);
    assert.equal(parse({ episodes: 'none' })?.episodes, undefined);
  });

  it('completes an album stored by an older version, and drops one that is no album', () => {
    assert.deepEqual(parse({ album: { artist: 'A', album: 'B', tracks: [{ number: 1, title: 'T' }, { number: 'x' }] } })?.album, {
      artist: 'A',
      album: 'B',
      year: null,
      disc_number: 1,
      release_id: null,
      tracks: [{ number: 1, title: 'T', artist: null, recording_id: null, track_id: null }],
      cover_url: null,
      source: 'none',
    });
    assert.equal(parse({ album: 'B' })?.album, undefined);
  });

  it('keeps the disc ids as an object of texts or nulls (a missing id is null), and drops anything else', () => {
    assert.equal(parse({ disc_ids: null })?.disc_ids, null);
    assert.deepEqual(parse({ disc_ids: { dvd_disc_id: 'AAA' } })?.disc_ids, { dvd_disc_id: 'AAA', aacs_disc_id: null, content_hash: null, file_fingerprint: null });
    for (const bad of ['dvd:AAA', [], { dvd_disc_id: 3 }, { content_hash: false }]) assert.equal(parse({ disc_ids: bad, year: 2001 })?.disc_ids, undefined, JSON.stringify(bad));
    assert.equal(parse({ label_fingerprint: 7 })?.label_fingerprint, undefined);
  });

  it('keeps the ripped titles of a recognised disc, and drops the list when one title is malformed', () => {
    const trailer = { number: 7, file: '/w/2001 A SPACE ODYSSEY_t07.mkv', source_file: '08', segment_map: '1', seconds: 111, size_bytes: 73377792, role: { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null } };
    assert.deepEqual(parse({ ripped_titles: [trailer] })?.ripped_titles, [trailer]);
    assert.deepEqual(parse({ ripped_titles: [] })?.ripped_titles, []);
    const { role: _role, ...noRole } = trailer;
    const { file: _file, ...noFile } = trailer;
    for (const bad of [noRole, noFile, { ...trailer, seconds: '111' }, { ...trailer, number: null }, { ...trailer, role: 'extra' }, { ...trailer, role: {} }, null]) {
      assert.equal(parse({ ripped_titles: [trailer, bad], year: 1968 })?.ripped_titles, undefined, JSON.stringify(bad));
    }
    assert.equal(parse({ ripped_titles: 'none' })?.ripped_titles, undefined);
    assert.equal(parse({ ripped_titles: [noRole], year: 1968 })?.year, 1968, 'the rest of the row stays usable');
  });

  it('keeps keys it does not know, of older rows and newer versions, as they are', () => {
    const meta = parse({ legacy_flag: 1, from_the_future: { nested: [1, 'x'] }, year: 2001 });
    assert.deepEqual(meta, { legacy_flag: 1, from_the_future: { nested: [1, 'x'] }, year: 2001 });
  });

  it('is not fooled by keys named like object internals', () => {
    const meta = parseJobMeta('{"__proto__":{"year":"bad"},"constructor":1,"toString":"x","year":1999}');
    assert.equal(meta?.year, 1999);
    assert.equal(Object.getPrototypeOf(meta), Object.prototype);
    assert.equal((meta as Record<string, unknown>).constructor, 1);
  });

  it('merges a patch over the stored meta: patch keys win, an undefined one removes its key, unknown keys stay', () => {
    const stored = parse({ year: 1995, rip_fertig: false, legacy_flag: 1 });
    assert.deepEqual(JSON.parse(mergedMeta(stored, { rip_fertig: true, year: undefined })), { rip_fertig: true, legacy_flag: 1 });
    assert.deepEqual(JSON.parse(mergedMeta(null, { titles: [1] })), { titles: [1] });
  });
});
