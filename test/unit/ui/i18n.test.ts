import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SETTING_DEFAULTS } from '../../../coordinator/system/settings-store.js';
import { uiModules } from '../../fixtures/ui-modules.js';

describe('UI catalogs', () => {
  it('have the same keys in German and English, none empty, and the same {parameters}', async () => {
    const { de, en } = await uiModules();
    assert.deepEqual(Object.keys(en).sort(), Object.keys(de).sort());
    const params = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(de)) {
      assert.ok(de[key].trim(), `de ${key} is empty`);
      assert.ok(en[key].trim(), `en ${key} is empty`);
      assert.deepEqual(params(en[key]), params(de[key]), `parameters of ${key}`);
    }
    assert.ok(Object.keys(de).length > 200, 'the catalogs hold the whole UI');
  });

  it('label every setting of the API in both languages (the System page shows them all)', async () => {
    const { de } = await uiModules();
    assert.deepEqual(Object.keys(SETTING_DEFAULTS).filter((name) => !(`setting.${name}` in de)), []);
  });

    it('chooses German only for a German browser, a stored choice wins', async () => {
    const { chooseLang, localeFor } = await uiModules();
    assert.equal(chooseLang(null, ['de-DE', 'en']), 'de');
    assert.equal(chooseLang(null, ['de']), 'de');
    assert.equal(chooseLang(null, ['de-AT']), 'de');
    assert.equal(chooseLang(null, ['en-US', 'de']), 'en');
    assert.equal(chooseLang(null, ['fr-FR']), 'en');
    assert.equal(chooseLang(null, ['dev']), 'en', 'a prefix is not a language');
    assert.equal(chooseLang(null, []), 'en');
    assert.equal(chooseLang('de', ['en-US']), 'de');
    assert.equal(chooseLang('en', ['de-DE']), 'en');
    assert.equal(chooseLang('fr', ['de-DE']), 'de', 'an unknown stored value is ignored');
    assert.equal(localeFor('en', ['de-DE', 'en-GB']), 'en-GB');
    assert.equal(localeFor('de', ['en-US']), 'de-DE');
    assert.equal(localeFor('en', ['fr-FR']), 'en-US');
  });

  it('fills parameters, marks a missing key, and formats numbers, dates and the remaining time per language', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.t('drives.started', { title: 'Heat' }), 'Auftrag für „Heat“ gestartet.');
    assert.equal(m.t('no.such.key'), '⟦no.such.key⟧');
    assert.equal(m.etaText(720), 'noch etwa 12 Minuten', 'one "noch", not two');
    assert.equal(m.etaText(30), 'noch weniger als eine Minute');
    assert.equal(m.etaText(3600 + 60), 'noch etwa 1 Stunde 1 Minute');
    assert.equal(m.etaText(null), null);
    assert.equal(m.percent(4.25, 1), '4,3\u00a0%', 'a no-break space keeps the sign with the number');
    assert.equal(m.bytes(4_700_000_000), '4,7 GB');
    assert.match(m.dateTime('2026-03-01T18:05:00Z'), /^0?1\.0?3\.26/);
    m.setLang('en');
    assert.equal(m.t('drives.started', { title: 'Heat' }), 'Job for “Heat” started.');
    assert.equal(m.etaText(720), 'about 12 minutes left');
    assert.equal(m.etaText(7200), 'about 2 hours left');
    assert.equal(m.etaText(60), 'about 1 minute left');
    assert.equal(m.percent(4.25, 1), '4.3%');
    assert.equal(m.bytes(4_700_000_000), '4.7 GB');
    assert.match(m.dateTime('2026-03-01T18:05:00Z'), /^3\/1\/26/);
    assert.equal(m.dateTime('no date'), '–');
  });
});

describe('disc kinds per worker', () => {
  const kinds = {
    audio_cd: { can: true, missing: null },
    dvd: { can: true, missing: null },
    dvd_protected: { can: false, missing: 'libdvdcss' },
    bluray: { can: false, missing: 'makemkvcon' },
    uhd: { can: false, missing: 'keystore' },
  };

  it('lists every kind with the missing piece and its fix in the chosen language', async () => {
    const m = await uiModules();
    m.setLang('de');
    const rows = m.kindRows(kinds);
    assert.deepEqual(
      rows?.map((r) => [r.kind, r.can]),
      [
        ['audio_cd', true],
        ['dvd', true],
        ['dvd_protected', false],
        ['bluray', false],
        ['uhd', false],
      ],
    );
    assert.deepEqual(rows?.[2].missing, { text: 'libdvdcss fehlt', command: 'sudo bash scripts/install.sh --with-libdvdcss' });
    assert.deepEqual(rows?.[3].missing, { text: 'MakeMKV fehlt', command: 'sudo bash scripts/install.sh --with-makemkv --accept-makemkv-eula' });
    assert.deepEqual(rows?.[4].missing, { text: 'kein Schlüsselspeicher (unter System → Schlüssel hochladen)', command: null });
    assert.equal(rows?.[0].missing, null);
    m.setLang('en');
    assert.equal(m.kindRows(kinds)?.[3].label, 'Blu-rays');
    assert.deepEqual(m.kindRows(kinds)?.[2].missing, { text: 'libdvdcss is missing', command: 'sudo bash scripts/install.sh --with-libdvdcss' });
    assert.deepEqual(m.kindRows({ ...kinds, dvd: { can: false, missing: 'something-new' } })?.[1].missing, { text: 'missing: something-new', command: null }, 'an unknown code is named as it comes');
  });

  it('is unknown (no rows, no warning) when the worker does not report it', async () => {
    const m = await uiModules();
    assert.equal(m.kindRows(undefined), null);
    assert.equal(m.kindRows(null), null);
    assert.equal(m.kindRows({}), null);
    assert.equal(m.ripWarning('flur', undefined, 'bluray'), null);
    assert.equal(m.ripWarning('flur', { dvd: { can: true, missing: null } }, 'bluray'), null, 'a kind not reported is unknown');
  });

  it('warns on the drive card only for a disc the worker cannot rip', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.deepEqual(m.ripWarning('flur', kinds, 'bluray'), { text: 'flur kann Blu-rays nicht rippen: MakeMKV fehlt.', command: 'sudo bash scripts/install.sh --with-makemkv --accept-makemkv-eula' });
    assert.equal(m.ripWarning('flur', kinds, 'dvd'), null, 'protection is not known for a DVD: no warning while unprotected DVDs work');
    assert.equal(m.ripWarning('flur', kinds, 'cd'), null);
    assert.equal(m.ripWarning('flur', kinds, 'unknown'), null);
    m.setLang('en');
    assert.deepEqual(m.ripWarning('flur', { ...kinds, dvd: { can: false, missing: 'lsdvd' } }, 'dvd'), { text: 'flur cannot rip DVDs without copy protection: lsdvd is missing.', command: 'sudo apt-get install lsdvd' });
    assert.deepEqual(m.ripWarning('flur', { ...kinds, uhd: { can: false, missing: null } }, 'uhd'), { text: 'flur cannot rip 4K UHD Blu-rays: unknown.', command: null });
  });
});

describe('rip dialog request', () => {
  const base = { device: 'flur', titles: [3, 1], series: null, release: null, movie: { title: ' Heat ', year: '1995' }, targetDir: '/media/Filme', workDir: '', transcodeNode: '', languages: null };

  it('sends main_feature_only and no titles when the box is ticked', async () => {
    const { ripRequest } = await uiModules();
    const body = ripRequest({ ...base, mainFeatureOnly: true });
    assert.equal(body.main_feature_only, true);
    assert.equal('titles' in body, false);
    assert.equal(body.title, 'Heat');
    assert.equal(body.year, 1995);
  });

  it('sends the ticked titles, sorted, with main_feature_only false otherwise', async () => {
    const { ripRequest } = await uiModules();
    const body = ripRequest({ ...base, mainFeatureOnly: false });
    assert.deepEqual(body.titles, [1, 3]);
    assert.equal(body.main_feature_only, false);
    assert.equal('titles' in ripRequest({ ...base, mainFeatureOnly: false, titles: null }), false, 'before the scan answers the backend chooses');
  });

  it('sends series and season instead of a title for a series', async () => {
    const { ripRequest } = await uiModules();
    const body = ripRequest({ ...base, mainFeatureOnly: false, movie: null, series: { name: ' Show ', season: 2, tmdbId: null } });
    assert.deepEqual([body.series, body.season, 'tmdb_id' in body, 'title' in body], ['Show', 2, false, false]);
  });

  it('sends the ticked languages, and none before a title scan listed streams', async () => {
    const { ripRequest } = await uiModules();
    const body = ripRequest({ ...base, mainFeatureOnly: false, languages: { audio: ['eng', 'deu'], subtitles: [] } });
    assert.deepEqual([body.audio_languages, body.subtitle_languages], [['eng', 'deu'], []]);
    assert.equal('audio_languages' in ripRequest({ ...base, mainFeatureOnly: false }), false);
  });

  it('sends the chosen MusicBrainz release of an audio CD', async () => {
    const { ripRequest } = await uiModules();
    const body = ripRequest({ ...base, mainFeatureOnly: null, titles: null, movie: null, release: 'mb-123' });
    assert.equal(body.musicbrainz_release_id, 'mb-123');
    assert.equal('title' in body, false);
    assert.equal('main_feature_only' in body, false, 'a CD has no main feature');
  });
});

describe('rip dialog languages', () => {
  const track = (number: number, seconds: number, audio: string[], subtitles: string[]) => ({
    number,
    seconds,
    size_bytes: 1,
    chapters: 1,
    audio: audio.map((language, i) => ({ index: i + 1, language, codec: 'ac3', channels: 2 })),
    subtitles: subtitles.map((language, i) => ({ index: i + 1, language, codec: 'vobsub', forced: false })),
  });
  const tracks = [track(1, 5400, ['eng', 'deu', 'und'], ['deu', 'eng']), track(2, 300, ['fra'], ['fra'])];

  it('lists the languages of the chosen titles once, in disc order, without und', async () => {
    const m = await uiModules();
    assert.deepEqual(m.foundLanguages(tracks, [1], 'audio'), ['eng', 'deu']);
    assert.deepEqual(m.foundLanguages(tracks, [1, 2], 'audio'), ['eng', 'deu', 'fra']);
    assert.deepEqual(m.foundLanguages(tracks, [2], 'subtitles'), ['fra']);
    assert.deepEqual(m.foundLanguages(tracks, [], 'audio'), []);
  });

  it('counts the untagged streams of the chosen titles and says the audio is kept, the subtitles left out, in both languages', async () => {
    const m = await uiModules();
    const untagged = [track(1, 5400, ['und', 'und', 'deu'], ['und']), track(2, 300, ['und'], [])];
    assert.equal(m.untaggedStreams(untagged, [1, 2], 'audio'), 2, 'the most one title has');
    assert.equal(m.untaggedStreams(untagged, [2], 'audio'), 1);
    assert.equal(m.untaggedStreams(untagged, [2], 'subtitles'), 0);
    assert.equal(m.untaggedStreams(tracks, [2], 'audio'), 0);
    m.setLang('de');
    assert.equal(m.tCount('rip.untaggedAudio', 1), '1 Tonspur ohne Sprachangabe: wird immer behalten');
    assert.equal(m.tCount('rip.untaggedSubtitles', 2), '2 Untertitel ohne Sprachangabe: werden nicht übernommen');
    m.setLang('en');
    assert.equal(m.tCount('rip.untaggedAudio', 2), '2 audio tracks without a language tag: always kept');
    assert.equal(m.tCount('rip.untaggedSubtitles', 1), '1 subtitle track without a language tag: left out');
  });

  it('names the roles the streams of a language carry (forced, hard of hearing, commentary, audio description), in both languages', async () => {
    const m = await uiModules();
    const roleTracks = [
      {
        number: 1,
        seconds: 5400,
        size_bytes: 1,
        chapters: 1,
        audio: [
          { index: 1, language: 'deu', codec: 'ac3', channels: 6 },
          { index: 2, language: 'eng', codec: 'ac3', channels: 2, commentary: true },
          { index: 3, language: 'deu', codec: 'ac3', channels: 2, visual_impaired: true },
        ],
        subtitles: [
          { index: 1, language: 'deu', codec: 'vobsub', forced: true },
          { index: 2, language: 'deu', codec: 'vobsub', forced: false, hearing_impaired: true },
          { index: 3, language: 'eng', codec: 'vobsub', forced: false },
        ],
      },
    ];
    assert.deepEqual([...m.languageRoles(roleTracks, [1], 'audio')], [['deu', ['visual_impaired']], ['eng', ['commentary']]]);
    assert.deepEqual([...m.languageRoles(roleTracks, [1], 'subtitles')], [['deu', ['forced', 'hearing_impaired']], ['eng', []]]);
    assert.deepEqual([...m.languageRoles(roleTracks, [], 'audio')], [], 'only the chosen titles');
    for (const role of ['forced', 'hearing_impaired', 'commentary', 'visual_impaired']) {
      assert.ok(m.de[`rip.streamRole.${role}`] && m.en[`rip.streamRole.${role}`], role);
    }
  });

  it('puts the settings\' languages first in their order, ticked; the chosen list keeps that order', async () => {
    const m = await uiModules();
    const options = m.languageOptions(['eng', 'deu', 'fra'], ['deu', 'eng', 'ita']);
    assert.deepEqual(options, [
      { code: 'deu', preferred: true },
      { code: 'eng', preferred: true },
      { code: 'fra', preferred: false },
    ]);
    assert.deepEqual(m.chosenLanguages(options, new Set(['fra', 'deu'])), ['deu', 'fra']);
  });

  it('takes the longest title with main feature only, else the ticked ones', async () => {
    const m = await uiModules();
    assert.deepEqual(m.ripTitles(tracks, new Set([2]), true), [1]);
    assert.deepEqual(m.ripTitles(tracks, new Set([2]), false), [2]);
    assert.deepEqual(m.ripTitles(tracks, new Set(), false), [1, 2], 'none ticked: the backend takes them all');
    assert.deepEqual(m.ripTitles([...tracks, { number: 3, seconds: 10, size_bytes: 1, chapters: 1, main_feature: ['runtime'] }], new Set(), true), [3], 'the main feature the scan marks, however long');
  });

  it('names languages in the UI\'s language', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.languageName('deu'), 'Deutsch');
    m.setLang('en');
    assert.equal(m.languageName('deu'), 'German');
    assert.equal(m.languageName('qqq'), 'qqq');
  });
});
