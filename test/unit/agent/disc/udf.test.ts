import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { contentHashOf, fileFingerprintOf } from '../../../../agent/disc/disc-ids.js';
import { readImageDrive } from '../../../../agent/disc/image-drive.js';
import { identifyDisc, identifyImageFile, identifyImageFolder } from '../../../../agent/disc/identify.js';
import { openIso9660 } from '../../../../agent/disc/iso9660.js';
import { decodeDstring, openUdf, parseFileEntry, parseTag, readRecognitionSequence, type UdfVolume } from '../../../../agent/disc/udf.js';
import { sampleText } from '../../../fixtures/tools-samples.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-udf-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function installed(tool: string, args: string[]): boolean {
  try {
    execFileSync(tool, args, { stdio: 'ignore' });
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
const needs = (...tools: string[]) => {
  const missing = tools.filter((t) => !installed(t, ['--version']));
  return { skip: missing.length > 0 ? `${missing.join(', ')} not installed` : false };
};

const BDMT = sampleText('disc-bdmt_eng.xml');
let n = 0;

/** A folder with the given files (paths relative to it, parents created). */
function tree(files: Record<string, string | Buffer>): string {
  const dir = path.join(root, `tree-${++n}`);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

const dvdFiles = { 'VIDEO_TS/VIDEO_TS.IFO': 'DVDVIDEO-VMG', 'VIDEO_TS/VTS_01_0.IFO': 'DVDVIDEO-VTS', 'AUDIO_TS/.keep': '' };
const bdFiles = (index = 'INDX0200') => ({
  'BDMV/index.bdmv': index,
  'BDMV/MovieObject.bdmv': 'MOBJ0200',
  'BDMV/PLAYLIST/00000.mpls': 'MPLS0200',
  'BDMV/META/DL/bdmt_eng.xml': BDMT,
  'BDMV/META/DL/MYMOVIE_416x240.jpg': Buffer.alloc(3000, 7),
  'CERTIFICATE/id.bdmv': 'BDID0200',
});

/**
 * The ids a tree of these files gets: no DVD id (these IFOs are 12 bytes, no VMG libdvdread opens),
 * no AACS file; the content hash over VIDEO_TS/* or BDMV/STREAM/*.m2ts sizes, the file fingerprint over all.
 */
function idsOf(files: Record<string, string | Buffer>, layout: 'dvd' | 'bluray') {
  const all = Object.entries(files).map(([p, content]) => ({ path: p, size: Buffer.byteLength(content) }));
  const dir = layout === 'dvd' ? 'VIDEO_TS/' : 'BDMV/STREAM/';
  const hashed = all.filter((f) => f.path.startsWith(dir) && !f.path.slice(dir.length).includes('/') && (layout === 'dvd' || f.path.endsWith('.m2ts')));
  return {
    dvd_disc_id: null,
    aacs_disc_id: null,
    content_hash: contentHashOf(hashed.map((f) => ({ name: f.path.slice(dir.length), size: f.size }))),
    file_fingerprint: fileFingerprintOf(all),
  };
}

/** genisoimage image: ISO 9660 only, or a UDF 1.02 + ISO 9660 bridge with udf. */
function genisoimage(label: string, src: string, udf: boolean, extra: string[] = []): string {
  const out = path.join(root, `img-${++n}.iso`);
  execFileSync('genisoimage', ['-quiet', '-input-charset', 'utf-8', ...(udf ? ['-udf'] : []), ...extra, '-V', label, '-o', out, src]);
  return out;
}

/** mkudffs wants --utf8 as its first argument; every label here is given in UTF-8. */
function mkudffs(args: string[], blocks = 2048): string {
  const out = path.join(root, `udf-${++n}.img`);
  execFileSync('mkudffs', ['--utf8', '--new-file', '--blocksize=2048', ...args, out, String(blocks)], { stdio: 'ignore' });
  return out;
}

async function withUdf<T>(file: string, fn: (udf: UdfVolume | null) => Promise<T>, sizeBytes = fs.statSync(file).size): Promise<T> {
  const fh = await fs.promises.open(file, 'r');
  try {
    return await fn(await openUdf(fh, sizeBytes));
  } finally {
    await fh.close();
  }
}

function checksum(block: Buffer): void {
  let sum = 0;
  for (let i = 0; i < 16; i++) if (i !== 4) sum += block[i];
  block[4] = sum & 0xff;
}

/**
 * Rewrites a genisoimage UDF 1.02 image the way a UDF 2.50 Blu-ray is laid out: the logical volume
 * gets a metadata partition (map 0) over a physical partition (map 1) moved to the end of the image. The
 * metadata file maps metadata block m to physical block 1 + (m + half) mod length in two extents,
 * so every descriptor is found only through the metadata file. The old partition area is zeroed
 * (which also breaks the ISO 9660 side).
 */
function toMetadataPartition(src: string): string {
  const bs = 2048;
  const img = fs.readFileSync(src);
  const vdsLength = img.readUInt32LE(256 * bs + 16);
  const vdsStart = img.readUInt32LE(256 * bs + 20);
  let pdAt = -1;
  let lvdAt = -1;
  for (let i = 0; i < vdsLength / bs; i++) {
    const at = (vdsStart + i) * bs;
    if (img.readUInt16LE(at) === 5) pdAt = at;
    if (img.readUInt16LE(at) === 6) lvdAt = at;
  }
  assert.ok(pdAt > 0 && lvdAt > 0, 'the image has a partition and a logical volume descriptor');
  const partitionNumber = img.readUInt16LE(pdAt + 22);
  const start = img.readUInt32LE(pdAt + 188);
  const length = img.readUInt32LE(pdAt + 192);
  const half = Math.floor(length / 2);
  const newStart = Math.ceil(img.length / bs);
  const out = Buffer.alloc((newStart + 1 + length) * bs);
  img.copy(out);
  for (let m = 0; m < length; m++) img.copy(out, (newStart + 1 + ((m + half) % length)) * bs, (start + m) * bs, (start + m + 1) * bs);
  out.fill(0, start * bs, (start + length) * bs);

  const fe = out.subarray(newStart * bs, (newStart + 1) * bs);
  fe.writeUInt16LE(261, 0);
  fe.writeUInt16LE(3, 2);
  fe[27] = 250; // ICB file type: metadata file
  fe.writeUInt16LE(0, 34); // short allocation descriptors
  fe.writeBigUInt64LE(BigInt(length * bs), 56);
  fe.writeUInt32LE(16, 172);
  fe.writeUInt32LE((length - half) * bs, 176);
  fe.writeUInt32LE(1 + half, 180);
  fe.writeUInt32LE(half * bs, 184);
  fe.writeUInt32LE(1, 188);
  checksum(fe);

  const pd = out.subarray(pdAt, pdAt + bs);
  pd.writeUInt32LE(newStart, 188);
  pd.writeUInt32LE(length + 1, 192);
  checksum(pd);

  const lvd = out.subarray(lvdAt, lvdAt + bs);
  lvd.fill(0, 440, 440 + 70);
  lvd.writeUInt32LE(70, 264);
  lvd.writeUInt32LE(2, 268);
  lvd[440] = 2;
  lvd[441] = 64;
  lvd.write('*UDF Metadata Partition', 445, 'latin1');
  lvd.writeUInt16LE(0x0250, 468);
  lvd.writeUInt16LE(1, 476);
  lvd.writeUInt16LE(partitionNumber, 478);
  lvd.writeUInt32LE(0, 480); // metadata file at block 0 of the physical partition
  lvd.writeUInt32LE(0, 484); // mirror: the same file
  lvd.writeUInt32LE(0xffffffff, 488);
  lvd[504] = 1;
  lvd[505] = 6;
  lvd.writeUInt16LE(1, 506);
  lvd.writeUInt16LE(partitionNumber, 508);
  checksum(lvd);

  const dest = path.join(root, `meta-${++n}.img`);
  fs.writeFileSync(dest, out);
  return dest;
}

describe('udf descriptors', () => {
  it('decodes dstrings with compression id 8 and 16 as captured', () => {
    const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
    // PVD volume identifier of genisoimage -udf -V MY_MOVIE_2003_D1 (disc-udf-bdmv-hybrid-capture.txt)
    const hybrid = hex('084d595f4d4f5649455f323030335f4431000000000000000000000000000011');
    assert.equal(decodeDstring(hybrid), 'MY_MOVIE_2003_D1');
    // mkudffs --label=Amélie stored with id 16 (disc-udf250-capture.txt)
    assert.equal(decodeDstring(hex('10004100 6d00e900 6c006900 65000000 00000000 00000000 00000000 0000000d')), 'Amélie');
    // LVD identifier 千と千尋の神隠し, dstring[128], used length 0x11
    const lvd = Buffer.alloc(128);
    hex('1053433068534 35c0b306e795e96a03057'.replace(/\s/g, '')).copy(lvd);
    lvd[127] = 0x11;
    assert.equal(decodeDstring(lvd), '千と千尋の神隠し');
    const latin1 = Buffer.alloc(32);
    latin1[0] = 8;
    Buffer.from('Amélie', 'latin1').copy(latin1, 1);
    latin1[31] = 7;
    assert.equal(decodeDstring(latin1), 'Amélie');
    assert.equal(decodeDstring(Buffer.alloc(32)), '', 'an unused field is empty');
    const overlong = Buffer.from(latin1);
    overlong[31] = 200;
    assert.equal(decodeDstring(overlong), '', 'a used length past the field is refused');
  });

  it('checks the descriptor tag checksum', () => {
    const avdp = Buffer.from('02000200ce00000001d7f00100010000', 'hex');
    assert.deepEqual(parseTag(avdp), { id: 2, version: 2, location: 256 });
    avdp[4] ^= 1;
    assert.equal(parseTag(avdp), null);
    assert.equal(parseTag(Buffer.alloc(8)), null);
  });

  it('refuses a file entry whose allocation descriptors run past the block and caps huge lengths', () => {
    const block = Buffer.alloc(2048);
    block.writeUInt16LE(266, 0);
    block[27] = 5;
    block.writeUInt16LE(3, 34);
    block.writeBigUInt64LE(2n ** 63n, 56);
    block.writeUInt32LE(4, 212);
    checksum(block);
    const entry = parseFileEntry(block);
    assert.equal(entry?.infoLength, Number.MAX_SAFE_INTEGER);
    assert.equal(entry?.adType, 3);
    assert.equal(entry?.allocation.length, 4);
    block.writeUInt32LE(0x7fffffff, 212);
    checksum(block);
    assert.equal(parseFileEntry(block), null);
  });
});

describe('udf and iso 9660 images', () => {
  it('reads a genisoimage UDF bridge DVD: recognition sequence, labels, tree and identity', needs('genisoimage'), async () => {
    const iso = genisoimage('MY_MOVIE_2003', tree(dvdFiles), true);
    await withUdf(iso, async (udf) => {
      assert.ok(udf);
      assert.equal(udf.revision, 'NSR02');
      assert.equal(udf.blockSize, 2048);
      assert.equal(udf.volumeId, 'MY_MOVIE_2003');
      assert.equal(udf.logicalVolumeId, 'MY_MOVIE_2003');
      assert.deepEqual((await udf.list([]))?.map((e) => `${e.name}${e.isDirectory ? '/' : ''}`).sort(), ['AUDIO_TS/', 'VIDEO_TS/']);
      const ifo = await udf.readFile(['video_ts', 'VIDEO_TS.IFO'], 1024);
      assert.equal(ifo?.data.toString(), 'DVDVIDEO-VMG', 'names match ignoring case');
      assert.equal(await udf.readFile(['VIDEO_TS', 'missing.IFO'], 1024), null);
      assert.equal(await udf.list(['VIDEO_TS', 'VIDEO_TS.IFO']), null, 'a file is no directory');
    });
    const fh = await fs.promises.open(iso, 'r');
    assert.deepEqual((await readRecognitionSequence(fh)).slice(0, 5), ['CD001', 'CD001', 'BEA01', 'NSR02', 'TEA01']);
    await fh.close();
    assert.deepEqual(await identifyImageFile(iso), {
      label: 'MY_MOVIE_2003',
      labelSource: 'udf-lvd',
      title: 'My Movie',
      year: 2003,
      layout: 'dvd',
      uhdMarker: false,
      bdmtTitle: null,
      ids: idsOf(dvdFiles, 'dvd'),
    });
  });

  it('reads the bdmt clear title of a BDMV bridge image through UDF, and through the ISO 9660 side with 8.3 names', needs('genisoimage'), async () => {
    const iso = genisoimage('MY_MOVIE_2003_D1', tree(bdFiles()), true);
    await withUdf(iso, async (udf) => {
      assert.ok(udf);
      assert.deepEqual((await udf.list(['BDMV', 'META', 'DL']))?.map((e) => e.name).sort(), ['MYMOVIE_416x240.jpg', 'bdmt_eng.xml']);
      const head = await udf.readFile(['BDMV', 'index.bdmv'], 4);
      assert.deepEqual(head, { size: 8, data: Buffer.from('INDX') }, 'reads stop at the limit asked for');
    });
    const fh = await fs.promises.open(iso, 'r');
    const isoSide = await openIso9660(fh);
    assert.equal(isoSide?.label, 'MY_MOVIE_2003_D1');
    assert.deepEqual((await isoSide?.list(['BDMV', 'META', 'DL']))?.map((e) => e.name).sort(), ['BDMT_ENG.XML', 'MYMOVIE_.JPG']);
    assert.equal((await isoSide?.readFile(['BDMV', 'META', 'DL', 'bdmt_eng.xml'], 1 << 20))?.data.toString('utf8'), BDMT);
    assert.equal((await isoSide?.readFile(['BDMV', 'index.bdmv'], 8))?.data.toString(), 'INDX0200', 'index.bdmv is found as INDEX.BDM');
    await fh.close();
    assert.deepEqual(await identifyImageFile(iso), {
      label: 'MY_MOVIE_2003_D1',
      labelSource: 'udf-lvd',
      title: 'My Movie (2003) - Disc 1',
      year: 2003,
      layout: 'bluray',
      uhdMarker: false,
      bdmtTitle: 'My Movie (2003) - Disc 1',
      ids: idsOf(bdFiles(), 'bluray'),
    });
  });

  it('reads an ISO 9660 + Joliet image without UDF (xorriso) through its Joliet names', needs('xorriso'), async () => {
    const out = path.join(root, `xorriso-${++n}.iso`);
    execFileSync('xorriso', ['-as', 'mkisofs', '-quiet', '-V', 'BD_BACKUP', '-J', '-joliet-long', '-r', '-o', out, tree(bdFiles('INDX0300'))], { stdio: 'ignore' });
    const fh = await fs.promises.open(out, 'r');
    assert.equal(await openUdf(fh, fs.statSync(out).size), null);
    const iso = await openIso9660(fh);
    assert.equal(iso?.joliet, true);
    assert.deepEqual((await iso?.list(['BDMV']))?.map((e) => e.name).sort(), ['META', 'MovieObject.bdmv', 'PLAYLIST', 'index.bdmv']);
    await fh.close();
    const identity = await identifyImageFile(out);
    assert.equal(identity.labelSource, 'iso9660');
    assert.equal(identity.label, 'BD_BACKUP');
    assert.equal(identity.bdmtTitle, 'My Movie (2003) - Disc 1');
    assert.equal(identity.uhdMarker, true);
  });

  it('classifies by index.bdmv version and by size: INDX0300 and 56 GiB are UHD, 40 GiB stays Blu-ray', needs('genisoimage'), async () => {
    const uhdDrive = path.join(root, `drive-${++n}`);
    fs.mkdirSync(uhdDrive);
    fs.renameSync(genisoimage('UHD_MOVIE', tree(bdFiles('INDX0300')), true), path.join(uhdDrive, 'uhd.iso'));
    const marked = await readImageDrive(uhdDrive);
    assert.equal(marked?.disc.type, 'uhd', 'a small image with INDX0300 is UHD');

    const drive = path.join(root, `drive-${++n}`);
    fs.mkdirSync(drive);
    const file = path.join(drive, 'movie.iso');
    fs.renameSync(genisoimage('MY_MOVIE_2003_D1', tree(bdFiles()), true), file);
    fs.truncateSync(file, 40 * 1024 ** 3); // sparse: costs no disk space
    const bluray = await readImageDrive(drive);
    assert.equal(bluray?.disc.type, 'bluray');
    fs.truncateSync(file, 56 * 1024 ** 3);
    const uhd = await readImageDrive(drive);
    assert.equal(uhd?.disc.type, 'uhd');
    assert.equal(uhd?.disc.size_bytes, 60_129_542_144);
    assert.equal(uhd?.disc.label, 'MY_MOVIE_2003_D1');
    assert.equal(uhd?.disc.title, 'My Movie (2003) - Disc 1');
    assert.equal(uhd?.disc.year, 2003);
  });

  it('finds the anchor at the last sector when sector 256 is unreadable', needs('genisoimage'), async () => {
    const file = genisoimage('ANCHOR_TEST', tree(dvdFiles), true);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(2048), 0, 2048, 256 * 2048);
    fs.closeSync(fd);
    await withUdf(file, async (udf) => assert.equal(udf?.logicalVolumeId, 'ANCHOR_TEST'));
    await withUdf(file, async (udf) => assert.equal(udf, null, 'without the size only sector 256 is tried'), 0);
  });

  it('reads a UDF 2.50 style metadata partition', needs('genisoimage'), async () => {
    const file = toMetadataPartition(genisoimage('META_MOVIE', tree(bdFiles('INDX0300')), true));
    await withUdf(file, async (udf) => {
      assert.ok(udf);
      assert.equal(udf.logicalVolumeId, 'META_MOVIE');
      assert.deepEqual((await udf.list([]))?.map((e) => e.name).sort(), ['BDMV', 'CERTIFICATE']);
      assert.equal((await udf.readFile(['CERTIFICATE', 'id.bdmv'], 100))?.data.toString(), 'BDID0200');
    });
    const fh = await fs.promises.open(file, 'r');
    assert.equal(await (await openIso9660(fh))?.list(['BDMV']), null, 'the ISO 9660 side is gone');
    await fh.close();
    const identity = await identifyImageFile(file);
    assert.equal(identity.bdmtTitle, 'My Movie (2003) - Disc 1');
    assert.equal(identity.uhdMarker, true);
    assert.equal(identity.layout, 'bluray');
  });

  it('reads Latin-1 and UTF-16 labels written by mkudffs and genisoimage', needs('mkudffs', 'genisoimage'), async () => {
    const spirited = mkudffs(['--media-type=bdr', '--udfrev=2.50', '--lvid=千と千尋の神隠し', '--vid=SPIRITED_AWAY'], 8192);
    await withUdf(spirited, async (udf) => {
      assert.equal(udf?.revision, 'NSR03');
      assert.equal(udf?.logicalVolumeId, '千と千尋の神隠し');
      assert.equal(udf?.volumeId, 'SPIRITED_AWAY');
      assert.equal(await udf?.list([]), null, 'files behind a virtual allocation table (VAT) are not read');
    });
    const longJapanese = mkudffs(['--media-type=hd', '--label=千と千尋の神隠し']);
    assert.deepEqual(
      await identifyImageFile(longJapanese).then(({ label, title, labelSource }) => ({ label, title, labelSource })),
      { label: '千と千尋の神隠し', title: '千と千尋の神隠し', labelSource: 'udf-lvd' },
    );
    const amelie16 = mkudffs(['--media-type=hd', '--label=Amélie']);
    await withUdf(amelie16, async (udf) => assert.equal(udf?.logicalVolumeId, 'Amélie'));
    const amelie8 = genisoimage('Amélie', tree(dvdFiles), true);
    const identity = await identifyImageFile(amelie8);
    assert.equal(identity.label, 'Amélie');
    assert.equal(identity.title, 'Amélie');
    assert.equal(identity.layout, 'dvd');
  });

  it('walks the root directory of mkudffs file systems with every allocation descriptor kind, with and without extended file entries', needs('mkudffs'), async () => {
    for (const ad of ['inicb', 'short', 'long']) {
      for (const efe of [[], ['--noefe']]) {
        const file = mkudffs(['--media-type=hd', `--ad=${ad}`, ...efe, '--label=EMPTY_DISC']);
        await withUdf(file, async (udf) => {
          assert.equal(udf?.revision, 'NSR03');
          assert.deepEqual(await udf?.list([]), [], `${ad} ${efe.join('')}: an empty root directory`);
          assert.equal(await udf?.list(['BDMV']), null);
        });
        assert.equal((await identifyImageFile(file)).layout, 'unknown');
      }
    }
  });

  it('reads a UDF-only image with 512-byte blocks written by udfclient', needs('newfs_udf', 'udfclient'), async () => {
    const file = path.join(root, `udfclient-${++n}.img`);
    fs.writeFileSync(file, Buffer.alloc(8 * 1024 * 1024));
    execFileSync('newfs_udf', ['-L', 'MY_MOVIE_2003', '-P', 'MY_MOVIE_2003', file], { stdio: 'ignore', timeout: 60_000 });
    const listing = execFileSync('udfclient', [file], { input: 'ls\nquit\n', timeout: 60_000 }).toString();
    const volume = /(\S+:fileset)/.exec(listing)?.[1];
    assert.ok(volume, 'udfclient lists the new volume');
    const src = tree(bdFiles('INDX0300'));
    execFileSync('udfclient', ['-W', file], { input: `cd ${volume}\nlcd ${src}\nput BDMV\nsync\nquit\n`, timeout: 60_000, stdio: ['pipe', 'ignore', 'ignore'] });
    await withUdf(file, async (udf) => {
      assert.equal(udf?.blockSize, 512);
      assert.deepEqual((await udf?.list(['BDMV', 'META', 'DL']))?.map((e) => e.name).sort(), ['MYMOVIE_416x240.jpg', 'bdmt_eng.xml']);
    });
    const identity = await identifyImageFile(file);
    assert.deepEqual(identity, {
      label: 'MY_MOVIE_2003',
      labelSource: 'udf-lvd',
      title: 'My Movie (2003) - Disc 1',
      year: 2003,
      layout: 'bluray',
      uhdMarker: true,
      bdmtTitle: 'My Movie (2003) - Disc 1',
      ids: idsOf(Object.fromEntries(Object.entries(bdFiles('INDX0300')).filter(([p]) => p.startsWith('BDMV/'))), 'bluray'), // only BDMV was put
    });
  });

  it('gives the fallback name and layout unknown for foreign, truncated or random content', async () => {
    const random = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < random.length; i++) random[i] = (i * 7919 + (i >> 3)) & 0xff;
    random.write('\0BEA01\x01', 16 * 2048, 'latin1');
    random.write('\0NSR02\x01', 17 * 2048, 'latin1');
    const reader = {
      async read(buffer: Buffer, offset: number, length: number, position: number) {
        const end = Math.min(random.length, position + length);
        const n = Math.max(0, end - position);
        random.copy(buffer, offset, position, position + n);
        return { bytesRead: n };
      },
    };
    assert.deepEqual(await identifyDisc(reader, random.length, 'Some_Movie_1999'), {
      label: 'Some_Movie_1999',
      labelSource: 'name',
      title: 'Some Movie',
      year: 1999,
      layout: 'unknown',
      uhdMarker: false,
      bdmtTitle: null,
      ids: null,
    });
    const failing = { read: async () => Promise.reject(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })) };
    assert.equal((await identifyDisc(failing, 8e9, 'sr0')).label, 'sr0', 'read errors (a scrambled sector) are no failure');
  });

  it('identifies a disc folder and reads its bdmt from the folder', async () => {
    const dir = tree(bdFiles());
    const named = path.join(path.dirname(dir), 'BDROM');
    fs.renameSync(dir, named);
    const identity = await identifyImageFolder(named);
    assert.equal(identity.label, 'BDROM');
    assert.equal(identity.layout, 'bluray');
    assert.equal(identity.title, 'My Movie (2003) - Disc 1');
    const dvd = path.join(root, 'HEAT_1995_WS');
    fs.mkdirSync(path.join(dvd, 'video_ts'), { recursive: true });
    assert.deepEqual(await identifyImageFolder(dvd), {
      label: 'HEAT_1995_WS',
      labelSource: 'name',
      title: 'Heat',
      year: 1995,
      layout: 'dvd',
      uhdMarker: false,
      bdmtTitle: null,
      ids: { dvd_disc_id: null, aacs_disc_id: null, content_hash: null, file_fingerprint: fileFingerprintOf([]) },
    });
  });
});
