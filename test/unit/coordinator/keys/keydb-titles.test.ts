import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { KeyStore } from '../../../../coordinator/keys/key-store.js';
import { keydbEntryCount, keydbIdentity, keydbTitle, keydbTitleIndex, KeydbTitles } from '../../../../coordinator/keys/keydb-titles.js';
import { labelIdentity } from '../../../../coordinator/metadata/disc-identity.js';
import type { DiscInfo } from '../../../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-keydb-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const INCEPTION = '0123456789ABCDEF0123456789ABCDEF01234567';
const AVATAR = 'A1B2C3D4E5F60718293A4B5C6D7E8F9011223344';
const LOWER = 'fedcba9876543210fedcba9876543210fedcba98';
const SHOW = '1111111111111111111111111111111111111111';
const NO_TITLE = '2222222222222222222222222222222222222222';

/** KEYDB.cfg as FindVUK writes it: a comment header, key lines that are no disc entries, then disc entries. */
const KEYDB = [
  '; KEYDB.cfg, FindVUK Online Database',
  '; 0x9999999999999999999999999999999999999999 = COMMENTED OUT | D | 2010-01-01',
  '| DK | DEVICE_KEY 0x810827A76E5B2CC8F4C1B4FA1D1F3E8B | DEVICE_NODE 0x0800 | KEY_UV 0x00000400 | KEY_U_MASK_SHIFT 0x17',
  '| PK | 0x09F911029D74E35BD84156C5635688C0',
  '',
  `0x${INCEPTION} = INCEPTION (2010) | D | 2010-12-03 | M | 0x00112233445566778899AABBCCDDEEFF | I | 0x0F1E2D3C4B5A69788796A5B4C3D2E1F0 | V | 0xAABBCCDDEEFF00112233445566778899 | U | 1-0x0123456789ABCDEF0123456789ABCDEF`,
  `0x${AVATAR}   =   Avatar - Extended Collector's Edition  | D | 2010-11-16 | V | 0x00000000000000000000000000000000`,
  `0x${LOWER} = the_dark_knight | D | 2008-12-09 | V | 0x11111111111111111111111111111111`,
  `0x${SHOW} = BREAKING BAD SEASON 2 DISC 1 | D | 2009-03-17 | V | 0x22222222222222222222222222222222`,
  `0x${NO_TITLE} =  | D | 2012-01-01 | V | 0x33333333333333333333333333333333`,
  `# 0x${NO_TITLE} = HASH COMMENT | D | 2012-01-01`,
  `0x${INCEPTION} = A LATER DUPLICATE | D | 2011-01-01 | V | 0x44444444444444444444444444444444`,
].join('\r\n');

function bluray(extra: Partial<DiscInfo> = {}): DiscInfo {
  return { label: 'BDROM', title: 'Bdrom', year: null, type: 'bluray', size_bytes: 40_000_000_000, fingerprint: 'aacs:x', source: '/dev/sr0', audio_tracks: null, ...extra };
}

describe('KEYDB.cfg titles (pure)', () => {
  it('finds the title of a disc id on realistic lines: comments and key lines skipped, the fields after the first | dropped', () => {
    assert.equal(keydbTitle(KEYDB, INCEPTION), 'INCEPTION (2010)');
    assert.equal(keydbTitle(KEYDB, AVATAR), "Avatar - Extended Collector's Edition", 'trimmed on both sides');
    assert.equal(keydbTitle(KEYDB, SHOW), 'BREAKING BAD SEASON 2 DISC 1');
    assert.equal(keydbTitle(KEYDB, '9999999999999999999999999999999999999999'), null, 'a commented-out entry is no entry');
  });

  it('matches the hex in either case, in the file and in the id asked for', () => {
    assert.equal(keydbTitle(KEYDB, LOWER.toUpperCase()), 'the_dark_knight');
    assert.equal(keydbTitle(KEYDB, INCEPTION.toLowerCase()), 'INCEPTION (2010)');
    assert.equal(keydbTitle(KEYDB, `0x${INCEPTION}`), 'INCEPTION (2010)');
  });

  it('answers null for a missing id, an empty title, an id that is no AACS id and an empty file', () => {
    assert.equal(keydbTitle(KEYDB, '3333333333333333333333333333333333333333'), null);
    assert.equal(keydbTitle(KEYDB, NO_TITLE), null);
    assert.equal(keydbTitle(KEYDB, INCEPTION.slice(0, 32)), null);
    assert.equal(keydbTitle(KEYDB, ''), null);
    assert.equal(keydbTitle('', INCEPTION), null);
    assert.equal(keydbTitle(`0x${INCEPTION.slice(0, 39)} = SHORT ID | D | 2010-01-01`, `${INCEPTION.slice(0, 39)}0`), null);
  });

  it('indexes every disc entry once, the first with a title winning', () => {
    const index = keydbTitleIndex(`\uFEFF${KEYDB}`);
    assert.deepEqual([...index.keys()].sort(), [INCEPTION, AVATAR, LOWER.toUpperCase(), SHOW].sort());
    assert.equal(index.get(INCEPTION), 'INCEPTION (2010)');
  });

  it('makes a label identity of the title: year from "(2010)", underscores to spaces, a season as a series', () => {
    const d = bluray();
    const movie = keydbIdentity(d, labelIdentity(d), 'INCEPTION (2010)');
    assert.deepEqual([movie.title, movie.year, movie.kind, movie.season], ['INCEPTION', 2010, 'movie', null]);
    const plain = keydbIdentity(d, labelIdentity(d), 'the_dark_knight');
    assert.deepEqual([plain.title, plain.year, plain.kind], ['the dark knight', null, 'movie']);
    const series = keydbIdentity(d, labelIdentity(d), 'BREAKING BAD SEASON 2 DISC 1');
    assert.deepEqual([series.title, series.kind, series.season, series.disc_number], ['BREAKING BAD', 'series', 2, 1]);
    const labelled = bluray({ title: 'Show S3 D2', year: 2001 });
    const kept = keydbIdentity(labelled, labelIdentity(labelled), 'SOME SHOW');
    assert.deepEqual([kept.title, kept.year, kept.kind, kept.season, kept.disc_number], ['SOME SHOW', 2001, 'series', 3, 2], 'the label\'s year and season stay when the title has none');
  });
});

describe('KEYDB.cfg titles of the stored file', () => {
  it('reads the file once per change, re-reads after it changes, and names nothing without a file', async () => {
    const store = new KeyStore(path.join(root, 'data'));
    const titles = new KeydbTitles(store.keydbFile);
    assert.equal(await titles.titleFor(INCEPTION), null, 'no KEYDB.cfg yet');
    await store.setKeydb(KEYDB);
    assert.equal(await titles.titleFor(INCEPTION), 'INCEPTION (2010)');
    assert.equal(await titles.titleFor(AVATAR.toLowerCase()), "Avatar - Extended Collector's Edition");
    assert.equal(await titles.titleFor('3333333333333333333333333333333333333333'), null);
    await Promise.all([titles.titleFor(SHOW), titles.titleFor(LOWER)]);
    assert.equal(titles.reads, 1, 'one read for every lookup of the same file');

    await store.setKeydb(`0x${INCEPTION} = INCEPTION REMASTERED (2010) | D | 2020-01-01 | V | 0x00\n`);
    assert.equal(await titles.titleFor(INCEPTION), 'INCEPTION REMASTERED (2010)');
    assert.equal(await titles.titleFor(AVATAR), null, 'the old index is gone');
    assert.equal(titles.reads, 2);

    // Same size, only the modification time differs: still a change.
    const sameSize = `0x${INCEPTION} = INCEPTION REMASTERED (2011) | D | 2020-01-01 | V | 0x00\n`;
    fs.writeFileSync(store.keydbFile, sameSize);
    fs.utimesSync(store.keydbFile, new Date(), new Date(Date.now() + 5000));
    assert.equal(await titles.titleFor(INCEPTION), 'INCEPTION REMASTERED (2011)');
    assert.equal(titles.reads, 3);

    await store.removeKeydb();
    assert.equal(await titles.titleFor(INCEPTION), null, 'a removed file names no disc');
  });

  it('gives a Blu-ray or UHD with that AACS id its identity, and nothing to a DVD or a disc without the id', async () => {
    const store = new KeyStore(path.join(root, 'data-2'));
    await store.setKeydb(KEYDB);
    const titles = new KeydbTitles(store.keydbFile);
    const ids = { dvd_disc_id: null, aacs_disc_id: INCEPTION, content_hash: null, file_fingerprint: null };
    const uhd = bluray({ type: 'uhd', ids });
    assert.equal((await titles.identityFor(uhd, labelIdentity(uhd)))?.title, 'INCEPTION');
    const dvd = bluray({ type: 'dvd', ids });
    assert.equal(await titles.identityFor(dvd, labelIdentity(dvd)), null);
    const old = bluray();
    assert.equal(await titles.identityFor(old, labelIdentity(old)), null);
  });
});

describe('KEYDB.cfg entries (issue 38: a text file was "installed" with 1 entry)', () => {
  it('counts disc entries (with or without a title) and key lines, not comments, blank lines or other text', () => {
    const content = [
      '; KEYDB.cfg',
      '| DK | DEVICE_KEY 0x00112233 | DEVICE_NODE 0x0800 | KEY_UV 0x00000400 | KEY_U_MASK_SHIFT 0x17',
      '| PK | 0x00112233445566778899AABBCCDDEEFF',
      '| HC | HOST_PRIV_KEY 0x0011 | HOST_CERT 0x0203',
      '0x0123456789ABCDEF0123456789ABCDEF01234567 = MY DISC | D | 2020-01-01 | V | 0x00112233',
      '0x0123456789abcdef0123456789abcdef01234568 = | V | 0x00112233',
      '',
      '# another comment',
    ].join('\r\n');
    assert.equal(keydbEntryCount(content), 5);
  });

  it('finds none in a text file of another kind', () => {
    assert.equal(keydbEntryCount('Einkaufsliste\nMilch\nBrot\n'), 0);
    assert.equal(keydbEntryCount('0x0123 = too short an id\n'), 0);
    assert.equal(keydbEntryCount(''), 0);
  });
});
