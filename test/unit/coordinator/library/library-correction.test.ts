import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { planCorrection, renamedStreams } from '../../../../coordinator/library/library-correction.js';
import type { JobRow } from '../../../../coordinator/jobs/jobs-store.js';

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-correction-')));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** A finished job whose output folder and files are on disk. */
function finished(dir: string, files: string[], meta: JobRow['meta'], title = 'Disc'): JobRow {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of files) fs.writeFileSync(path.join(dir, f), '');
  return { id: `job-${path.basename(dir)}`, title, output_path: dir, meta: { ...meta, output_files: files } } as unknown as JobRow;
}

describe('a correction renames to the names a rip writes (issue 39)', () => {
  it('a movie: "/" before a release tag joined, as the agent names it (AC/DC → ACDC)', async () => {
    const job = finished(path.join(root, 'Filme', 'Let There Be Rock (1980)'), ['Let There Be Rock (1980).mkv'], { year: 1980 }, 'Let There Be Rock');
    const plan = await planCorrection(job, { title: 'AC/DC: Let There Be Rock', year: 1980, kind: 'movie', season: null }, root);
    assert.equal(path.basename(plan.toDir), 'ACDC - Let There Be Rock (1980)');
    assert.deepEqual(plan.files, ['ACDC - Let There Be Rock (1980).mkv']);
  });

  it('a series whose name Jellyfin strips from "Season 01" gets S01, as a rip of it does', async () => {
    const job = finished(path.join(root, 'Serien', 'Disc', 'Season 01'), ['Disc - S01E01.mkv'], { series: 'Disc', season: 1 });
    const plan = await planCorrection(job, { title: 'On', year: null, kind: 'series', season: 1 }, root);
    assert.equal(path.relative(root, plan.toDir), path.join('Serien', 'On', 'S01'));
    assert.deepEqual(plan.files, ['On - S01E01.mkv']);
  });
});

describe('a correction renames the stream list too (issue 38)', () => {
  it('each file\'s streams take its new name; a file the correction did not rename keeps its entry', async () => {
    const job = finished(path.join(root, 'Filme', 'Heet (1995)'), ['Heet (1995).mkv', 'Heet (1995) - Trailer-trailer.mkv'], {}, 'Heet');
    const plan = await planCorrection(job, { title: 'Heat', year: 1995, kind: 'movie', season: null }, root);
    assert.deepEqual(plan.files, ['Heat (1995).mkv', 'Heat (1995) - Trailer-trailer.mkv']);
    const audio = [{ index: 1, language: 'eng', codec: 'ac3', channels: 6 }];
    const streams = [
      { file: 'Heet (1995).mkv', audio, subtitles: [] },
      { file: 'Heet (1995) - Trailer-trailer.mkv', audio: [], subtitles: [] },
      { file: 'unrelated.mkv', audio: [], subtitles: [] },
    ] as never[];
    assert.deepEqual(
      renamedStreams(streams, job.meta?.output_files ?? [], plan.files).map((s: { file: string }) => s.file),
      ['Heat (1995).mkv', 'Heat (1995) - Trailer-trailer.mkv', 'unrelated.mkv'],
    );
    // A file below the folder, its entry named as the worker names it (its own name).
    assert.deepEqual(renamedStreams([{ file: 'Heet (1995) - Extra.mkv', audio: [], subtitles: [] }], ['Extras/Heet (1995) - Extra.mkv'], ['Extras/Heat (1995) - Extra.mkv'])[0].file, 'Heat (1995) - Extra.mkv');
  });
});
