import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_EXTRAS_FOLDER, libraryNames, roleNames, type OutputName } from '../../../../agent/tasks/library-names.js';
import type { TaskContext } from '../../../../agent/tasks/rip-task.js';
import type { OutputPlan } from '../../../../agent/output/output-folder.js';
import { discTitles } from '../../../../coordinator/metadata/thediscdb/title-matcher.js';
import { parseDisc, type TddbDisc } from '../../../../coordinator/metadata/thediscdb/types.js';
import type { TitleRole } from '../../../../shared/disc-titles.js';
import type { TranscodeJob } from '../../../../shared/protocol.js';
import { fixtureJson } from '../../../fixtures/thediscdb-mirror.js';

const odyssey = discTitles(parseDisc(fixtureJson('2001-2011-dvd-disc01.json')) as TddbDisc);
const office = discTitles(parseDisc(fixtureJson('the-office-2021-season-4-blu-ray-disc01.json')) as TddbDisc);
const officeRole = (source: string): TitleRole => {
  const t = office.find((o) => o.source_file === source);
  assert.ok(t, source);
  return t.role;
};

/** The folders planOutput gives: a movie `Title (Year)`, a series `Show/Season NN` with files `Show - SNN…`. */
const moviePlan: OutputPlan = { dir: '/media/Filme/2001 - A Space Odyssey (1968)', fileBase: '2001 - A Space Odyssey (1968)' };
const officePlan: OutputPlan = { dir: '/media/Serien/The Office/Season 04', fileBase: 'The Office - S04' };

const joined = (names: OutputName[]) => names.map((n) => path.join(n.subdir, n.name));

describe('roleNames: a recognised disc\'s files named by their TheDiscDB role', () => {
  it('names the 2001 main movie after the folder and its extras by name in the folder of their kind', () => {
    const roles = [odyssey[0].role, odyssey[7].role, odyssey[5].role];
    assert.deepEqual(roleNames(roles, moviePlan, { series: false, extrasFolder: 'Extras', byKind: true }), [
      { subdir: '', name: '2001 - A Space Odyssey (1968).mkv' },
      { subdir: 'Trailers', name: 'Theatrical Trailer.mkv' },
      { subdir: 'Other', name: 'warning.mkv' },
    ]);
  });

  it('puts every extra into the one extras folder when the media server reads only that (Kodi), or Plex\'s "Other"', () => {
    const roles = [odyssey[0].role, odyssey[7].role];
    assert.deepEqual(joined(roleNames(roles, moviePlan, { series: false, extrasFolder: 'Extras', byKind: false })), ['2001 - A Space Odyssey (1968).mkv', 'Extras/Theatrical Trailer.mkv']);
    assert.deepEqual(joined(roleNames(roles, moviePlan, { series: false, extrasFolder: 'Other', byKind: false })), ['2001 - A Space Odyssey (1968).mkv', 'Other/Theatrical Trailer.mkv']);
  });

  it('names The Office\'s double episodes SxxEyy-Ezz from the fixture\'s data, in the order of the files', () => {
    const roles = ['00004.mpls', '00003.mpls', '00002.mpls'].map(officeRole);
    assert.deepEqual(joined(roleNames(roles, officePlan, { series: true, extrasFolder: 'Extras', byKind: true })), [
      'The Office - S04E01-E02.mkv',
      'The Office - S04E03-E04.mkv',
      'The Office - S04E05-E06.mkv',
    ]);
  });

  it('names a single episode SxxEyy', () => {
    const role: TitleRole = { role: 'episode', name: 'Money', season: 4, episodes: { first: 7, last: 7 } };
    assert.deepEqual(roleNames([role], officePlan, { series: true, extrasFolder: 'Extras', byKind: true }), [{ subdir: '', name: 'The Office - S04E07.mkv' }]);
  });

  it('takes the episode\'s season from TheDiscDB over the job\'s', () => {
    const jobSaidSeason1: OutputPlan = { dir: '/media/Serien/The Office/Season 01', fileBase: 'The Office - S01' };
    assert.deepEqual(joined(roleNames([officeRole('00004.mpls')], jobSaidSeason1, { series: true, extrasFolder: 'Extras', byKind: true })), ['The Office - S04E01-E02.mkv']);
    const noSeason: TitleRole = { role: 'episode', name: null, season: null, episodes: { first: 5, last: 5 } };
    assert.deepEqual(joined(roleNames([noSeason], jobSaidSeason1, { series: true, extrasFolder: 'Extras', byKind: true })), ['The Office - S01E05.mkv'], 'without a season of its own the job\'s stays');
  });

  it('names The Office\'s deleted scenes and season extra in their folders, its unknown titles numbered in the extras folder', () => {
    const roles = ['00003.mpls', '00006.m2ts', '00011.m2ts', '00000.mpls(1)', '00010.m2ts'].map(officeRole);
    assert.deepEqual(joined(roleNames(roles, officePlan, { series: true, extrasFolder: 'Extras', byKind: true })), [
      'The Office - S04E03-E04.mkv',
      'Deleted Scenes/Fun Run Deleted Scenes.mkv',
      'Other/Rabies - The More You Know.mkv',
      'Extras/The Office - S04 - t04.mkv',
      'Deleted Scenes/Launch Party Deleted Scenes.mkv',
    ]);
  });

  it('names a file without a role (chosen by hand) after its place, in the extras folder', () => {
    assert.deepEqual(roleNames([odyssey[0].role, null], moviePlan, { series: false, extrasFolder: 'Extras', byKind: true }), [
      { subdir: '', name: '2001 - A Space Odyssey (1968).mkv' },
      { subdir: 'Extras', name: '2001 - A Space Odyssey (1968) - t02.mkv' },
    ]);
  });

  it('names further main movies as versions: by their own name, else Version N', () => {
    const roles: TitleRole[] = [
      { role: 'main_movie', name: 'Blade Runner' },
      { role: 'main_movie', name: "Director's Cut" },
      { role: 'main_movie', name: 'Blade Runner' },
      { role: 'main_movie', name: null },
      { role: 'main_movie', name: "Director's Cut" },
    ];
    const plan: OutputPlan = { dir: '/m/Blade Runner (1982)', fileBase: 'Blade Runner (1982)' };
    assert.deepEqual(joined(roleNames(roles, plan, { series: false, extrasFolder: 'Extras', byKind: true })), [
      'Blade Runner (1982).mkv',
      "Blade Runner (1982) - Director's Cut.mkv",
      'Blade Runner (1982) - Version 3.mkv',
      'Blade Runner (1982) - Version 4.mkv',
      'Blade Runner (1982) - Version 5.mkv',
    ]);
  });

  it('makes names safe for the file system (a colon, a slash in a TheDiscDB name)', () => {
    const roles: TitleRole[] = [
      { role: 'main_movie', name: 'X' },
      { role: 'main_movie', name: 'Cut: Final/Extended' },
      { role: 'extra', name: '../../etc/passwd', kind: 'Featurette', folder: 'Featurettes', season: null, episodes: null },
    ];
    const names = roleNames(roles, moviePlan, { series: false, extrasFolder: 'Extras', byKind: true });
    assert.deepEqual(joined(names), ['2001 - A Space Odyssey (1968).mkv', '2001 - A Space Odyssey (1968) - Cut - Final-Extended.mkv', 'Featurettes/-..-etc-passwd.mkv']);
    assert.ok(names.every((n) => !n.name.includes('/')));
  });

  it('names an extra without a name after the folder, its kind and its place', () => {
    const role: TitleRole = { role: 'extra', name: null, kind: 'Featurette', folder: 'Featurettes', season: null, episodes: null };
    assert.deepEqual(roleNames([odyssey[0].role, role], moviePlan, { series: false, extrasFolder: 'Extras', byKind: true })[1], { subdir: 'Featurettes', name: '2001 - A Space Odyssey (1968) - Featurette 02.mkv' });
  });

  it('puts a named episode of a movie rip among the extras, and numbers play-all and unknown titles', () => {
    const playAll: TitleRole = { role: 'play_all', name: 'All', season: 4, episodes: { first: 1, last: 6 } };
    const roles: TitleRole[] = [officeRole('00004.mpls'), playAll, { role: 'unidentified' }];
    assert.deepEqual(joined(roleNames(roles, moviePlan, { series: false, extrasFolder: 'Extras', byKind: true })), [
      'Other/Fun Run.mkv',
      'Extras/2001 - A Space Odyssey (1968) - t02.mkv',
      'Extras/2001 - A Space Odyssey (1968) - t03.mkv',
    ]);
    assert.deepEqual(joined(roleNames([officeRole('00004.mpls')], moviePlan, { series: false, extrasFolder: 'Extras', byKind: false })), ['Extras/Fun Run.mkv']);
  });

  it('uses the extension it is given', () => {
    assert.deepEqual(roleNames([odyssey[0].role], moviePlan, { series: false, extrasFolder: 'Extras', byKind: true, ext: '.m4v' }), [{ subdir: '', name: '2001 - A Space Odyssey (1968).m4v' }]);
  });
});

describe('libraryNames: by role when the transcode carries roles', () => {
  function context() {
    const logs: string[] = [];
    const ctx: TaskContext = { signal: new AbortController().signal, progress: () => undefined, log: (_l, m) => logs.push(m), onSpawn: () => undefined };
    return { ctx, logs };
  }
  const args = (over: Partial<TranscodeJob>): TranscodeJob => ({
    job_id: 'job-1',
    raw_dir: '/raw/job-1',
    files: ['/raw/job-1/2001 A SPACE ODYSSEY_t00.mkv', '/raw/job-1/2001 A SPACE ODYSSEY_t07.mkv'],
    target_dir: '/media/Filme',
    title: '2001: A Space Odyssey',
    year: 1968,
    series: null,
    season: null,
    preset: 'Fast 1080p30',
    keep_original: false,
    ...over,
  });
  const noScan = async (file: string): Promise<number> => {
    throw new Error(`no scan expected for ${file}`);
  };

  it('names by role without scanning a file, and logs each name', async () => {
    const { ctx, logs } = context();
    const plan = await libraryNames(args({ titles: [odyssey[0].role, odyssey[7].role], extras_by_kind: true }), moviePlan, noScan, ctx);
    assert.deepEqual(plan, {
      names: [
        { subdir: '', name: '2001 - A Space Odyssey (1968).mkv' },
        { subdir: 'Trailers', name: 'Theatrical Trailer.mkv' },
      ],
      episodesGuessed: false,
    });
    assert.deepEqual(logs, ['names by TheDiscDB: 2001 A SPACE ODYSSEY_t00.mkv → 2001 - A Space Odyssey (1968).mkv; 2001 A SPACE ODYSSEY_t07.mkv → Trailers/Theatrical Trailer.mkv']);
  });

  it('puts extras into the extras folder the coordinator names, or "Extras", without extras_by_kind', async () => {
    const plex = await libraryNames(args({ titles: [odyssey[0].role, odyssey[7].role], extras_folder: 'Other' }), moviePlan, noScan, context().ctx);
    assert.deepEqual(plex.names[1], { subdir: 'Other', name: 'Theatrical Trailer.mkv' });
    const none = await libraryNames(args({ titles: [odyssey[0].role, odyssey[7].role] }), moviePlan, noScan, context().ctx);
    assert.deepEqual(none.names[1], { subdir: DEFAULT_EXTRAS_FOLDER, name: 'Theatrical Trailer.mkv' });
  });

  it('names the episodes of a series transcode by role, not by runtime', async () => {
    const files = ['/raw/j/title_t00.mkv', '/raw/j/title_t03.mkv'];
    const plan = await libraryNames(
      args({ files, series: 'The Office', season: 4, titles: [officeRole('00003.mpls'), officeRole('00004.mpls')], episodes: [{ episode: 1, minutes: 21 }] }),
      officePlan,
      noScan,
      context().ctx,
    );
    assert.deepEqual(joined(plan.names), ['The Office - S04E03-E04.mkv', 'The Office - S04E01-E02.mkv']);
    assert.equal(plan.episodesGuessed, false);
  });

  it('falls back to the length rules when no file has a role, or the roles do not fit the files', async () => {
    const lengths: Record<string, number> = { '2001 A SPACE ODYSSEY_t00.mkv': 8904, '2001 A SPACE ODYSSEY_t07.mkv': 111 };
    const seconds = async (file: string) => lengths[path.basename(file)];
    const expected = ['2001 - A Space Odyssey (1968).mkv', 'Extras/2001 - A Space Odyssey (1968) - Extra 01.mkv'];
    for (const titles of [null, [null, null], [odyssey[0].role]]) {
      const { ctx, logs } = context();
      const plan = await libraryNames(args({ titles }), moviePlan, seconds, ctx);
      assert.deepEqual(joined(plan.names), expected, JSON.stringify(titles));
      assert.equal(logs.some((l) => l.startsWith('names by TheDiscDB')), false);
    }
  });

  it('names the main feature the rip chose by evidence the film, though another file is longer', async () => {
    const lengths: Record<string, number> = { 'cut_t01.mkv': 7800, 'cut_t02.mkv': 7260 };
    const seconds = async (file: string) => lengths[path.basename(file)];
    const files = ['/raw/j/cut_t01.mkv', '/raw/j/cut_t02.mkv'];
    const chosen = await libraryNames(args({ files, main_file: 1 }), moviePlan, seconds, context().ctx);
    assert.deepEqual(joined(chosen.names), ['2001 - A Space Odyssey (1968) - Version 2.mkv', '2001 - A Space Odyssey (1968).mkv']);
    const longest = await libraryNames(args({ files }), moviePlan, seconds, context().ctx);
    assert.deepEqual(joined(longest.names), ['2001 - A Space Odyssey (1968).mkv', '2001 - A Space Odyssey (1968) - Version 2.mkv']);
  });
});
