import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DiscLibrarySummary, ScannedDiscTrack } from '../../../shared/api-types.js';
import type { TitleRole } from '../../../shared/disc-titles.js';
import { uiModules } from '../../fixtures/ui-modules.js';

const count = (in_library: number, total: number) => ({ total, in_library });
const summary = (main: [number, number], episodes: [number, number], extras: [number, number]): DiscLibrarySummary => ({
  main_feature: count(...main),
  episodes: count(...episodes),
  extras: count(...extras),
});

describe('disc card: recognition', () => {
  it('says the disc was recognised exactly, and from where, in both languages', async () => {
    const m = await uiModules();
    const mirror = { source: 'thediscdb', from: 'mirror', matched_by: 'content_hash', release: '1995-dvd', disc_number: 1 };
    m.setLang('de');
    assert.equal(m.recognitionText(mirror), 'Exakt erkannt · TheDiscDB (Offline-Kopie)');
    assert.equal(m.recognitionText({ ...mirror, from: 'api' }), 'Exakt erkannt · TheDiscDB (API)');
    assert.equal(m.recognitionText(null), null);
    assert.equal(m.recognitionText(undefined), null, 'an older coordinator sends no field');
    m.setLang('en');
    assert.equal(m.recognitionText(mirror), 'Recognised exactly · TheDiscDB (offline copy)');
    assert.equal(m.recognitionText({ ...mirror, from: 'api', matched_by: 'global_disc_id' }), 'Recognised exactly · TheDiscDB (API)');
  });
});

describe('disc card: library sentence', () => {
  it('names what is in the library, in German', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.librarySummaryText(summary([1, 1], [0, 0], [3, 5]), false), 'Hauptfilm und 3 von 5 Extras schon in der Bibliothek');
    assert.equal(m.librarySummaryText(summary([0, 0], [2, 6], [0, 0]), false), '2 von 6 Folgen schon in der Bibliothek');
    assert.equal(m.librarySummaryText(summary([0, 1], [0, 0], [1, 5]), false), '1 von 5 Extras schon in der Bibliothek', 'the main feature only when it is in the library');
    assert.equal(m.librarySummaryText(summary([1, 1], [0, 0], [0, 5]), false), 'Hauptfilm schon in der Bibliothek', 'a kind of which nothing is there is left out');
    assert.equal(m.librarySummaryText(summary([1, 1], [2, 6], [5, 5]), false), 'Hauptfilm, 2 von 6 Folgen und alle 5 Extras schon in der Bibliothek');
    assert.equal(m.librarySummaryText(summary([0, 1], [0, 0], [1, 1]), false), 'Das Extra schon in der Bibliothek', 'one of one: singular');
    assert.equal(m.librarySummaryText(summary([0, 0], [1, 1], [0, 3]), false), 'Die Folge schon in der Bibliothek');
    assert.equal(m.librarySummaryText(summary([1, 1], [0, 0], [2, 5]), true), 'Alles schon in der Bibliothek', 'every wanted kind complete');
  });

  it('names what is in the library, in English', async () => {
    const m = await uiModules();
    m.setLang('en');
    assert.equal(m.librarySummaryText(summary([1, 1], [0, 0], [3, 5]), false), 'Main feature and 3 of 5 extras already in the library');
    assert.equal(m.librarySummaryText(summary([0, 0], [2, 6], [0, 0]), false), '2 of 6 episodes already in the library');
    assert.equal(m.librarySummaryText(summary([0, 1], [0, 0], [1, 5]), false), '1 of 5 extras already in the library');
    assert.equal(m.librarySummaryText(summary([1, 1], [2, 6], [5, 5]), false), 'Main feature, 2 of 6 episodes, and all 5 extras already in the library');
    assert.equal(m.librarySummaryText(summary([0, 1], [0, 0], [1, 1]), false), 'The extra already in the library');
    assert.equal(m.librarySummaryText(summary([0, 0], [6, 6], [0, 0]), true), 'Everything already in the library');
  });

  it('says nothing when the titles are not known or nothing is in the library', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.librarySummaryText(null, false), null);
    assert.equal(m.librarySummaryText(undefined, true), null);
    assert.equal(m.librarySummaryText(summary([0, 1], [0, 0], [0, 5]), false), null);
    assert.equal(m.librarySummaryText(summary([0, 0], [0, 0], [0, 0]), true), null, 'a disc without known titles has nothing to report');
  });
});

describe('rip dialog: title roles', () => {
  const episode = (season: number | null, first: number, last: number, name: string | null): TitleRole => ({ role: 'episode', name, season, episodes: { first, last } });
  const extra: TitleRole = { role: 'extra', name: 'Making of', kind: 'Featurette', folder: 'Featurettes', season: null, episodes: null };

  it('puts each role in words, in German', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.roleText({ role: 'main_movie', name: 'Heat' }), 'Hauptfilm');
    assert.equal(m.roleText(episode(4, 3, 3, 'Der Anruf')), 'Folge S04E03 „Der Anruf“');
    assert.equal(m.roleText(episode(4, 3, 4, null)), 'Folgen S04E03-E04');
    assert.equal(m.roleText({ role: 'episode', name: null, season: null, episodes: null }), 'Folge');
    assert.equal(m.roleText(extra), 'Extra · Featurettes: „Making of“');
    assert.equal(m.roleText({ ...extra, name: null, folder: 'Deleted Scenes' }), 'Extra · Deleted Scenes');
    assert.equal(m.roleText({ role: 'play_all', name: 'Play All', season: 4, episodes: { first: 1, last: 6 } }), 'Alles abspielen');
    assert.equal(m.roleText({ role: 'unidentified' }), 'unbekannt');
    assert.equal(m.roleText(null), 'unbekannt', 'a title the database does not know');
  });

  it('puts each role in words, in English, with the database\'s name as its own piece', async () => {
    const m = await uiModules();
    m.setLang('en');
    assert.equal(m.roleText({ role: 'main_movie', name: null }), 'Main feature');
    assert.equal(m.roleText(episode(4, 3, 3, 'The Call')), 'Episode S04E03 “The Call”');
    assert.equal(m.roleText(episode(1, 1, 2, null)), 'Episodes S01E01-E02');
    assert.equal(m.roleText(extra), 'Extra · Featurettes: “Making of”');
    assert.equal(m.roleText({ role: 'play_all', name: null, season: null, episodes: null }), 'Play all');
    assert.equal(m.roleText({ role: 'unidentified' }), 'unknown');
    assert.deepEqual(m.rolePieces(episode(4, 3, 3, 'The Call'), (name) => ({ name })), ['Episode S04E03', ' “', { name: 'The Call' }, '”']);
  });

  const track = (number: number, seconds: number, more: Partial<ScannedDiscTrack> = {}): ScannedDiscTrack => ({ number, seconds, size_bytes: 1, chapters: 1, ...more });

  it('ticks exactly the wanted titles when the scan carries roles, else the titles of five minutes or more', async () => {
    const m = await uiModules();
    const plain = [track(0, 5400), track(1, 299), track(2, 300)];
    assert.equal(m.hasRoles(plain), false);
    assert.deepEqual(m.preselectedTitles(plain, 300), [0, 2]);
    const known = [
      track(0, 5400, { role: { role: 'main_movie', name: null }, in_library: true, wanted: false }),
      track(1, 120, { role: extra, in_library: false, wanted: true }),
      track(2, 5500, { role: { role: 'play_all', name: null, season: null, episodes: null }, in_library: false, wanted: false }),
      track(3, 900, { role: null }),
    ];
    assert.equal(m.hasRoles(known), true);
    assert.deepEqual(m.preselectedTitles(known, 300), [1], 'the short extra, not the main feature already in the library, nor play-all');
    assert.deepEqual(m.preselectedTitles([track(0, 5400, { role: { role: 'main_movie', name: null }, in_library: true, wanted: false })], 300), [], 'everything in the library: nothing ticked');
    assert.equal(m.hasRoles([track(0, 5400, { role: null, wanted: false })]), false, 'only null roles: behaves as without');
  });

  it('a movie disc: ticks the main feature and the long titles the rip takes, not the decoys it leaves', async () => {
    const m = await uiModules();
    const obfuscated = [
      track(2, 636),
      track(4, 6730, { left: { reason: 'out_of_order', of: 7 } }),
      track(7, 6730, { main_feature: ['segments_in_order', 'runtime'] }),
      track(8, 6730, { left: { reason: 'out_of_order', of: 7 } }),
      track(9, 200, { main_feature: undefined }),
    ];
    assert.deepEqual(m.preselectedTitles(obfuscated, 300), [2, 7]);
    assert.deepEqual(m.preselectedTitles([track(0, 240, { main_feature: ['longest'] }), track(1, 60)], 300), [0], 'the main feature even when short');
  });

  it('says which title is the main feature and why, and why a title is left, in both languages', async () => {
    const m = await uiModules();
    const tracks = [track(4, 6730, { left: { reason: 'out_of_order', of: 7 } }), track(7, 6730, { main_feature: ['segments_in_order', 'runtime'] })];
    m.setLang('de');
    assert.equal(m.mainFeatureText(tracks), 'Hauptfilm: Titel 7, Segmente in Reihenfolge, Laufzeit wie TMDB');
    assert.equal(m.leftText({ reason: 'out_of_order', of: 7 }), 'ausgelassen: Segmente nicht in Reihenfolge (verschleierte Playlist), Titel 7 spielt sie in Reihenfolge');
    assert.equal(m.leftText({ reason: 'duplicate', of: 3 }), 'ausgelassen: Duplikat von Titel 3');
    assert.equal(m.leftText(undefined), null);
    assert.equal(m.mainFeatureText([track(0, 60)]), null);
    m.setLang('en');
    assert.equal(m.mainFeatureText([track(1, 6000, { main_feature: ['longest', 'largest', 'audio'] })]), 'Main feature: title 1, longest title, largest title, with audio');
    assert.equal(m.leftText({ reason: 'similar', of: 2 }), 'left out: too many titles of near-identical length, title 2 is taken');
  });
});

describe('settings: ripTitleKinds boxes', () => {
  it('gives the list in the order of the choices as a box is ticked or unticked', async () => {
    const { toggleChoice } = await uiModules();
    const kinds = ['main_feature', 'episodes', 'extras'];
    assert.deepEqual(toggleChoice(kinds, ['main_feature', 'episodes', 'extras'], 'extras'), ['main_feature', 'episodes']);
    assert.deepEqual(toggleChoice(kinds, ['extras'], 'main_feature'), ['main_feature', 'extras']);
    assert.deepEqual(toggleChoice(kinds, ['episodes'], 'episodes'), [], 'the server refuses an empty list, with its reason');
  });
});
