import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Disc, PreviousRip } from '../../../shared/api-types.js';
import { uiModules } from '../../fixtures/ui-modules.js';

/** A DVD as GET /devices gives it after the pre-scan; `extra` changes what a case needs. */
function disc(extra: Partial<Disc> = {}): Disc {
  return {
    title: 'Heat', label: 'HEAT_1995', year: 1995, type: 'dvd', size_bytes: 4_000_000_000, fingerprint: 'dvd:AAA', label_fingerprint: null, ids: null,
    confidence: 1, poster: null, poster_url: null, already_ripped: false, audio_tracks: null, kind: 'movie', season: null, tmdb_id: 949, album: null,
    suggestions: [], metadata_source: 'tmdb', recognised: null, titles: [], library: null, previous_rip: null, inserted_at: null, ...extra,
  };
}

const rip = (extra: Partial<PreviousRip> = {}): PreviousRip => ({ job_id: 'j1', ripped_at: '2026-11-01T10:00:00.000Z', title: 'Die Hard', year: 1988, series: null, season: null, target_dir: '/media/Filme', output_path: null, ...extra });

describe('disc card: how the name was found (issue 38: no "Sicherheit 30 %")', () => {
  it('says in words whether the lookup found the label, only a similar title, nothing, or was set by hand', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.foundText(disc()), 'Gefunden: bei TMDB nach dem Disc-Namen „HEAT_1995“ gesucht, der Titel passt genau');
    assert.equal(m.foundText(disc({ confidence: 0.6, metadata_source: 'jikan' })), 'Nur ähnlich: bei MyAnimeList (Jikan) nach „HEAT_1995“ gesucht, kein genau passender Titel – bitte prüfen');
    assert.equal(m.foundText(disc({ confidence: 0.3, metadata_source: 'none' })), 'Nicht gefunden: keine Datenbank kennt „HEAT_1995“, der Name ist der der Disc');
    assert.equal(m.foundText(disc({ confidence: 0, metadata_source: 'label', label: 'SHOW_S02_D1' })), 'Name von der Disc-Beschriftung „SHOW_S02_D1“ (nicht nachgeschlagen)');
    assert.equal(m.foundText(disc({ metadata_source: 'override' })), 'Name von Hand festgelegt');
    m.setLang('en');
    assert.equal(m.foundText(disc({ confidence: 0.92, metadata_source: 'omdb' })), 'Found: searched OMDb for the disc name “HEAT_1995”, the title matches exactly');
    assert.equal(m.foundText(disc({ confidence: 0.6 })), 'Only similar: searched TMDB for “HEAT_1995”, no exactly matching title – please check');
  });

  it('says nothing where another line says it or nothing is known yet', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.foundText(disc({ metadata_source: null })), null, 'before the pre-scan');
    assert.equal(m.foundText(disc({ recognised: { source: 'thediscdb', from: 'api', matched_by: 'content_hash', release: null, disc_number: null } })), null, 'recognised exactly: its own line');
    assert.equal(m.foundText(disc({ type: 'cd', metadata_source: 'musicbrainz' })), null, 'an audio CD names its album source');
    assert.equal(m.foundText(disc({ label: '', title: 'Audio', metadata_source: 'none' })), 'Nicht gefunden: keine Datenbank kennt „Audio“, der Name ist der der Disc', 'no label: the title');
  });
});

describe('disc card: ripped before (issue 38)', () => {
  it('says when and as what, a series by its season', async () => {
    const m = await uiModules();
    m.setLang('de');
    const text = m.previousRipText(rip());
    assert.match(text ?? '', /^Schon gerippt am \d{2}\.\d{2}\.\d{2}, \d{2}:\d{2} als „Die Hard \(1988\)“$/);
    assert.equal(m.previousName(rip({ series: 'The Office', season: 4, title: 'The Office' })), 'The Office · Staffel 4');
    assert.equal(m.previousName(rip({ year: null })), 'Die Hard');
    assert.equal(m.previousRipText(null), null);
    m.setLang('en');
    assert.match(m.previousRipText(rip()) ?? '', /^Already ripped on .+ as “Die Hard \(1988\)”$/);
  });

  it('counts a finished rip as this insert\'s only when its job was made after the disc went in', async () => {
    const m = await uiModules();
    assert.equal(m.ofThisInsert('2026-11-02T10:00:00.000Z', { inserted_at: '2026-11-02T09:59:00.000Z' }), true);
    assert.equal(m.ofThisInsert('2026-11-01T10:00:00.000Z', { inserted_at: '2026-11-02T09:59:00.000Z' }), false, 'the job of an earlier insert');
    assert.equal(m.ofThisInsert('2026-11-01T10:00:00.000Z', { inserted_at: null }), true, 'an older coordinator: as before');
  });

  it('opens the dialog with the earlier name, year and kind, else the disc\'s', async () => {
    const m = await uiModules();
    assert.deepEqual(m.startingName(disc({ title: 'Die Hard', year: null, previous_rip: rip() })), { series: '', season: 1, title: 'Die Hard', year: '1988' });
    assert.deepEqual(m.startingName(disc({ previous_rip: rip({ series: 'The Office', season: 4 }) })), { series: 'The Office', season: 4, title: 'Heat', year: '1988' });
    assert.deepEqual(m.startingName(disc()), { series: '', season: 1, title: 'Heat', year: '1995' });
    assert.deepEqual(m.startingName(disc({ kind: 'series', season: 2, title: 'Show' })), { series: 'Show', season: 2, title: 'Show', year: '1995' });
  });
});

describe('disc card and rip dialog: a disc that cannot be read, titles not chosen (issue 38)', () => {
  it('says why a disc cannot be read', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.match(m.unreadableText({ type: 'unknown', size_bytes: 700_000_000 }) ?? '', /^Disc kann nicht gelesen werden: weder DVD noch Blu-ray noch Audio-CD erkannt/);
    assert.match(m.unreadableText({ type: 'unknown', size_bytes: 0 }) ?? '', /^Disc kann nicht gelesen werden: das Laufwerk meldet keine Daten/);
    assert.equal(m.unreadableText({ type: 'dvd', size_bytes: 0 }), null);
    m.setLang('en');
    assert.match(m.unreadableText({ type: 'unknown', size_bytes: 1 }) ?? '', /^The disc cannot be read: neither a DVD nor a Blu-ray nor an audio CD/);
  });

  it('refuses a rip with no title ticked (the server would take them all) and a scan that found none', async () => {
    const m = await uiModules();
    m.setLang('de');
    const short = [{ number: 1, seconds: 120 }, { number: 2, seconds: 200 }];
    assert.match(m.titlesProblem(short, new Set(), false) ?? '', /^Kein Titel ausgewählt/);
    assert.equal(m.titlesProblem(short, new Set(), true), null, 'main feature only picks one');
    assert.equal(m.titlesProblem(short, new Set([2]), false), null);
    assert.match(m.titlesProblem([], new Set(), false) ?? '', /fand keinen/);
    assert.equal(m.titlesProblem(null, new Set(), false), null, 'the scan has not answered: the backend chooses');
  });
});
