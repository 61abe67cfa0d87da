import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describeOutput, nfoXml, scraperUrl, writeLibraryFiles, xmlText } from '../../../shared/library-files.js';
import { POSTER_FETCH_FAILED } from '../../../shared/poster-fetch.js';
import type { LibraryInfo } from '../../../shared/protocol.js';
import type { ResolveAll } from '../../../shared/target-rules.js';

const info = (over: Partial<LibraryInfo> = {}): LibraryInfo => ({
  profile: 'jellyfin',
  kind: 'movie',
  title: 'Heat & Dust <2>',
  year: 1995,
  overview: 'Ein Überfall.',
  poster_url: 'https://image.tmdb.org/t/p/w500/heat.jpg',
  tmdb_id: 949,
  imdb_id: 'tt0113277',
  ...over,
});

/** The C0 controls XML 1.0 forbids (tab, line feed and carriage return are allowed). */
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/;

/**
 * Reads an nfo the way Jellyfin's movie and series parsers do (BaseNfoParser with a URL after the
 * closing tag): the XML ends at the ">" of the last "</"; what follows is the provider-link text. The
 * XML part must then be well-formed for a strict parser, as Kodi's reader wants it too.
 */
function readNfo(text: string): { doc: Record<string, Record<string, unknown>>; after: string; xml: string } {
  const last = text.lastIndexOf('</');
  const end = text.indexOf('>', last);
  assert.ok(last > 0 && end > last, 'the nfo has a closing tag');
  const xml = text.slice(0, end + 1);
  assert.equal(XMLValidator.validate(xml), true, 'the XML part is well-formed');
  assert.doesNotMatch(xml, FORBIDDEN, 'no character XML 1.0 forbids');
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false, isArray: (name) => name === 'uniqueid' });
  return { doc: parser.parse(xml) as Record<string, Record<string, unknown>>, after: text.slice(end + 1), xml };
}

describe('nfo files as Jellyfin and Kodi read them (issue 39)', () => {
  it('movie.nfo: the known fields, uniqueid tmdb as the default, and the scraper line after the XML', () => {
    const { doc, after, xml } = readNfo(nfoXml(info()));
    assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?>\n<movie>/);
    assert.equal(doc.movie.title, 'Heat & Dust <2>');
    assert.equal(doc.movie.year, '1995');
    assert.equal(doc.movie.plot, 'Ein Überfall.');
    assert.deepEqual(doc.movie.uniqueid, [
      { '@_type': 'tmdb', '@_default': 'true', '#text': '949' },
      { '@_type': 'imdb', '#text': 'tt0113277' },
    ]);
    assert.equal(doc.movie.tmdbid, '949');
    assert.equal(doc.movie.imdbid, 'tt0113277');
    assert.equal(after, '\nhttps://www.themoviedb.org/movie/949\n', 'one URL line, which Kodi\'s TMDB scraper and Jellyfin\'s TryFindTmdbMovieId read');
  });

  it('writes no <thumb>: poster.jpg beside the nfo is found by every reader, and a bare file name is no URL to Jellyfin', () => {
    for (const profile of ['jellyfin', 'emby', 'kodi'] as const) {
      for (const kind of ['movie', 'series'] as const) assert.doesNotMatch(nfoXml(info({ profile, kind })), /<thumb/, `${profile} ${kind}`);
    }
  });

  it('drops control characters from every text, so a title with \\u0001 or \\u001b keeps the nfo readable', () => {
    const text = nfoXml(info({ title: 'Heat\u0001 \u001b[1mDust\u007f\u0085', overview: 'Zeile 1\nZeile\u0000 2\u000b\ud800 Ende\ufffe' }));
    assert.doesNotMatch(text, /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/);
    const { doc } = readNfo(text);
    assert.equal(doc.movie.title, 'Heat [1mDust');
    assert.equal(doc.movie.plot, 'Zeile 1\nZeile 2 Ende');
    assert.equal(xmlText('A\tB\r\nC 😀'), 'A\tB\r\nC 😀', 'tab, line ends and a whole pair of surrogates stay');
  });

  it('invents no premiered date: a year alone is only <year>, no year neither', () => {
    for (const kind of ['movie', 'series'] as const) {
      const { doc } = readNfo(nfoXml(info({ kind, year: 2008 })));
      const root = doc[kind === 'series' ? 'tvshow' : 'movie'];
      assert.equal(root.premiered, undefined, kind);
      assert.equal(root.year, '2008', kind);
      const none = readNfo(nfoXml(info({ kind, year: null }))).doc[kind === 'series' ? 'tvshow' : 'movie'];
      assert.equal(none.year, undefined, kind);
      assert.equal(none.premiered, undefined, kind);
    }
    assert.equal(readNfo(nfoXml(info({ year: 1200 }))).doc.movie.year, undefined, 'Jellyfin reads no year before 1851');
  });

  it('tvshow.nfo: <episodeguide> in the JSON form Kodi v19 and later read, and the TV scraper line', () => {
    const { doc, after } = readNfo(nfoXml(info({ kind: 'series', title: 'Breaking Bad', year: 2008, tmdb_id: 1396, imdb_id: 'tt0903747' })));
    assert.equal(doc.tvshow.title, 'Breaking Bad');
    assert.deepEqual(JSON.parse(String(doc.tvshow.episodeguide)), { tmdb: '1396', imdb: 'tt0903747' });
    assert.deepEqual(doc.tvshow.uniqueid, [
      { '@_type': 'tmdb', '@_default': 'true', '#text': '1396' },
      { '@_type': 'imdb', '#text': 'tt0903747' },
    ]);
    assert.equal(after, '\nhttps://www.themoviedb.org/tv/1396\n');
    const movie = readNfo(nfoXml(info())).doc.movie;
    assert.equal(movie.episodeguide, undefined, 'a movie has no episode guide');
  });

  it('with only an IMDb id: it is the default uniqueid and the IMDb page the scraper line; without ids a plain nfo', () => {
    const imdbOnly = readNfo(nfoXml(info({ profile: 'kodi', kind: 'series', tmdb_id: null })));
    assert.deepEqual(imdbOnly.doc.tvshow.uniqueid, [{ '@_type': 'imdb', '@_default': 'true', '#text': 'tt0113277' }]);
    assert.deepEqual(JSON.parse(String(imdbOnly.doc.tvshow.episodeguide)), { imdb: 'tt0113277' });
    assert.equal(imdbOnly.after, '\nhttps://www.imdb.com/title/tt0113277/\n');
    const plain = nfoXml(info({ tmdb_id: null, imdb_id: null }));
    assert.match(plain, /<\/movie>\n?$/, 'nothing after the XML');
    assert.equal(scraperUrl({ kind: 'movie', tmdb_id: null, imdb_id: null }), null);
    assert.equal(readNfo(plain).doc.movie.uniqueid, undefined);
  });

  it('leaves out an IMDb id that is not one, so nothing but a URL follows the XML', () => {
    const text = nfoXml(info({ tmdb_id: null, imdb_id: 'tt1</movie><x>' }));
    assert.doesNotMatch(text, /tt1/);
    assert.match(text, /<\/movie>\n?$/);
  });

  it('Kodi: uniqueid only; Emby: tmdbid/imdbid only', () => {
    const kodi = readNfo(nfoXml(info({ profile: 'kodi' }))).doc.movie;
    assert.ok(kodi.uniqueid);
    assert.equal(kodi.tmdbid, undefined);
    const emby = readNfo(nfoXml(info({ profile: 'emby' }))).doc.movie;
    assert.equal(emby.uniqueid, undefined);
    assert.equal(emby.tmdbid, '949');
  });
});

describe('poster.jpg fetched under the address rules (issue 42)', () => {
  const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-poster-jpg-'));
  let server: http.Server;
  let port = 0;
  let requests = 0;
  let folders = 0;
  before(async () => {
    server = http.createServer((req, res) => {
      requests++;
      if (req.url === '/poster.jpg') {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.end(JPEG);
      } else if (req.url === '/page.html') {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.end('<html>router login</html>');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** A name that resolves to loopback at fetch time (it did not, or elsewhere, when the poster was chosen). */
  const rebound: ResolveAll = (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);

  async function write(over: Partial<LibraryInfo>, opts: Parameters<typeof writeLibraryFiles>[3] = {}): Promise<{ files: string[]; logs: string[] }> {
    const dir = path.join(root, `Movie ${++folders}`);
    fs.mkdirSync(dir);
    const logs: string[] = [];
    const r = await writeLibraryFiles(dir, info({ poster_url: `http://poster.rebind.example:${port}/poster.jpg`, ...over }), (_level, text) => void logs.push(text), { lookup: rebound, ...opts });
    return { files: r.written.map((f) => path.basename(f)), logs };
  }

  it('refuses a poster whose name resolves to loopback when the fetch connects, and one given as a loopback address', async () => {
    const before = requests;
    const rebinding = await write({ poster_policy: { allow_private: false } });
    assert.deepEqual(rebinding.files, ['movie.nfo']);
    assert.ok(rebinding.logs.includes(`poster not saved: the poster from poster.rebind.example could not be fetched (${POSTER_FETCH_FAILED})`), rebinding.logs.join('\n'));
    assert.deepEqual((await write({ poster_url: `http://127.0.0.1:${port}/poster.jpg`, poster_policy: { allow_private: false } })).files, ['movie.nfo']);
    // An older coordinator sends no poster_policy: the rules apply without allowPrivateWebhooks.
    assert.deepEqual((await write({ poster_policy: undefined })).files, ['movie.nfo']);
    assert.equal(requests, before, 'nothing reached the loopback server');
  });

  it('fetches it with allowPrivateWebhooks, or from the configured image server, but never from this coordinator\'s own port', async () => {
    assert.deepEqual((await write({ poster_policy: { allow_private: true } })).files, ['movie.nfo', 'poster.jpg']);
    const before = requests;
    // At once after it, under the strict rules: no kept-alive connection of that fetch skips the check.
    assert.deepEqual((await write({ poster_policy: { allow_private: false } })).files, ['movie.nfo']);
    assert.deepEqual((await write({ poster_policy: { allow_private: true } }, { ownPort: port })).files, ['movie.nfo']);
    assert.equal(requests, before);
    assert.deepEqual((await write({ poster_url: `http://127.0.0.1:${port}/poster.jpg`, poster_policy: null })).files, ['movie.nfo', 'poster.jpg']);
  });

  it('says the same for a 404, an answer that is no image and a closed port, in the job log the API serves', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = http.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const lines: string[] = [];
    for (const url of [`http://127.0.0.1:${port}/missing.jpg`, `http://127.0.0.1:${port}/page.html`, `http://127.0.0.1:${closed}/poster.jpg`]) {
      const r = await write({ poster_url: url, poster_policy: null });
      assert.deepEqual(r.files, ['movie.nfo']);
      lines.push(...r.logs.filter((l) => l.startsWith('poster not saved')));
    }
    assert.deepEqual(lines, Array(3).fill(`poster not saved: the poster from 127.0.0.1 could not be fetched (${POSTER_FETCH_FAILED})`));
  });
});

describe('the nfo written last, into the folder checked again (issue 42)', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-describe-'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  const logs: string[] = [];
  const ctx = { log: (_level: 'info' | 'warn', text: string) => void logs.push(text) };

  it('writes nothing through an output folder swapped for a link after the job was planned, and says so', async () => {
    const target = path.join(root, 'media', 'Filme');
    const away = path.join(root, 'away');
    fs.mkdirSync(path.join(target, 'Heat (1995)'), { recursive: true });
    fs.mkdirSync(away);
    fs.renameSync(path.join(target, 'Heat (1995)'), path.join(target, 'Heat (1995).old'));
    fs.symlinkSync(away, path.join(target, 'Heat (1995)'));
    await describeOutput(path.join(target, 'Heat (1995)'), info({ poster_url: null }), ctx, target);
    assert.deepEqual(fs.readdirSync(away), [], 'no movie.nfo outside the media tree');
    assert.ok(logs.some((l) => l === `media-server files not written: the folder ${path.join(target, 'Heat (1995)')} leads outside ${target} through a symbolic link by now`), logs.join('\n'));
  });

  it('writes the series\' tvshow.nfo into the real series folder, a link inside the target followed', async () => {
    const target = path.join(root, 'media2', 'Serien');
    fs.mkdirSync(path.join(target, 'Real Show', 'Season 01'), { recursive: true });
    fs.symlinkSync(path.join(target, 'Real Show'), path.join(target, 'Show'));
    await describeOutput(path.join(target, 'Show', 'Season 01'), info({ kind: 'series', poster_url: null, title: 'Show' }), ctx, target);
    assert.ok(fs.existsSync(path.join(target, 'Real Show', 'tvshow.nfo')));
  });
});
