import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { readAacsDiscId, readDvdDiscId } from '../../../../agent/disc/disc-ids.js';
import { folderTree } from '../../../../agent/disc/disc-tree.js';
import { identifyImageFile } from '../../../../agent/disc/identify.js';
import { readImageDrive } from '../../../../agent/disc/image-drive.js';
import { openUdf } from '../../../../agent/disc/udf.js';
import { REPO_DIR } from '../../../fixtures/tools-samples.js';

/**
 * Our disc ids against the reference implementations, on generated images: libdvdread's DVDDiscID
 * (a small C program, Debian libdvdread-dev) and the disc id libbluray's bd_info prints (Debian
 * libbluray-bin; it gets the id from libaacs, Debian libaacs0, which needs a Unit_Key_RO.inf it can parse).
 * The images are tiny (a second or two of video), so this runs with the unit tests (about a second).
 */

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-ids-ref-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

const DVD_DISC_ID_C = `#include <stdio.h>
#include <dvdread/dvd_reader.h>
int main(int argc, char **argv) {
  unsigned char id[16];
  dvd_reader_t *dvd = argc > 1 ? DVDOpen(argv[1]) : NULL;
  if (!dvd) return 2;
  if (DVDDiscID(dvd, id) < 0) return 3;
  for (int i = 0; i < 16; i++) printf("%02X", id[i]);
  printf("\\n");
  DVDClose(dvd);
  return 0;
}
`;

let dvdDiscIdTool: string | null = null;
/** libdvdread's DVDDiscID of an image; its "no css library" notice goes to stdout too, so the id is the last line. */
function libdvdreadDiscId(image: string): string {
  if (!dvdDiscIdTool) {
    const src = path.join(work, 'dvddiscid.c');
    fs.writeFileSync(src, DVD_DISC_ID_C);
    dvdDiscIdTool = path.join(work, 'dvddiscid');
    execFileSync('cc', ['-o', dvdDiscIdTool, src, '-ldvdread']);
  }
  const out = execFileSync(dvdDiscIdTool, [image], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return out.trim().split('\n').pop() ?? '';
}

/** The disc id bd_info prints ("Disc ID : <40 hex>"); libaacs keeps its config and cache in the temporary folder. */
function bdInfoDiscId(disc: string): string | null {
  const env = { ...process.env, HOME: work, XDG_CONFIG_HOME: path.join(work, 'config'), XDG_CACHE_HOME: path.join(work, 'cache'), AACS_NO_CACHE: '1' };
  const out = execFileSync('bd_info', [disc], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'ignore'] });
  return /^Disc ID\s*:\s*([0-9A-F]{40})\s*$/m.exec(out)?.[1] ?? null;
}

async function withImage<T>(file: string, fn: (tree: NonNullable<Awaited<ReturnType<typeof openUdf>>>) => Promise<T>): Promise<T> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const udf = await openUdf(fh, (await fh.stat()).size);
    assert.ok(udf, `${file} has UDF`);
    return await fn(udf);
  } finally {
    await fh.close();
  }
}

/** A DVD with two title sets (dvdauthor, genisoimage -dvd-video), one short title each. */
function twoTitleSetDvd(): string {
  const dir = path.join(work, 'dvd2');
  fs.mkdirSync(dir);
  const mpg = path.join(dir, 't.mpg');
  execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'testsrc2=size=720x576:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
    '-t', '1', '-target', 'pal-dvd', '-b:v', '300k', '-b:a', '96k', '-y', mpg]);
  const titleset = `<titleset><titles><pgc><vob file="${mpg}"/></pgc></titles></titleset>`;
  fs.writeFileSync(path.join(dir, 'dvd.xml'), `<dvdauthor dest="${dir}/DVD"><vmgm/>${titleset}${titleset}</dvdauthor>`);
  execFileSync('dvdauthor', ['-x', path.join(dir, 'dvd.xml')], { env: { ...process.env, VIDEO_FORMAT: 'PAL' }, stdio: 'ignore' });
  const iso = path.join(work, 'TWO_SETS.iso');
  execFileSync('genisoimage', ['-quiet', '-dvd-video', '-V', 'TWO_SETS', '-o', iso, path.join(dir, 'DVD')]);
  return iso;
}

/** A minimal Blu-ray folder bd_info accepts: index.bdmv with one HDMV title, MovieObject.bdmv, and a Unit_Key_RO.inf libaacs parses. */
function blurayFolder(): string {
  const dir = path.join(work, 'bd');
  fs.mkdirSync(path.join(dir, 'BDMV', 'STREAM'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'AACS'));
  // index.bdmv: header (40 bytes: magic, indexes start 78, no extension data), AppInfoBDMV (length 34),
  // Indexes: first play, top menu, one title, each an HDMV object.
  const hdmvObject = Buffer.from([0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  const indexes = Buffer.concat([hdmvObject, hdmvObject, Buffer.from([0, 1]), hdmvObject]);
  const header = Buffer.alloc(40);
  header.write('INDX0200', 0, 'latin1');
  header.writeUInt32BE(78, 8);
  const appInfo = Buffer.alloc(38);
  appInfo.writeUInt32BE(34, 0);
  const indexLength = Buffer.alloc(4);
  indexLength.writeUInt32BE(indexes.length);
  fs.writeFileSync(path.join(dir, 'BDMV', 'index.bdmv'), Buffer.concat([header, appInfo, indexLength, indexes]));
  // MovieObject.bdmv: header, then one movie object without commands.
  const mobj = Buffer.alloc(40 + 4 + 10);
  mobj.write('MOBJ0200', 0, 'latin1');
  mobj.writeUInt32BE(10, 40);
  mobj.writeUInt16BE(1, 48);
  fs.writeFileSync(path.join(dir, 'BDMV', 'MovieObject.bdmv'), mobj);
  fs.writeFileSync(path.join(dir, 'BDMV', 'STREAM', '00000.m2ts'), Buffer.alloc(192 * 32));
  // Unit_Key_RO.inf (libaacs uk_parse): > 2048 bytes, key area offset, one BDMV directory, application
  // type 1, CPS unit 1 for first play, top menu and one title, one (fake) encrypted unit key.
  const uk = Buffer.alloc(8192);
  for (let i = 0; i < uk.length; i++) uk[i] = (i * 131 + 7) & 0xff;
  uk.writeUInt32BE(48, 0);
  uk[16] = 1;
  uk[17] = 1;
  uk[18] = 0;
  uk.writeUInt16BE(1, 20);
  uk.writeUInt16BE(1, 22);
  uk.writeUInt16BE(1, 24);
  uk.writeUInt32BE(1, 26);
  uk.writeUInt16BE(1, 48);
  fs.writeFileSync(path.join(dir, 'AACS', 'Unit_Key_RO.inf'), uk);
  return dir;
}

describe('disc ids against libdvdread and libbluray on generated images', () => {
  it('gives libdvdread\'s DVDDiscID for a one-title-set DVD (make-dvd-image.sh), read through our UDF reader', async () => {
    const iso = path.join(work, 'IDS_ONE_SET.iso');
    execFileSync('bash', [path.join(REPO_DIR, 'scripts', 'make-dvd-image.sh'), iso, 'IDS_ONE_SET', '2'], { stdio: 'pipe' });
    const reference = libdvdreadDiscId(iso);
    assert.match(reference, /^[0-9A-F]{32}$/);
    assert.equal(await withImage(iso, readDvdDiscId), reference);
    const identity = await identifyImageFile(iso);
    assert.equal(identity.ids?.dvd_disc_id, reference);
    const drive = path.join(work, 'drive-dvd');
    fs.mkdirSync(drive);
    fs.copyFileSync(iso, path.join(drive, 'disc.iso'));
    const disc = (await readImageDrive(drive))?.disc;
    assert.equal(disc?.fingerprint, `dvd:${reference}`);
    assert.match(disc?.label_fingerprint ?? '', /^[0-9a-f]{16}$/);
    console.log(`DVD one title set: libdvdread ${reference}, ours ${identity.ids?.dvd_disc_id}`);
  });

  it('gives libdvdread\'s DVDDiscID for a DVD with two title sets', async () => {
    const iso = twoTitleSetDvd();
    const names = await withImage(iso, async (udf) => (await udf.list(['VIDEO_TS']))?.map((e) => e.name) ?? []);
    assert.ok(names.includes('VTS_02_0.IFO'), 'the image has a second title set');
    const reference = libdvdreadDiscId(iso);
    assert.match(reference, /^[0-9A-F]{32}$/);
    const ours = await withImage(iso, readDvdDiscId);
    assert.equal(ours, reference);
    console.log(`DVD two title sets: libdvdread ${reference}, ours ${ours}`);
  });

  it('gives the disc id bd_info prints, from a Blu-ray folder and from a UDF image of it', async () => {
    const dir = blurayFolder();
    const fromFolder = bdInfoDiscId(dir);
    assert.match(fromFolder ?? '', /^[0-9A-F]{40}$/, 'bd_info prints a disc id');
    assert.equal(await readAacsDiscId(folderTree(dir)), fromFolder);
    const iso = path.join(work, 'BD_IDS.iso');
    execFileSync('genisoimage', ['-quiet', '-udf', '-V', 'BD_IDS', '-o', iso, dir]);
    const fromImage = bdInfoDiscId(iso);
    assert.equal(fromImage, fromFolder);
    const identity = await identifyImageFile(iso);
    assert.equal(identity.ids?.aacs_disc_id, fromImage);
    console.log(`Blu-ray: bd_info ${fromImage}, ours ${identity.ids?.aacs_disc_id}`);
  });
});
