import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseMakemkvInfo } from '../../../../../agent/tools/makemkv-parser.js';
import { sourceFields } from '../../../../../agent/tools/rippers.js';
import { EXTRA_FOLDERS, extraFolder, parseEpisodes, titleRole } from '../../../../../coordinator/metadata/thediscdb/roles.js';
import { matchTitles, type ScannedTitle } from '../../../../../coordinator/metadata/thediscdb/title-matcher.js';
import { durationSeconds, parseDisc, type TddbDisc } from '../../../../../coordinator/metadata/thediscdb/types.js';
import { fixtureJson, TDDB_FIXTURES } from '../../../../fixtures/thediscdb-mirror.js';

/** The scan the agent sends for a TheDiscDB capture (its HSH: lines are TheDiscDB's, not MakeMKV's). */
function scanOf(capture: string): ScannedTitle[] {
  const lines = fs.readFileSync(path.join(TDDB_FIXTURES, capture), 'utf8').split(/\r?\n/).filter((l) => !l.startsWith('HSH:'));
  return parseMakemkvInfo(lines).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, ...sourceFields(t) }));
}

/** MakeMKV with a minimum length: shorter titles are left out and the rest numbered again from 0. */
function withMinLength(scan: ScannedTitle[], seconds: number): ScannedTitle[] {
  return scan.filter((t) => t.seconds >= seconds).map((t, i) => ({ ...t, number: i }));
}

const odyssey = parseDisc(fixtureJson('2001-2011-dvd-disc01.json')) as TddbDisc;
const office = parseDisc(fixtureJson('the-office-2021-season-4-blu-ray-disc01.json')) as TddbDisc;

/** A disc from a discNN-summary.txt (the blocks "Name:", "Source file name:", "Segment Map:", …). */
function discFromSummary(text: string): TddbDisc {
  const blocks = text.split(/\r?\n\s*\r?\n/).filter((b) => b.trim());
  const titles = blocks.map((b, index) => {
    const f = Object.fromEntries(b.split(/\r?\n/).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    return { index, sourceFile: f['source file name'] ?? null, segmentMap: f['segment map'] ?? null, seconds: durationSeconds(f.duration), size: null, item: f.type ? { title: f.name ?? null, type: f.type, season: f.season ?? null, episode: f.episode ?? null } : null };
  });
  return { index: 1, name: null, format: 'Blu-ray', contentHash: null, globalDiscId: null, titles };
}

describe('TheDiscDB title matcher', () => {
  it('maps the 2001 DVD scan title by title: the main movie, five logos and warnings, the trailer', () => {
    const mapping = matchTitles(scanOf('2001-2011-dvd-disc01.txt'), odyssey);
    assert.deepEqual(
      mapping.map((m) => [m.number, m.index]),
      [0, 1, 2, 3, 4, 5, 6, 7].map((n) => [n, n]),
    );
    assert.deepEqual(mapping[0].role, { role: 'main_movie', name: '2001: A Space Odyssey' });
    assert.deepEqual(mapping[0].evidence, ['source', 'segments', 'duration', 'size']);
    assert.deepEqual(mapping[7].role, { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null });
    assert.deepEqual(
      mapping.slice(1, 7).map((m) => m.role.role === 'extra' && m.role.folder),
      ['Other', 'Other', 'Other', 'Other', 'Other', 'Other'],
    );
  });

  it('never goes by the title number: with a minimum length MakeMKV numbers the same DVD differently', () => {
    const scan = withMinLength(scanOf('2001-2011-dvd-disc01.txt'), 60);
    assert.deepEqual(
      scan.map((t) => [t.number, t.source_file]),
      [
        [0, '01'],
        [1, '06'],
        [2, '08'],
      ],
    );
    const mapping = matchTitles(scan, odyssey);
    assert.deepEqual(
      mapping.map((m) => [m.number, m.index, m.role.role]),
      [
        [0, 0, 'main_movie'],
        [1, 5, 'extra'],
        [2, 7, 'extra'],
      ],
    );
    assert.equal(mapping[2].role.role === 'extra' && mapping[2].role.folder, 'Trailers');
  });

  it('matches an lsdvd scan (title number as source, an estimated size, no segment map)', () => {
    const scan: ScannedTitle[] = [
      { number: 1, seconds: 8904, size_bytes: 6_860_000_000, source_file: '01' },
      { number: 8, seconds: 111, size_bytes: 0, source_file: '08' },
    ];
    assert.deepEqual(
      matchTitles(scan, odyssey).map((m) => [m.number, m.index, m.evidence.join('+')]),
      [
        [1, 0, 'source+duration+size'],
        [8, 7, 'source+duration'],
      ],
    );
  });

  it('refuses a pair where the source, the segments or the duration disagree, and a duration alone', () => {
    const main = scanOf('2001-2011-dvd-disc01.txt')[0];
    assert.deepEqual(matchTitles([{ ...main, source_file: '02' }], odyssey), []);
    assert.deepEqual(matchTitles([{ ...main, segment_map: '1-19' }], odyssey), []);
    assert.deepEqual(matchTitles([{ ...main, seconds: main.seconds + 30 }], odyssey), []);
    assert.deepEqual(matchTitles([{ number: 0, seconds: 12, size_bytes: 0 }], odyssey), [], 'two 12 s titles: no identity');
  });

  it('maps The Office S4D1: double episodes, deleted scenes per episode, a season extra, unknown titles', () => {
    const mapping = matchTitles(scanOf('the-office-s4d1-sample-disc-log.txt').reverse(), office);
    const by = new Map(mapping.map((m) => [m.number, m]));
    assert.equal(mapping.length, 10);
    assert.deepEqual(by.get(0)?.role, { role: 'episode', name: 'Dunder Mifflin Infinity', season: 4, episodes: { first: 3, last: 4 } });
    assert.deepEqual(by.get(3)?.role, { role: 'episode', name: 'Fun Run', season: 4, episodes: { first: 1, last: 2 } });
    assert.deepEqual(by.get(4)?.role, { role: 'extra', name: 'Fun Run Deleted Scenes', kind: 'DeletedScene', folder: 'Deleted Scenes', season: 4, episodes: { first: 1, last: 2 } });
    assert.deepEqual(by.get(7)?.role, { role: 'extra', name: 'Rabies: The More You Know', kind: 'Extra', folder: 'Other', season: 4, episodes: null });
    assert.deepEqual([2, 5, 6].map((n) => by.get(n)?.role), [{ role: 'unidentified' }, { role: 'unidentified' }, { role: 'unidentified' }]);
    assert.deepEqual(by.get(2)?.evidence, ['source', 'segments', 'duration', 'size'], '"00000.mpls(1)" is matched as MakeMKV prints it');
  });

  it('recognises the play-all title TheDiscDB stores as Other with an en-dash range', () => {
    const disc = discFromSummary(fs.readFileSync(path.join(TDDB_FIXTURES, 'a-sign-of-affection-2025-blu-ray-disc01-summary.txt'), 'utf8'));
    const playAll = disc.titles.find((t) => t.sourceFile === '00008.mpls');
    assert.ok(playAll);
    assert.deepEqual(titleRole(playAll, disc), { role: 'play_all', name: 'A Sign of Affection', season: 1, episodes: { first: 1, last: 7 } });
    const scan: ScannedTitle[] = [
      { number: 0, seconds: playAll.seconds ?? 0, size_bytes: 0, source_file: '00008.mpls', segment_map: '14,15,16,17,18,19,20' },
      { number: 1, seconds: 23 * 60 + 42, size_bytes: 0, source_file: '00009.mpls', segment_map: '14' },
    ];
    assert.deepEqual(
      matchTitles(scan, disc).map((m) => [m.number, m.role.role]),
      [
        [0, 'play_all'],
        [1, 'episode'],
      ],
    );
  });

  it('recognises a play-all title by its segments: those of two or more episodes in a row', () => {
    const disc: TddbDisc = { ...office, titles: [...office.titles, { index: 10, sourceFile: '00001.mpls', segmentMap: '9,7,5', seconds: 7565, size: null, item: null }] };
    assert.deepEqual(titleRole(disc.titles[10], disc), { role: 'play_all', name: null, season: null, episodes: null });
    assert.deepEqual(titleRole(disc.titles[2], disc), { role: 'unidentified' }, 'segments "1,2" are no episodes');
  });
});

describe('TheDiscDB roles', () => {
  it('reads episode numbers and ranges with a hyphen or an en-dash, and nothing of bad data', () => {
    assert.deepEqual(parseEpisodes('5'), { first: 5, last: 5 });
    assert.deepEqual(parseEpisodes('3-4'), { first: 3, last: 4 });
    assert.deepEqual(parseEpisodes('1–7'), { first: 1, last: 7 });
    assert.equal(parseEpisodes('t'), null);
    assert.equal(parseEpisodes('4-2'), null);
    assert.equal(parseEpisodes(null), null);
  });

  it('puts each kind of extra into the folder the media servers read', () => {
    assert.deepEqual(EXTRA_FOLDERS, {
      Trailer: 'Trailers',
      DeletedScene: 'Deleted Scenes',
      Featurette: 'Featurettes',
      Interview: 'Interviews',
      Scene: 'Scenes',
      Short: 'Shorts',
      Music: 'Other',
      Extra: 'Other',
      Other: 'Other',
    });
    assert.equal(extraFolder('Extra', 'Behind the Scenes of Season 4'), 'Behind The Scenes');
    assert.equal(extraFolder('Extra', 'The Making of 2001'), 'Behind The Scenes');
    assert.equal(extraFolder('Featurette', 'Making-of'), 'Featurettes', 'a stated kind wins over the title');
    assert.equal(extraFolder('SomethingNew', null), 'Other');
  });
});
