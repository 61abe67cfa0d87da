import type { Device, Disc } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { emptyCatalogue, POSTER_JPEG, startMetadataServer, TMDB_V3_KEY, TMDB_V4_TOKEN, tmdbMovie, tmdbSeason, tmdbTv, type MetadataServer } from '../fixtures/metadata-server.js';
import { api, dvdImage, insertDisc, startAgent, startCoordinator, stopAll, waitFor, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';


describe('metadata: lookup on insert, search, status, seasons, correction, library files', () => {
  let w: World;
  let c: CoordinatorHandle;
  let agent: AgentHandle;
  let meta: MetadataServer;
  const device = 'wohnzimmer-drive-wohnzimmer';
  let heatJob = '';
  let seriesJob = '';

  const disc = async (): Promise<Disc> => {
    const d = await waitFor('the disc card', async () => (await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device)?.disc, 30_000);
    return d;
  };

  before(async () => {
    const catalogue = emptyCatalogue();
    catalogue.tmdbMovies.push(tmdbMovie(949, 'Heat', '1995-12-15', { overview: 'Ein Profi-Räuber und ein Cop.' }));
    catalogue.tmdbMovies.push(tmdbMovie(5520, 'Nordlicht Express', '2003-10-02'));
    catalogue.tmdbTv.push(tmdbTv(1396, 'Breaking Bad', '2008-01-20'));
    catalogue.tmdbSeasons['1396/1'] = tmdbSeason(1396, 1, [1, 1, 20, 30]);
    meta = await startMetadataServer(catalogue);
    w = world();
    c = await startCoordinator(w, { TMDB_BASE_URL: meta.tmdbBase, OMDB_BASE_URL: meta.omdbBase, JIKAN_BASE_URL: meta.jikanBase, TMDB_IMAGE_BASE_URL: meta.imageBase, TMDB_API_KEY: TMDB_V3_KEY });
    agent = await startAgent(w, c.mqttUrl, 'wohnzimmer');
    const set = await api(c.url, 'PUT', '/settings', { autoEject: false, mediaServerType: 'jellyfin', mediaServerUrl: meta.url });
    assert.equal(set.status, 200, set.text);
  });
  after(async () => {
    await stopAll();
    await meta.close();
  });

  it('identifies an inserted disc through TMDB, stripping trailing words of the label', async () => {
    insertDisc(agent.driveDir, dvdImage('HEAT_SPECIAL_EDITION', [4]));
    // The card shows up at once; the pre-scan's answer (confidence set) follows.
    const d = await waitFor('the pre-scan', async () => {
      const x = await disc();
      return x.confidence !== null ? x : undefined;
    });
    assert.deepEqual({ title: d.title, year: d.year, confidence: d.confidence, poster: d.poster }, { title: 'Heat', year: 1995, confidence: 1, poster: '/poster949.jpg' });
    const searched = meta.requests.filter((r) => r.path === '/tmdb/3/search/multi').map((r) => r.query.query);
    assert.deepEqual(searched, ['Heat Special Edition', 'Heat Special', 'Heat']);
    assert.ok(meta.requests.every((r) => !r.path.startsWith('/tmdb') || r.query.api_key === TMDB_V3_KEY), 'the environment key is a v3 key: sent as api_key');
  });

  it('searches every source with posters, and tells the live status of each', async () => {
    const r = await api<{ query: string; results: { source: string; title: string; year: number; poster_path: string; poster_url: string; similarity: number }[]; errors: unknown[] }>(c.url, 'GET', '/metadata/search?q=Heat');
    assert.equal(r.status, 200);
    assert.equal(r.body.query, 'Heat');
    assert.deepEqual(r.body.errors, []);
    assert.deepEqual(r.body.results.map((m) => [m.source, m.title, m.year, m.poster_path, m.poster_url, m.similarity]), [['tmdb', 'Heat', 1995, '/poster949.jpg', `${meta.imageBase}/poster949.jpg`, 1]]);
    assert.equal((await api(c.url, 'GET', '/metadata/search')).status, 400);

    const before = meta.requests.length;
    const s = await api<{ ok: boolean; sources: { source: string; configured: boolean; ok: boolean; auth?: string; message: string }[] }>(c.url, 'GET', '/metadata/status');
    assert.equal(s.body.ok, true);
    const by = Object.fromEntries(s.body.sources.map((x) => [x.source, x]));
    assert.deepEqual([by.tmdb.ok, by.tmdb.auth, by.jikan.ok, by.omdb.configured, by.omdb.ok], [true, 'v3', true, false, false]);
    assert.equal(by.omdb.message, 'no OMDb key is set');
    assert.ok(meta.requests.slice(before).some((x) => x.path === '/tmdb/3/configuration'), 'status asks TMDB live');

    // A key is tried with TMDB when saved (issue 38): a wrong one is refused with TMDB's answer and not stored.
    const wrong = await api(c.url, 'PUT', '/settings', { tmdbApiKey: 'wrong-v4-token' });
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /^tmdbApiKey refused: TMDB did not take the key \(TMDB answered 401: Invalid API key/);
    assert.equal(wrong.headers.get('Ripwerk-Reason'), 'tmdbKeyRefused');
    assert.ok(!wrong.text.includes('wrong-v4-token'));
    assert.equal(meta.requests.filter((x) => x.path.startsWith('/tmdb')).at(-1)?.authorization, 'Bearer wrong-v4-token', 'tried as a v4 token');
    // A key saved in the settings wins over the environment's.
    assert.equal((await api(c.url, 'PUT', '/settings', { tmdbApiKey: TMDB_V4_TOKEN })).status, 200);
    const v4 = await api<{ sources: { source: string; ok: boolean; auth?: string; message: string }[] }>(c.url, 'GET', '/metadata/status');
    const tmdb = v4.body.sources.find((x) => x.source === 'tmdb')!;
    assert.deepEqual([tmdb.ok, tmdb.auth], [true, 'v4']);
    assert.ok(!JSON.stringify(v4.body).includes(TMDB_V4_TOKEN));
    assert.equal((await api(c.url, 'PUT', '/settings', { tmdbApiKey: '' })).status, 200);
  });

  it('answers season runtimes, and refuses a bad id or an unknown season', async () => {
    const r = await api<{ tv_id: number; season: number; episodes: { episode: number; runtime_minutes: number; name: string }[] }>(c.url, 'GET', '/metadata/tv/1396/season/1');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.episodes.map((e) => [e.episode, e.runtime_minutes, e.name]), [
      [1, 1, 'Folge 1'],
      [2, 1, 'Folge 2'],
      [3, 20, 'Folge 3'],
      [4, 30, 'Folge 4'],
    ]);
    const none = await api(c.url, 'GET', '/metadata/tv/1396/season/7');
    assert.equal(none.status, 404);
    assert.equal(none.text, 'TMDB knows no season 7 of series 1396\n');
    assert.equal((await api(c.url, 'GET', '/metadata/tv/abc/season/1')).status, 400);
  });

  it('serves the disc card\'s poster itself: fetched once from the movie database, then from its cache', async () => {
    const d = await disc();
    assert.match(d.poster_url ?? '', /^\/api\/posters\/[0-9a-f]{32}$/);
    const url = `${c.url}${(d.poster_url as string).slice('/api'.length)}`;
    const first = await fetch(url);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('content-type'), 'image/jpeg');
    const body = Buffer.from(await first.arrayBuffer());
    assert.deepEqual(body.subarray(0, POSTER_JPEG.length), POSTER_JPEG);
    assert.equal(body.subarray(POSTER_JPEG.length).toString(), '/images/w500/poster949.jpg');
    const fetched = meta.requests.filter((r) => r.path === '/images/w500/poster949.jpg').length;
    assert.ok(fetched >= 1);
    assert.equal((await fetch(url)).status, 200);
    assert.equal(meta.requests.filter((r) => r.path === '/images/w500/poster949.jpg').length, fetched, 'the second answer comes from the cache');
    const files = fs.readdirSync(path.join(w.root, 'coordinator-data', 'posters'));
    assert.deepEqual(files, [`${(d.poster_url as string).split('/').pop()}.jpg`]);
    const unknown = await api(c.url, 'GET', `/posters/${'0'.repeat(32)}`);
    assert.equal(unknown.status, 404);
    assert.match(unknown.text, /^no poster with this key/);
    const bad = await api(c.url, 'GET', '/posters/..%2Fcoordinator.sqlite');
    assert.equal(bad.status, 400);
  });

  it('a job made before the lookup answered takes the answer while its rip runs', async () => {
    const release = meta.holdTmdb();
    fs.rmSync(path.join(agent.driveDir, 'HEAT_SPECIAL_EDITION.iso'));
    await waitFor('the drive empty', async () => !(await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device)?.disc, 30_000);
    insertDisc(agent.driveDir, dvdImage('NORDLICHT_EXPRESS', [4]));
    await waitFor('the new disc', async () => ((await disc()).label === 'NORDLICHT_EXPRESS' ? true : undefined));
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.title, 'Nordlicht Express', 'the label names it while the lookup waits');
    assert.equal(created.body.meta?.title_source, 'label');
    release();
    const done = await waitForStatus(c.url, created.body.id, ['completed', 'failed']);
    assert.equal(done.status, 'completed', done.error ?? '');
    assert.equal(done.title, 'Nordlicht Express');
    assert.equal(done.meta?.year, 2003);
    assert.equal(done.meta?.tmdb_id, 5520);
    assert.equal(done.meta?.poster_path, '/poster5520.jpg');
    assert.equal(done.output_path, path.join(w.media, 'Filme', 'Nordlicht Express (2003)'));
    assert.ok(fs.existsSync(path.join(w.media, 'Filme', 'Nordlicht Express (2003)', 'Nordlicht Express (2003).mkv')));
    const detail = await api<{ logs: { message: string }[] }>(c.url, 'GET', `/jobs/${done.id}/detail`);
    assert.ok(detail.body.logs.some((l) => l.message === 'the disc\'s lookup answered after the job was made: named "Nordlicht Express" (2003) from tmdb'));
    fs.rmSync(path.join(agent.driveDir, 'NORDLICHT_EXPRESS.iso'));
    await waitFor('the drive empty', async () => !(await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device)?.disc, 30_000);
    insertDisc(agent.driveDir, dvdImage('HEAT_SPECIAL_EDITION', [4]));
    await waitFor('Heat again', async () => ((await disc()).title === 'Heat' ? true : undefined));
  });

  it('rips a movie into "Title (Year)" with movie.nfo and poster.jpg for Jellyfin', async () => {
    const created = await api<Job>(c.url, 'POST', '/jobs', { device });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.title, 'Heat');
    const done = await waitForStatus(c.url, created.body.id, ['completed', 'failed']);
    assert.equal(done.status, 'completed');
    const dir = path.join(w.media, 'Filme', 'Heat (1995)');
    assert.equal(done.output_path, dir);
    heatJob = done.id;
    const nfo = fs.readFileSync(path.join(dir, 'movie.nfo'), 'utf8');
    assert.match(nfo, /<title>Heat<\/title>/);
    assert.match(nfo, /<year>1995<\/year>/);
    assert.match(nfo, /<plot>Ein Profi-Räuber und ein Cop.<\/plot>/);
    assert.match(nfo, /<uniqueid type="tmdb" default="true">949<\/uniqueid>/);
    // A hybrid nfo (issue 39): Kodi's scraper reads the id from the line after the XML; no <thumb>, no invented date.
    assert.match(nfo, /<\/movie>\nhttps:\/\/www\.themoviedb\.org\/movie\/949\n$/);
    assert.doesNotMatch(nfo, /<thumb|<premiered/);
    const poster = fs.readFileSync(path.join(dir, 'poster.jpg'));
    assert.deepEqual(poster.subarray(0, POSTER_JPEG.length), POSTER_JPEG);
    assert.equal(poster.subarray(POSTER_JPEG.length).toString(), '/images/w500/poster949.jpg');
  });

  it('corrects a disc: the card and its jobs change, bad requests are refused, and the correction is remembered', async () => {
    const d = await disc();
    assert.equal((await api(c.url, 'POST', '/metadata/override', { title: 'x' })).status, 400);
    const unknown = await api(c.url, 'POST', '/metadata/override', { device: 'nope', title: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.text, 'no device named "nope"\n');
    assert.equal((await api(c.url, 'POST', '/metadata/override', { device, title: 'x', kind: 'film' })).status, 400);

    const r = await api<{ fingerprint: string; jobs: string[]; identity: { title: string; year: number; confidence: number } }>(c.url, 'POST', '/metadata/override', {
      device,
      source: 'tmdb',
      id: '1234',
      title: 'Heat (Director’s Cut)',
      year: 1996,
      poster_path: '/other.jpg',
      kind: 'movie',
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.fingerprint, d.fingerprint);
    assert.equal(r.body.jobs.length, 1);
    const card = await disc();
    assert.deepEqual([card.title, card.year, card.confidence, card.poster], ['Heat (Director’s Cut)', 1996, 1, '/other.jpg']);
    const job = await api<Job & { meta: Record<string, unknown> }>(c.url, 'GET', `/jobs/${r.body.jobs[0]}`);
    assert.equal(job.body.meta.poster_path, '/other.jpg');
    assert.equal(job.body.meta.tmdb_id, 1234);
    assert.equal(job.body.title, 'Heat', 'a finished job keeps the name its output has');

    // Re-inserting the same disc: the correction, not the chain, names it.
    fs.renameSync(path.join(agent.driveDir, 'HEAT_SPECIAL_EDITION.iso'), path.join(w.root, 'out.iso'));
    await waitFor('the drive empty', async () => !(await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device)?.disc, 30_000);
    const asked = meta.requests.length;
    fs.renameSync(path.join(w.root, 'out.iso'), path.join(agent.driveDir, 'HEAT_SPECIAL_EDITION.iso'));
    const again = await disc();
    assert.equal(again.title, 'Heat (Director’s Cut)');
    assert.equal(meta.requests.slice(asked).filter((x) => x.path.includes('/search')).length, 0);
    fs.rmSync(path.join(agent.driveDir, 'HEAT_SPECIAL_EDITION.iso'));
    await waitFor('the drive empty', async () => !(await api<Device[]>(c.url, 'GET', '/devices')).body.find((x) => x.name === device)?.disc, 30_000);
  });

  it('names the episodes of a series disc from the season runtimes and writes tvshow.nfo once', async () => {
    insertDisc(agent.driveDir, dvdImage('BREAKING_BAD_S1_D1', [20, 20]));
    const d = await waitFor('the series card', async () => {
      const x = await disc();
      return x.title === 'Breaking Bad' ? x : undefined;
    });
    assert.equal(d.confidence, 1);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, series: 'Breaking Bad', season: 1 });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed', 'failed']);
    assert.equal(done.status, 'completed');
    const seasonDir = path.join(w.media, 'Serien', 'Breaking Bad', 'Season 01');
    assert.deepEqual(fs.readdirSync(seasonDir).sort(), ['Breaking Bad - S01E01.mkv', 'Breaking Bad - S01E02.mkv']);
    const nfo = path.join(w.media, 'Serien', 'Breaking Bad', 'tvshow.nfo');
    assert.match(fs.readFileSync(nfo, 'utf8'), /<tvshow>[\s\S]*<uniqueid type="tmdb" default="true">1396<\/uniqueid>/);
    assert.match(fs.readFileSync(nfo, 'utf8'), /<episodeguide>\{&quot;tmdb&quot;:&quot;1396&quot;[^<]*\}<\/episodeguide>[\s\S]*<\/tvshow>\nhttps:\/\/www\.themoviedb\.org\/tv\/1396\n$/);
    const detail = await api<{ logs: { message: string }[] }>(c.url, 'GET', `/jobs/${created.body.id}/detail`);
    assert.ok(detail.body.logs.some((l) => /season 1 has 4 episodes/.test(l.message)));
    seriesJob = created.body.id;
  });

  it('corrects a finished movie job: folder, files, nfo and poster renamed, the media server asked to rescan', async () => {
    const refreshes = meta.requests.filter((r) => r.path === '/Library/Refresh').length;
    const r = await api<{ renamed: { from: string; to: string; files: string[] } }>(c.url, 'POST', '/metadata/override', { job_id: heatJob, title: 'Heat Reloaded', year: 1996, poster_path: '/poster777.jpg', source: 'manual' });
    assert.equal(r.status, 200, r.text);
    const from = path.join(w.media, 'Filme', 'Heat (1995)');
    const to = path.join(w.media, 'Filme', 'Heat Reloaded (1996)');
    assert.deepEqual(r.body.renamed, { from, to, files: ['Heat Reloaded (1996).mkv'] });
    assert.equal(fs.existsSync(from), false);
    assert.deepEqual(fs.readdirSync(to).sort(), ['Heat Reloaded (1996).mkv', 'movie.nfo', 'poster.jpg']);
    assert.match(fs.readFileSync(path.join(to, 'movie.nfo'), 'utf8'), /<title>Heat Reloaded<\/title>[\s\S]*<year>1996<\/year>/);
    assert.equal(fs.readFileSync(path.join(to, 'poster.jpg')).subarray(POSTER_JPEG.length).toString(), '/images/w500/poster777.jpg');
    const job = await api<Job>(c.url, 'GET', `/jobs/${heatJob}`);
    assert.equal(job.body.title, 'Heat Reloaded');
    assert.equal(job.body.output_path, to);
    const files = await api<{ name: string }[]>(c.url, 'GET', `/jobs/${heatJob}/files`);
    assert.deepEqual(files.body.map((f) => f.name), ['Heat Reloaded (1996).mkv', 'movie.nfo', 'poster.jpg']);
    await waitFor('the media server refresh', async () => meta.requests.filter((x) => x.path === '/Library/Refresh').length > refreshes);
  });

  it('refuses a correction whose name exists already, or whose files were moved, with a 409 that changes nothing', async () => {
    const taken = path.join(w.media, 'Filme', 'Taken (2008)');
    fs.mkdirSync(taken);
    const to = path.join(w.media, 'Filme', 'Heat Reloaded (1996)');
    const clash = await api(c.url, 'POST', '/metadata/override', { job_id: heatJob, title: 'Taken', year: 2008 });
    assert.equal(clash.status, 409);
    assert.equal(clash.text.trim(), `a folder named "Taken (2008)" exists already in ${path.join(w.media, 'Filme')}: nothing was changed`);
    assert.deepEqual(fs.readdirSync(to).sort(), ['Heat Reloaded (1996).mkv', 'movie.nfo', 'poster.jpg']);
    assert.deepEqual(fs.readdirSync(taken), []);
    assert.equal((await api<Job>(c.url, 'GET', `/jobs/${heatJob}`)).body.title, 'Heat Reloaded', 'the job keeps its name');

    fs.renameSync(path.join(to, 'Heat Reloaded (1996).mkv'), path.join(w.media, 'moved-away.mkv'));
    const gone = await api(c.url, 'POST', '/metadata/override', { job_id: heatJob, title: 'Heat', year: 1995 });
    assert.equal(gone.status, 409);
    assert.match(gone.text, /Heat Reloaded \(1996\)\.mkv was moved or deleted meanwhile: nothing was changed/);
    assert.ok(fs.existsSync(to));
  });

  it('corrects a finished series job: its episodes move to the new series folder with tvshow.nfo', async () => {
    const r = await api<{ renamed: { to: string; files: string[] } }>(c.url, 'POST', '/metadata/override', { job_id: seriesJob, title: 'Better Call Saul', kind: 'series', season: 1, tmdb_id: 60059, source: 'tmdb', id: '60059' });
    assert.equal(r.status, 200, r.text);
    const season = path.join(w.media, 'Serien', 'Better Call Saul', 'Season 01');
    assert.deepEqual(r.body.renamed, { from: path.join(w.media, 'Serien', 'Breaking Bad', 'Season 01'), to: season, files: ['Better Call Saul - S01E01.mkv', 'Better Call Saul - S01E02.mkv'] });
    assert.deepEqual(fs.readdirSync(season).sort(), ['Better Call Saul - S01E01.mkv', 'Better Call Saul - S01E02.mkv']);
    assert.equal(fs.existsSync(path.join(w.media, 'Serien', 'Breaking Bad', 'Season 01')), false, 'the emptied season folder is removed');
    assert.match(fs.readFileSync(path.join(w.media, 'Serien', 'Better Call Saul', 'tvshow.nfo'), 'utf8'), /<title>Better Call Saul<\/title>[\s\S]*60059/);
    const job = await api<Job>(c.url, 'GET', `/jobs/${seriesJob}`);
    assert.equal(job.body.output_path, season);
    assert.equal(job.body.meta?.series, 'Better Call Saul');
  });

  it('corrects a finished job by hand with every lookup service down: title, year, series and season typed, checked, renamed (issue 38)', async () => {
    await meta.close();
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ job_id: seriesJob, series: 'x'.repeat(1001), season: 1 }, /series must be a text of at most 1000 characters/],
      [{ job_id: seriesJob, series: '   ', season: 1 }, /title is required/],
      [{ job_id: seriesJob, series: 'Saul', season: 1000 }, /season must be a whole number from 0 to 999/],
      [{ job_id: heatJob, title: 'Heat', year: 1869 }, /year must be a whole number from 1870 to 2100/],
      [{ job_id: seriesJob, series: 'Saul', title: 'Other', season: 1 }, /give the series name once/],
      [{ job_id: seriesJob, series: 'Saul', kind: 'movie' }, /kind must be series or left out/],
    ];
    for (const [body, reason] of bad) {
      const r = await api(c.url, 'POST', '/metadata/override', body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
      assert.match(r.text, reason);
    }
    const r = await api<{ renamed: { to: string; files: string[] } }>(c.url, 'POST', '/metadata/override', { job_id: seriesJob, series: 'Saul Handgetippt', season: 3 });
    assert.equal(r.status, 200, r.text);
    const season = path.join(w.media, 'Serien', 'Saul Handgetippt', 'Season 03');
    assert.deepEqual(r.body.renamed.files, ['Saul Handgetippt - S03E01.mkv', 'Saul Handgetippt - S03E02.mkv']);
    assert.deepEqual(fs.readdirSync(season).sort(), ['Saul Handgetippt - S03E01.mkv', 'Saul Handgetippt - S03E02.mkv']);
    const job = await api<Job>(c.url, 'GET', `/jobs/${seriesJob}`);
    assert.deepEqual([job.body.title, job.body.meta?.series, job.body.meta?.season], ['Saul Handgetippt', 'Saul Handgetippt', 3]);
  });
});
