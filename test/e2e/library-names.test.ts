import type { JobDetail } from '../../shared/api-types.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, fileTree as tree, dvdImage, insertDisc, startAgent, startCoordinator, stopAll, tempDir, waitForDisc, waitForStatus, world, type AgentHandle, type CoordinatorHandle, type Job, type World } from './harness.js';



describe('library names: main feature, versions, extras and guessed episodes (real rip and HandBrakeCLI)', () => {
  let w: World;
  let c: CoordinatorHandle;
  let agent: AgentHandle;

  before(async () => {
    w = world();
    c = await startCoordinator(w);
    agent = await startAgent(w, c.mqttUrl, 'regal');
    const r = await api(c.url, 'PUT', '/settings', { transcodePreset: 'Very Fast 480p30', audioLanguages: ['eng'], subtitleLanguages: [] });
    assert.equal(r.status, 200, r.text);
  });
  after(stopAll);

  it('a movie disc: the 5-minute title is the movie, the 4:55 title a version, two short titles go into Extras', async () => {
    insertDisc(agent.driveDir, dvdImage('LONG_MOVIE', [300, 295, 20, 15]));
    const device = await waitForDisc(c.url, agent);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [1, 2, 3, 4], title: 'Langer Film', year: 2003 });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed'], 600_000);
    const dir = path.join(w.media, 'Filme', 'Langer Film (2003)');
    assert.equal(done.output_path, dir);
    assert.deepEqual(tree(dir), ['Extras/Langer Film (2003) - Extra 01.mkv', 'Extras/Langer Film (2003) - Extra 02.mkv', 'Langer Film (2003) - Version 2.mkv', 'Langer Film (2003).mkv']);
    assert.deepEqual([...(done.meta?.output_files ?? [])].sort(), tree(dir), 'output_files: what the job wrote, relative to output_path');
    const files = await api<{ name: string; folder?: string }[]>(c.url, 'GET', `/jobs/${done.id}/files`);
    assert.deepEqual(files.body.map((f) => f.name), ['Langer Film (2003) - Version 2.mkv', 'Langer Film (2003).mkv'], 'the folder listing shows the movie files by bare name, as the spec has it');
    const below = await api<{ name: string; folder?: string }[]>(c.url, 'GET', `/jobs/${done.id}/files?subfolders=true`);
    assert.deepEqual(below.body.map((f) => (f.folder ? `${f.folder}/${f.name}` : f.name)), ['Langer Film (2003) - Version 2.mkv', 'Langer Film (2003).mkv', 'Extras/Langer Film (2003) - Extra 01.mkv', 'Extras/Langer Film (2003) - Extra 02.mkv'], 'the extras on request, with their folder (issue 38)');
  });

  it('a second rip of the same title joins its folder as the next version, which Jellyfin groups with the movie, not a [job id] folder (issue 39)', async () => {
    insertDisc(agent.driveDir, dvdImage('LONG_MOVIE_AGAIN', [300]));
    const device = await waitForDisc(c.url, agent);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, titles: [1], title: 'Langer Film', year: 2003 });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed'], 600_000);
    const dir = path.join(w.media, 'Filme', 'Langer Film (2003)');
    assert.equal(done.output_path, dir);
    assert.deepEqual(tree(dir), ['Extras/Langer Film (2003) - Extra 01.mkv', 'Extras/Langer Film (2003) - Extra 02.mkv', 'Langer Film (2003) - Version 2.mkv', 'Langer Film (2003) - Version 3.mkv', 'Langer Film (2003).mkv']);
    assert.deepEqual(fs.readdirSync(path.join(w.media, 'Filme')), ['Langer Film (2003)'], 'no [job id] folder');
    assert.deepEqual(done.meta?.output_files, ['Langer Film (2003) - Version 3.mkv'], 'output_files: only what this job wrote; the folder listing has the others too');
    const files = await api<{ name: string }[]>(c.url, 'GET', `/jobs/${done.id}/files`);
    assert.deepEqual(files.body.map((f) => f.name), ['Langer Film (2003) - Version 2.mkv', 'Langer Film (2003) - Version 3.mkv', 'Langer Film (2003).mkv']);
  });

  it('a series disc without a runtime match: the play-all title is skipped, episodes count on after E04 and are marked as guessed', async () => {
    const season = path.join(w.media, 'Serien', 'Nordlicht', 'Season 02');
    fs.mkdirSync(season, { recursive: true });
    for (const e of [1, 2, 3, 4]) fs.writeFileSync(path.join(season, `Nordlicht - S02E0${e}.mkv`), `episode ${e} from an earlier disc`);
    insertDisc(agent.driveDir, dvdImage('NORDLICHT_S02_D2', [20, 20, 20, 60]));
    const device = await waitForDisc(c.url, agent);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, series: 'Nordlicht', season: 2 });
    assert.equal(created.status, 201, created.text);
    const done = await waitForStatus(c.url, created.body.id, ['completed'], 300_000);
    assert.equal(done.output_path, season);
    assert.deepEqual(tree(season), [1, 2, 3, 4, 5, 6, 7].map((e) => `Nordlicht - S02E0${e}.mkv`));
    assert.equal(fs.readFileSync(path.join(season, 'Nordlicht - S02E04.mkv'), 'utf8'), 'episode 4 from an earlier disc', 'nothing is overwritten');
    assert.equal(done.meta?.episodes_guessed, true);
    const detail = await api<JobDetail>(c.url, 'GET', `/jobs/${done.id}/detail`);
    const messages = detail.body.logs.map((l) => l.message);
    assert.ok(messages.includes('title(s) 4 skipped: "play all" of other titles'), messages.join('\n'));
    assert.ok(messages.some((m) => m.startsWith('episode numbers guessed: E05, E06, E07 in title order, after E04, the highest in ')), messages.join('\n'));
    assert.ok(messages.includes('the disc label "Nordlicht" season 2 disc 2: the season folder holds episodes of earlier rips, so this disc continues them without a session'), 'disc 2 waits for no disc 1 ripped last week (issue 40)');
    assert.deepEqual((await api<unknown[]>(c.url, 'GET', '/sessions')).body, []);
  });

  it('a series folder a share user replaced by a link leading out of the media tree: the job fails saying so, nothing is written there (issue 42)', async () => {
    const away = tempDir('ripwerk-outside-');
    fs.mkdirSync(path.join(w.media, 'Serien'), { recursive: true });
    fs.symlinkSync(away, path.join(w.media, 'Serien', 'Evil'));
    insertDisc(agent.driveDir, dvdImage('EVIL_S01_D1', [20]));
    const device = await waitForDisc(c.url, agent);
    const created = await api<Job>(c.url, 'POST', '/jobs', { device, series: 'Evil', season: 1 });
    assert.equal(created.status, 201, created.text);
    const failed = await waitForStatus(c.url, created.body.id, ['failed'], 300_000);
    assert.equal(failed.error, `the folder ${path.join(w.media, 'Serien', 'Evil')} leads outside ${path.join(w.media, 'Serien')} through a symbolic link (or nowhere): refused, nothing was written there`);
    assert.deepEqual(fs.readdirSync(away), [], 'no Season 01, no episode behind the link');
  });
});
