import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { HttpError } from '../../../../coordinator/http/errors.js';
import { listOutputFiles, openJobFile } from '../../../../coordinator/jobs/job-file.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-jobfile-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const media = path.join(root, 'media');
const out = path.join(media, 'Filme', 'Heat (1995)');
const outside = path.join(root, 'outside');
fs.mkdirSync(out, { recursive: true });
fs.mkdirSync(outside);
fs.writeFileSync(path.join(out, 'Heat (1995).mkv'), 'video');
fs.mkdirSync(path.join(out, 'Extras'));
fs.writeFileSync(path.join(out, 'Extras', 'Trailer.mkv'), 'trailer');
fs.writeFileSync(path.join(outside, 'secret'), 'secret');
fs.symlinkSync(path.join(outside, 'secret'), path.join(out, 'shadow.nfo'));
fs.symlinkSync(path.join(out, 'Heat (1995).mkv'), path.join(out, 'same.mkv'));
fs.symlinkSync(path.join(root, 'nowhere'), path.join(out, 'dangling.mkv'));
fs.symlinkSync(outside, path.join(media, 'Filme', 'Evil (2000)'));
fs.symlinkSync(outside, path.join(out, 'Leak'));

/** The status and text openJobFile refuses with. */
async function refusal(outputPath: string | null, name: string, folder?: string): Promise<[number, string]> {
  try {
    const f = await openJobFile(media, outputPath, name, folder);
    await f.close();
  } catch (err) {
    assert.ok(err instanceof HttpError, String(err));
    return [err.status, err.message];
  }
  assert.fail(`${name} in ${outputPath} was opened`);
}

describe('openJobFile (GET /jobs/{id}/files/{name})', () => {
  it('opens a file of the output folder with its size and time, also through a link that stays inside', async () => {
    for (const name of ['Heat (1995).mkv', 'same.mkv']) {
      const f = await openJobFile(media, out, name);
      try {
        assert.equal(f.size, 5);
        assert.equal(f.mtime.getTime(), fs.statSync(path.join(out, 'Heat (1995).mkv')).mtime.getTime());
        const buf = Buffer.alloc(5);
        await f.handle.read(buf, 0, 5, 0);
        assert.equal(buf.toString(), 'video');
      } finally {
        await f.close();
      }
    }
  });

  it('opens a file below the output folder by its bare name and its folder (Extras/, seasons; issue 38)', async () => {
    const f = await openJobFile(media, out, 'Trailer.mkv', 'Extras');
    try {
      assert.equal(f.size, 7);
    } finally {
      await f.close();
    }
    assert.deepEqual(await refusal(out, 'secret', 'Leak'), [403, '"Leak/secret" leads outside the output folder through a symbolic link: refused']);
    assert.deepEqual(await refusal(out, 'Trailer.mkv'), [404, 'no file "Trailer.mkv" inside the output folder'], 'without its folder the name is looked for in the output folder');
  });

  it('lists the files below the output folder on request with their folder, no link followed, at most 4 names deep (issue 38)', async () => {
    fs.mkdirSync(path.join(out, 'a', 'b', 'c', 'd'), { recursive: true });
    fs.writeFileSync(path.join(out, 'a', 'b', 'c', 'deep.mkv'), 'x');
    fs.writeFileSync(path.join(out, 'a', 'b', 'c', 'd', 'deeper.mkv'), 'x');
    fs.writeFileSync(path.join(out, 'Extras', '.hidden.mkv'), 'x');
    try {
      const listed = await listOutputFiles(fs.realpathSync(out), true);
      // shadow.nfo, same.mkv, dangling.mkv are links; Leak is a link to a folder outside: none listed.
      // The output folder's own files first, then each folder's.
      assert.deepEqual(listed, [
        { name: 'Heat (1995).mkv', size: 5 },
        { name: 'deep.mkv', size: 1, folder: 'a/b/c' },
        { name: 'Trailer.mkv', size: 7, folder: 'Extras' },
      ]);
      const f = await openJobFile(media, out, listed[1].name, listed[1].folder);
      await f.close();
      assert.deepEqual(await listOutputFiles(fs.realpathSync(out)), [{ name: 'Heat (1995).mkv', size: 5 }], 'without subfolders: the spec\'s listing, bare names of the output folder');
    } finally {
      fs.rmSync(path.join(out, 'a'), { recursive: true });
      fs.rmSync(path.join(out, 'Extras', '.hidden.mkv'));
    }
  });

  it('refuses what the route refused, with the same status and text', async () => {
    assert.deepEqual(await refusal(null, 'x.mkv'), [404, 'the job has no output yet']);
    assert.deepEqual(await refusal('/etc', 'passwd'), [403, `the output path is outside ${media}: path must lie under ${media}`]);
    assert.deepEqual(await refusal(path.join(media, 'Gone'), 'x.mkv'), [404, `the output folder ${path.join(media, 'Gone')} is gone`]);
    const evil = path.join(media, 'Filme', 'Evil (2000)');
    assert.deepEqual(await refusal(evil, 'secret'), [403, `the output folder ${evil} leads outside ${media} through a symbolic link: refused`]);
    for (const bad of ['..', '.hidden', 'a/b', '', 'Extras/Trailer.mkv', 'a\\b']) {
      assert.deepEqual(await refusal(out, bad), [400, 'the file name must be a bare name: no slash, no .., no leading dot'], bad);
    }
    for (const bad of ['..', 'Extras/..', '../../outside', '/etc', 'Extras//x', '.hidden', 'Extras/.hidden', 'a\\b', 'a/b/c/d']) {
      assert.deepEqual(await refusal(out, 'Trailer.mkv', bad), [400, 'the folder must lie below the output folder: bare names joined by /, no .., no leading dot, at most 3 deep'], bad);
    }
    assert.deepEqual(await refusal(out, 'missing.mkv'), [404, 'no file "missing.mkv" inside the output folder']);
    assert.deepEqual(await refusal(out, 'dangling.mkv'), [404, 'no file "dangling.mkv" inside the output folder']);
    assert.deepEqual(await refusal(out, 'shadow.nfo'), [403, '"shadow.nfo" leads outside the output folder through a symbolic link: refused']);
    assert.deepEqual(await refusal(out, 'Extras'), [404, '"Extras" is not a file']);
  });

  it('judges the folder before the name, as the route did', async () => {
    assert.equal((await refusal(path.join(media, 'Gone'), '..'))[0], 404);
    assert.equal((await refusal(path.join(media, 'Filme', 'Evil (2000)'), '..'))[0], 403);
  });
});
