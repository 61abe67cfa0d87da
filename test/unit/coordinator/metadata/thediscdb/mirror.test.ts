import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { checkMirrorFolder, discKeys, indexMirror, TheDiscDbMirror } from '../../../../../coordinator/metadata/thediscdb/mirror.js';
import { validateSetting, SettingsError } from '../../../../../coordinator/system/settings-store.js';
import { Logger } from '../../../../../shared/log.js';
import { buildMirror, ODYSSEY_DVD_ID, ODYSSEY_HASH, OFFICE_LEGACY_HASH, RENTAL_DVD_ID, TDDB_FIXTURES } from '../../../../fixtures/thediscdb-mirror.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-tddb-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('TheDiscDB offline copy: the index', () => {
  const root = buildMirror(path.join(tmp, 'clone'));

  it('indexes every disc file by ContentHash and GlobalDiscId, resolving a .ref and skipping one whose disc is missing', async () => {
    const index = await indexMirror(root);
    assert.equal(index.dataDir, path.join(root, 'data'));
    assert.deepEqual([index.discs, index.refs, index.danglingRefs, index.withoutHash, index.unreadable], [3, 2, 1, 1, 0]);
    assert.deepEqual(
      index.byHash.get(ODYSSEY_HASH)?.map((d) => [path.basename(d.releaseDir), path.relative(index.dataDir, d.discFile), d.globalDiscId]),
      [
        ['2011-dvd', path.join('movie', '2001 A Space Odyssey (1968)', '2011-dvd', 'disc01.json'), ODYSSEY_DVD_ID],
        // The .ref plays the 2011 DVD's disc but keeps its own disc id, as TheDiscDB's importer does.
        ['2011-dvd-rental', path.join('movie', '2001 A Space Odyssey (1968)', '2011-dvd', 'disc01.json'), RENTAL_DVD_ID],
      ],
    );
    assert.equal(index.byDiscId.get(ODYSSEY_DVD_ID)?.length, 1);
    assert.equal(index.byDiscId.get(RENTAL_DVD_ID)?.length, 1);
    assert.equal(index.byHash.has(OFFICE_LEGACY_HASH), false, 'a legacy 16-hex hash never equals a computed one');
    assert.deepEqual([...index.byHash.keys()], [ODYSSEY_HASH]);
  });

  it('takes the folder itself when it is the data folder, not the clone', async () => {
    const index = await indexMirror(path.join(root, 'data'));
    assert.equal(index.discs, 3);
  });

  it('reads a disc file only up to its title list for the keys', async () => {
    assert.deepEqual(await discKeys(path.join(TDDB_FIXTURES, '2001-2011-dvd-disc01.json')), { contentHash: ODYSSEY_HASH, globalDiscId: ODYSSEY_DVD_ID });
    assert.deepEqual(await discKeys(path.join(TDDB_FIXTURES, 'the-office-2021-season-4-blu-ray-disc01.json')), { contentHash: OFFICE_LEGACY_HASH, globalDiscId: null });
    // Keys after a long title list (not the files' order, but legal JSON): the whole file is parsed.
    const odd = path.join(tmp, 'odd.json');
    const titles = Array.from({ length: 400 }, (_, i) => ({ Index: i, SourceFile: String(i).padStart(2, '0'), Duration: '0:00:10' }));
    fs.writeFileSync(odd, JSON.stringify({ Titles: titles, ContentHash: ODYSSEY_HASH.toLowerCase() }, null, 2));
    assert.deepEqual(await discKeys(odd), { contentHash: ODYSSEY_HASH, globalDiscId: null });
  });
});

describe('TheDiscDB offline copy: the watched mirror', () => {
  it('finds a disc with its release and media item, follows the setting, and sees a change of the copy', async () => {
    const root = buildMirror(path.join(tmp, 'watched'));
    let folder = root;
    const mirror = new TheDiscDbMirror(() => folder, new Logger('t', true), 60_000);
    assert.equal(mirror.status()?.ready, false);
    await mirror.refresh();
    assert.deepEqual(mirror.status(), { folder: root, ready: true, discs: 3, error: null });

    const byHash = await mirror.find('contentHash', ODYSSEY_HASH.toLowerCase());
    assert.deepEqual(
      byHash.map((e) => [e.mediaItem.title, e.mediaItem.year, e.mediaItem.tmdb, e.release.slug, e.disc.globalDiscId, e.disc.titles.length]),
      [
        ['2001: A Space Odyssey', 1968, '62', '2011-dvd', ODYSSEY_DVD_ID, 8],
        ['2001: A Space Odyssey', 1968, '62', '2011-dvd-rental', RENTAL_DVD_ID, 8],
      ],
    );
    assert.deepEqual(
      (await mirror.find('globalDiscId', RENTAL_DVD_ID)).map((e) => e.release.title),
      ['DVD (rental)'],
    );
    assert.deepEqual(await mirror.find('contentHash', OFFICE_LEGACY_HASH), []);

    // A new title appears (a git pull, a copy): the next look at the folder indexes it.
    const office = path.join(root, 'data', 'series', 'The Office (2005)');
    const added = path.join(root, 'data', 'series', 'The Office US (2005)', '2021-season-4-blu-ray');
    fs.mkdirSync(added, { recursive: true });
    fs.copyFileSync(path.join(office, 'metadata.json'), path.join(path.dirname(added), 'metadata.json'));
    const disc = JSON.parse(fs.readFileSync(path.join(office, '2021-season-4-blu-ray', 'disc01.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(added, 'disc01.json'), JSON.stringify({ ...disc, ContentHash: '5F649D4FEED70FD32A7932A987E26E0C' }, null, 2));
    await mirror.refresh();
    assert.equal(mirror.status()?.discs, 4);
    assert.deepEqual(
      (await mirror.find('contentHash', '5F649D4FEED70FD32A7932A987E26E0C')).map((e) => [e.mediaItem.title, e.mediaItem.type, e.release.slug]),
      [['The Office', 'Series', '2021-season-4-blu-ray']],
    );

    // The setting emptied: no copy, nothing found.
    folder = '';
    await mirror.refresh();
    assert.equal(mirror.status(), null);
    assert.deepEqual(await mirror.find('contentHash', ODYSSEY_HASH), []);

    // A folder that went away: said in the status, nothing found.
    folder = path.join(tmp, 'gone');
    await mirror.refresh();
    assert.match(mirror.status()?.error ?? '', /does not exist/);
    assert.deepEqual(await mirror.find('contentHash', ODYSSEY_HASH), []);
  });

  it('polls on an unref-ed timer and stops', async () => {
    const mirror = new TheDiscDbMirror(() => buildMirror(path.join(tmp, 'polled')), new Logger('t', true), 10);
    mirror.start();
    await mirror.refresh();
    mirror.stop();
    assert.equal(mirror.status()?.ready, true);
  });
});

describe('the thediscdbMirror setting', () => {
  it('takes an absolute path or empty, and refuses anything else in words', () => {
    assert.equal(validateSetting('thediscdbMirror', ' /srv/thediscdb-data '), '/srv/thediscdb-data');
    assert.equal(validateSetting('thediscdbMirror', ''), '');
    assert.throws(() => validateSetting('thediscdbMirror', 'thediscdb/data'), (err: Error) => err instanceof SettingsError && /must be an absolute folder path, got "thediscdb\/data"/.test(err.message));
    assert.throws(() => validateSetting('thediscdbMirror', 7), /must be a folder path/);
  });

  it('is refused on save when the folder does not exist or is a file', async () => {
    assert.equal(await checkMirrorFolder(tmp), null);
    assert.equal(await checkMirrorFolder(''), null);
    assert.equal(await checkMirrorFolder(path.join(tmp, 'nothere')), `thediscdbMirror: the folder ${path.join(tmp, 'nothere')} does not exist`);
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'x');
    assert.equal(await checkMirrorFolder(file), `thediscdbMirror: ${file} is not a folder`);
  });
});
