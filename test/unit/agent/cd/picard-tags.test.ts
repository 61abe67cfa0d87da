import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { vorbisTags } from '../../../../agent/cd/album-files.js';
import { albumFromRelease, rankReleases } from '../../../../coordinator/metadata/album-choice.js';
import { parseRelease } from '../../../../coordinator/metadata/musicbrainz.js';
import { mbRelease, VARIOUS_ARTISTS_MBID, type ReleaseSpec } from '../../../fixtures/musicbrainz-server.js';

/**
 * Picard's tag mapping for Vorbis comments (Picard documentation, appendix "Tag Mapping"; Picard's
 * picard/formats/vorbis.py writes totaltracks as TRACKTOTAL and TOTALTRACKS, totaldiscs as DISCTOTAL
 * and TOTALDISCS): Picard's internal name → the Vorbis comment. Only the fields a release gives.
 */
const PICARD_VORBIS: Record<string, string[]> = {
  album: ['ALBUM'],
  albumartist: ['ALBUMARTIST'],
  albumartistsort: ['ALBUMARTISTSORT'],
  artist: ['ARTIST'],
  artistsort: ['ARTISTSORT'],
  asin: ['ASIN'],
  barcode: ['BARCODE'],
  catalognumber: ['CATALOGNUMBER'],
  compilation: ['COMPILATION'],
  date: ['DATE'],
  discnumber: ['DISCNUMBER'],
  label: ['LABEL'],
  media: ['MEDIA'],
  musicbrainz_albumartistid: ['MUSICBRAINZ_ALBUMARTISTID'],
  musicbrainz_albumid: ['MUSICBRAINZ_ALBUMID'],
  musicbrainz_artistid: ['MUSICBRAINZ_ARTISTID'],
  musicbrainz_discid: ['MUSICBRAINZ_DISCID'],
  musicbrainz_recordingid: ['MUSICBRAINZ_TRACKID'],
  musicbrainz_releasegroupid: ['MUSICBRAINZ_RELEASEGROUPID'],
  musicbrainz_trackid: ['MUSICBRAINZ_RELEASETRACKID'],
  originaldate: ['ORIGINALDATE'],
  originalyear: ['ORIGINALYEAR'],
  releasecountry: ['RELEASECOUNTRY'],
  releasestatus: ['RELEASESTATUS'],
  releasetype: ['RELEASETYPE'],
  script: ['SCRIPT'],
  title: ['TITLE'],
  totaldiscs: ['DISCTOTAL', 'TOTALDISCS'],
  totaltracks: ['TRACKTOTAL', 'TOTALTRACKS'],
  tracknumber: ['TRACKNUMBER'],
};

const DISC_1 = 'Dr2EtzSM39D9_zS0uLw6CQcfvEw-';
const tracks = (disc: number) => [1, 2, 3].map((n) => ({ title: `CD${disc} Titel ${n}`, id: `track-${disc}-${n}`, recording: `rec-${disc}-${n}`, ms: [5000, 7533, 3133][n - 1] + disc * 1000, artist: `Interpret ${disc}${n}` }));

/** A two-disc Various Artists compilation with labels, a release group and an ASIN, in MusicBrainz's JSON. */
const SPEC: ReleaseSpec = {
  id: 'rel-va', title: 'Bravo Töne', artist: 'Various Artists', artistId: VARIOUS_ARTISTS_MBID, artistSortName: 'Various Artists', date: '1997-05-12', country: 'DE',
  discId: null, offsets: [], sectors: 0, tracks: [], front: false, asin: 'B000024XYZ',
  labels: [{ name: 'Testton Records', catalog: 'TTR 001' }, { name: 'Zweitlabel', catalog: 'ZW-2' }],
  releaseGroup: { id: 'rg-bravo', primaryType: 'Album', secondaryTypes: ['Compilation'], firstReleaseDate: '1996-11-01' },
  media: [
    { position: 1, discId: DISC_1, offsets: [150, 525, 1090], sectors: 1325, tracks: tracks(1) },
    { position: 2, discId: null, offsets: [], sectors: 0, tracks: tracks(2) },
  ],
};

describe("Picard's tag mapping for the tags a MusicBrainz release gives", () => {
  const release = parseRelease(mbRelease(SPEC))!;
  const [best] = rankReleases([release], DISC_1, '1 3 1325 150 525 1090', 'DE');
  const album = albumFromRelease(best, 'http://covers.test', DISC_1);
  const tags = vorbisTags(album, 2, 3);
  const values = (key: string): string[] => tags.filter(([k]) => k === key).map(([, v]) => v);

  it('writes only Vorbis comment names Picard writes, and every one of those a release gives', () => {
    const picardNames = new Set(Object.values(PICARD_VORBIS).flat());
    assert.deepEqual(tags.map(([k]) => k).filter((k) => !picardNames.has(k)), [], 'names Picard does not write');
    assert.deepEqual([...picardNames].filter((k) => values(k).length === 0), [], 'Picard tags missing');
  });

  it('fills them as Picard does: totals, full and original dates, lower-case status and types, one comment per label, artist id and type', () => {
    const picard: Record<string, string[]> = {
      album: ['Bravo Töne'],
      albumartist: ['Various Artists'],
      albumartistsort: ['Various Artists'],
      artist: ['Interpret 12'],
      artistsort: ['Interpret 12'],
      asin: ['B000024XYZ'],
      barcode: ['4006381333931'],
      catalognumber: ['TTR 001', 'ZW-2'],
      compilation: ['1'],
      date: ['1997-05-12'],
      discnumber: ['1'],
      label: ['Testton Records', 'Zweitlabel'],
      media: ['CD'],
      musicbrainz_albumartistid: [VARIOUS_ARTISTS_MBID],
      musicbrainz_albumid: ['rel-va'],
      musicbrainz_artistid: ['artist-1'],
      musicbrainz_discid: [DISC_1],
      musicbrainz_recordingid: ['rec-1-2'],
      musicbrainz_releasegroupid: ['rg-bravo'],
      musicbrainz_trackid: ['track-1-2'],
      originaldate: ['1996-11-01'],
      originalyear: ['1996'],
      releasecountry: ['DE'],
      releasestatus: ['official'],
      releasetype: ['album', 'compilation'],
      script: ['Latn'],
      title: ['CD1 Titel 2'],
      totaldiscs: ['2'],
      totaltracks: ['3'],
      tracknumber: ['2'],
    };
    for (const [name, expected] of Object.entries(picard)) for (const key of PICARD_VORBIS[name]) assert.deepEqual(values(key), expected, `${name} as ${key}`);
  });

  it('leaves out what the release does not say: no COMPILATION for one artist, DATE is the year a job gave instead', () => {
    const single = albumFromRelease(rankReleases([parseRelease(mbRelease({ ...SPEC, artist: 'Die Testtöne', artistId: 'a1', asin: null }))!], DISC_1, '1 3 1325 150 525 1090', 'DE')[0], 'http://c', DISC_1);
    const t = vorbisTags(single, 1, 3);
    assert.ok(!t.some(([k]) => k === 'COMPILATION' || k === 'ASIN'));
    assert.deepEqual(vorbisTags({ ...single, year: 2001 }, 1, 3).filter(([k]) => k === 'DATE'), [['DATE', '2001']]);
  });
});
