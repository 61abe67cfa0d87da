import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { classifyDisc, discFingerprint, makeDiscInfo, UHD_MIN_BYTES } from '../../../../agent/disc/disc-info.js';
import { EJECTED_DIR, ejectImage, readImageDrive } from '../../../../agent/disc/image-drive.js';
import { openIso9660, parseDirectoryRecords, parsePrimaryVolumeDescriptor } from '../../../../agent/disc/iso9660.js';

/** Label and root names of an ISO 9660 image, null when it is none. */
async function readIso(file: string): Promise<{ label: string; rootNames: string[] } | null> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const volume = await openIso9660(fh);
    const root = await volume?.list([]);
    return volume && root ? { label: volume.label, rootNames: root.map((e) => e.name) } : null;
  } finally {
    await fh.close();
  }
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-disc-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const hasGenisoimage = (() => {
  try {
    execFileSync('genisoimage', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const needsIso = { skip: hasGenisoimage ? false : 'genisoimage is not installed' };

let n = 0;
/** A real ISO 9660 image of a folder holding `layout/` (VIDEO_TS or BDMV) and a README file. */
function buildIso(label: string, layout: 'VIDEO_TS' | 'BDMV' | null, into: string, name = `${label}.iso`): string {
  const src = path.join(root, `src-${++n}`);
  fs.mkdirSync(src);
  if (layout) {
    fs.mkdirSync(path.join(src, layout));
    fs.writeFileSync(path.join(src, layout, layout === 'VIDEO_TS' ? 'VIDEO_TS.IFO' : 'INDEX.BDM'), Buffer.alloc(4096, 1));
  }
  fs.writeFileSync(path.join(src, 'README.TXT'), 'hello');
  fs.mkdirSync(into, { recursive: true });
  const iso = path.join(into, name);
  execFileSync('genisoimage', ['-quiet', '-V', label, '-o', iso, src]);
  return iso;
}

function driveDir(): string {
  const dir = path.join(root, `drive-${++n}`);
  fs.mkdirSync(dir);
  return dir;
}

describe('iso9660', () => {
  it('reads the volume label and the root names of a real image', needsIso, async () => {
    const iso = buildIso('MY_TEST_MOVIE', 'VIDEO_TS', driveDir());
    const summary = await readIso(iso);
    assert.ok(summary);
    assert.equal(summary.label, 'MY_TEST_MOVIE');
    assert.deepEqual([...summary.rootNames].sort(), ['README.TXT', 'VIDEO_TS'], 'version suffixes (;1) and . / .. entries are left out');
  });

  it('answers null for a file that is not an ISO 9660 image', async () => {
    const file = path.join(driveDir(), 'fake.iso');
    fs.writeFileSync(file, Buffer.alloc(64 * 1024, 0x41));
    assert.equal(await readIso(file), null);
    const short = path.join(driveDir(), 'short.iso');
    fs.writeFileSync(short, 'tiny');
    assert.equal(await readIso(short), null);
  });

  it('parses a primary volume descriptor and refuses other descriptors', () => {
    const pvd = Buffer.alloc(2048, 0);
    pvd[0] = 1;
    pvd.write('CD001', 1, 'latin1');
    pvd.write('LABEL'.padEnd(32, ' '), 40, 'latin1');
    pvd.writeUInt32LE(20, 156 + 2);
    pvd.writeUInt32LE(2048, 156 + 10);
    assert.deepEqual(parsePrimaryVolumeDescriptor(pvd), { label: 'LABEL', rootLba: 20, rootSize: 2048 });
    const supplementary = Buffer.from(pvd);
    supplementary[0] = 2;
    assert.equal(parsePrimaryVolumeDescriptor(supplementary), null);
    assert.equal(parsePrimaryVolumeDescriptor(pvd.subarray(0, 100)), null);
  });

  it('reads directory records across a sector boundary with zero padding', () => {
    const record = (name: string): Buffer => {
      const len = 33 + name.length + ((33 + name.length) % 2);
      const r = Buffer.alloc(len, 0);
      r[0] = len;
      r[32] = name.length;
      r.write(name, 33, 'latin1');
      return r;
    };
    const extent = Buffer.alloc(4096, 0);
    let pos = 0;
    for (const r of [record('\0'), record('\x01'), record('AUDIO_TS'), record('FILE.TXT;1')]) {
      r.copy(extent, pos);
      pos += r.length;
    }
    record('VIDEO_TS').copy(extent, 2048);
    assert.deepEqual(
      parseDirectoryRecords(extent).map((r) => r.name),
      ['AUDIO_TS', 'FILE.TXT', 'VIDEO_TS'],
    );
  });
});

describe('disc-info', () => {
  it('classifies Blu-rays of 55 GiB and more as UHD and leaves other layouts alone', () => {
    assert.equal(UHD_MIN_BYTES, 55 * 1024 * 1024 * 1024);
    assert.equal(classifyDisc('bluray', UHD_MIN_BYTES), 'uhd');
    assert.equal(classifyDisc('bluray', UHD_MIN_BYTES - 1), 'bluray');
    assert.equal(classifyDisc('bluray', 25e9), 'bluray');
    assert.equal(classifyDisc('dvd', UHD_MIN_BYTES * 2), 'dvd');
    assert.equal(classifyDisc('unknown', UHD_MIN_BYTES), 'unknown');
  });

  it('classifies a small Blu-ray as UHD when its index.bdmv is version 0300', () => {
    assert.equal(classifyDisc('bluray', 25e9, true), 'uhd');
    assert.equal(classifyDisc('bluray', 25e9, false), 'bluray');
    assert.equal(classifyDisc('dvd', 25e9, true), 'dvd');
  });

  it('gives a stable 16-hex fingerprint that changes with label and size', () => {
    const fp = discFingerprint('HEAT', 4_700_000_000);
    assert.match(fp, /^[0-9a-f]{16}$/);
    assert.equal(discFingerprint('HEAT', 4_700_000_000), fp);
    assert.notEqual(discFingerprint('HEAT', 4_700_000_001), fp);
    assert.notEqual(discFingerprint('HEAT2', 4_700_000_000), fp);
  });

  it('builds the disc info from an identity without content ids: the fingerprint is the label fingerprint', () => {
    const identity = { label: 'THE_BIG_LEBOWSKI_1998', title: 'The Big Lebowski', year: 1998, layout: 'bluray' as const, uhdMarker: false };
    assert.deepEqual(makeDiscInfo(identity, 123, '/x.iso'), {
      label: 'THE_BIG_LEBOWSKI_1998',
      title: 'The Big Lebowski',
      year: 1998,
      type: 'bluray',
      size_bytes: 123,
      fingerprint: discFingerprint('THE_BIG_LEBOWSKI_1998', 123),
      label_fingerprint: discFingerprint('THE_BIG_LEBOWSKI_1998', 123),
      ids: null,
      source: '/x.iso',
      audio_tracks: null,
    });
    assert.equal(makeDiscInfo({ ...identity, uhdMarker: true }, 123, '/x.iso').type, 'uhd');
  });
});

describe('image drive', () => {
  it('reads an ISO with VIDEO_TS as a DVD with label, normalised title and fingerprint', needsIso, async () => {
    const dir = driveDir();
    const iso = buildIso('MY_TEST_MOVIE', 'VIDEO_TS', dir, 'whatever.iso');
    const found = await readImageDrive(dir);
    assert.ok(found);
    const size = fs.statSync(iso).size;
    assert.deepEqual(found.source, { kind: 'iso', path: iso });
    assert.equal(found.disc.label, 'MY_TEST_MOVIE');
    assert.equal(found.disc.title, 'My Test Movie');
    assert.equal(found.disc.type, 'dvd');
    assert.equal(found.disc.size_bytes, size);
    // Its VIDEO_TS.IFO is no VMG libdvdread would open: no DVD id, so the label fingerprint is the key.
    assert.equal(found.disc.ids?.dvd_disc_id, null);
    assert.equal(found.disc.fingerprint, discFingerprint('MY_TEST_MOVIE', size));
    assert.equal(found.disc.label_fingerprint, discFingerprint('MY_TEST_MOVIE', size));
    const again = await readImageDrive(dir);
    assert.equal(again?.disc.fingerprint, found.disc.fingerprint, 'the fingerprint is stable across reads');
  });

  it('reads an unchanged ISO\'s labels once; a change of the file (size or time) is read again', needsIso, async () => {
    const dir = driveDir();
    const iso = buildIso('FIRST_LABEL', 'VIDEO_TS', dir);
    const t = 1_790_000_000; // whole seconds: the time can be put back exactly
    fs.utimesSync(iso, t, t);
    assert.equal((await readImageDrive(dir))?.disc.label, 'FIRST_LABEL');
    // The volume label in the primary volume descriptor (sector 16, offset 40) changed in place, the file's time put back.
    const fd = fs.openSync(iso, 'r+');
    fs.writeSync(fd, Buffer.from('OTHER_LABEL'), 0, 11, 16 * 2048 + 40);
    fs.closeSync(fd);
    fs.utimesSync(iso, t, t);
    assert.equal((await readImageDrive(dir))?.disc.label, 'FIRST_LABEL', 'same entry, size and time: not read again');
    fs.utimesSync(iso, t + 5, t + 5);
    assert.equal((await readImageDrive(dir))?.disc.label, 'OTHER_LABEL');
  });

  it('reads an ISO with BDMV as a Blu-ray, and as UHD once the image is 55 GiB', needsIso, async () => {
    const dir = driveDir();
    const iso = buildIso('BIG_BD', 'BDMV', dir);
    assert.equal((await readImageDrive(dir))?.disc.type, 'bluray');
    fs.truncateSync(iso, UHD_MIN_BYTES - 2048); // sparse: no real disk space is used
    assert.equal((await readImageDrive(dir))?.disc.type, 'bluray');
    fs.truncateSync(iso, UHD_MIN_BYTES);
    const uhd = await readImageDrive(dir);
    assert.equal(uhd?.disc.type, 'uhd');
    assert.equal(uhd?.disc.size_bytes, UHD_MIN_BYTES);
    assert.equal(uhd?.disc.label, 'BIG_BD', 'the label is still read from the grown image');
  });

  it('takes the file name as label of an .iso that is no ISO 9660 image', async () => {
    const dir = driveDir();
    fs.writeFileSync(path.join(dir, 'Some_Movie.ISO'), Buffer.alloc(40 * 1024, 0));
    const found = await readImageDrive(dir);
    assert.equal(found?.disc.label, 'Some_Movie');
    assert.equal(found?.disc.title, 'Some Movie');
    assert.equal(found?.disc.type, 'unknown');
  });

  it('reads a disc folder with VIDEO_TS or BDMV and sums its size', async () => {
    const dir = driveDir();
    fs.mkdirSync(path.join(dir, 'HEAT_1995', 'VIDEO_TS'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'HEAT_1995', 'VIDEO_TS', 'VTS_01_1.VOB'), Buffer.alloc(3000));
    fs.writeFileSync(path.join(dir, 'HEAT_1995', 'VIDEO_TS', 'VIDEO_TS.IFO'), Buffer.alloc(1000));
    const found = await readImageDrive(dir);
    assert.deepEqual(found?.source, { kind: 'folder', path: path.join(dir, 'HEAT_1995') });
    assert.equal(found?.disc.type, 'dvd');
    assert.equal(found?.disc.size_bytes, 4000);
    assert.equal(found?.disc.label, 'HEAT_1995');
    assert.equal(found?.disc.title, 'Heat');
    assert.equal(found?.disc.year, 1995);

    const bd = driveDir();
    fs.mkdirSync(path.join(bd, 'Film', 'BDMV'), { recursive: true });
    assert.equal((await readImageDrive(bd))?.disc.type, 'bluray');
  });

  it('ignores hidden entries, ejected/, other files and folders without a disc layout; takes the first by name', async () => {
    const dir = driveDir();
    fs.mkdirSync(path.join(dir, EJECTED_DIR));
    fs.writeFileSync(path.join(dir, EJECTED_DIR, 'old.iso'), Buffer.alloc(100));
    fs.writeFileSync(path.join(dir, '.hidden.iso'), Buffer.alloc(100));
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
    fs.mkdirSync(path.join(dir, 'aaa-empty-folder'));
    assert.equal(await readImageDrive(dir), null);
    fs.writeFileSync(path.join(dir, 'b.iso'), Buffer.alloc(100));
    fs.writeFileSync(path.join(dir, 'a.iso'), Buffer.alloc(100));
    assert.equal((await readImageDrive(dir))?.source.path, path.join(dir, 'a.iso'));
  });

  it('answers null for a missing drive folder', async () => {
    assert.equal(await readImageDrive(path.join(root, 'no-such-drive')), null);
  });

  it('ejects by moving the image into ejected/, with a unique name when it is taken', needsIso, async () => {
    const dir = driveDir();
    buildIso('DISC_A', 'VIDEO_TS', dir, 'disc.iso');
    const first = await readImageDrive(dir);
    assert.ok(first);
    const dest1 = await ejectImage(dir, first);
    assert.equal(dest1, path.join(dir, EJECTED_DIR, 'disc.iso'));
    assert.equal(fs.existsSync(path.join(dir, 'disc.iso')), false);
    assert.equal(await readImageDrive(dir), null, 'the drive is empty after the eject');

    buildIso('DISC_B', 'VIDEO_TS', dir, 'disc.iso');
    const second = await readImageDrive(dir);
    assert.ok(second);
    const dest2 = await ejectImage(dir, second);
    assert.equal(dest2, path.join(dir, EJECTED_DIR, '1-disc.iso'));
    assert.equal((await readIso(dest1))?.label, 'DISC_A');
    assert.equal((await readIso(dest2))?.label, 'DISC_B');
  });

  it('ejects a disc folder too', async () => {
    const dir = driveDir();
    fs.mkdirSync(path.join(dir, 'FOLDER_DISC', 'VIDEO_TS'), { recursive: true });
    const found = await readImageDrive(dir);
    assert.ok(found);
    const dest = await ejectImage(dir, found);
    assert.ok(fs.statSync(path.join(dest, 'VIDEO_TS')).isDirectory());
    assert.equal(await readImageDrive(dir), null);
  });
});
