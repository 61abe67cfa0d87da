import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseMakemkvInfo } from '../../../agent/tools/makemkv-parser.js';
import { sourceFields } from '../../../agent/tools/rippers.js';
import { discTitles } from '../../../coordinator/metadata/thediscdb/title-matcher.js';
import { parseDisc, type TddbDisc } from '../../../coordinator/metadata/thediscdb/types.js';
import {
  compareTitles,
  describeRole,
  kindOfRole,
  matchTitles,
  RIP_TITLE_KINDS,
  type DiscTitle,
  type ScannedEvidence,
  type TitleRole,
} from '../../../shared/disc-titles.js';
import { fixtureJson, TDDB_FIXTURES } from '../../fixtures/thediscdb-mirror.js';

/** The scan an agent sends for a TheDiscDB capture (its HSH: lines are TheDiscDB's, not MakeMKV's). */
function scanOf(capture: string): ScannedEvidence[] {
  const lines = fs.readFileSync(path.join(TDDB_FIXTURES, capture), 'utf8').split(/\r?\n/).filter((l) => !l.startsWith('HSH:'));
  return parseMakemkvInfo(lines).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, ...sourceFields(t) }));
}

/** MakeMKV with a minimum length: shorter titles are left out and the rest numbered again from 0. */
function withMinLength<T extends ScannedEvidence>(scan: T[], seconds: number): T[] {
  return scan.filter((t) => t.seconds >= seconds).map((t, i) => ({ ...t, number: i }));
}

const odyssey: DiscTitle[] = discTitles(parseDisc(fixtureJson('2001-2011-dvd-disc01.json')) as TddbDisc);
const office: DiscTitle[] = discTitles(parseDisc(fixtureJson('the-office-2021-season-4-blu-ray-disc01.json')) as TddbDisc);
const odysseyScan = scanOf('2001-2011-dvd-disc01.txt');
const officeScan = scanOf('the-office-s4d1-sample-disc-log.txt');

describe('disc titles: a scanned title against a known one (compareTitles)', () => {
  const main = odysseyScan[0];
  const known = odyssey[0];

  it('scores the 2001 DVD main movie on all four kinds of evidence (the size the same to the byte)', () => {
    assert.deepEqual(compareTitles(main, known), { score: 10, evidence: ['source', 'segments', 'duration', 'size'] });
  });

  it('reads a DVD title number as a number and a playlist name in any case', () => {
    assert.deepEqual(compareTitles({ number: 5, seconds: 0, size_bytes: 0, source_file: '1' }, known)?.evidence, ['source']);
    const playlist = office.find((t) => t.source_file === '00003.mpls');
    assert.ok(playlist);
    assert.deepEqual(compareTitles({ number: 0, seconds: 2523, size_bytes: 0, source_file: '00003.MPLS' }, playlist)?.evidence, ['source', 'duration']);
  });

  it('takes the original title id (TINFO 24) as the source when the scan has no source file', () => {
    assert.deepEqual(compareTitles({ number: 0, seconds: 8904, size_bytes: 0, original_title_id: '01' }, known)?.evidence, ['source', 'duration']);
    assert.equal(compareTitles({ number: 0, seconds: 8904, size_bytes: 0, original_title_id: '02' }, known), null);
  });

  it('reads a segment map without the spaces around its commas', () => {
    assert.deepEqual(compareTitles({ number: 0, seconds: 0, size_bytes: 0, segment_map: ' 1-19 , 20-35 ' }, known)?.evidence, ['segments']);
  });

  it('allows a second either way for rounding, not two', () => {
    assert.ok(compareTitles({ ...main, seconds: 8905 }, known));
    assert.ok(compareTitles({ ...main, seconds: 8903 }, known));
    assert.equal(compareTitles({ ...main, seconds: 8906 }, known), null);
    assert.equal(compareTitles({ ...main, seconds: 8902 }, known), null);
  });

  it('counts a size within 1 % as near (a lower score), and a size further off against a title known by nothing else', () => {
    const near = compareTitles({ number: 0, seconds: 8904, size_bytes: 6_860_000_000 }, known);
    assert.deepEqual(near, { score: 2, evidence: ['duration', 'size'] });
    assert.equal(compareTitles({ number: 0, seconds: 8904, size_bytes: 6_000_000_000 }, known), null);
    // The source agrees: an estimate far off does not break the pair, it only adds nothing.
    assert.deepEqual(compareTitles({ number: 0, seconds: 8904, size_bytes: 6_000_000_000, source_file: '01' }, known), { score: 5, evidence: ['source', 'duration'] });
  });

  it('refuses a duration alone: the 2001 DVD has two logos of 12 s', () => {
    const twelve = odyssey.filter((t) => t.seconds === 12);
    assert.equal(twelve.length, 2);
    for (const t of twelve) assert.equal(compareTitles({ number: 0, seconds: 12, size_bytes: 0 }, t), null);
  });

  it('ignores what one side does not know (no seconds, no size)', () => {
    const bare: DiscTitle = { index: 0, source_file: '01', segment_map: null, seconds: 0, size_bytes: 0, role: { role: 'unidentified' } };
    assert.deepEqual(compareTitles(main, bare), { score: 4, evidence: ['source'] });
    assert.equal(compareTitles({ number: 0, seconds: 8904, size_bytes: 6858530816 }, bare), null, 'nothing known on both sides but nothing');
  });
});

describe('disc titles: pairing a scan with the known titles (matchTitles)', () => {
  it('pairs every title of the 2001 DVD scan with its entry', () => {
    const pairs = matchTitles(odysseyScan, odyssey);
    assert.deepEqual(
      pairs.map((p) => [p.scan.number, p.known.index]),
      odysseyScan.map((_, i) => [i, i]),
    );
    assert.equal(pairs[0].scan, odysseyScan[0], 'the scanned title itself, not a copy');
    assert.equal(pairs[0].known, odyssey[0]);
  });

  it('never goes by the number: a scan with MakeMKV\'s minimum length of 60 s still pairs by source', () => {
    const scan = withMinLength(odysseyScan, 60);
    assert.deepEqual(
      matchTitles(scan, odyssey).map((p) => [p.scan.number, p.known.index, p.known.role.role]),
      [
        [0, 0, 'main_movie'],
        [1, 5, 'extra'],
        [2, 7, 'extra'],
      ],
    );
  });

  it('pairs The Office in any scan order and leaves the result in the scan\'s order', () => {
    const reversed = [...officeScan].reverse();
    const pairs = matchTitles(reversed, office);
    assert.deepEqual(
      pairs.map((p) => p.scan.number),
      reversed.map((t) => t.number),
    );
    assert.ok(pairs.every((p) => p.scan.source_file === p.known.source_file));
  });

  it('uses each known title once: of two scanned titles alike the earlier gets it', () => {
    const twin = { ...odysseyScan[7], number: 99 };
    const pairs = matchTitles([odysseyScan[7], twin], odyssey);
    assert.deepEqual(
      pairs.map((p) => [p.scan.number, p.known.index]),
      [[7, 7]],
    );
  });

  it('gives a title to the stronger pair first, whatever the order', () => {
    // An lsdvd-like scan: the first title has only a near size and a duration, the second the source too.
    const weak: ScannedEvidence = { number: 0, seconds: 8904, size_bytes: 6_860_000_000 };
    const strong: ScannedEvidence = { number: 1, seconds: 8904, size_bytes: 0, source_file: '01' };
    assert.deepEqual(
      matchTitles([weak, strong], odyssey).map((p) => [p.scan.number, p.known.index, p.evidence.join('+')]),
      [[1, 0, 'source+duration']],
    );
  });

  it('leaves out scanned titles without a partner', () => {
    const foreign: ScannedEvidence = { number: 3, seconds: 5400, size_bytes: 1, source_file: '00800.mpls' };
    assert.deepEqual(matchTitles([foreign], odyssey), []);
    assert.deepEqual(matchTitles([], odyssey), []);
    assert.deepEqual(matchTitles(odysseyScan, []), []);
  });
});

describe('disc titles: kinds and descriptions of roles', () => {
  const roles: Record<string, TitleRole> = {
    main: { role: 'main_movie', name: '2001: A Space Odyssey' },
    episode: { role: 'episode', name: 'Fun Run', season: 4, episodes: { first: 1, last: 2 } },
    single: { role: 'episode', name: null, season: 4, episodes: { first: 7, last: 7 } },
    playAll: { role: 'play_all', name: 'A Sign of Affection', season: 1, episodes: { first: 1, last: 7 } },
    extra: { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null },
    unidentified: { role: 'unidentified' },
  };

  it('names the three kinds a household can want, in their order', () => {
    assert.deepEqual([...RIP_TITLE_KINDS], ['main_feature', 'episodes', 'extras']);
  });

  it('puts main movies, episodes and extras into their kind, play-all and unknown titles into none', () => {
    assert.deepEqual(
      Object.values(roles).map(kindOfRole),
      ['main_feature', 'episodes', 'episodes', null, 'extras', null],
    );
  });

  it('describes each role for the job log', () => {
    assert.deepEqual(Object.values(roles).map(describeRole), [
      'main movie "2001: A Space Odyssey"',
      'episode S04E01-E02 "Fun Run"',
      'episode S04E07',
      'play all',
      'Trailers: "Theatrical Trailer"',
      'unidentified',
    ]);
    assert.equal(describeRole({ role: 'main_movie', name: null }), 'main movie');
    assert.equal(describeRole({ role: 'episode', name: null, season: null, episodes: null }), 'episode');
    assert.equal(describeRole({ role: 'extra', name: null, kind: 'Other', folder: 'Other', season: null, episodes: null }), 'Other');
  });

  it('gives the real entries their roles: 2001 a main movie, six Other extras and a trailer; The Office three double episodes', () => {
    assert.deepEqual(odyssey.map((t) => kindOfRole(t.role)), ['main_feature', 'extras', 'extras', 'extras', 'extras', 'extras', 'extras', 'extras']);
    assert.deepEqual(
      office.filter((t) => t.role.role === 'episode').map((t) => describeRole(t.role)),
      ['episode S04E03-E04 "Dunder Mifflin Infinity"', 'episode S04E05-E06 "Launch Party"', 'episode S04E01-E02 "Fun Run"'],
    );
  });
});
