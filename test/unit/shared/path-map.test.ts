import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mapPath, parsePathMap, unmapPath } from '../../../shared/path-map.js';

describe('parsePathMap', () => {
  it('gives an empty map for an empty or blank value', () => {
    assert.deepEqual(parsePathMap(''), []);
    assert.deepEqual(parsePathMap('   '), []);
  });

  it('parses entries separated by ; or ,', () => {
    assert.deepEqual(parsePathMap('/app/media=/mnt/media;/app/temp/raw=/srv/raw'), [
      { from: '/app/media', to: '/mnt/media' },
      { from: '/app/temp/raw', to: '/srv/raw' },
    ]);
    assert.deepEqual(parsePathMap('/app/media=/mnt/media,/app/temp/raw=/srv/raw'), [
      { from: '/app/media', to: '/mnt/media' },
      { from: '/app/temp/raw', to: '/srv/raw' },
    ]);
  });

  it('trims spaces, skips empty entries and normalises both sides', () => {
    assert.deepEqual(parsePathMap(' /app/media/ = /mnt//media/ ;; '), [{ from: '/app/media', to: '/mnt/media' }]);
  });

  it('accepts Windows drive and UNC paths on the local side', () => {
    assert.deepEqual(parsePathMap('/app/media=D:\\Media\\;/app/temp/raw=\\\\nas\\raw'), [
      { from: '/app/media', to: 'D:\\Media' },
      { from: '/app/temp/raw', to: '\\\\nas\\raw\\' },
    ]);
    assert.deepEqual(parsePathMap('/app/media=D:/Media'), [{ from: '/app/media', to: 'D:\\Media' }]);
  });

  it('throws a plain reason for a malformed entry', () => {
    assert.throws(() => parsePathMap('/app/media'), /must have the form \/container\/path=\/local\/path/);
    assert.throws(() => parsePathMap('/app/media=/a=/b'), /must have the form/);
    assert.throws(() => parsePathMap('/app/media='), /needs a path on both sides/);
    assert.throws(() => parsePathMap('=/mnt/media'), /needs a path on both sides/);
    assert.throws(() => parsePathMap('app/media=/mnt/media'), /container path "app\/media" must be absolute/);
    assert.throws(() => parsePathMap('/app/media=mnt/media'), /local path "mnt\/media" must be absolute/);
    assert.throws(() => parsePathMap('C:\\Media=/mnt/media'), /container path .* must be absolute/);
    assert.throws(() => parsePathMap('/app/media/../x=/mnt/media'), /must not contain \.\./);
    assert.throws(() => parsePathMap('/app/media=/mnt/../etc'), /must not contain \.\./);
    assert.throws(() => parsePathMap('/app/media=/mnt/a\0b'), /NUL/);
    assert.throws(() => parsePathMap('/app/media=/a;/app/media/=/b'), /mapped twice/);
  });

  it('names the bad entry even after good ones', () => {
    assert.throws(
      () => parsePathMap('/app/media=/mnt/media;broken'),
      (err: unknown) => err instanceof Error && err.message.includes('"broken"'),
    );
  });
});

describe('mapPath', () => {
  const map = parsePathMap('/app/media=/mnt/media;/app/media/serien=/srv/serien;/app/temp/raw=/srv/raw');

  it('translates by prefix', () => {
    assert.equal(mapPath(map, '/app/media/Filme/Movie (1999)/Movie (1999).mkv'), '/mnt/media/Filme/Movie (1999)/Movie (1999).mkv');
    assert.equal(mapPath(map, '/app/temp/raw/3f2b9c1e'), '/srv/raw/3f2b9c1e');
  });

  it('translates the prefix itself, also with a trailing slash', () => {
    assert.equal(mapPath(map, '/app/media'), '/mnt/media');
    assert.equal(mapPath(map, '/app/media/'), '/mnt/media');
  });

  it('picks the longest matching prefix', () => {
    assert.equal(mapPath(map, '/app/media/serien/Show/Season 01'), '/srv/serien/Show/Season 01');
    assert.equal(mapPath(map, '/app/media/serien'), '/srv/serien');
  });

  it('is boundary-aware', () => {
    assert.equal(mapPath(map, '/app/media-x/file'), '/app/media-x/file');
    assert.equal(mapPath(map, '/app/media/serienfilme/x'), '/mnt/media/serienfilme/x');
  });

  it('leaves unmapped paths unchanged', () => {
    assert.equal(mapPath(map, '/var/lib/ripwerk'), '/var/lib/ripwerk');
    assert.equal(mapPath([], '/app/media/x'), '/app/media/x');
  });

  it('applies POSIX normalisation first, so .. cannot step out of a mapped prefix', () => {
    assert.equal(mapPath(map, '/app/media/../secret'), '/app/secret');
    assert.equal(mapPath(map, '/app/media/x/../serien/y'), '/srv/serien/y');
    assert.equal(mapPath(map, '/app/media//Filme/./a'), '/mnt/media/Filme/a');
  });

  it('treats a backslash in a container path as part of a name', () => {
    assert.equal(mapPath(map, '/app/media/a\\b'), '/mnt/media/a\\b');
  });

  it('maps onto a root folder', () => {
    assert.equal(mapPath(parsePathMap('/app/media=/'), '/app/media/x'), '/x');
  });

  it('uses backslashes below a Windows local side', () => {
    const win = parsePathMap('/app/media=D:\\Media;/app/temp/raw=\\\\nas\\raw');
    assert.equal(mapPath(win, '/app/media/Filme/a.mkv'), 'D:\\Media\\Filme\\a.mkv');
    assert.equal(mapPath(win, '/app/media'), 'D:\\Media');
    assert.equal(mapPath(win, '/app/temp/raw/job'), '\\\\nas\\raw\\job');
    assert.equal(mapPath(parsePathMap('/app/media=E:\\'), '/app/media/a'), 'E:\\a');
  });
});

describe('unmapPath', () => {
  const map = parsePathMap('/app/media=/mnt/media;/app/media/serien=/mnt/media/tv;/app/temp/raw=/srv/raw');

  it('translates a local path back', () => {
    assert.equal(unmapPath(map, '/mnt/media/Filme/a.mkv'), '/app/media/Filme/a.mkv');
    assert.equal(unmapPath(map, '/srv/raw'), '/app/temp/raw');
    assert.equal(unmapPath(map, '/srv/raw/'), '/app/temp/raw');
  });

  it('picks the longest matching local prefix', () => {
    assert.equal(unmapPath(map, '/mnt/media/tv/Show'), '/app/media/serien/Show');
  });

  it('is boundary-aware and leaves unmapped paths unchanged', () => {
    assert.equal(unmapPath(map, '/mnt/media-x/a'), '/mnt/media-x/a');
    assert.equal(unmapPath(map, '/home/user'), '/home/user');
    assert.equal(unmapPath(map, 'D:\\Media\\a'), 'D:\\Media\\a');
  });

  it('does not let .. step out of a local prefix', () => {
    assert.equal(unmapPath(map, '/srv/raw/../etc'), '/srv/raw/../etc');
  });

  it('is the reverse of mapPath', () => {
    for (const p of ['/app/media/Filme/x.mkv', '/app/media/serien/Show/Season 01/e.mkv', '/app/temp/raw/id']) {
      assert.equal(unmapPath(map, mapPath(map, p)), p);
    }
  });

  it('matches Windows local paths regardless of case and separator style', () => {
    const win = parsePathMap('/app/media=D:\\Media;/app/temp/raw=\\\\nas\\raw');
    assert.equal(unmapPath(win, 'd:/media/Filme/a.mkv'), '/app/media/Filme/a.mkv');
    assert.equal(unmapPath(win, 'D:\\Media'), '/app/media');
    assert.equal(unmapPath(win, '\\\\NAS\\raw\\job\\x'), '/app/temp/raw/job/x');
    assert.equal(unmapPath(win, 'D:\\Medien\\a'), 'D:\\Medien\\a');
    assert.equal(unmapPath(win, 'D:\\Media\\..\\Secrets'), 'D:\\Media\\..\\Secrets');
    assert.equal(unmapPath(win, '/mnt/media/a'), '/mnt/media/a');
    assert.equal(unmapPath(win, mapPath(win, '/app/media/Filme/a.mkv')), '/app/media/Filme/a.mkv');
  });
});
