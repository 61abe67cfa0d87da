import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { OutsideWrite } from '../../../../agent/output/output-folder.js';
import { PRIVATE_PREFIX, privateEncode } from '../../../../agent/output/private-encode.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-private-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A checked output folder and, beside it, a folder outside it. */
function folders(): { folder: string; real: string; outside: string } {
  const base = path.join(root, `case-${++n}`);
  const folder = path.join(base, 'media', 'Heat (1995)');
  const outside = path.join(base, 'elsewhere');
  fs.mkdirSync(folder, { recursive: true });
  fs.mkdirSync(outside, { recursive: true });
  return { folder, real: fs.realpathSync(folder), outside };
}

describe('privateEncode', () => {
  it('gives the encoder a name in a fresh folder of its own (mode 0700) and moves the file to its name, leaving no folder behind', async () => {
    const { folder, real } = folders();
    const dest = path.join(folder, 'Heat (1995).mkv');
    const target = await privateEncode(folder, real, dest);
    assert.ok(path.basename(target.dir).startsWith(PRIVATE_PREFIX));
    assert.equal(fs.statSync(target.dir).mode & 0o777, 0o700);
    assert.equal(path.basename(target.file), 'Heat (1995).mkv');
    assert.equal(fs.realpathSync(path.dirname(target.file)), fs.realpathSync(target.dir));
    fs.writeFileSync(target.file, 'encoded');
    assert.equal(fs.existsSync(dest), false, 'nothing at the final name while the encoder writes');
    await target.commit();
    assert.equal(fs.readFileSync(dest, 'utf8'), 'encoded');
    assert.deepEqual(fs.readdirSync(folder), ['Heat (1995).mkv']);
  });

  it('never puts the output over a file that appeared at its name meanwhile', async () => {
    const { folder, real } = folders();
    const dest = path.join(folder, 'Heat (1995).mkv');
    const target = await privateEncode(folder, real, dest);
    fs.writeFileSync(target.file, 'encoded');
    fs.writeFileSync(dest, 'someone else\'s');
    await assert.rejects(target.commit(), /Heat \(1995\)\.mkv appeared during the encode: the output was not put over it/);
    await target.discard();
    assert.equal(fs.readFileSync(dest, 'utf8'), 'someone else\'s');
    assert.deepEqual(fs.readdirSync(folder), ['Heat (1995).mkv']);
  });

  it('refuses a folder that leads elsewhere by now, and removes the folder it made there', async () => {
    const { folder, real, outside } = folders();
    fs.renameSync(folder, `${folder}.moved`);
    fs.symlinkSync(outside, folder);
    await assert.rejects(privateEncode(folder, real, path.join(folder, 'Heat (1995).mkv')), (err: Error) => err instanceof OutsideWrite && /swapped for a link leading elsewhere before the encode/.test(err.message));
    assert.deepEqual(fs.readdirSync(outside), []);
  });

  it('discards what the encoder wrote, also twice', async () => {
    const { folder, real } = folders();
    const target = await privateEncode(folder, real, path.join(folder, 'Heat (1995).mkv'));
    fs.writeFileSync(target.file, 'partial');
    await target.discard();
    await target.discard();
    assert.deepEqual(fs.readdirSync(folder), []);
  });
});
