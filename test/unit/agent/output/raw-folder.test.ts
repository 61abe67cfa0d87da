import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { holdsRawMedia, removeRawFolderWithoutMedia } from '../../../../agent/output/raw-folder.js';
import { isRawMediaFile } from '../../../../shared/raw-media.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-raw-folder-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('raw folder after a failed rip', () => {
  it('knows the video and audio files of a rip by their extension', () => {
    for (const name of ['title_t00.mkv', 'B.M2TS', 'VTS_01_1.VOB', 'a.mpg', 'a.mp4', '00001.ts', '01 - Song.flac', 'track01.cdda.wav']) assert.ok(isRawMediaFile(name), name);
    for (const name of ['abcde.conf', 'mkv', '.mkv', 'title.mkv.part', 'chapters.ffmeta', 'x.txt']) assert.ok(!isRawMediaFile(name), name);
  });

  it('removes a folder without a video or audio file, keeps one with a partial rip', async () => {
    const empty = path.join(root, 'job-empty');
    fs.mkdirSync(path.join(empty, '.ripwerk-dvd-x'), { recursive: true });
    fs.writeFileSync(path.join(empty, 'abcde.conf'), 'x');
    assert.equal(await holdsRawMedia(empty), false);
    assert.equal(await removeRawFolderWithoutMedia(empty), true);
    assert.ok(!fs.existsSync(empty));

    const partial = path.join(root, 'job-partial');
    fs.mkdirSync(path.join(partial, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(partial, 'sub', 'title_t01.mkv'), Buffer.alloc(1024));
    assert.equal(await removeRawFolderWithoutMedia(partial), false);
    assert.ok(fs.existsSync(path.join(partial, 'sub', 'title_t01.mkv')));

    assert.equal(await removeRawFolderWithoutMedia(path.join(root, 'never-made')), false);
  });
});
