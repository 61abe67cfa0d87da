/**
 * GET /jobs/{id}/files/{name} as a video player and a download manager use it: the whole file, one
 * byte range (first bytes, suffix, open-ended), a range past the end (416), several ranges (the whole
 * file), If-Range and conditional GETs, HEAD, and a client that goes away in the middle. Every answer
 * is checked byte for byte against the file on disk, which is larger than the coordinator's read
 * pieces so a range crosses their borders.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { JobsStore } from '../../coordinator/jobs/jobs-store.js';
import { coordinatorMigrations } from '../../coordinator/db/migrations.js';
import { openDatabase } from '../../shared/sqlite.js';
import { startCoordinator, stopAll, waitFor, world, type CoordinatorHandle, type World } from './harness.js';
import { REPO_DIR } from '../fixtures/tools-samples.js';

const JOB = '55555555-5555-4555-8555-555555555555';
const NAME = 'Heat (1995).mkv';
const SIZE = 3 * 1024 * 1024 + 12_345;
/** Larger than what the socket buffers hold, so a client that goes away leaves most of it unsent (sparse: no disk). */
const BIG = 'Heat (1995) extended.mkv';
const BIG_SIZE = 256 * 1024 * 1024;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('file download: Range requests on GET /jobs/{id}/files/{name}', () => {
  let w: World;
  let c: CoordinatorHandle;
  let url: string;
  let onDisk: Buffer;
  let file: string;

  before(async () => {
    w = world();
    const out = path.join(w.media, 'Filme', 'Heat (1995)');
    fs.mkdirSync(out, { recursive: true });
    onDisk = crypto.randomBytes(SIZE);
    file = path.join(out, NAME);
    fs.writeFileSync(file, onDisk);
    fs.writeFileSync(path.join(out, BIG), '');
    fs.truncateSync(path.join(out, BIG), BIG_SIZE);
    fs.mkdirSync(path.join(out, 'Extras'));
    fs.writeFileSync(path.join(out, 'Extras', 'Heat (1995) - Making of-behindthescenes.mkv'), 'extra');
    const dataDir = path.join(w.root, 'coordinator-data');
    fs.mkdirSync(dataDir, { recursive: true });
    const db = openDatabase(path.join(dataDir, 'coordinator.sqlite'), coordinatorMigrations);
    const jobs = new JobsStore(db);
    jobs.create({ id: JOB, title: 'Heat', target_dir: path.join(w.media, 'Filme'), device: 'flur-drive-flur', node: 'flur@host', meta: {} });
    jobs.move(JOB, 'completed', { output_path: out, finished_at: new Date().toISOString() });
    db.close();
    c = await startCoordinator(w);
    url = `${c.url}/jobs/${JOB}/files/${encodeURIComponent(NAME)}`;
  });
  after(stopAll);

  it('lists the output folder\'s files by bare name as the spec has it, the files below on request, and sends one by name and folder (issue 38)', async () => {
    const listing = async (query: string): Promise<string[]> => (JSON.parse((await get(`${c.url}/jobs/${JOB}/files${query}`)).body.toString()) as { name: string; size: number; folder?: string }[]).map((f) => `${f.folder ?? '.'}|${f.name}:${f.size}`);
    assert.deepEqual(await listing(''), [`.|${BIG}:${BIG_SIZE}`, `.|${NAME}:${SIZE}`].sort());
    assert.deepEqual(await listing('?subfolders=true'), [...[`.|${BIG}:${BIG_SIZE}`, `.|${NAME}:${SIZE}`].sort(), 'Extras|Heat (1995) - Making of-behindthescenes.mkv:5']);
    const r = await get(`${c.url}/jobs/${JOB}/files/${encodeURIComponent('Heat (1995) - Making of-behindthescenes.mkv')}?folder=Extras`);
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'extra');
    assert.equal(r.headers['content-disposition'], `attachment; filename*=UTF-8''${encodeURIComponent('Heat (1995) - Making of-behindthescenes.mkv')}`);
    const slash = await get(`${c.url}/jobs/${JOB}/files/${encodeURIComponent('Extras/Heat (1995) - Making of-behindthescenes.mkv')}`);
    assert.equal(slash.status, 400, 'the spec: a bare file name, no slash');
    assert.equal(slash.body.toString(), 'the file name must be a bare name: no slash, no .., no leading dot\n');
    const up = await get(`${c.url}/jobs/${JOB}/files/x?folder=${encodeURIComponent('Extras/../..')}`);
    assert.equal(up.status, 400);
    assert.equal(up.body.toString(), 'the folder must lie below the output folder: bare names joined by /, no .., no leading dot, at most 3 deep\n');
  });

  it('answers a refusal in the client\'s language: German for Accept-Language de, English else, the code in a header (issue 38)', async () => {
    const cancel = (lang: string) => fetch(`${c.url}/jobs/${JOB}/cancel`, { method: 'POST', headers: { 'accept-language': lang } });
    const de = await cancel('de-DE,de;q=0.9');
    assert.equal(de.status, 409);
    assert.equal(await de.text(), 'Der Auftrag läuft nicht mehr (Status: fertig): Nur ein wartender, rippender oder komprimierender Auftrag lässt sich abbrechen.\n');
    assert.equal(de.headers.get('ripwerk-reason'), 'cancelNotActive');
    const en = await cancel('en-GB,en;q=0.9');
    assert.equal(await en.text(), 'the job is completed; only pending, processing or transcoding jobs can be canceled\n');
    const retry = await fetch(`${c.url}/jobs/${JOB}/retry-transcode`, { method: 'POST', headers: { 'accept-language': 'de' } });
    assert.equal(await retry.text(), 'Nur ein fehlgeschlagener oder abgebrochener Auftrag lässt sich erneut komprimieren (dieser: fertig).\n');
    const unknown = await fetch(`${c.url}/jobs/nope/detail`, { headers: { 'accept-language': 'de' } });
    assert.equal(unknown.status, 404);
    assert.equal(await unknown.text(), 'Es gibt keinen Auftrag mit der Kennung nope.\n');
  });

  it('sends the UI\'s page, script and styles compressed: brotli where the browser takes it, else gzip, else plain, each the same bytes (issue 38)', async () => {
    const site = `http://127.0.0.1:${c.port}`;
    const uiDir = path.join(REPO_DIR, 'dist', 'ui');
    for (const [route, file, type] of [['/', 'index.html', /text\/html/], ['/app.js', 'app.js', /javascript/], ['/style.css', 'style.css', /text\/css/]] as const) {
      const plain = fs.readFileSync(path.join(uiDir, file));
      const br = await get(`${site}${route}`, { 'accept-encoding': 'gzip, deflate, br, zstd' });
      assert.equal(br.status, 200);
      assert.equal(br.headers['content-encoding'], 'br', route);
      assert.match(String(br.headers['content-type']), type);
      assert.match(String(br.headers.vary), /Accept-Encoding/i);
      assert.deepEqual(zlib.brotliDecompressSync(br.body), plain, `${route}: brotli decodes to the file`);
      if (file === 'app.js') assert.ok(br.body.length < plain.length / 3, `the script goes out at ${br.body.length} of ${plain.length} bytes`);
      const gz = await get(`${site}${route}`, { 'accept-encoding': 'gzip' });
      assert.equal(gz.headers['content-encoding'], 'gzip', route);
      assert.deepEqual(zlib.gunzipSync(gz.body), plain, `${route}: gzip decodes to the file`);
      const none = await get(`${site}${route}`);
      assert.equal(none.headers['content-encoding'], undefined, `${route}: a client that asks for no encoding gets the file as it is`);
      assert.deepEqual(none.body, plain);
    }
  });

  it('sends the whole file with its length, type, name and range support', async () => {
    const r = await get(url);
    assert.equal(r.status, 200);
    assert.ok(r.body.equals(onDisk), 'the body is the file, byte for byte');
    assert.equal(r.headers['content-length'], String(SIZE));
    assert.equal(r.headers['accept-ranges'], 'bytes');
    assert.match(String(r.headers['content-type']), /^video\/x-matroska/);
    assert.equal(r.headers['content-disposition'], `attachment; filename*=UTF-8''${encodeURIComponent(NAME)}`);
    assert.equal(r.headers['content-range'], undefined);
  });

  it('answers bytes=0-99 with 206 and the first 100 bytes', async () => {
    const r = await get(url, { Range: 'bytes=0-99' });
    assert.equal(r.status, 206);
    assert.equal(r.headers['content-range'], `bytes 0-99/${SIZE}`);
    assert.equal(r.headers['content-length'], '100');
    assert.ok(r.body.equals(onDisk.subarray(0, 100)));
  });

  it('answers a suffix range with the last bytes', async () => {
    const r = await get(url, { Range: 'bytes=-500' });
    assert.equal(r.status, 206);
    assert.equal(r.headers['content-range'], `bytes ${SIZE - 500}-${SIZE - 1}/${SIZE}`);
    assert.ok(r.body.equals(onDisk.subarray(SIZE - 500)));
  });

  it('answers an open-ended range across the read pieces with the rest of the file', async () => {
    const from = 1024 * 1024 - 7; // starts just before the first 1 MiB border and crosses two more
    const r = await get(url, { Range: `bytes=${from}-` });
    assert.equal(r.status, 206);
    assert.equal(r.headers['content-range'], `bytes ${from}-${SIZE - 1}/${SIZE}`);
    assert.equal(r.headers['content-length'], String(SIZE - from));
    assert.ok(r.body.equals(onDisk.subarray(from)));
  });

  it('answers a range in the middle, and a range past the end clipped to the file', async () => {
    const mid = await get(url, { Range: 'bytes=2097000-2097999' });
    assert.equal(mid.status, 206);
    assert.ok(mid.body.equals(onDisk.subarray(2097000, 2098000)));
    const clipped = await get(url, { Range: `bytes=${SIZE - 10}-${SIZE + 1000}` });
    assert.equal(clipped.status, 206);
    assert.equal(clipped.headers['content-range'], `bytes ${SIZE - 10}-${SIZE - 1}/${SIZE}`);
    assert.ok(clipped.body.equals(onDisk.subarray(SIZE - 10)));
  });

  it('refuses a range that starts past the end with 416 and the size in Content-Range', async () => {
    const r = await get(url, { Range: `bytes=${SIZE}-` });
    assert.equal(r.status, 416);
    assert.equal(r.headers['content-range'], `bytes */${SIZE}`);
    assert.match(r.body.toString('utf8'), /lies outside the file/);
    assert.ok(r.body.length < 1000, 'no file bytes in the refusal');
  });

  it('sends the whole file for several ranges or a malformed one', async () => {
    for (const range of ['bytes=0-9,100-109', 'bytes=abc', 'items=0-9']) {
      const r = await get(url, { Range: range });
      assert.equal(r.status, 200, range);
      assert.ok(r.body.equals(onDisk), range);
    }
  });

  it('honours If-Range and conditional GETs', async () => {
    const first = await get(url, { Range: 'bytes=0-99' });
    const etag = String(first.headers.etag);
    const modified = String(first.headers['last-modified']);
    assert.match(etag, /^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    const same = await get(url, { Range: 'bytes=10-19', 'If-Range': etag });
    assert.equal(same.status, 206);
    assert.ok(same.body.equals(onDisk.subarray(10, 20)));
    const byDate = await get(url, { Range: 'bytes=10-19', 'If-Range': modified });
    assert.equal(byDate.status, 206);
    const stale = await get(url, { Range: 'bytes=10-19', 'If-Range': 'W/"0-0"' });
    assert.equal(stale.status, 200, 'a changed file is sent whole');
    assert.ok(stale.body.equals(onDisk));
    const older = await get(url, { Range: 'bytes=10-19', 'If-Range': new Date(Date.parse(modified) - 3_600_000).toUTCString() });
    assert.equal(older.status, 200);
    const cached = await get(url, { 'If-None-Match': etag });
    assert.equal(cached.status, 304);
    assert.equal(cached.body.length, 0);
  });

  it('answers HEAD with the headers only', async () => {
    const whole = await get(url, {}, 'HEAD');
    assert.equal(whole.status, 200);
    assert.equal(whole.headers['content-length'], String(SIZE));
    assert.equal(whole.body.length, 0);
    const part = await get(url, { Range: 'bytes=0-99' }, 'HEAD');
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 0-99/${SIZE}`);
    assert.equal(part.body.length, 0);
  });

  it('closes the file when the client goes away in the middle, and keeps serving', async () => {
    const pid = c.proc.child.pid as number;
    const big = path.join(path.dirname(file), BIG);
    const openOnFile = (): number => {
      let n = 0;
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        const target = (() => {
          try {
            return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return '';
          }
        })();
        if (target === big) n++;
      }
      return n;
    };
    // Read one chunk, then stop reading and cut the connection while the rest is still going out.
    let openWhileSending = -1;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${c.url}/jobs/${JOB}/files/${encodeURIComponent(BIG)}`, (res) => {
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['content-length'], String(BIG_SIZE));
        res.once('data', () => {
          openWhileSending = openOnFile();
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(err)));
    });
    assert.equal(openWhileSending, 1, 'the coordinator had the file open while sending it');
    await waitFor('the coordinator to close the file', async () => openOnFile() === 0, 10_000, 50);
    assert.ok(c.proc.alive, 'the coordinator is still running');
    const again = await get(url, { Range: 'bytes=-100' });
    assert.equal(again.status, 206);
    assert.ok(again.body.equals(onDisk.subarray(SIZE - 100)));
  });
});
