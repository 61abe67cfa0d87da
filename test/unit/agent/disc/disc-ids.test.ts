import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { DiscIds } from '../../../../shared/protocol.js';
import {
  aacsDiscIdOf,
  contentHashOf,
  dvdDiscIdOf,
  fileFingerprintOf,
  identityKey,
  ifoName,
  listDiscFiles,
  readAacsDiscId,
  readContentHash,
  readDiscIds,
  readDvdDiscId,
} from '../../../../agent/disc/disc-ids.js';
import { discFingerprint, makeDiscInfo } from '../../../../agent/disc/disc-info.js';
import { folderTree } from '../../../../agent/disc/disc-tree.js';
import { readImageDrive } from '../../../../agent/disc/image-drive.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-ids-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A folder with the given files (paths relative to it, parents created). */
function tree(files: Record<string, string | Buffer>, dir = path.join(root, `tree-${++n}`)): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

/** An IFO of `sectors` sectors: the magic, the title-set count at 0x3E (VMG), the rest filled with `fill`. */
function ifo(kind: 'VMG' | 'VTS', sectors: number, fill: number, titleSets = 0): Buffer {
  const data = Buffer.alloc(sectors * 2048, fill);
  data.write(`DVDVIDEO-${kind}`, 0, 'latin1');
  if (kind === 'VMG') data.writeUInt16BE(titleSets, 0x3e);
  return data;
}

const md5 = (...parts: Buffer[]) => createHash('md5').update(Buffer.concat(parts)).digest('hex').toUpperCase();
const named = (sizes: Record<string, number>) => Object.entries(sizes).map(([name, size]) => ({ name, size }));

describe('content hash (TheDiscDB ContentHash)', () => {
  it('gives the stored ContentHash of the 2011 DVD of 2001: A Space Odyssey from its 13 file sizes (TheDiscDb/data)', () => {
    // In directory order, as the capture's HSH lines list them; the hash sorts by name.
    const files = named({
      'VIDEO_TS.BUP': 10240,
      'VIDEO_TS.IFO': 10240,
      'VTS_01_0.IFO': 104448,
      'VTS_01_0.BUP': 104448,
      'VTS_01_0.VOB': 3647488,
      'VTS_01_1.VOB': 1073739776,
      'VTS_01_2.VOB': 1073739776,
      'VTS_01_3.VOB': 1073739776,
      'VTS_01_4.VOB': 602130432,
      'VTS_01_5.VOB': 1073739776,
      'VTS_01_6.VOB': 1073739776,
      'VTS_01_7.VOB': 1073739776,
      'VTS_01_8.VOB': 23877632,
    });
    assert.equal(contentHashOf(files), '76D0457408AAC02877621AF15F11BD41');
    assert.equal(contentHashOf([...files].reverse()), '76D0457408AAC02877621AF15F11BD41', 'the order given does not matter');
  });

  it('gives the optical-disc-manifest vectors for a synthetic DVD and Blu-ray, and the recomputed one of The Office S4D1', () => {
    const dvd = named({ 'VIDEO_TS.IFO': 16384, 'VIDEO_TS.BUP': 16384, 'VTS_01_0.IFO': 32768, 'VTS_01_0.BUP': 32768, 'VTS_02_0.IFO': 65536, 'VTS_02_0.BUP': 65536, 'VTS_02_1.VOB': 1073709056 });
    assert.equal(contentHashOf(dvd), '3C26420DF046543F2332262F545351E5');
    assert.equal(contentHashOf(named({ '01000.m2ts': 27027738624 })), '0633802636ACA37258C27FBDAEB527A6');
    // TheDiscDb/web code/TheDiscDb.UnitTests/TestData/sample-disc-log.txt HSH lines (00000.m2ts … 00013.m2ts);
    // the value is recomputed (the data repository holds only a legacy 16-hex hash for this disc).
    const office = [119961600, 36630528, 6488064, 313921536, 233472, 10334693376, 2776498176, 10347927552, 2473807872, 10367877120, 1564176384, 39561216, 233472, 12288];
    assert.equal(contentHashOf(office.map((size, i) => ({ name: `${String(i).padStart(5, '0')}.m2ts`, size }))), '5F649D4FEED70FD32A7932A987E26E0C');
  });

  it('is null without files (TheDiscDB never hashes that case)', () => {
    assert.equal(contentHashOf([]), null);
  });

  it('takes the .m2ts files directly in BDMV/STREAM (any case; not SSIF/, not BACKUP/), or every file directly in VIDEO_TS', async () => {
    const bd = tree({
      'BDMV/STREAM/00000.m2ts': Buffer.alloc(300),
      'BDMV/STREAM/00001.M2TS': Buffer.alloc(100),
      'BDMV/STREAM/00002.clpi': Buffer.alloc(7),
      'BDMV/STREAM/SSIF/00000.ssif': Buffer.alloc(50),
      'BDMV/STREAM/SSIF/00003.m2ts': Buffer.alloc(50),
      'BDMV/BACKUP/STREAM/00009.m2ts': Buffer.alloc(70),
    });
    assert.equal(await readContentHash(folderTree(bd), 'bluray'), contentHashOf(named({ '00000.m2ts': 300, '00001.M2TS': 100 })));
    const dvd = tree({ 'VIDEO_TS/VIDEO_TS.IFO': Buffer.alloc(20), 'VIDEO_TS/VTS_01_1.VOB': Buffer.alloc(40), 'VIDEO_TS/sub/x': 'x', 'AUDIO_TS/a': 'a' });
    assert.equal(await readContentHash(folderTree(dvd), 'dvd'), contentHashOf(named({ 'VIDEO_TS.IFO': 20, 'VTS_01_1.VOB': 40 })));
    assert.equal(await readContentHash(folderTree(dvd), 'bluray'), null, 'no BDMV/STREAM');
  });
});

describe('file fingerprint (matrix256 v1)', () => {
  it('gives the matrix256 conformance vectors', () => {
    assert.equal(fileFingerprintOf([]), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(fileFingerprintOf([{ path: 'a', size: 0 }]), '576ada568edb673473287643d06ca9b763d81b712a080388fbf445bf580dab3d');
    assert.equal(fileFingerprintOf([{ path: 'hello.txt', size: 6 }]), '00c8e12fff1075e74071d424a34ec9e89e2ffc96c5c4ec6a5bf7a3b5941b3324');
    // a-b sorts before a/b by bytes (0x2D < 0x2F), in whichever order they come.
    const dashSlash = '82d1301cbc45799e538f19a52840b9ff5a9ca797d80c5e52b4d98c4750d2b5e3';
    assert.equal(fileFingerprintOf([{ path: 'a/b', size: 0 }, { path: 'a-b', size: 0 }]), dashSlash);
    assert.equal(fileFingerprintOf([{ path: 'a-b', size: 0 }, { path: 'a/b', size: 0 }]), dashSlash);
  });

  it('gives the optical-disc-manifest Blu-ray and DVD vectors', () => {
    const bd = [
      { path: 'BDMV/STREAM/01000.m2ts', size: 27027738624 },
      { path: 'AACS/Unit_Key_RO.inf', size: 524288 },
      { path: 'BDMV/PLAYLIST/00800.mpls', size: 298 },
    ];
    assert.equal(fileFingerprintOf(bd), '3643553d77a85c39ce21a1ed54557f6e91480b90582e80d9829c981a2bb80121');
    const dvd = named({ 'VIDEO_TS.IFO': 16384, 'VIDEO_TS.BUP': 16384, 'VTS_01_0.IFO': 32768, 'VTS_01_0.BUP': 32768, 'VTS_02_0.IFO': 65536, 'VTS_02_0.BUP': 65536, 'VTS_02_1.VOB': 1073709056 });
    assert.equal(fileFingerprintOf(dvd.map((f) => ({ path: `VIDEO_TS/${f.name}`, size: f.size }))), '35465a89b9cbc90a89dcdd20ba72c4098931f26f1b0f4484673c6fd15a946616');
  });

  it('normalises paths to NFC, and gives no fingerprint when two paths are one after that', () => {
    const composed = 'Am\u00e9lie.txt';
    const decomposed = 'Ame\u0301lie.txt';
    assert.equal(fileFingerprintOf([{ path: decomposed, size: 3 }]), fileFingerprintOf([{ path: composed, size: 3 }]));
    assert.equal(fileFingerprintOf([{ path: composed, size: 3 }, { path: decomposed, size: 3 }]), null);
  });

  it('walks every regular file of a tree with its size, hidden files included, symbolic links left out', async () => {
    const dir = tree({ 'BDMV/index.bdmv': 'INDX0200', 'BDMV/STREAM/00000.m2ts': Buffer.alloc(1000), '.hidden': 'h', 'AACS/DUPLICATE/x': '' });
    fs.symlinkSync('BDMV/index.bdmv', path.join(dir, 'link'));
    fs.symlinkSync('BDMV', path.join(dir, 'dirlink'));
    const files = await listDiscFiles(folderTree(dir));
    assert.deepEqual(
      files?.sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: '.hidden', size: 1 },
        { path: 'AACS/DUPLICATE/x', size: 0 },
        { path: 'BDMV/index.bdmv', size: 8 },
        { path: 'BDMV/STREAM/00000.m2ts', size: 1000 },
      ],
    );
    assert.equal(await listDiscFiles(folderTree(dir), 3), null, 'more files than allowed: no list');
    assert.equal(await listDiscFiles(folderTree(dir), 100, Date.now() - 1), null, 'past the deadline: no list');
  });
});

describe('AACS disc id', () => {
  it('is the SHA-1 of Unit_Key_RO.inf in upper-case hex (TheDiscDB AacsDiscIdTests)', () => {
    assert.equal(aacsDiscIdOf(Buffer.from('hello')), 'AAF4C61DDCC5E8A2DABEDE0F3B482CD9AEA9434D');
    assert.equal(aacsDiscIdOf(Buffer.alloc(0)), 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709');
  });

  it('reads AACS/Unit_Key_RO.inf, else AACS/DUPLICATE/Unit_Key_RO.inf, names in any case', async () => {
    const key = Buffer.alloc(524288, 0x5a);
    const dup = Buffer.alloc(4096, 0x33);
    assert.equal(await readAacsDiscId(folderTree(tree({ 'AACS/Unit_Key_RO.inf': key, 'AACS/DUPLICATE/Unit_Key_RO.inf': dup }))), aacsDiscIdOf(key));
    assert.equal(await readAacsDiscId(folderTree(tree({ 'aacs/duplicate/UNIT_KEY_RO.INF': dup }))), aacsDiscIdOf(dup));
    assert.equal(await readAacsDiscId(folderTree(tree({ 'BDMV/index.bdmv': 'INDX0200' }))), null);
  });
});

describe('DVD disc id (libdvdread DVDDiscID)', () => {
  it('hashes VIDEO_TS.IFO and the counted title sets\' IFOs, skipping a missing one', () => {
    const vmg = ifo('VMG', 2, 1, 3);
    const vts1 = ifo('VTS', 3, 2);
    const vts3 = ifo('VTS', 1, 3);
    assert.equal(dvdDiscIdOf(new Map([[0, vmg], [1, vts1], [3, vts3], [4, ifo('VTS', 1, 4)]])), md5(vmg, vts1, vts3), 'VTS_04 is beyond the count');
  });

  it('hashes at most 10 files and whole sectors only; without a VMG there is no id', () => {
    const vmg = ifo('VMG', 1, 1, 12);
    const ifos = new Map([[0, vmg]]);
    for (let i = 1; i <= 12; i++) ifos.set(i, ifo('VTS', 1, i));
    assert.equal(dvdDiscIdOf(ifos), md5(...[...Array(10).keys()].map((i) => ifos.get(i) as Buffer)));
    const odd = Buffer.concat([ifo('VMG', 1, 1, 0), Buffer.from('tail')]);
    assert.equal(dvdDiscIdOf(new Map([[0, odd]])), md5(odd.subarray(0, 2048)), 'libdvdread reads size / 2048 sectors');
    assert.equal(dvdDiscIdOf(new Map([[0, Buffer.alloc(4096, 1)]])), null);
    assert.equal(dvdDiscIdOf(new Map()), null);
    assert.deepEqual([0, 1, 12].map(ifoName), ['VIDEO_TS.IFO', 'VTS_01_0.IFO', 'VTS_12_0.IFO']);
  });

  it('reads the IFOs from a disc tree', async () => {
    const vmg = ifo('VMG', 2, 9, 2);
    const vts1 = ifo('VTS', 4, 8);
    const vts2 = ifo('VTS', 1, 7);
    const dir = tree({ 'VIDEO_TS/VIDEO_TS.IFO': vmg, 'VIDEO_TS/VTS_01_0.IFO': vts1, 'VIDEO_TS/VTS_02_0.IFO': vts2, 'VIDEO_TS/VTS_02_0.BUP': vts2 });
    assert.equal(await readDvdDiscId(folderTree(dir)), md5(vmg, vts1, vts2));
    const ids = await readDiscIds(folderTree(dir), 'dvd');
    assert.equal(ids.dvd_disc_id, md5(vmg, vts1, vts2));
    assert.equal(ids.aacs_disc_id, null);
    assert.equal(ids.content_hash, contentHashOf(named({ 'VIDEO_TS.IFO': vmg.length, 'VTS_01_0.IFO': vts1.length, 'VTS_02_0.IFO': vts2.length, 'VTS_02_0.BUP': vts2.length })));
    assert.match(ids.file_fingerprint ?? '', /^[0-9a-f]{64}$/);
  });
});

describe('identity key', () => {
  const ids = (over: Partial<DiscIds>): DiscIds => ({ dvd_disc_id: null, aacs_disc_id: null, content_hash: null, file_fingerprint: null, ...over });
  const all = ids({ dvd_disc_id: 'D'.repeat(32), aacs_disc_id: 'A'.repeat(40), content_hash: 'C'.repeat(32), file_fingerprint: 'f'.repeat(64) });

  it('takes the first id that could be read, by disc kind, else the label fingerprint', () => {
    assert.equal(identityKey('dvd', all, 'label'), `dvd:${'D'.repeat(32)}`);
    assert.equal(identityKey('dvd', ids({ content_hash: 'C'.repeat(32), file_fingerprint: 'f'.repeat(64) }), 'label'), 'label', 'a DVD is keyed on its DVD id only');
    assert.equal(identityKey('bluray', all, 'label'), `aacs:${'A'.repeat(40)}`);
    assert.equal(identityKey('uhd', all, 'label'), `aacs:${'A'.repeat(40)}`);
    assert.equal(identityKey('bluray', ids({ file_fingerprint: 'f'.repeat(64) }), 'label'), `files:${'f'.repeat(64)}`);
    assert.equal(identityKey('bluray', ids({ content_hash: 'C'.repeat(32) }), 'label'), 'label', 'the content hash is no key');
    assert.equal(identityKey('cd', null, 'label', 'Dr2EtzSM39D9_zS0uLw6CQcfvEw-'), 'mb:Dr2EtzSM39D9_zS0uLw6CQcfvEw-');
    assert.equal(identityKey('cd', null, 'label', null), 'label');
    assert.equal(identityKey('unknown', all, 'label'), 'label');
    assert.equal(identityKey('bluray', null, 'label'), 'label');
  });

  it('is what makeDiscInfo puts in fingerprint, with the label fingerprint and the ids beside it', () => {
    const identity = { label: 'HEAT', title: 'Heat', year: null, layout: 'bluray' as const, uhdMarker: false, ids: all };
    const disc = makeDiscInfo(identity, 25e9, '/x.iso');
    assert.deepEqual([disc.fingerprint, disc.label_fingerprint, disc.ids], [`aacs:${'A'.repeat(40)}`, discFingerprint('HEAT', 25e9), all]);
  });
});

describe('image drives', () => {
  it('tells apart two DVD folders with the same label and size by their IFO content; the label fingerprint stays the same', async () => {
    const make = (fill: number) => {
      const drive = path.join(root, `drive-${++n}`);
      tree({ 'VIDEO_TS/VIDEO_TS.IFO': ifo('VMG', 1, fill, 1), 'VIDEO_TS/VTS_01_0.IFO': ifo('VTS', 2, fill), 'VIDEO_TS/VTS_01_1.VOB': Buffer.alloc(5000) }, path.join(drive, 'SAME_LABEL'));
      return drive;
    };
    const [a, b] = await Promise.all([readImageDrive(make(1)), readImageDrive(make(2))]);
    assert.ok(a && b);
    assert.deepEqual([a.disc.label, a.disc.size_bytes], [b.disc.label, b.disc.size_bytes]);
    assert.equal(a.disc.label_fingerprint, b.disc.label_fingerprint);
    assert.equal(a.disc.label_fingerprint, discFingerprint('SAME_LABEL', a.disc.size_bytes));
    assert.match(a.disc.fingerprint, /^dvd:[0-9A-F]{32}$/);
    assert.notEqual(a.disc.fingerprint, b.disc.fingerprint);
    assert.equal(a.disc.ids?.content_hash, b.disc.ids?.content_hash, 'the same sizes: the same content hash');
  });

  it('keys a Blu-ray folder on its AACS id, and one without AACS on its file fingerprint; reads it again when a file changes', async () => {
    const drive = path.join(root, `drive-${++n}`);
    const folder = tree({ 'BDMV/index.bdmv': 'INDX0200', 'BDMV/STREAM/00000.m2ts': Buffer.alloc(6144) }, path.join(drive, 'MY_BD'));
    const plain = await readImageDrive(drive);
    assert.equal(plain?.disc.type, 'bluray');
    assert.equal(plain?.disc.fingerprint, `files:${plain?.disc.ids?.file_fingerprint}`);
    assert.equal(plain?.disc.ids?.content_hash, contentHashOf(named({ '00000.m2ts': 6144 })));
    assert.equal((await readImageDrive(drive))?.disc, plain?.disc, 'an unchanged folder is not read again');
    const key = Buffer.alloc(4096, 0x42);
    tree({ 'AACS/Unit_Key_RO.inf': key }, folder);
    const withAacs = await readImageDrive(drive);
    assert.equal(withAacs?.disc.fingerprint, `aacs:${aacsDiscIdOf(key)}`);
    assert.equal(withAacs?.disc.ids?.aacs_disc_id, aacsDiscIdOf(key));
  });
});
