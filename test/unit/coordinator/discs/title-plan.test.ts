import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseMakemkvInfo } from '../../../../agent/tools/makemkv-parser.js';
import { sourceFields } from '../../../../agent/tools/rippers.js';
import { allWantedInLibrary, annotateMainFeature, annotateScan, knownTitles, librarySummary, plannedTitles, type TitleChoice } from '../../../../coordinator/discs/title-plan.js';
import { discTitles } from '../../../../coordinator/metadata/thediscdb/title-matcher.js';
import { parseDisc, type TddbDisc } from '../../../../coordinator/metadata/thediscdb/types.js';
import type { DiscTitle, TitleEvidence } from '../../../../shared/disc-titles.js';
import type { Track } from '../../../../shared/protocol.js';
import { fixtureJson, TDDB_FIXTURES } from '../../../fixtures/thediscdb-mirror.js';
import { obfuscatedDisc } from '../../../fixtures/obfuscated-bluray.js';

/** The scan an agent sends for a TheDiscDB capture (its HSH: lines are TheDiscDB's, not MakeMKV's). */
function scanOf(capture: string): Track[] {
  const lines = fs.readFileSync(path.join(TDDB_FIXTURES, capture), 'utf8').split(/\r?\n/).filter((l) => !l.startsWith('HSH:'));
  return parseMakemkvInfo(lines).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters, ...sourceFields(t) }));
}

/** MakeMKV with a minimum length: shorter titles are left out and the rest numbered again from 0. */
function withMinLength(scan: Track[], seconds: number): Track[] {
  return scan.filter((t) => t.seconds >= seconds).map((t, i) => ({ ...t, number: i }));
}

/** What library_titles remembers of a ripped title: its evidence (the number is the row's place, never the scan's). */
function remembered(t: Track): TitleEvidence {
  return { source_file: t.source_file ?? null, segment_map: t.segment_map ?? null, seconds: t.seconds, size_bytes: t.size_bytes };
}

const odyssey: DiscTitle[] = discTitles(parseDisc(fixtureJson('2001-2011-dvd-disc01.json')) as TddbDisc);
const office: DiscTitle[] = discTitles(parseDisc(fixtureJson('the-office-2021-season-4-blu-ray-disc01.json')) as TddbDisc);
const odysseyScan = scanOf('2001-2011-dvd-disc01.txt');
const officeScan = scanOf('the-office-s4d1-sample-disc-log.txt');

const movieAndExtras: TitleChoice = { kinds: ['main_feature', 'extras'], mainFeatureOnly: false, minSeconds: 120 };
const everything: TitleChoice = { kinds: ['main_feature', 'episodes', 'extras'], mainFeatureOnly: false, minSeconds: 120 };

const wantedIndexes = (known: { index: number; wanted: boolean }[]) => known.filter((t) => t.wanted).map((t) => t.index);
const inLibraryIndexes = (known: { index: number; in_library: boolean }[]) => known.filter((t) => t.in_library).map((t) => t.index);

describe('title plan: the 2001 DVD (a main movie, six logos and warnings TheDiscDB files as Other, a trailer)', () => {
  it('takes the main movie and the 111 s trailer (a named kind, shorter than minTitleSeconds), not the Other logos', () => {
    const known = knownTitles(odyssey, [], movieAndExtras);
    assert.equal(known.length, 8);
    assert.deepEqual(wantedIndexes(known), [0, 7]);
    assert.deepEqual(inLibraryIndexes(known), []);
    assert.equal(known[7].seconds, 111);
    assert.equal(known[7].role.role === 'extra' && known[7].role.kind, 'Trailer');
    // The 78 s warning is an Other extra shorter than 120 s: never wanted, though extras are.
    assert.equal(known[5].role.role === 'extra' && known[5].role.kind, 'Other');
    assert.equal(known[5].wanted, false);
  });

  it('keeps each title as TheDiscDB gives it and adds only in_library and wanted', () => {
    const known = knownTitles(odyssey, [], movieAndExtras);
    assert.deepEqual(known[0], { ...odyssey[0], in_library: false, wanted: true });
    assert.deepEqual(known[1], { ...odyssey[1], in_library: false, wanted: false });
  });

  it('takes the Other logos too when minTitleSeconds lets them through', () => {
    assert.deepEqual(wantedIndexes(knownTitles(odyssey, [], { ...movieAndExtras, minSeconds: 0 })), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(wantedIndexes(knownTitles(odyssey, [], { ...movieAndExtras, minSeconds: 78 })), [0, 5, 7], 'a title as long as the minimum is long enough');
  });

  it('takes only the kinds ripTitleKinds names', () => {
    assert.deepEqual(wantedIndexes(knownTitles(odyssey, [], { ...movieAndExtras, kinds: ['main_feature'] })), [0]);
    assert.deepEqual(wantedIndexes(knownTitles(odyssey, [], { ...movieAndExtras, kinds: ['extras'] })), [7]);
    assert.deepEqual(wantedIndexes(knownTitles(odyssey, [], { ...movieAndExtras, kinds: ['episodes'] })), [], 'a movie disc has no episodes');
  });

  it('drops the extras with mainFeatureOnly, whatever ripTitleKinds says', () => {
    assert.deepEqual(wantedIndexes(knownTitles(odyssey, [], { ...movieAndExtras, mainFeatureOnly: true })), [0]);
    assert.deepEqual(wantedIndexes(knownTitles(odyssey, [], { kinds: ['extras'], mainFeatureOnly: true, minSeconds: 0 })), []);
  });

  it('marks the main movie in the library once a job ripped it, and takes only the trailer then', () => {
    const library = [remembered(odysseyScan[0])];
    const known = knownTitles(odyssey, library, movieAndExtras);
    assert.deepEqual(inLibraryIndexes(known), [0]);
    assert.deepEqual(wantedIndexes(known), [7]);
    assert.deepEqual(known[0], { ...odyssey[0], in_library: true, wanted: false });
    // The six logos and warnings are Other extras shorter than 120 s: no titles of the library, counted nowhere.
    assert.deepEqual(librarySummary(known, movieAndExtras), {
      main_feature: { total: 1, in_library: 1 },
      episodes: { total: 0, in_library: 0 },
      extras: { total: 1, in_library: 0 },
    });
  });

  it('counts the Other extras as extras when minTitleSeconds lets them through, whatever ripTitleKinds says', () => {
    const known = knownTitles(odyssey, [remembered(odysseyScan[0]), remembered(odysseyScan[5])], { ...movieAndExtras, minSeconds: 0 });
    assert.deepEqual(librarySummary(known, { minSeconds: 0 }).extras, { total: 7, in_library: 1 });
    assert.deepEqual(librarySummary(known, { minSeconds: 78 }).extras, { total: 2, in_library: 1 }, 'the 78 s warning and the trailer');
    const mainOnly = knownTitles(odyssey, [], { ...movieAndExtras, kinds: ['main_feature'] });
    assert.deepEqual(librarySummary(mainOnly, movieAndExtras).extras, { total: 1, in_library: 0 }, 'a kind not wanted is still counted');
  });

  it('finds a remembered title whatever number MakeMKV gave it, and from an lsdvd scan (title number, estimated size)', () => {
    // Ripped with MakeMKV's minimum length of 60 s: the trailer was title 2 then, it is 7 on a full scan.
    const shortScan = withMinLength(odysseyScan, 60);
    assert.equal(shortScan[2].source_file, '08');
    assert.deepEqual(inLibraryIndexes(knownTitles(odyssey, [remembered(shortScan[2])], movieAndExtras)), [7]);
    const lsdvd: TitleEvidence = { source_file: '1', segment_map: null, seconds: 8904, size_bytes: 6_860_000_000 };
    assert.deepEqual(inLibraryIndexes(knownTitles(odyssey, [lsdvd], movieAndExtras)), [0]);
  });

  it('marks nothing for titles of another disc, or a title as long as a logo and nothing else', () => {
    const office0 = remembered(officeScan[0]);
    assert.deepEqual(inLibraryIndexes(knownTitles(odyssey, [office0], movieAndExtras)), []);
    assert.deepEqual(inLibraryIndexes(knownTitles(odyssey, [{ seconds: 12, size_bytes: 0 }], movieAndExtras)), []);
  });

  it('counts the disc ripped only when every title of a wanted kind is in the library', () => {
    const main = remembered(odysseyScan[0]);
    const trailer = remembered(odysseyScan[7]);
    assert.equal(allWantedInLibrary(knownTitles(odyssey, [], movieAndExtras), movieAndExtras), false);
    assert.equal(allWantedInLibrary(knownTitles(odyssey, [main], movieAndExtras), movieAndExtras), false, 'the trailer is missing');
    assert.equal(allWantedInLibrary(knownTitles(odyssey, [main, trailer], movieAndExtras), movieAndExtras), true, 'the logos do not count: Other and short');
    const mainOnly: TitleChoice = { ...movieAndExtras, kinds: ['main_feature'] };
    assert.equal(allWantedInLibrary(knownTitles(odyssey, [main], mainOnly), mainOnly), true, 'extras not wanted: the main movie is all');
    const allOfThem: TitleChoice = { ...movieAndExtras, minSeconds: 0 };
    assert.equal(allWantedInLibrary(knownTitles(odyssey, [main, trailer], allOfThem), allOfThem), false, 'with no minimum the logos are wanted too');
    const all = odysseyScan.map(remembered);
    assert.equal(allWantedInLibrary(knownTitles(odyssey, all, allOfThem), allOfThem), true);
  });

  it('never counts a disc ripped when no title is of a wanted kind', () => {
    const episodesOnly: TitleChoice = { ...movieAndExtras, kinds: ['episodes'] };
    assert.equal(allWantedInLibrary(knownTitles(odyssey, odysseyScan.map(remembered), episodesOnly), episodesOnly), false);
  });

  it('sends the agent every title with take for the wanted ones, without the library state', () => {
    const known = knownTitles(odyssey, [remembered(odysseyScan[0])], movieAndExtras);
    const plan = plannedTitles(known);
    assert.equal(plan.length, 8);
    assert.deepEqual(plan[0], { ...odyssey[0], take: false });
    assert.deepEqual(plan[7], { ...odyssey[7], take: true });
    assert.ok(plan.every((t) => !('in_library' in t) && !('wanted' in t)));
    assert.deepEqual(
      plan.filter((t) => t.take).map((t) => t.source_file),
      ['08'],
    );
  });

  it('annotates a scan numbered with MakeMKV\'s minimum length: role, library state and choice per scanned title', () => {
    const known = knownTitles(odyssey, [remembered(odysseyScan[0])], movieAndExtras);
    const scan = withMinLength(odysseyScan, 60);
    const annotated = annotateScan(scan, known);
    assert.deepEqual(
      annotated.map((t) => [t.number, t.source_file, t.role?.role ?? null, t.in_library, t.wanted]),
      [
        [0, '01', 'main_movie', true, false],
        [1, '06', 'extra', false, false],
        [2, '08', 'extra', false, true],
      ],
    );
    assert.deepEqual(annotated[2], { ...scan[2], role: odyssey[7].role, in_library: false, wanted: true }, 'the scanned fields stay as they are');
  });

  it('annotates a title TheDiscDB does not know with no role', () => {
    const known = knownTitles(odyssey, [], movieAndExtras);
    const foreign: Track = { number: 8, seconds: 600, size_bytes: 500_000_000, chapters: 1, source_file: '09' };
    assert.deepEqual(annotateScan([foreign], known), [{ ...foreign, role: null, in_library: false, wanted: false }]);
  });
});

describe('title plan: The Office season 4 disc 1 (three double episodes, four extras, three unknown titles)', () => {
  it('takes the episodes and the extras of named kinds, never the unknown titles', () => {
    const known = knownTitles(office, [], everything);
    assert.deepEqual(
      known.filter((t) => t.wanted).map((t) => [t.source_file, t.role.role]),
      [
        ['00003.mpls', 'episode'],
        ['00002.mpls', 'episode'],
        ['00004.mpls', 'episode'],
        ['00006.m2ts', 'extra'],
        // "Rabies" is 23 s, but of the kind Extra, not Other: minTitleSeconds does not apply.
        ['00011.m2ts', 'extra'],
        ['00010.m2ts', 'extra'],
        ['00008.m2ts', 'extra'],
      ],
    );
    assert.deepEqual(
      known.filter((t) => t.role.role === 'unidentified').map((t) => t.wanted),
      [false, false, false],
    );
  });

  it('takes the episodes only with ripTitleKinds [episodes], and with mainFeatureOnly', () => {
    const episodes = knownTitles(office, [], { ...everything, kinds: ['episodes'] });
    assert.deepEqual(wantedIndexes(episodes), [0, 1, 3]);
    assert.deepEqual(wantedIndexes(knownTitles(office, [], { ...everything, mainFeatureOnly: true })), [0, 1, 3]);
  });

  it('counts per kind, the unknown titles nowhere', () => {
    const known = knownTitles(office, [remembered(officeScan[3])], everything);
    // "Rabies" (23 s) is of the kind Extra, no filler: it counts among the extras.
    assert.deepEqual(librarySummary(known, everything), {
      main_feature: { total: 0, in_library: 0 },
      episodes: { total: 3, in_library: 1 },
      extras: { total: 4, in_library: 0 },
    });
  });

  it('counts the disc ripped when its three episodes are in, with extras not wanted', () => {
    const choice: TitleChoice = { ...everything, kinds: ['episodes'] };
    const episodes = officeScan.filter((t) => t.seconds > 2000).map(remembered);
    assert.equal(episodes.length, 3);
    assert.equal(allWantedInLibrary(knownTitles(office, episodes.slice(0, 2), choice), choice), false);
    assert.equal(allWantedInLibrary(knownTitles(office, episodes, choice), choice), true);
    assert.equal(allWantedInLibrary(knownTitles(office, episodes, everything), everything), false, 'the deleted scenes are wanted too');
  });

  it('annotates the scan in its own order, each title with its role', () => {
    const known = knownTitles(office, [], { ...everything, kinds: ['episodes'] });
    const annotated = annotateScan([...officeScan].reverse(), known);
    assert.deepEqual(
      annotated.map((t) => [t.number, t.role?.role ?? null, t.wanted]),
      [
        [9, 'extra', false],
        [8, 'extra', false],
        [7, 'extra', false],
        [6, 'unidentified', false],
        [5, 'unidentified', false],
        [4, 'extra', false],
        [3, 'episode', true],
        [2, 'unidentified', false],
        [1, 'episode', true],
        [0, 'episode', true],
      ],
    );
  });
});

describe('title plan: play-all titles', () => {
  const playAll: DiscTitle = {
    index: 8,
    source_file: '00008.mpls',
    segment_map: '14,15,16,17,18,19,20',
    seconds: 7 * 1422,
    size_bytes: 0,
    role: { role: 'play_all', name: 'A Sign of Affection', season: 1, episodes: { first: 1, last: 7 } },
  };
  const episode: DiscTitle = { index: 9, source_file: '00009.mpls', segment_map: '14', seconds: 1422, size_bytes: 0, role: { role: 'episode', name: null, season: 1, episodes: { first: 1, last: 1 } } };

  it('never takes a play-all title and counts it in no kind', () => {
    const known = knownTitles([playAll, episode], [], { ...everything, minSeconds: 0 });
    assert.deepEqual(known.map((t) => t.wanted), [false, true]);
    assert.deepEqual(librarySummary(known, { minSeconds: 0 }), { main_feature: { total: 0, in_library: 0 }, episodes: { total: 1, in_library: 0 }, extras: { total: 0, in_library: 0 } });
  });
});

describe('annotateMainFeature: the title scan of a movie disc TheDiscDB does not know', () => {
  it('marks the playlist in order as the main feature with its reasons, and each decoy with the title it yields to', () => {
    const disc = obfuscatedDisc({ decoys: 20 });
    const tracks = parseMakemkvInfo(disc.capture.split('\n')).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters, ...sourceFields(t), audio: t.audio }));
    const annotated = annotateMainFeature(tracks, { minSeconds: 120, maxSimilar: 3, runtimeMinutes: 112 });
    assert.deepEqual(annotated.filter((t) => t.main_feature).map((t) => [t.number, t.main_feature]), [[7, ['segments_in_order', 'runtime', 'longest', 'largest']]]);
    assert.equal(annotated.filter((t) => t.left?.reason === 'out_of_order' && t.left.of === 7).length, 20);
    assert.deepEqual(annotated.filter((t) => !t.left && !t.main_feature).map((t) => t.number), [0, 1, 2, 3], 'menu and warning (too short to count), the featurettes');
    assert.equal('left' in annotated[2], false, 'a title taken carries no left field');
  });
});
