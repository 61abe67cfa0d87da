import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkMediaPath, isBareFileName, isUnderRoot, openInside, realPathWithin, resolveInside, writeStaysWithin } from '../../../shared/media-paths.js';

const ROOT = '/app/media';

describe('isUnderRoot', () => {
  it('accepts the root itself and paths below it', () => {
    assert.equal(isUnderRoot(ROOT, '/app/media'), true);
    assert.equal(isUnderRoot(ROOT, '/app/media/'), true);
    assert.equal(isUnderRoot(ROOT, '/app/media/Filme/Movie (1999)'), true);
    assert.equal(isUnderRoot(`${ROOT}/`, '/app/media/Filme'), true);
  });

  it('is boundary-aware', () => {
    assert.equal(isUnderRoot(ROOT, '/app/media-x'), false);
    assert.equal(isUnderRoot(ROOT, '/app/media-x/Filme'), false);
    assert.equal(isUnderRoot(ROOT, '/app/mediafiles'), false);
    assert.equal(isUnderRoot(ROOT, '/app'), false);
    assert.equal(isUnderRoot(ROOT, '/'), false);
  });

  it('refuses any .. segment, even one that would stay inside', () => {
    assert.equal(isUnderRoot(ROOT, '/app/media/../etc'), false);
    assert.equal(isUnderRoot(ROOT, '/app/media/Filme/../Serien'), false);
    assert.equal(isUnderRoot(ROOT, '/app/media/..'), false);
  });

  it('accepts names that merely contain dots', () => {
    assert.equal(isUnderRoot(ROOT, '/app/media/...'), true);
    assert.equal(isUnderRoot(ROOT, '/app/media/a..b'), true);
    assert.equal(isUnderRoot(ROOT, '/app/media/./Filme'), true);
  });

  it('refuses relative paths, NUL bytes and empty paths', () => {
    assert.equal(isUnderRoot(ROOT, 'app/media/Filme'), false);
    assert.equal(isUnderRoot(ROOT, 'Filme'), false);
    assert.equal(isUnderRoot(ROOT, '/app/media/Fil\0me'), false);
    assert.equal(isUnderRoot(ROOT, ''), false);
  });

  it('uses POSIX rules: a backslash is part of a name, not a separator', () => {
    assert.equal(isUnderRoot(ROOT, '/app/media\\..\\etc'), false);
    assert.equal(isUnderRoot(ROOT, '/app/media/a\\b'), true);
  });

  it('treats / as a root that holds every absolute path', () => {
    assert.equal(isUnderRoot('/', '/anything/below'), true);
  });

  it('refuses everything for an unusable root', () => {
    assert.equal(isUnderRoot('app/media', 'app/media/x'), false);
    assert.equal(isUnderRoot('/app/../media', '/media/x'), false);
  });
});

describe('checkMediaPath', () => {
  it('returns the normalised path on success', () => {
    assert.deepEqual(checkMediaPath(ROOT, '/app/media//Filme/./Neu/'), { ok: true, path: '/app/media/Filme/Neu' });
    assert.deepEqual(checkMediaPath(ROOT, '/app/media'), { ok: true, path: '/app/media' });
  });

  it('gives plain reasons', () => {
    assert.deepEqual(checkMediaPath(ROOT, '/app/media-x'), { ok: false, reason: 'path must lie under /app/media' });
    assert.deepEqual(checkMediaPath(ROOT, '/srv/other'), { ok: false, reason: 'path must lie under /app/media' });
    assert.deepEqual(checkMediaPath(ROOT, '/app/media/../etc'), { ok: false, reason: 'path must not contain ..' });
    assert.deepEqual(checkMediaPath(ROOT, '../media'), { ok: false, reason: 'path must not contain ..' });
    assert.deepEqual(checkMediaPath(ROOT, 'Filme'), { ok: false, reason: 'path must be absolute' });
    assert.deepEqual(checkMediaPath(ROOT, '/app/media/a\0'), { ok: false, reason: 'path must not contain NUL bytes' });
    assert.deepEqual(checkMediaPath(ROOT, ''), { ok: false, reason: 'path must not be empty' });
  });

  it('names the normalised root in the reason', () => {
    assert.deepEqual(checkMediaPath('/app/media/', '/tmp'), { ok: false, reason: 'path must lie under /app/media' });
  });
});

describe('isBareFileName', () => {
  it('accepts plain names', () => {
    assert.equal(isBareFileName('Movie (1999).mkv'), true);
    assert.equal(isBareFileName('poster.jpg'), true);
    assert.equal(isBareFileName('Amélie.mkv'), true);
    assert.equal(isBareFileName('a..b'), true);
  });

  it('refuses separators, dot names, hidden names, NUL and empty names', () => {
    assert.equal(isBareFileName(''), false);
    assert.equal(isBareFileName('.'), false);
    assert.equal(isBareFileName('..'), false);
    assert.equal(isBareFileName('.hidden'), false);
    assert.equal(isBareFileName('a/b'), false);
    assert.equal(isBareFileName('../etc/passwd'), false);
    assert.equal(isBareFileName('a\\b'), false);
    assert.equal(isBareFileName('..\\x'), false);
    assert.equal(isBareFileName('a\0b'), false);
  });
});

describe('resolveInside', () => {
  let base = '';
  let outDir = '';
  let secret = '';

  before(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ripwerk-paths-')));
    outDir = path.join(base, 'output');
    await fs.mkdir(outDir);
    await fs.mkdir(path.join(outDir, 'sub'));
    await fs.writeFile(path.join(outDir, 'movie.mkv'), 'video');
    await fs.writeFile(path.join(outDir, 'sub', 'inner.txt'), 'inner');
    secret = path.join(base, 'secret.txt');
    await fs.writeFile(secret, 'secret');
    await fs.symlink(secret, path.join(outDir, 'escape.txt'));
    await fs.symlink(base, path.join(outDir, 'up'));
    await fs.symlink(path.join(outDir, 'movie.mkv'), path.join(outDir, 'alias.mkv'));
    await fs.symlink(path.join(base, 'missing'), path.join(outDir, 'dangling'));
    await fs.symlink(outDir, path.join(base, 'output-link'));
  });

  after(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  it('returns the real path of a file inside', async () => {
    assert.equal(await resolveInside(outDir, 'movie.mkv'), path.join(outDir, 'movie.mkv'));
  });

  it('accepts a symlink that stays inside and returns its target', async () => {
    assert.equal(await resolveInside(outDir, 'alias.mkv'), path.join(outDir, 'movie.mkv'));
  });

  it('refuses a symlink to a file outside the folder', async () => {
    assert.equal(await resolveInside(outDir, 'escape.txt'), null);
    assert.equal(await fs.readFile(path.join(outDir, 'escape.txt'), 'utf8'), 'secret', 'the escape link really works on disk');
  });

  it('refuses a path through a symlinked folder that leads outside', async () => {
    assert.equal(await resolveInside(outDir, 'up/secret.txt'), null);
  });

  it('refuses .. that leads outside', async () => {
    assert.equal(await resolveInside(outDir, '../secret.txt'), null);
  });

  it('returns null for missing entries and dangling links', async () => {
    assert.equal(await resolveInside(outDir, 'nothing.mkv'), null);
    assert.equal(await resolveInside(outDir, 'dangling'), null);
    assert.equal(await resolveInside(path.join(base, 'no-such-dir'), 'movie.mkv'), null);
  });

  it('returns null for the folder itself, an empty name and a NUL byte', async () => {
    assert.equal(await resolveInside(outDir, '.'), null);
    assert.equal(await resolveInside(outDir, ''), null);
    assert.equal(await resolveInside(outDir, 'movie.mkv\0'), null);
  });

  it('compares real paths when the folder itself is reached through a symlink', async () => {
    assert.equal(await resolveInside(path.join(base, 'output-link'), 'movie.mkv'), path.join(outDir, 'movie.mkv'));
    assert.equal(await resolveInside(path.join(base, 'output-link'), 'escape.txt'), null);
  });

  it('accepts entries in sub-folders that stay inside', async () => {
    assert.equal(await resolveInside(outDir, 'sub/inner.txt'), path.join(outDir, 'sub', 'inner.txt'));
  });

  it('is boundary-aware for sibling folders with a common prefix', async () => {
    const sibling = `${outDir}-x`;
    await fs.mkdir(sibling);
    await fs.writeFile(path.join(sibling, 'file.txt'), 'x');
    await fs.symlink(path.join(sibling, 'file.txt'), path.join(outDir, 'sibling.txt'));
    assert.equal(await resolveInside(outDir, 'sibling.txt'), null);
  });
});

describe('realPathWithin and openInside', () => {
  let base = '';
  before(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ripwerk-real-')));
    await fs.mkdir(path.join(base, 'media', 'Filme', 'Heat (1995)'), { recursive: true });
    await fs.mkdir(path.join(base, 'media2'));
    await fs.mkdir(path.join(base, 'etc'));
    await fs.writeFile(path.join(base, 'etc', 'shadow'), 'secret');
    await fs.writeFile(path.join(base, 'media', 'Filme', 'Heat (1995)', 'Heat.mkv'), 'video');
    await fs.symlink(path.join(base, 'etc'), path.join(base, 'media', 'Filme', 'Evil'));
    await fs.symlink(path.join(base, 'media', 'Filme', 'Heat (1995)'), path.join(base, 'media', 'Filme', 'Heat-link'));
  });
  after(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  it('tells inside, outside and missing by the real path, boundary-aware', async () => {
    const media = path.join(base, 'media');
    assert.deepEqual(await realPathWithin([media], path.join(media, 'Filme', 'Heat-link', 'Heat.mkv')), { kind: 'inside', path: path.join(media, 'Filme', 'Heat (1995)', 'Heat.mkv') });
    assert.deepEqual(await realPathWithin([media], path.join(media, 'Filme', 'Evil', 'shadow')), { kind: 'outside', path: path.join(base, 'etc', 'shadow') });
    assert.deepEqual(await realPathWithin([media], path.join(base, 'media2')), { kind: 'outside', path: path.join(base, 'media2') }, '/media2 is not under /media');
    assert.deepEqual(await realPathWithin([path.join(base, 'nope'), path.join(base, 'media2')], path.join(base, 'media2')), { kind: 'inside', path: path.join(base, 'media2') }, 'any of the roots; a missing root counts for nothing');
    assert.deepEqual(await realPathWithin([media], path.join(media, 'nothing')), { kind: 'missing' });
    assert.deepEqual(await realPathWithin([media], 'relative/path'), { kind: 'missing' });
  });

  it('opens a file and refuses one that was reached through a link leading out', async () => {
    const heat = path.join(base, 'media', 'Filme', 'Heat (1995)');
    const ok = await openInside(heat, path.join(heat, 'Heat.mkv'));
    assert.ok(ok);
    assert.equal(await fs.readFile(ok.path, 'utf8'), 'video', 'the returned path names the opened file');
    assert.ok(ok.stat.isFile());
    assert.equal(ok.stat.size, 5, 'the stat is the opened file\'s');
    await ok.close();
    // What a swap between check and open looks like to the open: the folder is a link by then.
    assert.equal(await openInside(heat, path.join(base, 'media', 'Filme', 'Evil', 'shadow')), null);
    assert.equal(await openInside(heat, path.join(heat, 'missing.mkv')), null);
    assert.equal(await openInside(heat, heat), null, 'the folder itself is no file inside it');
  });
});

describe('writeStaysWithin (issue 42)', () => {
  let root = '';
  let media = '';
  let away = '';
  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ripwerk-write-'));
    media = path.join(root, 'media');
    away = path.join(root, 'away');
    await fs.mkdir(path.join(media, 'Serien', 'Good'), { recursive: true });
    await fs.mkdir(away);
    await fs.symlink(away, path.join(media, 'Serien', 'Evil'));
    await fs.symlink(path.join(away, 'gone'), path.join(media, 'Serien', 'Dangling'));
    await fs.symlink(path.join(media, 'Serien', 'Good'), path.join(media, 'Serien', 'Alias'));
    await fs.symlink(media, path.join(root, 'media-link'));
  });
  after(() => fs.rm(root, { recursive: true, force: true }));

  it('takes a folder to be made under MEDIA_ROOT, also through a link that stays inside or a MEDIA_ROOT that is a link', async () => {
    assert.equal(await writeStaysWithin(media, path.join(media, 'Serien', 'New', 'Season 01')), true);
    assert.equal(await writeStaysWithin(media, path.join(media, 'Serien', 'Alias', 'Season 02')), true);
    assert.equal(await writeStaysWithin(path.join(root, 'media-link'), path.join(root, 'media-link', 'Serien', 'Good')), true);
  });

  it('refuses one whose existing part leads out through a link, or through a link to nowhere', async () => {
    assert.equal(await writeStaysWithin(media, path.join(media, 'Serien', 'Evil', 'Season 01')), false);
    assert.equal(await writeStaysWithin(media, path.join(media, 'Serien', 'Dangling', 'Season 01')), false);
    assert.equal(await writeStaysWithin(media, 'relative/path'), false);
  });
});
