import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { claimFileName, finishedEncode, freeFileName, moveFile, OutputLedger, outputFileName, outputLedgerFile, OutsideWrite, planOutput, releaseFileName, removeIfEmpty, removeOwnOutputs, type OutputTarget } from '../../../../agent/output/output-folder.js';
import { keepOriginals } from '../../../../agent/output/keep-original.js';
import { ORIGINALS_FOLDER, originalsDir } from '../../../../shared/originals.js';
import { PRIVATE_PREFIX } from '../../../../agent/output/private-encode.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-output-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
function target(): string {
  const dir = path.join(root, `t${++n}`);
  fs.mkdirSync(dir);
  return dir;
}

function movie(targetDir: string, title: string, year: number | null, jobId = 'abcdef1234567890'): OutputTarget {
  return { target_dir: targetDir, title, year, series: null, season: null, job_id: jobId };
}

describe('planOutput', () => {
  it('creates <target>/Title (Year) and uses it as the file base', async () => {
    const t = target();
    const plan = await planOutput(movie(t, 'Heat', 1995));
    assert.deepEqual(plan, { dir: path.join(t, 'Heat (1995)'), fileBase: 'Heat (1995)' });
    assert.ok(fs.statSync(plan.dir).isDirectory());
  });

  it('never doubles the year', async () => {
    const t = target();
    assert.equal(path.basename((await planOutput(movie(t, 'Heat (1995)', 1995))).dir), 'Heat (1995)');
    const t2 = target();
    assert.equal(path.basename((await planOutput(movie(t2, 'Godzilla 2000', 2000))).dir), 'Godzilla 2000 (2000)', 'a number ending the title stays (issue 39)');
    const t3 = target();
    assert.equal(path.basename((await planOutput(movie(t3, 'Blade Runner 2049', 2017))).dir), 'Blade Runner 2049 (2017)');
  });

  it('uses the safe title alone without a year', async () => {
    const t = target();
    const plan = await planOutput(movie(t, 'Alien: Covenant', null));
    assert.equal(plan.dir, path.join(t, 'Alien - Covenant'));
    assert.equal(plan.fileBase, 'Alien - Covenant');
  });

  it('appends the first 8 characters of the job id when the folder holds another movie (its movie.nfo names other ids)', async () => {
    const t = target();
    fs.mkdirSync(path.join(t, 'Heat (1995)'));
    fs.writeFileSync(path.join(t, 'Heat (1995)', 'Heat (1995).mkv'), 'old');
    fs.writeFileSync(path.join(t, 'Heat (1995)', 'movie.nfo'), '<movie><title>Heat</title><uniqueid type="tmdb" default="true">12345</uniqueid></movie>');
    const plan = await planOutput({ ...movie(t, 'Heat', 1995, 'job-1234-5678'), library: { tmdb_id: 949, imdb_id: null } });
    assert.equal(plan.dir, path.join(t, 'Heat (1995) [job-1234]'));
    assert.equal(plan.fileBase, 'Heat (1995)', 'the file names keep the plain name');
    assert.ok(fs.statSync(plan.dir).isDirectory());
    assert.deepEqual(fs.readdirSync(path.join(t, 'Heat (1995)')).sort(), ['Heat (1995).mkv', 'movie.nfo'], 'the existing folder is untouched');
  });

  it('joins the folder of the same movie (same id, or nothing to tell them apart by) (issue 39)', async () => {
    for (const [nfo, library] of [
      ['<movie><tmdbid>949</tmdbid><imdbid>tt0113277</imdbid></movie>', { tmdb_id: 949, imdb_id: 'tt0113277' }],
      ['<movie><uniqueid type="imdb">tt0113277</uniqueid></movie>', { tmdb_id: 949, imdb_id: 'tt0113277' }],
      [null, { tmdb_id: 949, imdb_id: null }],
      ['<movie><title>Heat</title></movie>', { tmdb_id: 949, imdb_id: null }],
      ['<movie><tmdbid>949</tmdbid></movie>', null],
    ] as const) {
      const t = target();
      fs.mkdirSync(path.join(t, 'Heat (1995)'));
      fs.writeFileSync(path.join(t, 'Heat (1995)', 'Heat (1995).mkv'), 'old');
      if (nfo) fs.writeFileSync(path.join(t, 'Heat (1995)', 'movie.nfo'), nfo);
      const plan = await planOutput({ ...movie(t, 'Heat', 1995), library });
      assert.equal(plan.dir, path.join(t, 'Heat (1995)'), String(nfo));
    }
  });

  it('never joins a folder holding files when the transcode is redone after its worker was lost: that worker\'s output may be in it', async () => {
    const t = target();
    fs.mkdirSync(path.join(t, 'Heat (1995)'));
    fs.writeFileSync(path.join(t, 'Heat (1995)', 'Heat (1995).mkv'), 'the lost worker\'s encode');
    fs.writeFileSync(path.join(t, 'Heat (1995)', 'movie.nfo'), '<movie><tmdbid>949</tmdbid></movie>');
    const plan = await planOutput({ ...movie(t, 'Heat', 1995, 'job-1234-5678'), library: { tmdb_id: 949, imdb_id: null }, redone: true });
    assert.equal(plan.dir, path.join(t, 'Heat (1995) [job-1234]'));
    const empty = target();
    fs.mkdirSync(path.join(empty, 'Heat (1995)'));
    assert.equal((await planOutput({ ...movie(empty, 'Heat', 1995, 'xyz'), redone: true })).dir, path.join(empty, 'Heat (1995)'), 'an empty folder is still reused');
    fs.mkdirSync(path.join(empty, 'Heat (1995)', '.ripwerk-encode-AbC123'));
    assert.equal((await planOutput({ ...movie(empty, 'Heat', 1995, 'xyz'), redone: true })).dir, path.join(empty, 'Heat (1995)'), 'the lost worker\'s private encode folder alone does not make it taken');
  });

  it('treats a file of that name as taken, and reuses an empty folder', async () => {
    const t = target();
    fs.writeFileSync(path.join(t, 'Heat (1995)'), 'a file, not a folder');
    assert.equal((await planOutput(movie(t, 'Heat', 1995, 'xyz'))).dir, path.join(t, 'Heat (1995) [xyz]'));
    const t2 = target();
    fs.mkdirSync(path.join(t2, 'Heat (1995)'));
    assert.equal((await planOutput(movie(t2, 'Heat', 1995, 'xyz'))).dir, path.join(t2, 'Heat (1995)'));
  });

  it('puts a series into <target>/<Series>/Season NN, also when that folder has files', async () => {
    const t = target();
    const base: OutputTarget = { target_dir: t, title: 'Disc 1', year: 2008, series: 'Breaking Bad', season: 1, job_id: 'job-a' };
    const plan = await planOutput(base);
    assert.deepEqual(plan, { dir: path.join(t, 'Breaking Bad', 'Season 01'), fileBase: 'Breaking Bad - S01' });
    fs.writeFileSync(path.join(plan.dir, 'Breaking Bad - S01 - t01.mkv'), 'x');
    const second = await planOutput({ ...base, title: 'Disc 2', job_id: 'job-b' });
    assert.equal(second.dir, plan.dir, 'the next disc of a season goes into the same folder');
    const specials = await planOutput({ ...base, series: 'Doctor Who: Classic', season: 0 });
    assert.deepEqual(specials, { dir: path.join(t, 'Doctor Who - Classic', 'Season 00'), fileBase: 'Doctor Who - Classic - S00' });
  });

  it('treats a series without a season as a movie', async () => {
    const t = target();
    const plan = await planOutput({ target_dir: t, title: 'Pilot', year: null, series: 'Show', season: null, job_id: 'j' });
    assert.equal(plan.dir, path.join(t, 'Pilot'));
  });

  it('creates a missing target folder', async () => {
    const t = path.join(target(), 'not', 'there');
    const plan = await planOutput(movie(t, 'Heat', 1995));
    assert.ok(fs.statSync(plan.dir).isDirectory());
  });
});

describe('outputFileName', () => {
  const plan = { dir: '/x', fileBase: 'Heat (1995)' };

  it('gives a single movie file the folder name', () => {
    assert.equal(outputFileName(plan, 0, 1, '.mkv', false), 'Heat (1995).mkv');
  });

  it('numbers several files from t01 with two digits', () => {
    assert.equal(outputFileName(plan, 0, 3, '.mkv', false), 'Heat (1995) - t01.mkv');
    assert.equal(outputFileName(plan, 2, 3, '.mkv', false), 'Heat (1995) - t03.mkv');
    assert.equal(outputFileName(plan, 11, 12, '.m4v', false), 'Heat (1995) - t12.m4v');
  });

  it('numbers even a single file of a series', () => {
    assert.equal(outputFileName({ dir: '/x', fileBase: 'Show - S02' }, 0, 1, '.mkv', true), 'Show - S02 - t01.mkv');
  });
});

describe('freeFileName', () => {
  it('keeps a free name and counts up from (2) for taken ones', async () => {
    const dir = target();
    assert.equal(await freeFileName(dir, 'a.mkv'), 'a.mkv');
    fs.writeFileSync(path.join(dir, 'a.mkv'), '');
    assert.equal(await freeFileName(dir, 'a.mkv'), 'a (2).mkv');
    fs.writeFileSync(path.join(dir, 'a (2).mkv'), '');
    assert.equal(await freeFileName(dir, 'a.mkv'), 'a (3).mkv');
  });

  it('handles names without extension and with dots in the stem', async () => {
    const dir = target();
    fs.writeFileSync(path.join(dir, 'README'), '');
    assert.equal(await freeFileName(dir, 'README'), 'README (2)');
    fs.writeFileSync(path.join(dir, 'Mr. Robot - S01.mkv'), '');
    assert.equal(await freeFileName(dir, 'Mr. Robot - S01.mkv'), 'Mr. Robot - S01 (2).mkv');
  });

  it('counts a dangling symlink as taken', async () => {
    const dir = target();
    fs.symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'link.mkv'));
    assert.equal(await freeFileName(dir, 'link.mkv'), 'link (2).mkv');
  });
});

describe('claimFileName', () => {
  it('picks a free name, counting up past taken ones, and puts nothing on disk', async () => {
    const dir = target();
    fs.writeFileSync(path.join(dir, 'Show - S01 - t01.mkv'), 'disc 1');
    const name = await claimFileName(dir, 'Show - S01 - t01.mkv');
    assert.equal(name, 'Show - S01 - t01 (2).mkv');
    assert.deepEqual(fs.readdirSync(dir), ['Show - S01 - t01.mkv']);
    releaseFileName(dir, name);
  });

  it('gives a taken movie file in its own folder the next version name, which Jellyfin groups with it (issue 39)', async () => {
    const dir = path.join(target(), 'Heat (1995)');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'Heat (1995).mkv'), 'first rip');
    const second = await claimFileName(dir, 'Heat (1995).mkv');
    assert.equal(second, 'Heat (1995) - Version 2.mkv');
    assert.equal(await claimFileName(dir, 'Heat (1995) - Version 2.mkv'), 'Heat (1995) - Version 3.mkv', 'a version the job names itself counts on too');
    releaseFileName(dir, second);
    releaseFileName(dir, 'Heat (1995) - Version 3.mkv');
    fs.writeFileSync(path.join(dir, 'Heat (1995) - Extra 01.mkv'), 'x');
    assert.equal(await claimFileName(dir, 'Heat (1995) - Extra 01.mkv'), 'Heat (1995) - Extra 01 (2).mkv', 'other names are numbered as before');
    releaseFileName(dir, 'Heat (1995) - Extra 01 (2).mkv');
  });

  it('gives jobs picking the same name at the same time different names until they release them', async () => {
    const dir = target();
    const names = await Promise.all(Array.from({ length: 4 }, () => claimFileName(dir, 'x.mkv')));
    assert.deepEqual([...names].sort(), ['x (2).mkv', 'x (3).mkv', 'x (4).mkv', 'x.mkv']);
    assert.equal(await claimFileName(dir, 'x.mkv'), 'x (5).mkv');
    for (const name of [...names, 'x (5).mkv']) releaseFileName(dir, name);
    assert.equal(await claimFileName(dir, 'x.mkv'), 'x.mkv', 'a released name that was never written is free again');
    releaseFileName(dir, 'x.mkv');
  });

  it('keeps claims of different folders apart and counts a dangling symlink as taken', async () => {
    const a = target();
    const b = target();
    assert.equal(await claimFileName(a, 'f.mkv'), 'f.mkv');
    assert.equal(await claimFileName(b, 'f.mkv'), 'f.mkv');
    releaseFileName(a, 'f.mkv');
    releaseFileName(b, 'f.mkv');
    fs.symlinkSync(path.join(a, 'nowhere'), path.join(a, 'l.mkv'));
    assert.equal(await claimFileName(a, 'l.mkv'), 'l (2).mkv');
    releaseFileName(a, 'l (2).mkv');
  });
});

describe('moveFile', () => {
  it('moves a file within one file system', async () => {
    const dir = target();
    const from = path.join(dir, 'from.mkv');
    const to = path.join(dir, 'sub', 'to.mkv');
    fs.mkdirSync(path.dirname(to));
    fs.writeFileSync(from, 'payload');
    await moveFile(from, to);
    assert.equal(fs.existsSync(from), false);
    assert.equal(fs.readFileSync(to, 'utf8'), 'payload');
  });

  it('fails for a missing source without creating the target', async () => {
    const dir = target();
    await assert.rejects(moveFile(path.join(dir, 'missing.mkv'), path.join(dir, 'to.mkv')), { code: 'ENOENT' });
    assert.equal(fs.existsSync(path.join(dir, 'to.mkv')), false);
  });

  const shm = '/dev/shm';
  const crossDevice = (() => {
    try {
      fs.accessSync(shm, fs.constants.W_OK);
      return fs.statSync(shm).dev !== fs.statSync(os.tmpdir()).dev;
    } catch {
      return false;
    }
  })();

  it('copies across file systems, then removes the original', { skip: crossDevice ? false : 'no second file system at /dev/shm' }, async () => {
    const other = fs.mkdtempSync(path.join(shm, 'ripwerk-move-'));
    try {
      const from = path.join(target(), 'big.mkv');
      const data = Buffer.alloc(300_000, 7);
      fs.writeFileSync(from, data);
      const to = path.join(other, 'big.mkv');
      await moveFile(from, to);
      assert.equal(fs.existsSync(from), false);
      assert.deepEqual(fs.readFileSync(to), data);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('refuses a cross-device move the target has no room for, keeping the original', { skip: crossDevice ? false : 'no second file system at /dev/shm' }, async () => {
    const other = fs.mkdtempSync(path.join(shm, 'ripwerk-move-'));
    try {
      const from = path.join(target(), 'big.mkv');
      fs.writeFileSync(from, Buffer.alloc(300_000, 7));
      const to = path.join(other, 'big.mkv');
      const asked: string[] = [];
      await assert.rejects(
        moveFile(from, to, async (dir) => {
          asked.push(dir);
          return 100_000;
        }),
        { message: `not enough free space in ${other} to move big.mkv there: 0.3 MB needed, 0.1 MB free` },
      );
      assert.deepEqual(asked, [other]);
      assert.equal(fs.statSync(from).size, 300_000);
      assert.equal(fs.existsSync(to), false);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('removeIfEmpty', () => {
  it('removes an empty folder and leaves a full or missing one alone', async () => {
    const dir = target();
    const empty = path.join(dir, 'empty');
    const full = path.join(dir, 'full');
    fs.mkdirSync(empty);
    fs.mkdirSync(full);
    fs.writeFileSync(path.join(full, 'f'), '');
    await removeIfEmpty(empty);
    await removeIfEmpty(full);
    await removeIfEmpty(path.join(dir, 'missing'));
    assert.equal(fs.existsSync(empty), false);
    assert.equal(fs.existsSync(path.join(full, 'f')), true);
  });
});

describe('the output ledger of a transcode and removeOwnOutputs', () => {
  const later = (file: string) => {
    // A later change than the one recorded, whatever the file system's time resolution.
    const t = new Date(Date.now() + 5000);
    fs.utimesSync(file, t, t);
  };

  it('removes after a crash only the files its run finished and that are still those very files', async () => {
    const media = target();
    const data = target();
    const ledger = new OutputLedger(outputLedgerFile(data, 'cmd-1'), 'job-1');
    const mine = path.join(media, 'Heat (1995)');
    const extras = path.join(mine, 'extras');
    fs.mkdirSync(extras, { recursive: true });
    // Finished by this run: removed.
    const own = path.join(mine, 'Heat (1995) - t01.mkv');
    ledger.claimed(own, [mine]);
    fs.writeFileSync(own, 'encoded by this run');
    await ledger.written(own);
    const ownExtra = path.join(extras, 'Heat (1995) - t02.mkv');
    ledger.claimed(ownExtra, [extras, mine]);
    fs.writeFileSync(ownExtra, 'extra');
    await ledger.written(ownExtra);
    // Cut off before its encoder ended: no identity, so it cannot be told from another worker's file; kept.
    const partial = path.join(mine, 'Heat (1995) - t03.mkv');
    ledger.claimed(partial, [mine]);
    fs.writeFileSync(partial, 'half');
    // Finished by this run, then removed, and another worker wrote the same name: kept.
    const replaced = path.join(mine, 'Heat (1995) - t04.mkv');
    ledger.claimed(replaced, [mine]);
    fs.writeFileSync(replaced, 'mine');
    await ledger.written(replaced);
    fs.rmSync(replaced);
    fs.writeFileSync(replaced, 'the other worker\'s');
    // Finished by this run, then written over in place (same file, new content): kept.
    const rewritten = path.join(mine, 'Heat (1995) - t05.mkv');
    ledger.claimed(rewritten, [mine]);
    fs.writeFileSync(rewritten, 'mine');
    await ledger.written(rewritten);
    fs.writeFileSync(rewritten, 'theirs');
    later(rewritten);
    // The encode redone elsewhere, in its own folder: never listed, never touched.
    const other = path.join(media, 'Heat (1995) [job-1]');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'Heat (1995).mkv'), 'the job\'s result');

    assert.ok(fs.existsSync(ledger.file));
    const { removed } = await removeOwnOutputs(ledger.file);
    assert.deepEqual(removed.sort(), [ownExtra, own].sort());
    assert.deepEqual(fs.readdirSync(mine).sort(), ['Heat (1995) - t03.mkv', 'Heat (1995) - t04.mkv', 'Heat (1995) - t05.mkv']);
    assert.equal(fs.existsSync(extras), false, 'the emptied extras folder goes');
    assert.equal(fs.readFileSync(replaced, 'utf8'), 'the other worker\'s');
    assert.equal(fs.readFileSync(rewritten, 'utf8'), 'theirs');
    assert.equal(fs.readFileSync(path.join(other, 'Heat (1995).mkv'), 'utf8'), 'the job\'s result');
    assert.equal(fs.existsSync(ledger.file), false, 'the ledger goes too');
    assert.deepEqual(await removeOwnOutputs(ledger.file), { removed: [], keptAfterRawReleased: false }, 'a second call (or a command without a ledger) removes nothing');
  });

  it('removes the private folders its encoders were cut off in, with their partial files, and nothing of another run or through a link', async () => {
    const media = target();
    const data = target();
    const mine = path.join(media, 'Ronin (1998)');
    const own = path.join(mine, `${PRIVATE_PREFIX}abc123`);
    const others = path.join(mine, `${PRIVATE_PREFIX}zzz999`);
    const outside = target();
    const linked = path.join(mine, `${PRIVATE_PREFIX}link00`);
    fs.mkdirSync(own, { recursive: true });
    fs.mkdirSync(others);
    fs.writeFileSync(path.join(own, 'Ronin (1998).mkv'), 'partial');
    fs.writeFileSync(path.join(others, 'Ronin (1998).mkv'), 'another worker is encoding');
    fs.writeFileSync(path.join(outside, 'keep.txt'), 'not the agent\'s');
    fs.symlinkSync(outside, linked);
    const ledger = new OutputLedger(outputLedgerFile(data, 'cmd-p'), 'job-p');
    ledger.claimed(path.join(mine, 'Ronin (1998).mkv'), [mine]);
    ledger.privateFolder(own);
    ledger.privateFolder(linked);
    ledger.releasingRaw();
    await removeOwnOutputs(ledger.file);
    assert.deepEqual(fs.readdirSync(mine).sort(), [`${PRIVATE_PREFIX}link00`, `${PRIVATE_PREFIX}zzz999`], 'its own private folder went, also after the raw files were released');
    assert.deepEqual(fs.readdirSync(outside), ['keep.txt']);
  });

  it('removes the folder its own files were in once they are gone, and keeps one another job writes into', async () => {
    const media = target();
    const data = target();
    const mine = path.join(media, 'Ronin (1998)');
    fs.mkdirSync(mine);
    const ledger = new OutputLedger(outputLedgerFile(data, 'cmd-2'), 'job-2');
    const own = path.join(mine, 'Ronin (1998).mkv');
    ledger.claimed(own, [mine]);
    fs.writeFileSync(own, 'x');
    await ledger.written(own);
    assert.deepEqual((await removeOwnOutputs(ledger.file)).removed, [own]);
    assert.equal(fs.existsSync(mine), false);

    const season = path.join(media, 'Show', 'Season 01');
    fs.mkdirSync(season, { recursive: true });
    const l2 = new OutputLedger(outputLedgerFile(data, 'cmd-3'), 'job-3');
    const ep = path.join(season, 'Show - S01E01.mkv');
    l2.claimed(ep, [season]);
    fs.writeFileSync(ep, 'x');
    await l2.written(ep);
    fs.writeFileSync(path.join(season, 'Show - S01E02.mkv'), 'another disc of the season');
    assert.deepEqual((await removeOwnOutputs(l2.file)).removed, [ep]);
    assert.deepEqual(fs.readdirSync(season), ['Show - S01E02.mkv']);
  });

  it('keeps an empty folder none of its removed files was in: the worker that took the job over may be encoding into it', async () => {
    const media = target();
    const data = target();
    const folder = path.join(media, 'Brazil (1985)');
    fs.mkdirSync(folder);
    const ledger = new OutputLedger(outputLedgerFile(data, 'cmd-5'), 'job-5');
    // Killed before its encoder wrote anything; the other worker reuses the empty folder and its
    // encoder has not created its file yet.
    ledger.claimed(path.join(folder, 'Brazil (1985).mkv'), [folder]);
    assert.deepEqual(await removeOwnOutputs(ledger.file), { removed: [], keptAfterRawReleased: false });
    assert.ok(fs.existsSync(folder));
  });

  it('removes nothing once its run had released the raw files: its encode may be the only one', async () => {
    const media = target();
    const data = target();
    const mine = path.join(media, 'Alien (1979)');
    fs.mkdirSync(mine);
    const ledger = new OutputLedger(outputLedgerFile(data, 'cmd-4'), 'job-4');
    const own = path.join(mine, 'Alien (1979).mkv');
    ledger.claimed(own, [mine]);
    fs.writeFileSync(own, 'x');
    await ledger.written(own);
    ledger.releasingRaw();
    assert.deepEqual(await removeOwnOutputs(ledger.file), { removed: [], keptAfterRawReleased: true });
    assert.ok(fs.existsSync(own));
    assert.equal(fs.existsSync(ledger.file), false);
  });

  it('tells a restarted run that its encodes had ended only while every output is still the very file written', async () => {
    const media = target();
    const data = target();
    const mine = path.join(media, 'Ran (1985)');
    fs.mkdirSync(mine);
    const ledger = new OutputLedger(outputLedgerFile(data, 'cmd-6'), 'job-6');
    const files = [path.join(mine, 'Ran (1985) - t01.mkv'), path.join(mine, 'Ran (1985) - t02.mkv')];
    for (const f of files) {
      ledger.claimed(f, [mine]);
      fs.writeFileSync(f, 'x');
      await ledger.written(f);
    }
    assert.equal(await finishedEncode(ledger.file), null, 'encoded outputs, but the run had not said all its encodes ended');
    ledger.encoded({ output_path: mine, files, episodes_guessed: false });
    assert.deepEqual(await finishedEncode(ledger.file), { output_path: mine, files, episodes_guessed: false });
    ledger.releasingRaw();
    assert.deepEqual(await finishedEncode(ledger.file), { output_path: mine, files, episodes_guessed: false }, 'raw files released: still finished from here');
    fs.writeFileSync(files[1], 'written over');
    later(files[1]);
    assert.equal(await finishedEncode(ledger.file), null, 'a changed output: the transcode starts over');
    fs.rmSync(files[1]);
    assert.equal(await finishedEncode(ledger.file), null, 'a missing output: the same');
    assert.equal(await finishedEncode(outputLedgerFile(data, 'no-such-command')), null);
  });

  it('names the ledger after a hash of the command id, inside the data folder whatever the id holds', () => {
    const file = outputLedgerFile('/var/lib/ripwerk', '../../etc/passwd');
    assert.equal(path.dirname(file), '/var/lib/ripwerk/outputs');
    assert.match(path.basename(file), /^[0-9a-f]{32}\.json$/);
    assert.notEqual(outputLedgerFile('/d', 'a'), outputLedgerFile('/d', 'b'));
  });
});

describe('writes into links planted in the media tree (issue 42)', () => {
  /** A folder outside the target, as a share user would point a link at. */
  function outside(): string {
    return fs.mkdtempSync(path.join(root, 'outside-'));
  }
  const refusal = /leads outside .* through a symbolic link \(or nowhere\): refused, nothing was written/;

  it('refuses a movie folder name that is a link out of the target folder, writing nothing there', async () => {
    const t = target();
    const away = outside();
    fs.symlinkSync(away, path.join(t, 'Heat (1995)'));
    await assert.rejects(planOutput(movie(t, 'Heat', 1995)), (err: Error) => err instanceof OutsideWrite && refusal.test(err.message));
    const dangling = target();
    fs.symlinkSync(path.join(away, 'gone'), path.join(dangling, 'Heat (1995)'));
    await assert.rejects(planOutput(movie(dangling, 'Heat', 1995)), OutsideWrite);
    assert.deepEqual(fs.readdirSync(away), []);
  });

  it('refuses a series or season folder that is a link out of the target folder, creating no season there', async () => {
    const t = target();
    const away = outside();
    fs.symlinkSync(away, path.join(t, 'Evil'));
    const series: OutputTarget = { target_dir: t, title: 'Disc 1', year: null, series: 'Evil', season: 1, job_id: 'job-e' };
    await assert.rejects(planOutput(series), (err: Error) => err instanceof OutsideWrite && err.message.includes(path.join(t, 'Evil')));
    assert.deepEqual(fs.readdirSync(away), [], 'no Season 01 made through the link');
    const t2 = target();
    fs.mkdirSync(path.join(t2, 'Evil'));
    fs.symlinkSync(away, path.join(t2, 'Evil', 'Season 01'));
    await assert.rejects(planOutput({ ...series, target_dir: t2 }), OutsideWrite);
  });

  it('follows a link that stays inside the target folder, as reads do', async () => {
    const t = target();
    fs.mkdirSync(path.join(t, 'Archiv', 'Breaking Bad'), { recursive: true });
    fs.symlinkSync(path.join(t, 'Archiv', 'Breaking Bad'), path.join(t, 'Breaking Bad'));
    const plan = await planOutput({ target_dir: t, title: 'Disc 1', year: null, series: 'Breaking Bad', season: 2, job_id: 'j' });
    assert.equal(plan.dir, path.join(t, 'Breaking Bad', 'Season 02'));
    assert.ok(fs.statSync(path.join(t, 'Archiv', 'Breaking Bad', 'Season 02')).isDirectory());
  });

  it('picks no file name in a subfolder that is a link out of its folder (an extras folder planted in a season)', async () => {
    const t = target();
    const away = outside();
    fs.mkdirSync(path.join(t, 'Heat (1995)'));
    fs.symlinkSync(away, path.join(t, 'Heat (1995)', 'Extras'));
    await assert.rejects(claimFileName(path.join(t, 'Heat (1995)', 'Extras'), 'Heat (1995) - Extra 01.mkv'), OutsideWrite);
    assert.equal(await claimFileName(path.join(t, 'Heat (1995)'), 'Heat (1995).mkv'), 'Heat (1995).mkv');
    releaseFileName(path.join(t, 'Heat (1995)'), 'Heat (1995).mkv');
  });

  it('copies across file systems into no link planted at the new name', async () => {
    const dir = target();
    const away = outside();
    const from = path.join(dir, 'from.mkv');
    fs.writeFileSync(from, 'payload');
    const to = path.join(dir, 'to.mkv');
    fs.symlinkSync(path.join(away, 'planted.mkv'), to);
    const exdev = async (): Promise<void> => {
      throw Object.assign(new Error('cross-device link not permitted'), { code: 'EXDEV' });
    };
    await assert.rejects(moveFile(from, to, async () => 1e12, exdev), { code: 'EEXIST' });
    assert.deepEqual(fs.readdirSync(away), [], 'nothing written through the link');
    assert.equal(fs.readFileSync(from, 'utf8'), 'payload', 'the original stays');
  });

  it('keeps the originals in no Originale folder that is a link out of MEDIA_ROOT, leaving them where they are', async () => {
    const media = target();
    const away = outside();
    const raw = fs.mkdtempSync(path.join(root, 'raw-'));
    fs.writeFileSync(path.join(raw, 'title_t00.mkv'), 'raw');
    fs.symlinkSync(away, path.join(media, ORIGINALS_FOLDER));
    const dir = originalsDir(media, path.join(media, 'Filme'), path.join(media, 'Filme', 'Heat (1995)'), 'job-1');
    await assert.rejects(keepOriginals([path.join(raw, 'title_t00.mkv')], { dir, mediaRoot: media }), OutsideWrite);
    assert.deepEqual(fs.readdirSync(away), []);
    assert.ok(fs.existsSync(path.join(raw, 'title_t00.mkv')));
    fs.rmSync(path.join(media, ORIGINALS_FOLDER));
    assert.deepEqual(await keepOriginals([path.join(raw, 'title_t00.mkv')], { dir, mediaRoot: media }), [path.join(dir, 'title_t00.mkv')]);
  });
});
