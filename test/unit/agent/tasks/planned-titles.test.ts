import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { plannedSelection } from '../../../../agent/tasks/planned-titles.js';
import { parseMakemkvInfo } from '../../../../agent/tools/makemkv-parser.js';
import { sourceFields } from '../../../../agent/tools/rippers.js';
import { knownTitles, plannedTitles, type TitleChoice } from '../../../../coordinator/discs/title-plan.js';
import { discTitles } from '../../../../coordinator/metadata/thediscdb/title-matcher.js';
import { parseDisc, type TddbDisc } from '../../../../coordinator/metadata/thediscdb/types.js';
import type { PlannedTitle, Track } from '../../../../shared/protocol.js';
import { fixtureJson, TDDB_FIXTURES } from '../../../fixtures/thediscdb-mirror.js';

/** The scan the agent makes of a TheDiscDB capture (its HSH: lines are TheDiscDB's, not MakeMKV's). */
function scanOf(capture: string): Track[] {
  const lines = fs.readFileSync(path.join(TDDB_FIXTURES, capture), 'utf8').split(/\r?\n/).filter((l) => !l.startsWith('HSH:'));
  return parseMakemkvInfo(lines).titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters, ...sourceFields(t) }));
}

/** MakeMKV with a minimum length: shorter titles are left out and the rest numbered again from 0. */
function withMinLength(scan: Track[], seconds: number): Track[] {
  return scan.filter((t) => t.seconds >= seconds).map((t, i) => ({ ...t, number: i }));
}

/** The plan the coordinator sends for a disc with nothing in the library yet. */
function planOf(fixture: string, choice: TitleChoice): PlannedTitle[] {
  return plannedTitles(knownTitles(discTitles(parseDisc(fixtureJson(fixture)) as TddbDisc), [], choice));
}

const odysseyPlan = planOf('2001-2011-dvd-disc01.json', { kinds: ['main_feature', 'extras'], mainFeatureOnly: false, minSeconds: 120 });
const officePlan = planOf('the-office-2021-season-4-blu-ray-disc01.json', { kinds: ['episodes'], mainFeatureOnly: false, minSeconds: 120 });
const odysseyScan = scanOf('2001-2011-dvd-disc01.txt');
const officeScan = scanOf('the-office-s4d1-sample-disc-log.txt');

describe('plannedSelection: the plan\'s titles found in the agent\'s own scan', () => {
  it('takes the 2001 main movie and trailer of a full scan, and knows the role of every title', () => {
    const s = plannedSelection(odysseyScan, odysseyPlan);
    assert.deepEqual(
      s.take.map((t) => [t.number, t.source_file]),
      [
        [0, '01'],
        [7, '08'],
      ],
    );
    assert.equal(s.take[0], odysseyScan[0], 'the scanned track itself');
    assert.deepEqual([...s.roles.keys()], [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(s.roles.get(0), { role: 'main_movie', name: '2001: A Space Odyssey' });
    assert.deepEqual(s.roles.get(1), { role: 'extra', name: 'wb logo', kind: 'Other', folder: 'Other', season: null, episodes: null });
    assert.deepEqual(s.notes, [
      'titles by TheDiscDB: 0 (01) = main movie "2001: A Space Odyssey" [source+segments+duration+size]; 7 (08) = Trailers: "Theatrical Trailer" [source+segments+duration+size]',
      'title(s) left (in the library already, a kind not wanted, or play-all): 1 (02) = Other: "wb logo"; 2 (03) = Other: "warning"; 3 (04) = Other: "disclaimer"; 4 (05) = Other: "warning"; 5 (06) = Other: "warning"; 6 (07) = Other: "warning"',
    ]);
  });

  it('finds the same titles in a scan MakeMKV numbered after its minimum length', () => {
    const scan = withMinLength(odysseyScan, 60);
    const s = plannedSelection(scan, odysseyPlan);
    assert.deepEqual(
      s.take.map((t) => [t.number, t.source_file]),
      [
        [0, '01'],
        [2, '08'],
      ],
    );
    assert.deepEqual([...s.roles.entries()].map(([n, r]) => [n, r.role]), [
      [0, 'main_movie'],
      [1, 'extra'],
      [2, 'extra'],
    ]);
    assert.equal(s.notes.some((n) => n.includes('not found')), false);
  });

  it('names a title to take that the scan does not have (MakeMKV\'s minimum length above the trailer\'s 111 s)', () => {
    const s = plannedSelection(withMinLength(odysseyScan, 120), odysseyPlan);
    assert.deepEqual(s.take.map((t) => t.source_file), ['01']);
    assert.equal(s.notes.at(-1), 'TheDiscDB title(s) not found in this scan: 08 (Trailers: "Theatrical Trailer")');
  });

  it('takes The Office\'s three episodes in the scan\'s order, however the scan is ordered', () => {
    const reversed = [...officeScan].reverse();
    const s = plannedSelection(reversed, officePlan);
    assert.deepEqual(
      s.take.map((t) => [t.number, t.source_file]),
      [
        [3, '00004.mpls'],
        [1, '00002.mpls'],
        [0, '00003.mpls'],
      ],
    );
    assert.deepEqual(s.roles.get(3), { role: 'episode', name: 'Fun Run', season: 4, episodes: { first: 1, last: 2 } });
    assert.deepEqual(s.roles.get(2), { role: 'unidentified' }, 'every paired title has its role, taken or not');
    assert.equal(s.roles.size, 10);
  });

  it('finds nothing in a scan of another disc, and says which titles it missed', () => {
    const s = plannedSelection(officeScan, odysseyPlan);
    assert.deepEqual(s.take, []);
    assert.equal(s.roles.size, 0);
    assert.deepEqual(s.notes, ['TheDiscDB title(s) not found in this scan: 01 (main movie "2001: A Space Odyssey"); 08 (Trailers: "Theatrical Trailer")']);
  });

  it('takes nothing when the plan takes nothing (every wanted title in the library)', () => {
    const none = odysseyPlan.map((t) => ({ ...t, take: false }));
    const s = plannedSelection(odysseyScan, none);
    assert.deepEqual(s.take, []);
    assert.equal(s.roles.size, 8);
    assert.equal(s.notes.length, 1);
    assert.match(s.notes[0], /^title\(s\) left/);
  });
});
