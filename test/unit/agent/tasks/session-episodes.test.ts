/** Issue 40: a disc of a box-set session continues the episode numbers at first_episode where runtimes and roles do not decide. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { libraryNames } from '../../../../agent/tasks/library-names.js';
import type { TaskContext } from '../../../../agent/tasks/rip-task.js';
import type { TranscodeJob } from '../../../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-session-eps-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function context() {
  const logs: string[] = [];
  const ctx: TaskContext = { signal: new AbortController().signal, progress: () => undefined, log: (_l, m) => logs.push(m), onSpawn: () => undefined };
  return { ctx, logs };
}
const args = (over: Partial<TranscodeJob>): TranscodeJob => ({
  job_id: 'job-2',
  raw_dir: '/raw/job-2',
  files: ['/raw/job-2/SHOW_t00.mkv', '/raw/job-2/SHOW_t01.mkv', '/raw/job-2/SHOW_t02.mkv'],
  target_dir: '/media/Serien',
  title: 'Show',
  year: null,
  series: 'Show',
  season: 1,
  preset: 'Fast 1080p30',
  keep_original: false,
  ...over,
});
const season = fs.mkdtempSync(path.join(root, 'season-'));
const plan = { dir: season, fileBase: 'Show - S01' };
const names = (p: { names: { name: string }[] }) => p.names.map((n) => n.name);

describe('library names of a session disc', () => {
  it('continues at first_episode instead of counting after the season folder', async () => {
    fs.writeFileSync(path.join(season, 'Show - S01E11.mkv'), '');
    const { ctx, logs } = context();
    const out = await libraryNames(args({ first_episode: 4 }), plan, async () => 1300, ctx);
    assert.deepEqual(names(out), ['Show - S01E04.mkv', 'Show - S01E05.mkv', 'Show - S01E06.mkv']);
    assert.equal(out.episodesGuessed, false);
    assert.match(logs.join('\n'), /numbered by the box-set session: E04, E05, E06/);
  });

  it('without first_episode still counts after the folder’s highest episode, marked as guessed', async () => {
    const { ctx } = context();
    const out = await libraryNames(args({}), plan, async () => 1300, ctx);
    assert.deepEqual(names(out), ['Show - S01E12.mkv', 'Show - S01E13.mkv', 'Show - S01E14.mkv']);
    assert.equal(out.episodesGuessed, true);
  });

  it('keeps runtimes authoritative: a unique runtime match wins over first_episode', async () => {
    const { ctx } = context();
    const episodes = [10, 20, 30, 40, 50, 60].map((m, i) => ({ episode: i + 1, minutes: m }));
    const lengths: Record<string, number> = { SHOW_t00: 20 * 60, SHOW_t01: 40 * 60, SHOW_t02: 60 * 60 };
    const out = await libraryNames(args({ first_episode: 4, episodes }), plan, async (f) => lengths[path.basename(f, '.mkv')], ctx);
    assert.deepEqual(names(out), ['Show - S01E02.mkv', 'Show - S01E04.mkv', 'Show - S01E06.mkv']);
  });

  it('uses first_episode where the runtimes do not decide (alike runtimes, no disc number)', async () => {
    const { ctx } = context();
    const episodes = Array.from({ length: 9 }, (_, i) => ({ episode: i + 1, minutes: 22 }));
    const out = await libraryNames(args({ first_episode: 7, episodes }), plan, async () => 22 * 60, ctx);
    assert.deepEqual(names(out), ['Show - S01E07.mkv', 'Show - S01E08.mkv', 'Show - S01E09.mkv']);
  });
});
