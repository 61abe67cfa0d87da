import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { claimFileName, planOutput, releaseFileName, type OutputTarget } from '../../../../agent/output/output-folder.js';
import { roleNames } from '../../../../agent/tasks/library-names.js';
import * as jellyfin from '../../../fixtures/media-server-rules/jellyfin.js';
import * as kodi from '../../../fixtures/media-server-rules/kodi.js';

// Every name Ripwerk writes into the library, read back with the media servers' own rules (the readers
// in test/fixtures/media-server-rules, checked against the servers' test vectors in
// test/unit/shared/media-server-rules.test.ts): the title, year, season, episode and version they read
// must be what Ripwerk meant (issue 39).

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-read-back-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
function target(): string {
  const dir = path.join(root, `t${++n}`);
  fs.mkdirSync(dir);
  return dir;
}

/** Letters and digits only, lower case: the separators Ripwerk picks may differ, no word may go missing. */
const words = (text: string): string => text.normalize('NFC').toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

function movie(t: string, title: string, year: number | null, extra: Partial<OutputTarget> = {}): OutputTarget {
  return { target_dir: t, title, year, series: null, season: null, job_id: 'b7c9e2f4aa', ...extra };
}

/** [title given, year, title the servers must read (letters and digits compared)]. */
const MOVIES: [string, number | null, string][] = [
  ['Heat', 1995, 'Heat'],
  ['Heat', null, 'Heat'],
  ['Alien: Covenant', 2017, 'Alien Covenant'],
  ['AC/DC: Let There Be Rock', 1980, 'ACDC Let There Be Rock'],
  ['Face/Off', 1997, 'FaceOff'],
  ['Fahrenheit 9/11', 2004, 'Fahrenheit 911'],
  ['Godzilla 2000', 2000, 'Godzilla 2000'],
  ['Death Race 2000', 1975, 'Death Race 2000'],
  ['Blade Runner 2049', 2017, 'Blade Runner 2049'],
  ['Wonder Woman 1984', 2020, 'Wonder Woman 1984'],
  ['1917', 2019, '1917'],
  ['2012', 2009, '2012'],
  ['2001: A Space Odyssey', 1968, '2001 A Space Odyssey'],
  ['Mr. Smith Goes to Washington', 1939, 'Mr Smith Goes to Washington'],
  ['E.T. the Extra-Terrestrial', 1982, 'ET the ExtraTerrestrial'],
  ['M*A*S*H', 1970, 'MASH'],
  ['Se7en', 1995, 'Se7en'],
  ["What's Up, Doc?", 1972, 'Whats Up Doc'],
  ['Kill Bill: Vol. 1', 2003, 'Kill Bill Vol 1'],
  ['Star Wars: Episode IV - A New Hope', 1977, 'Star Wars Episode IV A New Hope'],
  ['Amélie', 2001, 'Amélie'],
  ['Léon: The Professional', 1994, 'Léon The Professional'],
  ['千と千尋の神隠し', 2001, '千と千尋の神隠し'],
  ['Sample', 2020, 'Sample'],
  ['Sample', null, 'Sample'],
  ['Free Sample', 2018, 'Free Sample'],
  ['The Trailer', 2015, 'The Trailer'],
  ['Mega-Trailer', 2012, 'MegaTrailer'],
  ['Crime-Scene', 2010, 'CrimeScene'],
  ['Proof', null, 'Proof'],
  ['Shorts', null, 'Shorts'],
];

describe('movie folders and files read back as the title and year Ripwerk meant', () => {
  for (const [title, year, meant] of MOVIES) {
    it(`${title} (${year ?? 'no year'})`, async () => {
      const t = target();
      const plan = await planOutput(movie(t, title, year));
      const folder = path.basename(plan.dir);
      const file = `${plan.fileBase}.mkv`;
      const full = `/media/Filme/${folder}/${file}`;
      const seen = (who: string, got: { name: string; year: number | null }) => {
        assert.equal(words(got.name), words(meant), `${who} reads the title "${got.name}" from ${full}`);
        assert.equal(got.year, year, `${who} reads the year ${got.year} from ${full}`);
      };
      seen('Jellyfin (folder)', jellyfin.readVideo(`/media/Filme/${folder}`, true));
      seen('Jellyfin (file)', jellyfin.readVideo(full));
      assert.equal(jellyfin.extraType(full, '/media/Filme'), null, `Jellyfin takes ${full} for an extra`);
      assert.equal(jellyfin.moviesInFolder([full]).length, 1);
      for (const name of [folder, file]) {
        const k = kodi.cleanString(name);
        seen(`Kodi (${name})`, { name: k.title, year: k.year ? Number(k.year) : null });
      }
      assert.equal(kodi.excludedFromScan(full), false, `Kodi does not scan ${full}`);
    });
  }

  it('a very long title keeps its year and is not cut further by the servers', async () => {
    const title = 'Night of the Day of the Dawn of the Son of the Bride of the Return of the Revenge of the Terror of the Attack of the Evil, Mutant, Hellbound, Flesh-Eating, Crawling, Alien, Zombified, Subhumanoid Living Dead: Part 5';
    const plan = await planOutput(movie(target(), title, 2011));
    const folder = path.basename(plan.dir);
    assert.ok(Buffer.byteLength(folder) <= 200);
    const kept = folder.slice(0, -' (2011)'.length);
    assert.ok(words(title).startsWith(words(kept)) && kept.length > 150, folder);
    assert.deepEqual(jellyfin.readVideo(`/media/Filme/${folder}`, true), { name: kept, year: 2011, extra: null });
    assert.equal(words(kodi.cleanString(folder).title), words(kept));
  });
});

/** A movie.nfo as Ripwerk writes it (shared/library-files.ts nfoXml, Jellyfin profile). */
const nfo = (tmdb: number | null, imdb: string | null) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<movie>\n  <title>Heat</title>\n  <year>1995</year>\n${tmdb ? `  <uniqueid type="tmdb" default="true">${tmdb}</uniqueid>\n  <tmdbid>${tmdb}</tmdbid>\n` : ''}${imdb ? `  <uniqueid type="imdb">${imdb}</uniqueid>\n  <imdbid>${imdb}</imdbid>\n` : ''}</movie>\n`;

async function secondRip(files: Record<string, string>, library: { tmdb_id: number | null; imdb_id: string | null } | null) {
  const t = target();
  fs.mkdirSync(path.join(t, 'Heat (1995)'));
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(t, 'Heat (1995)', name), content);
  const plan = await planOutput(movie(t, 'Heat', 1995, { library }));
  const name = await claimFileName(plan.dir, `${plan.fileBase}.mkv`);
  releaseFileName(plan.dir, name);
  return { t, plan, name };
}

describe('a second rip of a title already in the library', () => {
  it('goes into its folder as a version Jellyfin groups with the first (same TMDB id in movie.nfo)', async () => {
    const { t, plan, name } = await secondRip({ 'Heat (1995).mkv': 'first', 'movie.nfo': nfo(949, 'tt0113277') }, { tmdb_id: 949, imdb_id: 'tt0113277' });
    assert.equal(plan.dir, path.join(t, 'Heat (1995)'));
    assert.equal(name, 'Heat (1995) - Version 2.mkv');
    const files = ['Heat (1995).mkv', name].map((f) => `/media/Filme/Heat (1995)/${f}`);
    assert.deepEqual(jellyfin.moviesInFolder(files), [{ name: 'Heat (1995)', files }]);
    assert.ok(files.every((f) => !kodi.excludedFromScan(f)));
    for (const f of files) assert.deepEqual(kodi.cleanString(path.basename(f)).titleAndYear, 'Heat (1995)', `Kodi reads ${f} as the same movie`);
  });

  it('counts on past the versions already there', async () => {
    const { name } = await secondRip({ 'Heat (1995).mkv': '1', 'Heat (1995) - Version 2.mkv': '2', 'movie.nfo': nfo(949, null) }, { tmdb_id: 949, imdb_id: null });
    assert.equal(name, 'Heat (1995) - Version 3.mkv');
  });

  it('joins a folder without movie.nfo, or one whose nfo or job names no id: the servers know it by its name alone', async () => {
    assert.equal((await secondRip({ 'Heat (1995).mkv': 'x' }, { tmdb_id: 949, imdb_id: null })).name, 'Heat (1995) - Version 2.mkv');
    assert.equal((await secondRip({ 'Heat (1995).mkv': 'x', 'movie.nfo': nfo(null, null) }, { tmdb_id: 949, imdb_id: null })).name, 'Heat (1995) - Version 2.mkv');
    assert.equal((await secondRip({ 'Heat (1995).mkv': 'x', 'movie.nfo': nfo(949, null) }, null)).name, 'Heat (1995) - Version 2.mkv');
  });

  it('keeps a different movie of the same name and year apart: [job id] folder when the ids differ', async () => {
    const { t, plan, name } = await secondRip({ 'Heat (1995).mkv': 'another film', 'movie.nfo': nfo(12345, 'tt0000001') }, { tmdb_id: 949, imdb_id: 'tt0113277' });
    assert.equal(plan.dir, path.join(t, 'Heat (1995) [b7c9e2f4]'));
    assert.equal(name, 'Heat (1995).mkv');
    assert.equal(jellyfin.readVideo(`/media/Filme/Heat (1995) [b7c9e2f4]`, true).name, 'Heat');
  });

  it('names of a recognised disc\'s other cuts are versions Jellyfin groups with the main movie', () => {
    const plan = { dir: '/media/Filme/Heat (1995)', fileBase: 'Heat (1995)' };
    const names = roleNames([{ role: 'main_movie', name: 'Theatrical' }, { role: 'main_movie', name: "Director's Cut" }, { role: 'main_movie', name: null }], plan, { series: false, extrasFolder: 'Extras', byKind: true });
    const files = names.map((x) => `/media/Filme/Heat (1995)/${x.name}`);
    assert.deepEqual(jellyfin.moviesInFolder(files).map((m) => m.files.length), [3], files.join(', '));
  });

  it('extras are read as extras, in the folder of their kind and in Extras', () => {
    const plan = { dir: '/media/Filme/Heat (1995)', fileBase: 'Heat (1995)' };
    const role = { role: 'extra' as const, name: 'Making of', kind: 'Featurette', folder: 'Featurettes' as const, season: null, episodes: null };
    for (const byKind of [true, false]) {
      const [x] = roleNames([role], plan, { series: false, extrasFolder: 'Extras', byKind });
      assert.notEqual(jellyfin.extraType(`/media/Filme/Heat (1995)/${x.subdir}/${x.name}`), null, x.subdir);
    }
  });
});

/** [series given, the name the season folder's parent has]. */
const SERIES = ['Breaking Bad', 'Doctor Who: Classic', 'On', 'S', 'Son', 'Sea', '1', '24', '9-1-1', 'The Office (US)', 'Sample', 'Se'];

describe('season folders and episode files read back as the season and episode Ripwerk meant', () => {
  for (const series of SERIES) {
    it(series, async () => {
      const t = target();
      for (const season of [0, 1, 2, 12, 100]) {
        const plan = await planOutput({ target_dir: t, title: 'Disc 1', year: null, series, season, job_id: 'j' });
        const seriesDir = path.dirname(plan.dir);
        const lib = `/media/Serien/${path.basename(seriesDir)}/${path.basename(plan.dir)}`;
        assert.deepEqual(jellyfin.seasonFromPath(lib, path.dirname(lib), true, true), { seasonNumber: season, isSeasonFolder: true }, `Jellyfin reads the season of ${lib}`);
        for (const episode of [1, 9, 10, 99, 100, 101, 998]) {
          const pad = (x: number) => String(x).padStart(2, '0');
          const single = `${lib}/${plan.fileBase}E${pad(episode)}.mkv`;
          assert.deepEqual(jellyfin.episodeFromPath(single) && [jellyfin.episodeFromPath(single)?.season, jellyfin.episodeFromPath(single)?.episode], [season, episode], single);
          assert.deepEqual(kodi.enumerateEpisodes(single), [{ season, episode }], single);
          assert.equal(kodi.excludedFromScan(single, 'tvshow'), false, `Kodi does not scan ${single}`);
          const [double] = roleNames([{ role: 'episode', name: null, season, episodes: { first: episode, last: episode + 1 } }], plan, { series: true, extrasFolder: 'Extras', byKind: true });
          const two = `${lib}/${double.name}`;
          const j = jellyfin.episodeFromPath(two);
          assert.deepEqual(j && [j.season, j.episode, j.endingEpisode], [season, episode, episode + 1], two);
          assert.deepEqual(kodi.enumerateEpisodes(two), [{ season, episode }, { season, episode: episode + 1 }], two);
        }
      }
    });
  }
});
