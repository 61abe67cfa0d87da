import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseMainFeature, clock, describeLeft, describeMainFeature, forwardShare, matchesRuntime, parseSegments, segmentOrder, similarLength, type FeatureTitle } from '../../../shared/main-feature.js';
import { obfuscatedDisc } from '../../fixtures/obfuscated-bluray.js';
import { parseMakemkvInfo } from '../../../agent/tools/makemkv-parser.js';
import { sourceFields } from '../../../agent/tools/rippers.js';
import type { Track } from '../../../shared/protocol.js';

/** The titles the agent's MakeMKV scan reads from a robot-mode capture. */
function scan(capture: string): Track[] {
  return parseMakemkvInfo(capture.split('\n')).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters, ...sourceFields(t), audio: t.audio }));
}

const title = (number: number, seconds: number, size_bytes: number, segment_map: string | null = null, audio: unknown[] | undefined = [{}]): FeatureTitle => ({ number, seconds, size_bytes, segment_map, audio });

/**
 * Segment maps of real captures (MakeMKV robot mode, TINFO 26) in TheDiscDB's data repository:
 * - Frozen (2013), data/movie/Frozen (2013)/2014-collectors-edition-blu-ray/disc01.txt: the film,
 *   00800.mpls, 1:42:13, plays its clips forward and ends on clip 800.
 * - La La Land (2016), data/movie/La La Land (2016)/2017-blu-ray/disc01.txt: 433 titles, Lionsgate's
 *   playlist obfuscation. Hundreds of playlists of 2:07:48 and 33.0 GB (35472242688 bytes) play the
 *   15 clips 501..515 in shuffled orders; others of 2:08:48 add clip 2754. TheDiscDB names 00658.mpls
 *   the film, whose own clip numbers are out of order as well.
 */
const FROZEN_FILM = '879,880,881,882,883,884,885,886,887,888,800';
const LALA = {
  film: { source: '00658.mpls', map: '509,506,501,512,515,505,507,502,504,508,510,511,514,503,513' },
  decoys: ['509,501,506,512,515,505,507,502,504,508,503,514,511,510,513', '509,501,512,506,515,502,507,505,504,503,510,514,511,508,513'],
  longer: '509,2754,504,514,515,505,513,511,508,512,510,506,503,502,507,501',
};

describe('segment maps', () => {
  it('reads Blu-ray clip lists and DVD cell ranges', () => {
    assert.deepEqual(parseSegments('14,15,16'), [[14, 14], [15, 15], [16, 16]]);
    assert.deepEqual(parseSegments('1-19,20-35'), [[1, 19], [20, 35]]);
    assert.equal(parseSegments(''), null);
    assert.equal(parseSegments('1,x'), null);
  });

  it('calls a film in order that plays its clips forward, Frozen\'s last step back included', () => {
    assert.equal(forwardShare(parseSegments(FROZEN_FILM)), 9 / 10);
    assert.equal(segmentOrder(FROZEN_FILM), 'in_order');
    assert.equal(segmentOrder('1-19,20-35'), 'in_order');
    assert.equal(segmentOrder('20-35,1-19'), 'out_of_order');
    assert.equal(segmentOrder('100,50,100,51'), 'out_of_order', 'a clip played twice is no step forward');
    assert.equal(segmentOrder(LALA.decoys[0]), 'out_of_order');
    assert.equal(segmentOrder('7'), 'unknown', 'one clip says nothing');
    assert.equal(segmentOrder(null), 'unknown');
  });

  it('meets a runtime within 2 %, and tells near-identical lengths (1 %, at least 2 s)', () => {
    assert.equal(matchesRuntime(7668, 128), true);
    assert.equal(matchesRuntime(7000, 128), false);
    assert.equal(matchesRuntime(7668, null), false);
    assert.equal(similarLength(7668, 7728), true, 'La La Land: 2:07:48 and 2:08:48');
    assert.equal(similarLength(230, 231), true);
    assert.equal(similarLength(230, 251), false);
    assert.equal(similarLength(7200, 7800), false, 'an extended cut');
    assert.equal(clock(6730), '1:52:10');
    assert.equal(clock(230), '3:50');
  });
});

describe('chooseMainFeature', () => {
  it('an obfuscated Blu-ray: of 121 playlists of one length the one in order is the film, the 120 others are left as decoys', () => {
    const disc = obfuscatedDisc();
    const titles = scan(disc.capture);
    assert.equal(titles.length, 125);
    const ordered = titles.find((t) => t.number === disc.ordered);
    assert.deepEqual([ordered?.source_file, ordered?.segment_count, ordered?.segment_map, ordered?.seconds], ['00103.mpls', 15, '501,502,503,504,505,506,507,508,509,510,511,512,513,514,515', 6730]);
    const choice = chooseMainFeature(titles, { maxSimilar: 3, minSeconds: 120 });
    assert.equal(choice.main, disc.ordered);
    assert.equal(disc.ordered, 7);
    assert.deepEqual(choice.reasons, ['segments_in_order', 'longest', 'largest']);
    const decoys = titles.filter((t) => t.seconds === disc.seconds && t.number !== disc.ordered);
    assert.equal(decoys.length, 120);
    assert.equal(new Set(decoys.map((d) => d.segment_map)).size, 120, 'every decoy its own order');
    for (const d of decoys) assert.deepEqual(choice.left.get(d.number), { reason: 'out_of_order', of: disc.ordered });
    assert.equal(choice.left.size, 120, 'the extras are kept');
    assert.deepEqual(describeLeft(titles, choice, 3), [`120 titles of ${clock(disc.seconds)} left: segments out of order (playlist obfuscation); title ${disc.ordered} plays them in order`]);
    assert.equal(describeMainFeature(choice), `main feature: title ${disc.ordered} (segments in order, longest, largest)`);
  });

  it('La La Land (real maps): no playlist plays in order, so order decides nothing; the copies of one length and size are duplicates and the rest is capped', () => {
    const titles = [
      title(8, 7728, 35563689984, LALA.longer),
      title(78, 7668, 35472242688, LALA.decoys[0]),
      title(79, 7668, 35472242688, LALA.decoys[1]),
      title(200, 7668, 35472242688, LALA.film.map),
      title(201, 7728, 35563689984, '509,2754,501,506,512,515,505,507,502,504,508,503,514,511,510,513'),
      title(202, 7728, 35563689984, '509,2754,503,514,515,505,513,511,508,512,510,506,504,502,507,501'),
      title(300, 636, 1.3e9, '276'),
    ];
    const choice = chooseMainFeature(titles, { maxSimilar: 3 });
    assert.equal(choice.main, 8, 'the longest: nothing else tells them apart');
    assert.deepEqual(choice.reasons, ['longest', 'largest']);
    const taken = titles.filter((t) => !choice.left.has(t.number)).map((t) => t.number);
    assert.deepEqual(taken, [8, 78, 300], 'one of each length and size: three at most of near-identical length');
    assert.deepEqual(choice.left.get(201), { reason: 'duplicate', of: 8 });
    assert.deepEqual(choice.left.get(79), { reason: 'duplicate', of: 78 });
    assert.deepEqual(choice.left.get(200), { reason: 'duplicate', of: 78 });
  });

  it('takes at most maxSimilarTitles of one length where nothing else tells them apart (no segment maps)', () => {
    const titles = [1, 2, 3, 4, 5].map((n) => title(n, 6000, 20e9 + n));
    const choice = chooseMainFeature(titles, { maxSimilar: 3 });
    assert.equal(choice.main, 5, 'the largest');
    assert.deepEqual([...choice.left.keys()].sort(), [1, 2]);
    assert.deepEqual(choice.left.get(1), { reason: 'similar', of: 5 });
    assert.deepEqual(describeLeft(titles, choice, 3), ['titles 2, 1 of 1:40:00 left: more than 3 titles of near-identical length (maxSimilarTitles); title 5 and the best others are taken']);
    assert.equal(chooseMainFeature(titles, { maxSimilar: 1 }).left.size, 4);
    assert.equal(chooseMainFeature(titles, { maxSimilar: 5 }).left.size, 0);
  });

  it('keeps titles of one length that share no clips: language versions of a song are no decoys', () => {
    // Frozen's "Let It Go" in four languages: clips 908 to 911, 3:50 to 3:51 (the fourth made alike here).
    const titles = [title(0, 6133, 26e9, FROZEN_FILM), title(82, 231, 789e6, '908'), title(83, 230, 785e6, '909'), title(84, 230, 785e6 + 1, '910'), title(85, 231, 857e6, '911')];
    const choice = chooseMainFeature(titles, { maxSimilar: 3 });
    assert.equal(choice.main, 0);
    assert.deepEqual(choice.reasons, ['segments_in_order', 'longest', 'largest']);
    assert.equal(choice.left.size, 0);
  });

  it('takes the cut whose length is the runtime TMDB knows over a longer one, and says so', () => {
    const titles = [title(1, 7800, 30e9, '1,2,3,4,5'), title(2, 7260, 28e9, '1,2,4,5'), title(3, 600, 1e9, '9')];
    const choice = chooseMainFeature(titles, { runtimeMinutes: 121 });
    assert.equal(choice.main, 2);
    assert.deepEqual(choice.reasons, ['segments_in_order', 'runtime']);
    assert.equal(describeMainFeature(choice, 121), 'main feature: title 2 (segments in order, runtime like TMDB (121 min))');
    assert.equal(chooseMainFeature(titles).main, 1, 'without a runtime the longest');
    const far = chooseMainFeature([title(1, 10800, 30e9), title(2, 7260, 20e9)], { runtimeMinutes: 121 });
    assert.equal(far.main, 2, 'the runtime makes a title a candidate however long the longest is');
  });

  it('passes over a title without audio, and a title out of order for one in order of the same length', () => {
    assert.equal(chooseMainFeature([title(1, 7000, 30e9, null, []), title(2, 6900, 29e9)]).main, 2);
    assert.deepEqual(chooseMainFeature([title(1, 7000, 30e9, null, []), title(2, 6900, 29e9)]).reasons, ['audio']);
    assert.equal(chooseMainFeature([title(1, 7000, 30e9, null, undefined), title(2, 6900, 29e9)]).main, 1, 'streams not listed: audio counts as present');
    assert.equal(chooseMainFeature([title(1, 7000, 30e9, '3,1,2'), title(2, 7000, 30e9, '1,2,3')]).main, 2);
  });

  it('leaves a title with the same segment map as one taken, whatever its size', () => {
    const choice = chooseMainFeature([title(1, 7000, 30e9, '1,2,3'), title(2, 7000, 29.9e9, '1,2,3'), title(3, 7000, 30e9, '7,8,9')]);
    assert.deepEqual(choice.left.get(2), { reason: 'duplicate', of: 1 });
    assert.equal(choice.left.has(3), false, 'same length and size, but other clips: no duplicate');
  });

  it('leaves titles shorter than minTitleSeconds out of it, and answers null for no titles', () => {
    const choice = chooseMainFeature([title(1, 20, 5e6), title(2, 20, 5e6), title(3, 6000, 20e9)], { minSeconds: 120 });
    assert.equal(choice.main, 3);
    assert.equal(choice.left.size, 0);
    assert.deepEqual(chooseMainFeature([]), { main: null, reasons: [], left: new Map() });
  });
});
