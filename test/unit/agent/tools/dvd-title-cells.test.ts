/**
 * A DVD title cut from its title set by its cells (dvd-title-cells.ts): lsdvd's cell sectors read from
 * a real capture, the join checked byte for byte, and the whole open-backend rip of a real image
 * (scripts/make-dvd-image.sh) checked frame for frame against the image's own VOB.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { DVD_SECTOR } from '../../../../agent/tools/dvdbackup-parser.js';
import { joinTitleCells } from '../../../../agent/tools/dvd-title-cells.js';
import { parseLsdvdTitleCells } from '../../../../agent/tools/lsdvd-parser.js';
import { openDvdRip } from '../../../../agent/tools/open-dvd-runner.js';
import { REPO_DIR, sampleText } from '../../../fixtures/tools-samples.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-cells-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('lsdvd -x -Oy: where a title lies in its title set', () => {
  it('reads the set and every cell of the 305 s title of the test image, in play order (captured)', () => {
    const place = parseLsdvdTitleCells(sampleText('dvd-lsdvd-cells.txt'));
    assert.equal(place.titleSet, 1);
    assert.equal(place.cells.length, 61, 'a chapter every 5 s of 305 s, one cell each');
    assert.deepEqual(place.cells[0], { first: 0, last: 259 });
    assert.deepEqual(place.cells[60], { first: 11630, last: 11827 });
    place.cells.slice(1).forEach((c, i) => assert.equal(c.first, place.cells[i].last + 1, `cell ${i + 2} follows cell ${i + 1}`));
  });

  it('refuses an answer without a title set or cells, and a cell that ends before it starts', () => {
    assert.throws(() => parseLsdvdTitleCells("lsdvd = { 'track' : [ { 'ix' : 1, } ] }"), /no title set/);
    assert.throws(() => parseLsdvdTitleCells("'vts' : 2,\n'ttn' : 1,"), /no cells/);
    assert.throws(() => parseLsdvdTitleCells("'vts' : 2,\n'first_sector' : 10,\n'last_sector' : 9,"), /ends before it starts \(10-9\)/);
  });
});

/** A VOB of `count` sectors, each filled with the byte of its sector number in the whole set (mod 251). */
function vob(name: string, from: number, count: number): string {
  const file = path.join(dir, name);
  const buf = Buffer.alloc(count * DVD_SECTOR);
  for (let i = 0; i < count; i++) buf.fill((from + i) % 251, i * DVD_SECTOR, (i + 1) * DVD_SECTOR);
  fs.writeFileSync(file, buf);
  return file;
}

describe('joinTitleCells', () => {
  const vobs = [vob('VTS_01_1.VOB', 0, 10), vob('VTS_01_2.VOB', 10, 6)];

  it('writes the cells in play order, one across the two VOB files, and nothing else', async () => {
    const out = path.join(dir, 'title.vob');
    const cells = [{ first: 8, last: 11 }, { first: 2, last: 3 }, { first: 15, last: 15 }];
    assert.equal(await joinTitleCells(vobs, cells, out), 7 * DVD_SECTOR);
    const got = fs.readFileSync(out);
    const sectors = Array.from({ length: got.length / DVD_SECTOR }, (_, i) => got[i * DVD_SECTOR]);
    assert.deepEqual(sectors, [8, 9, 10, 11, 2, 3, 15]);
    for (let i = 0; i < sectors.length; i++) assert.ok(got.subarray(i * DVD_SECTOR, (i + 1) * DVD_SECTOR).every((b) => b === sectors[i]), `sector ${i} whole`);
  });

  it('refuses a cell past the end of the copied set (a short copy)', async () => {
    await assert.rejects(joinTitleCells(vobs, [{ first: 14, last: 16 }], path.join(dir, 'short.vob')), /sectors 14-16 lies past the end of the copied title set \(16 sectors\)/);
  });
});

describe('the open backend rips every frame of a title with many cells (real lsdvd, dvdbackup, ffmpeg)', () => {
  const frames = (file: string): number =>
    parseInt(execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'v', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim(), 10);
  const decodeErrors = (file: string): string[] => {
    try {
      execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-xerror', '-i', file, '-map', '0:v', '-f', 'null', '-'], { stdio: 'pipe' });
      return [];
    } catch (err) {
      return String((err as { stderr?: Buffer }).stderr ?? err).split('\n').filter(Boolean);
    }
  };

  it('a 40 s title with a chapter every 5 s: 1000 frames, none damaged (dvdbackup -t 1 gave 999 and decoder errors)', async () => {
    const iso = path.join(dir, 'cells.iso');
    execFileSync('bash', [path.join(REPO_DIR, 'scripts/make-dvd-image.sh'), iso, 'CELLS', '40', '15'], { stdio: 'pipe' });
    const out = path.join(dir, 'rip', 'title_t01.mkv');
    assert.deepEqual(await openDvdRip(iso, 1, out), { files: [out] });
    assert.equal(frames(out), 1000);
    assert.deepEqual(decodeErrors(out), []);
    assert.deepEqual(fs.readdirSync(path.dirname(out)), ['title_t01.mkv'], 'no copy of the title set left');
  });
});
