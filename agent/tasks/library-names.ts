/**
 * The names of a transcode's output files in the library (what media servers read):
 * - a series: SxxEyy from the season's runtimes when they match unambiguously; a disc of a box-set
 *   session else continues at the episode number the session gives (first_episode); otherwise the title
 *   numbers kept when runtimes do not match; without runtimes numbered after the highest episode already in the season
 *   folder, in title order, and marked as guessed;
 * - a movie of several titles: the longest is `Title (Year).mkv`, titles within 10 % of it are
 *   versions `Title (Year) - Version 2.mkv` (the version form Jellyfin, Emby and Plex share), every
 *   other title goes into the extras folder;
 * - one movie title: `Title (Year).mkv`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { TitleRole } from '../../shared/disc-titles.js';
import type { TranscodeJob } from '../../shared/protocol.js';
import { highestEpisode, safeName } from '../../shared/output-name.js';
import { matchEpisodes } from '../output/episode-match.js';
import { outputFileName, type OutputPlan } from '../output/output-folder.js';
import type { TaskContext } from './rip-task.js';
import { movieRoles } from '../disc/title-rules.js';

/** The extras folder when the coordinator does not name one (Jellyfin, Emby and Kodi read "Extras"). */
export const DEFAULT_EXTRAS_FOLDER = 'Extras';

export interface OutputName {
  /** Folder below the plan's dir ("" for the dir itself). */
  subdir: string;
  name: string;
}

export interface NamePlan {
  names: OutputName[];
  /** Episode numbers counted on from the season folder instead of matched by runtime. */
  episodesGuessed: boolean;
}

const pad = (n: number): string => String(n).padStart(2, '0');

async function durations(files: string[], seconds: (file: string) => Promise<number>, ctx: TaskContext, purpose: string): Promise<number[] | null> {
  const out: number[] = [];
  for (const file of files) {
    try {
      out.push(await seconds(file));
    } catch (err) {
      ctx.log('warn', `${purpose}: the transcoder could not scan ${path.basename(file)}: ${(err as Error).message}`);
      return null;
    }
  }
  return out;
}

/**
 * A series rip's names (the spec's episode matching): with the season's runtimes, SxxEyy only when the
 * files fit them in exactly one way; otherwise every file keeps its title number (`Show - S02 - t01.mkv`)
 * and the job log says why: a wrong episode number is worse than none. Only when no runtimes are known
 * at all are the numbers counted on after the folder's highest episode, marked as guessed.
 */
async function seriesNames(args: TranscodeJob, plan: OutputPlan, seconds: (file: string) => Promise<number>, ctx: TaskContext): Promise<NamePlan> {
  if (args.episodes?.length) {
    const byTitle = (): NamePlan => ({ names: args.files.map((_, i) => ({ subdir: '', name: outputFileName(plan, i, args.files.length, '.mkv', true) })), episodesGuessed: false });
    const lengths = await durations(args.files, seconds, ctx, 'episode names by runtime skipped');
    if (!lengths) return byTitle();
    const match = matchEpisodes(lengths, args.episodes, args.disc_number ?? null);
    if (match.ok) {
      ctx.log('info', `episodes matched by ${match.stage === 'runtimes' ? 'runtime' : 'sequence'}: ${match.episodes.map((e) => `E${pad(e)}`).join(', ')}`);
      return { names: match.episodes.map((e) => ({ subdir: '', name: `${plan.fileBase}E${pad(e)}.mkv` })), episodesGuessed: false };
    }
    if (args.first_episode) return sessionNumbers(args, plan, ctx, `the runtimes do not decide (${match.reason})`);
    const named = byTitle();
    ctx.log('warn', `episodes not renamed: ${match.reason}; the files keep their title numbers (${named.names.map((n) => n.name).join(', ')}): name them with "Metadaten korrigieren" or by hand`);
    return named;
  }
  if (args.first_episode) return sessionNumbers(args, plan, ctx, 'no runtimes are known');
  const existing = await fs.readdir(plan.dir).catch(() => [] as string[]);
  const after = highestEpisode(existing, args.season ?? 0);
  const numbers = args.files.map((_, i) => after + i + 1);
  ctx.log('warn', `episode numbers guessed: ${numbers.map((e) => `E${pad(e)}`).join(', ')} in title order, after ${after ? `E${pad(after)}, the highest in ${plan.dir}` : `no episode in ${plan.dir}`}; check them and correct the names if the disc's order differs`);
  return { names: numbers.map((e) => ({ subdir: '', name: `${plan.fileBase}E${pad(e)}.mkv` })), episodesGuessed: true };
}

/** A disc of a box-set session: its files continue the episode numbers of the discs before it, in title order. */
function sessionNumbers(args: TranscodeJob, plan: OutputPlan, ctx: TaskContext, why: string): NamePlan {
  const first = args.first_episode as number;
  const numbers = args.files.map((_, i) => first + i);
  ctx.log('info', `episodes numbered by the box-set session: ${numbers.map((e) => `E${pad(e)}`).join(', ')} in title order, after the discs before this one (${why})`);
  return { names: numbers.map((e) => ({ subdir: '', name: `${plan.fileBase}E${pad(e)}.mkv` })), episodesGuessed: false };
}

async function movieNames(args: TranscodeJob, plan: OutputPlan, seconds: (file: string) => Promise<number>, ctx: TaskContext): Promise<NamePlan> {
  if (args.files.length === 1) return { names: [{ subdir: '', name: `${plan.fileBase}.mkv` }], episodesGuessed: false };
  const lengths = await durations(args.files, seconds, ctx, 'main feature, versions and extras not told apart');
  if (!lengths) return { names: args.files.map((_, i) => ({ subdir: '', name: outputFileName(plan, i, args.files.length, '.mkv', false) })), episodesGuessed: false };
  const extras = args.extras_folder || DEFAULT_EXTRAS_FOLDER;
  const names = movieRoles(lengths, args.main_file).map((r): OutputName => {
    if (r.role === 'main') return { subdir: '', name: `${plan.fileBase}.mkv` };
    if (r.role === 'version') return { subdir: '', name: `${plan.fileBase} - Version ${r.n}.mkv` };
    return { subdir: extras, name: `${plan.fileBase} - Extra ${pad(r.n)}.mkv` };
  });
  const roles = names.map((n, i) => `${path.basename(args.files[i])} (${Math.round(lengths[i])} s) → ${path.join(n.subdir, n.name)}`);
  ctx.log('info', `main feature, versions and extras by length: ${roles.join('; ')}`);
  return { names, episodesGuessed: false };
}

export interface RoleNaming {
  series: boolean;
  /** The extras folder of the media server ("Extras", Plex "Other"): for extras when byKind is off, and for titles without a role. */
  extrasFolder: string;
  /** Extras into the folder of their kind (Featurettes, Trailers, ...), which Jellyfin, Emby and Plex read; Kodi reads one folder only. */
  byKind: boolean;
  ext?: string;
}

function episodePart(range: { first: number; last: number }): string {
  return range.last > range.first ? `E${pad(range.first)}-E${pad(range.last)}` : `E${pad(range.first)}`;
}

/**
 * The names of a recognised disc's files by the role TheDiscDB gives each (same order as roles):
 * - the first main movie `Title (Year).mkv`, further ones versions `Title (Year) - <its name>.mkv`
 *   (`Version N` when it has no name of its own), the version form Jellyfin, Emby and Plex share;
 * - an episode of a series rip `Show - S02E05.mkv` (`S02E03-E04` for a double episode), no runtime guess;
 * - an extra under its own name in the folder of its kind (or the media server's extras folder);
 * - a title without a role (chosen by hand, unknown to TheDiscDB) in the extras folder, numbered.
 */
export function roleNames(roles: readonly (TitleRole | null)[], plan: OutputPlan, opts: RoleNaming): OutputName[] {
  const ext = opts.ext ?? '.mkv';
  const mainNames: string[] = [];
  return roles.map((role, i): OutputName => {
    const numbered = { subdir: opts.extrasFolder, name: `${plan.fileBase} - t${pad(i + 1)}${ext}` };
    if (!role) return numbered;
    if (role.role === 'main_movie') {
      mainNames.push(role.name ?? '');
      if (mainNames.length === 1) return { subdir: '', name: `${plan.fileBase}${ext}` };
      const own = role.name && mainNames.indexOf(role.name) === mainNames.length - 1 && mainNames[0] !== role.name ? safeName(role.name) : `Version ${mainNames.length}`;
      return { subdir: '', name: `${plan.fileBase} - ${own}${ext}` };
    }
    if (role.role === 'episode' && opts.series && role.episodes) {
      // The season TheDiscDB gives the episode wins over the job's (fileBase ends in " - Snn").
      const base = role.season !== null ? plan.fileBase.replace(/ - S\d+$/, ` - S${pad(role.season)}`) : plan.fileBase;
      return { subdir: '', name: `${base}${episodePart(role.episodes)}${ext}` };
    }
    if (role.role === 'extra') {
      return { subdir: opts.byKind ? role.folder : opts.extrasFolder, name: `${role.name ? safeName(role.name) : `${plan.fileBase} - ${safeName(role.kind)} ${pad(i + 1)}`}${ext}` };
    }
    if (role.role === 'episode' && role.name) return { subdir: opts.byKind ? 'Other' : opts.extrasFolder, name: `${safeName(role.name)}${ext}` };
    return numbered;
  });
}

/** The library names for the files of a transcode, in the order of args.files. */
export async function libraryNames(args: TranscodeJob, plan: OutputPlan, seconds: (file: string) => Promise<number>, ctx: TaskContext): Promise<NamePlan> {
  const roles = args.titles;
  if (roles && roles.length === args.files.length && roles.some((r) => r !== null)) {
    const names = roleNames(roles, plan, { series: Boolean(args.series), extrasFolder: args.extras_folder || DEFAULT_EXTRAS_FOLDER, byKind: args.extras_by_kind ?? false });
    ctx.log('info', `names by TheDiscDB: ${names.map((n, i) => `${path.basename(args.files[i])} → ${path.join(n.subdir, n.name)}`).join('; ')}`);
    return { names, episodesGuessed: false };
  }
  return args.series ? seriesNames(args, plan, seconds, ctx) : movieNames(args, plan, seconds, ctx);
}
