import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fits, matchEpisodes, uniformRuntimes } from '../../../../agent/output/episode-match.js';
import { writeLibraryFiles } from '../../../../shared/library-files.js';
import type { TaskContext } from '../../../../agent/tasks/rip-task.js';
import { runTranscode, type Transcoder } from '../../../../agent/tasks/transcode-task.js';
import type { EpisodeRuntime, LibraryInfo, TranscodeJob } from '../../../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-episodes-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const season = (...minutes: number[]): EpisodeRuntime[] => minutes.map((m, i) => ({ episode: i + 1, minutes: m }));
const min = (m: number) => m * 60;

describe('episode matching', () => {
  it('allows 3 minutes or 15 %', () => {
    assert.ok(fits(min(45), 43));
    assert.ok(fits(min(45), 41));
    assert.ok(!fits(min(45), 38));
    assert.ok(fits(min(100), 88));
    assert.ok(!fits(min(10), null));
  });

  it('assigns an unambiguous set by runtime, keeping the order', () => {
    const r = matchEpisodes([min(58), min(47), min(25)], season(58, 40, 47, 25, 60));
    assert.deepEqual(r, { ok: true, episodes: [1, 3, 4], stage: 'runtimes' });
    const later = matchEpisodes([min(25), min(61)], season(58, 40, 47, 25, 60));
    assert.deepEqual(later, { ok: true, episodes: [4, 5], stage: 'runtimes' });
  });

  it('refuses an ambiguous set and says why', () => {
    const r = matchEpisodes([min(47)], season(58, 48, 47, 25));
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /more than one way/);
    const none = matchEpisodes([min(90)], season(45, 44));
    assert.equal(none.ok, false);
    assert.match((none as { reason: string }).reason, /file 1 \(90 min\) fits no episode runtime/);
    const order = matchEpisodes([min(25), min(58)], season(58, 25));
    assert.match((order as { reason: string }).reason, /different order/);
    const many = matchEpisodes([min(44), min(44), min(44)], season(44, 44));
    assert.match((many as { reason: string }).reason, /only 2 episodes/);
  });

  it('uses the sequence stage for uniform runtimes: a whole season, or the run the disc number points to', () => {
    assert.ok(uniformRuntimes(season(22, 23, 21, 22)));
    assert.ok(!uniformRuntimes(season(22, 45)));
    const whole = matchEpisodes([min(22), min(23), min(21), min(22)], season(22, 23, 21, 22));
    assert.deepEqual(whole, { ok: true, episodes: [1, 2, 3, 4], stage: 'runtimes' }, 'a whole season has one order-keeping assignment');
    const disc2 = matchEpisodes([min(22), min(22)], season(22, 23, 21, 22, 22, 22), 2);
    assert.deepEqual(disc2, { ok: true, episodes: [3, 4], stage: 'sequence' });
    const unknownDisc = matchEpisodes([min(22), min(22)], season(22, 23, 21, 22, 22, 22));
    assert.equal(unknownDisc.ok, false);
    assert.match((unknownDisc as { reason: string }).reason, /5 different places \(the disc label names no disc number\)/);
  });
});

const info = (over: Partial<LibraryInfo> = {}): LibraryInfo => ({
  profile: 'jellyfin',
  kind: 'movie',
  title: 'Heat & Dust <2>',
  year: 1995,
  overview: 'Ein Überfall.',
  poster_url: null,
  // The test's poster server stands for the configured image server, fetched wherever it is.
  poster_policy: null,
  tmdb_id: 949,
  imdb_id: 'tt0113277',
  ...over,
});

describe('library files on disk', () => {
  let server: http.Server;
  let base = '';
  const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9]);
  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/poster.jpg') {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.end(JPEG);
      } else if (req.url === '/page.html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html></html>');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  const logs: string[] = [];
  const log = (_l: string, t: string) => logs.push(t);

  it('writes movie.nfo and poster.jpg into the movie folder', async () => {
    const dir = path.join(root, 'Filme', 'Heat (1995)');
    fs.mkdirSync(dir, { recursive: true });
    const r = await writeLibraryFiles(dir, info({ poster_url: `${base}/poster.jpg` }), log);
    assert.deepEqual(r.written.map((f) => path.basename(f)), ['movie.nfo', 'poster.jpg']);
    assert.deepEqual(fs.readFileSync(path.join(dir, 'poster.jpg')), JPEG);
    // poster.jpg is found beside the nfo; a <thumb> naming it is no URL to Jellyfin (issue 39).
    assert.doesNotMatch(fs.readFileSync(path.join(dir, 'movie.nfo'), 'utf8'), /<thumb/);
  });

  it('keeps the nfo when the poster is not an image, and says so', async () => {
    const dir = path.join(root, 'Filme', 'Other (2000)');
    fs.mkdirSync(dir, { recursive: true });
    const r = await writeLibraryFiles(dir, info({ poster_url: `${base}/page.html` }), log);
    assert.deepEqual(r.written.map((f) => path.basename(f)), ['movie.nfo']);
    assert.ok(logs.some((l) => /poster not saved: the poster from 127\.0\.0\.1 could not be fetched \(the server is not reachable or refused, it has no such image, or the answer is no image of at most 10 MB\)/.test(l)), logs.join('\n'));
    assert.ok(!fs.existsSync(path.join(dir, 'poster.jpg')));
  });

  it('writes through no link planted at the nfo or poster names: the links are replaced, what they point at stays (issue 42)', async () => {
    const dir = path.join(root, 'Filme', 'Linked (2001)');
    fs.mkdirSync(dir, { recursive: true });
    const away = fs.mkdtempSync(path.join(root, 'outside-'));
    fs.writeFileSync(path.join(away, 'passwd'), 'root:x:0:0');
    fs.symlinkSync(path.join(away, 'passwd'), path.join(dir, 'movie.nfo'));
    fs.symlinkSync(path.join(away, 'poster-target'), path.join(dir, 'poster.jpg'));
    fs.symlinkSync(path.join(away, 'part-target'), path.join(dir, 'poster.jpg.part'));
    const r = await writeLibraryFiles(dir, info({ poster_url: `${base}/poster.jpg` }), log);
    assert.deepEqual(r.written.map((f) => path.basename(f)), ['movie.nfo', 'poster.jpg']);
    assert.deepEqual(fs.readdirSync(away).sort(), ['passwd'], 'nothing made outside');
    assert.equal(fs.readFileSync(path.join(away, 'passwd'), 'utf8'), 'root:x:0:0', 'the file behind the link is unchanged');
    assert.ok(!fs.lstatSync(path.join(dir, 'movie.nfo')).isSymbolicLink() && !fs.lstatSync(path.join(dir, 'poster.jpg')).isSymbolicLink());
    assert.deepEqual(fs.readFileSync(path.join(dir, 'poster.jpg')), JPEG);
  });

  it('writes tvshow.nfo into the series folder once: a second season does not overwrite it', async () => {
    const s1 = path.join(root, 'Serien', 'Breaking Bad', 'Season 01');
    const s2 = path.join(root, 'Serien', 'Breaking Bad', 'Season 02');
    fs.mkdirSync(s1, { recursive: true });
    fs.mkdirSync(s2, { recursive: true });
    const series = info({ kind: 'series', title: 'Breaking Bad', year: 2008, poster_url: `${base}/poster.jpg` });
    await writeLibraryFiles(s1, series, log);
    const nfo = path.join(root, 'Serien', 'Breaking Bad', 'tvshow.nfo');
    assert.match(fs.readFileSync(nfo, 'utf8'), /<title>Breaking Bad<\/title>/);
    assert.ok(fs.existsSync(path.join(root, 'Serien', 'Breaking Bad', 'poster.jpg')));
    const second = await writeLibraryFiles(s2, { ...series, title: 'Something Else' }, log);
    assert.deepEqual(second.written, []);
    assert.match(fs.readFileSync(nfo, 'utf8'), /<title>Breaking Bad<\/title>/);
  });
});

describe('a series transcode with episode runtimes', () => {
  function job(seconds: number[], episodes: EpisodeRuntime[], discNumber: number | null = null): { args: TranscodeJob; transcoder: Transcoder } {
    const base = fs.mkdtempSync(path.join(root, 'job-'));
    const raw = path.join(base, 'raw');
    fs.mkdirSync(raw);
    const files = seconds.map((_, i) => {
      const f = path.join(raw, `t${i}.mkv`);
      fs.writeFileSync(f, `raw ${i}`);
      return f;
    });
    const transcoder: Transcoder = {
      scan: async (input) => ({ seconds: seconds[files.indexOf(input)], audio: [], subtitles: [] }),
      transcode: async (input, output) => fs.writeFileSync(output, fs.readFileSync(input)),
    };
    return {
      transcoder,
      args: { job_id: 'j1', raw_dir: raw, files, target_dir: path.join(base, 'Serien'), title: 'BB', year: null, series: 'Breaking Bad', season: 1, preset: 'Fast 1080p30', keep_original: false, episodes, disc_number: discNumber },
    };
  }
  const ctx = (logs: string[]): TaskContext => ({ signal: new AbortController().signal, progress: () => undefined, log: (_l, m) => logs.push(m), onSpawn: () => undefined });

  it('names the files SxxEyy when the assignment is unambiguous', async () => {
    const logs: string[] = [];
    const { args, transcoder } = job([min(47), min(25)], season(58, 40, 47, 25));
    const r = await runTranscode(args, transcoder, ctx(logs));
    assert.deepEqual(r.files.map((f) => path.basename(f)), ['Breaking Bad - S01E03.mkv', 'Breaking Bad - S01E04.mkv']);
    assert.ok(logs.some((l) => /episodes matched by runtime: E03, E04/.test(l)));
  });

  it('keeps the title numbers and logs why when the runtimes fit in more than one way (the spec: renamed only when unambiguous)', async () => {
    const logs: string[] = [];
    const { args, transcoder } = job([min(22), min(22)], season(22, 22, 22, 22));
    const r = await runTranscode(args, transcoder, ctx(logs));
    assert.deepEqual(r.files.map((f) => path.basename(f)), ['Breaking Bad - S01 - t01.mkv', 'Breaking Bad - S01 - t02.mkv']);
    assert.equal(r.episodes_guessed, false, 'nothing guessed: no number given');
    assert.ok(
      logs.some((l) => /^episodes not renamed: the season's runtimes are all alike .*; the files keep their title numbers \(Breaking Bad - S01 - t01\.mkv, Breaking Bad - S01 - t02\.mkv\)/.test(l)),
      logs.join('\n'),
    );
    assert.ok(!logs.some((l) => l.startsWith('episode numbers guessed')), logs.join('\n'));
  });

  it('keeps the title numbers when a file fits no runtime of the season', async () => {
    const logs: string[] = [];
    const { args, transcoder } = job([min(47), min(90)], season(47, 47));
    const r = await runTranscode(args, transcoder, ctx(logs));
    assert.deepEqual(r.files.map((f) => path.basename(f)), ['Breaking Bad - S01 - t01.mkv', 'Breaking Bad - S01 - t02.mkv']);
    assert.ok(logs.some((l) => /^episodes not renamed: file 2 \(90 min\) fits no episode runtime of the season/.test(l)), logs.join('\n'));
  });

  it('counts on from the season folder and marks the numbers as guessed only when no runtimes are known at all', async () => {
    const logs: string[] = [];
    const { args, transcoder } = job([min(22), min(22)], []);
    const r = await runTranscode({ ...args, episodes: null }, transcoder, ctx(logs));
    assert.deepEqual(r.files.map((f) => path.basename(f)), ['Breaking Bad - S01E01.mkv', 'Breaking Bad - S01E02.mkv']);
    assert.equal(r.episodes_guessed, true);
    assert.ok(logs.some((l) => /^episode numbers guessed: E01, E02 in title order, after no episode in /.test(l)), logs.join('\n'));
  });

  it('takes the disc number of a uniform season', async () => {
    const { args, transcoder } = job([min(22), min(22)], season(22, 22, 22, 22), 2);
    const r = await runTranscode(args, transcoder, ctx([]));
    assert.deepEqual(r.files.map((f) => path.basename(f)), ['Breaking Bad - S01E03.mkv', 'Breaking Bad - S01E04.mkv']);
  });
});
