import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { HttpError, mediaDir, objectBody } from '../../../../coordinator/http/errors.js';
import type { Request } from 'express';

// realpath: the temp dir itself may lie behind a symlink (macOS /var → /private/var)
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-http-')));
after(() => fs.rmSync(base, { recursive: true, force: true }));

const root = path.join(base, 'media');
const outside = path.join(base, 'elsewhere');
fs.mkdirSync(path.join(root, 'Filme'), { recursive: true });
fs.mkdirSync(outside);
fs.mkdirSync(`${root}-x`);
fs.symlinkSync(outside, path.join(root, 'escape'));
fs.symlinkSync(path.join(root, 'Filme'), path.join(root, 'inner-link'));
fs.symlinkSync(path.join(outside, 'not-yet'), path.join(root, 'dangling'));

async function refused(candidate: unknown, pattern: RegExp, status = 400): Promise<void> {
  await assert.rejects(mediaDir(root, candidate, 'target_dir'), (err: unknown) => {
    assert.ok(err instanceof HttpError, `an HttpError, got ${String(err)}`);
    assert.equal(err.status, status);
    assert.match(err.message, pattern);
    return true;
  });
}

describe('mediaDir', () => {
  it('accepts the root, existing and not yet existing folders below it, normalised', async () => {
    assert.equal(await mediaDir(root, root, 'target_dir'), root);
    assert.equal(await mediaDir(root, `${root}/Filme/`, 'target_dir'), path.join(root, 'Filme'));
    assert.equal(await mediaDir(root, `${root}//Filme/./Neu/Tiefer`, 'target_dir'), path.join(root, 'Filme', 'Neu', 'Tiefer'));
  });

  it('is boundary-aware: a sibling with the root as prefix is outside', async () => {
    await refused(`${root}-x`, /target_dir refused: path must lie under/);
    await refused(`${root}-x/Filme`, /refused/);
    await refused(base, /refused/);
  });

  it('refuses .. even when it would stay inside, and relative or non-string values', async () => {
    await refused(`${root}/Filme/../Filme`, /must not contain \.\./);
    await refused(`${root}/..`, /must not contain \.\./);
    await refused('Filme', /must be absolute/);
    await refused(42, /target_dir must be a string/);
    await refused(undefined, /must be a string/);
  });

  it('refuses a symlink inside the root that leads outside with 403, also for paths below it', async () => {
    await refused(path.join(root, 'escape'), /leads outside .* through a symbolic link/, 403);
    await refused(path.join(root, 'escape', 'new', 'folder'), /symbolic link/, 403);
  });

  it('refuses a dangling symlink that would lead outside once its target exists', async () => {
    await refused(path.join(root, 'dangling'), /broken symbolic link/, 403);
    await refused(path.join(root, 'dangling', 'sub'), /broken symbolic link/, 403);
  });

  it('accepts a symlink that stays inside the root', async () => {
    assert.equal(await mediaDir(root, path.join(root, 'inner-link', 'Neu'), 'target_dir'), path.join(root, 'inner-link', 'Neu'));
  });

  it('follows a root that is itself a symlink', async () => {
    const linkRoot = path.join(base, 'media-link');
    fs.symlinkSync(root, linkRoot);
    assert.equal(await mediaDir(linkRoot, path.join(linkRoot, 'Filme'), 'target_dir'), path.join(linkRoot, 'Filme'));
    await assert.rejects(mediaDir(linkRoot, path.join(linkRoot, 'escape'), 'target_dir'), HttpError);
  });

  it('accepts paths under the file system root as MEDIA_ROOT', async () => {
    assert.equal(await mediaDir('/', path.join(root, 'Filme'), 'target_dir'), path.join(root, 'Filme'));
  });
});

describe('objectBody', () => {
  it('passes JSON objects and refuses everything else with a 400', () => {
    assert.deepEqual(objectBody({ body: { a: 1 } } as unknown as Request), { a: 1 });
    for (const body of [undefined, null, [1], 'text', 3]) {
      assert.throws(
        () => objectBody({ body } as unknown as Request),
        (err: unknown) => err instanceof HttpError && err.status === 400 && err.message === 'the request body must be a JSON object',
      );
    }
  });
});

describe('a refusal the web UI words itself (issue 38)', () => {
  it('sends code and parameters as headers, the body in English, or in German where Accept-Language prefers it', async () => {
    const { default: express } = await import('express');
    const http = await import('node:http');
    const { errorHandler } = await import('../../../../coordinator/http/errors.js');
    const { Logger } = await import('../../../../shared/log.js');
    const app = express();
    app.get('/coded', () => {
      throw new HttpError(400, 'transcodePreset "Fast 1080p3O" is in no online worker\'s preset list (keller)', 'presetUnknown', { preset: 'Fast 1080p3O', workers: 'keller – Büro' });
    });
    app.get('/plain', () => {
      throw new HttpError(404, 'no job with id x');
    });
    app.post('/cancel', () => {
      throw new HttpError(409, 'the job is completed; only pending, processing or transcoding jobs can be canceled', 'cancelNotActive', { status: 'completed' });
    });
    app.use(errorHandler(new Logger('test', true)));
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
      const coded = await fetch(`${base}/coded`);
      assert.equal(coded.status, 400);
      assert.equal(await coded.text(), 'transcodePreset "Fast 1080p3O" is in no online worker\'s preset list (keller)\n');
      assert.equal(coded.headers.get('Ripwerk-Reason'), 'presetUnknown');
      assert.deepEqual(JSON.parse(decodeURIComponent(coded.headers.get('Ripwerk-Reason-Params') ?? '')), { preset: 'Fast 1080p3O', workers: 'keller – Büro' });
      const plain = await fetch(`${base}/plain`, { headers: { 'accept-language': 'de' } });
      assert.equal(plain.headers.get('Ripwerk-Reason'), null, 'a refusal without a code has no headers');
      assert.equal(await plain.text(), 'no job with id x\n', 'a refusal without a code stays English');
      // Accept-Language: a coded refusal's body in German where the client prefers German, else English.
      const de = await fetch(`${base}/cancel`, { method: 'POST', headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.8' } });
      assert.equal(de.status, 409);
      assert.equal(await de.text(), 'Der Auftrag läuft nicht mehr (Status: fertig): Nur ein wartender, rippender oder komprimierender Auftrag lässt sich abbrechen.\n');
      assert.equal(de.headers.get('Content-Language'), 'de');
      assert.match(de.headers.get('Vary') ?? '', /Accept-Language/);
      for (const lang of ['en-US,en;q=0.9,de;q=0.5', 'fr', '']) {
        const en = await fetch(`${base}/cancel`, { method: 'POST', headers: lang ? { 'accept-language': lang } : {} });
        assert.equal(await en.text(), 'the job is completed; only pending, processing or transcoding jobs can be canceled\n', lang);
        assert.equal(en.headers.get('Content-Language'), 'en');
        assert.equal(en.headers.get('Ripwerk-Reason'), 'cancelNotActive');
      }
    } finally {
      server.close();
    }
  });
});
