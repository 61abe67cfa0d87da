import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOriginalsDir, originalsDir } from '../../../shared/originals.js';

describe('kept originals (keepOriginal)', () => {
  it('go below Originale under the output folder\'s name, in a folder named like the job', () => {
    assert.equal(originalsDir('/media', '/media/Filme', '/media/Filme/Heat (1995)', 'j1'), '/media/Originale/Heat (1995)/j1');
    assert.equal(originalsDir('/media', '/media/Serien', '/media/Serien/Show/Season 02', 'j2'), '/media/Originale/Show/Season 02/j2');
    assert.equal(originalsDir('/media', '/media/Filme', '/elsewhere/Heat', 'j3'), '/media/Originale/Heat/j3', 'an output outside its target keeps only its own name');
  });

  it('count as a job\'s raw data only under MEDIA_ROOT/Originale, named like that job, without ..', () => {
    assert.equal(isOriginalsDir('/media', '/media/Originale/Heat (1995)/j1', 'j1'), true);
    assert.equal(isOriginalsDir('/media/', '/media/Originale/j1', 'j1'), true);
    assert.equal(isOriginalsDir('/media', '/media/Originale/Heat (1995)/j1', 'j2'), false);
    assert.equal(isOriginalsDir('/media', '/media/Filme/j1', 'j1'), false);
    assert.equal(isOriginalsDir('/media', '/media/Originale/../Filme/j1', 'j1'), false);
    assert.equal(isOriginalsDir('/media', '/media/OriginaleX/j1', 'j1'), false);
    assert.equal(isOriginalsDir('/media', 'Originale/j1', 'j1'), false);
    assert.equal(isOriginalsDir('/media', '/media/Originale', 'Originale'), false);
  });
});
