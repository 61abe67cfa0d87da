import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { exists } from '../../../shared/fs-exists.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-exists-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('exists', () => {
  it('is true for a file, a folder and a link, a dangling link included; false for a free name', async () => {
    fs.writeFileSync(path.join(root, 'file'), 'x');
    fs.mkdirSync(path.join(root, 'folder'));
    fs.symlinkSync(path.join(root, 'file'), path.join(root, 'link'));
    fs.symlinkSync(path.join(root, 'gone'), path.join(root, 'dangling'));
    for (const name of ['file', 'folder', 'link', 'dangling']) assert.equal(await exists(path.join(root, name)), true, name);
    assert.equal(await exists(path.join(root, 'gone')), false);
    assert.equal(await exists(path.join(root, 'file', 'below-a-file')), false);
  });
});
