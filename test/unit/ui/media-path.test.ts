import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { absoluteInMedia, relativeToMedia } from '../../../ui/src/media-path.js';

describe('paths relative to the media root (issue 38)', () => {
  it('shows a path below the media root without it, the root itself as empty, a path elsewhere whole', () => {
    assert.equal(relativeToMedia('/srv/media/Filme/Heat (1995)', '/srv/media'), 'Filme/Heat (1995)');
    assert.equal(relativeToMedia('/srv/media/Filme/', '/srv/media/'), 'Filme');
    assert.equal(relativeToMedia('/srv/media', '/srv/media'), '');
    assert.equal(relativeToMedia('/srv/mediathek/Filme', '/srv/media'), '/srv/mediathek/Filme', 'a neighbour with the same start is not below it');
    assert.equal(relativeToMedia('/srv/raw/abc', '/srv/media'), '/srv/raw/abc');
    assert.equal(relativeToMedia('/srv/media/Filme', null), '/srv/media/Filme', 'the root not known yet: the path as it is');
  });

  it('takes what is typed below the media root, an absolute path as it is', () => {
    assert.equal(absoluteInMedia('Filme/Kinder', '/srv/media'), '/srv/media/Filme/Kinder');
    assert.equal(absoluteInMedia(' ./Filme/ ', '/srv/media/'), '/srv/media/Filme');
    assert.equal(absoluteInMedia('/srv/media/Serien', '/srv/media'), '/srv/media/Serien');
    assert.equal(absoluteInMedia('', '/srv/media'), '', 'empty stays empty: the server takes its default');
    assert.equal(absoluteInMedia('Filme', null), 'Filme');
    for (const p of ['/srv/media/Filme/Heat (1995)', '/srv/media/Serien']) assert.equal(absoluteInMedia(relativeToMedia(p, '/srv/media'), '/srv/media'), p, 'shown and taken back: the same folder');
  });
});
