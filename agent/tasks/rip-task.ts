import fs from 'node:fs/promises';
import path from 'node:path';
import type { AccurateRipReport, DiscInfo, RipJob, RippedTitle, Track } from '../../shared/protocol.js';
import type { TitleRole } from '../../shared/disc-titles.js';
import type { DiscSource } from '../disc/image-drive.js';
import type { Ripper } from '../tools/rippers.js';
import { claimFileName, moveFile, outputFileName, planOutput, releaseFileName } from '../output/output-folder.js';
import { ProgressThrottle } from './progress-throttle.js';
import { describeOutput } from '../../shared/library-files.js';
import { unattendedTitles } from '../disc/title-rules.js';
import { chooseMainFeature, DEFAULT_MAX_SIMILAR_TITLES, describeLeft, describeMainFeature } from '../../shared/main-feature.js';
import { plannedSelection } from './planned-titles.js';
import { DEFAULT_EXTRAS_FOLDER, roleNames } from './library-names.js';
import { READ_ERROR_PREFIX } from '../tools/makemkv-parser.js';

export interface TaskContext {
  signal: AbortSignal;
  /** `fps`: the encoder's speed in frames per second, when it tells it (a transcode). */
  progress(pct: number, fps?: number): void;
  /** `fields`: extra fields of the log event (read_errors on the closing line about read errors). */
  log(level: 'info' | 'warn' | 'error', message: string, fields?: { read_errors?: number }): void;
  onSpawn(pid: number): void;
  /** Progress goes out at most this often (ms); 1000 unless set (tests set 0 to see every value). */
  progressEveryMs?: number;
  /**
   * The task's last encoder run has ended: its slot is free for the next task while it checks and
   * describes its output (the scan of the written files, moving originals, the nfo).
   */
  encoderDone?(): void;
  /** Waits for the task's slot; called once its preparation is done, right before its first encoder run. */
  takeSlot?(): Promise<void>;
  /**
   * The task's first encoder run has started: it counts as running from here. Its bookkeeping (task
   * state, status, events) comes after the start, so a slot that frees starts the encoder at once.
   */
  encoderStarted?(): void;
  /** The task's last encoder run is expected to end within seconds (ending-watch.ts): its successor may be sent ahead. */
  encoderEnding?(): void;
}

export class TaskFailure extends Error {}

/**
 * How a rip without chosen titles filters them (the minTitleSeconds setting; series skip "play all");
 * a movie's main feature by evidence (shared/main-feature.ts) with the runtime the lookup knows and
 * the maxSimilarTitles setting.
 */
export interface TitleFilter {
  minSeconds: number;
  series: boolean;
  /** TMDB's runtime of the film (minutes); null or absent: not known. */
  runtimeMinutes?: number | null;
  /** Setting maxSimilarTitles (DEFAULT_MAX_SIMILAR_TITLES when absent). */
  maxSimilar?: number;
}

/**
 * Which titles a rip takes: the chosen ones; else the titles an unattended rip takes (long enough,
 * no "play all" of a series). Of a movie's, the main feature is chosen by evidence and duplicates,
 * decoys of playlist obfuscation and more than maxSimilarTitles titles of one length are left; with
 * main feature only just the main feature (a series: the longest title). `notes` say what was left
 * out, `main` which title is the main feature and why, for the job log.
 */
export function selectTitles(tracks: Track[], chosen: number[], mainFeatureOnly: boolean, filter: TitleFilter = { minSeconds: 0, series: false }): { titles: Track[]; notes: string[]; main: string | null; feature: number | null } {
  if (tracks.length === 0) throw new TaskFailure('the disc has no titles the ripper could read');
  if (chosen.length > 0) {
    const byNumber = new Map(tracks.map((t) => [t.number, t]));
    const missing = chosen.filter((n) => !byNumber.has(n));
    if (missing.length) throw new TaskFailure(`the disc has no title ${missing.join(', ')} (titles on the disc: ${tracks.map((t) => t.number).join(', ')})`);
    return { titles: chosen.map((n) => byNumber.get(n) as Track), notes: [], main: null, feature: null };
  }
  const { keep, short, playAll } = unattendedTitles(tracks, filter.minSeconds, filter.series);
  const notes: string[] = [];
  if (short.length) notes.push(`title(s) ${short.map((t) => t.number).join(', ')} skipped: shorter than ${filter.minSeconds} s (minTitleSeconds)`);
  if (playAll.length) notes.push(`title(s) ${playAll.map((t) => t.number).join(', ')} skipped: "play all" of other titles`);
  if (filter.series) {
    if (mainFeatureOnly) return { titles: [keep.reduce((a, b) => (b.seconds > a.seconds ? b : a))], notes, main: null, feature: null };
    return { titles: keep, notes, main: null, feature: null };
  }
  const choice = chooseMainFeature(keep, { runtimeMinutes: filter.runtimeMinutes, maxSimilar: filter.maxSimilar });
  const main = describeMainFeature(choice, filter.runtimeMinutes);
  const feature = keep.find((t) => t.number === choice.main) ?? keep[0];
  if (mainFeatureOnly) return { titles: [feature], notes, main, feature: feature.number };
  notes.push(...describeLeft(keep, choice, filter.maxSimilar));
  return { titles: keep.filter((t) => !choice.left.has(t.number)), notes, main, feature: feature.number };
}

/**
 * The titles a rip takes: chosen ones as they are; on a recognised disc (args.disc_titles) without
 * chosen titles those the plan takes, found in this scan by their evidence; otherwise the rules of
 * selectTitles. Every scanned title found in the plan has its role, chosen ones included.
 */
export function chooseTitles(
  tracks: Track[],
  args: Pick<RipJob, 'titles' | 'main_feature_only' | 'min_title_seconds' | 'series' | 'disc_titles' | 'runtime_minutes' | 'max_similar_titles'>,
): { titles: Track[]; notes: string[]; roles: Map<number, TitleRole>; main: string | null; feature: number | null } {
  const planned = args.disc_titles?.length ? plannedSelection(tracks, args.disc_titles) : null;
  if (planned && args.titles.length === 0 && planned.take.length > 0) return { titles: planned.take, notes: planned.notes, roles: planned.roles, main: null, feature: null };
  const filter: TitleFilter = { minSeconds: args.min_title_seconds ?? 0, series: Boolean(args.series), runtimeMinutes: args.runtime_minutes ?? null, maxSimilar: args.max_similar_titles ?? DEFAULT_MAX_SIMILAR_TITLES };
  const { titles, notes, main, feature } = selectTitles(tracks, args.titles, args.main_feature_only, filter);
  if (planned && args.titles.length === 0) {
    const wanted = args.disc_titles?.some((t) => t.take) ?? false;
    notes.push(
      wanted
        ? 'none of the titles TheDiscDB names for this rip is in the scan: the usual rules chose'
        : 'the plan takes no title (all of the wanted kinds are in the library, or none is of a wanted kind): the usual rules chose, as this rip was asked for without titles',
    );
  }
  return { titles, notes: [...(planned?.notes ?? []), ...notes], roles: planned?.roles ?? new Map(), main, feature };
}

/**
 * A ripped file under a name no other title of the disc can take: MakeMKV names a title's file by
 * its TINFO 27, which on some discs is the same for every title ("2001 A SPACE ODYSSEY.mkv"), so the
 * next title's rip would overwrite it. A name that ends in the title number already (MakeMKV's
 * default "title_t03.mkv") stays.
 */
export async function ownName(file: string, number: number): Promise<string> {
  const { dir, name, ext } = path.parse(file);
  const suffix = `_t${String(number).padStart(2, '0')}`;
  if (name.endsWith(suffix)) return file;
  const target = path.join(dir, `${name}${suffix}${ext}`);
  await fs.rename(file, target);
  return target;
}

function gb(bytes: number): string {
  return (bytes / 1e9).toFixed(1);
}

/** Refuses a rip that cannot fit: the selected titles' size against the free space of the raw dir. */
export async function checkFreeSpace(dir: string, neededBytes: number): Promise<void> {
  const st = await fs.statfs(dir);
  const free = st.bavail * st.bsize;
  if (neededBytes > free) {
    throw new TaskFailure(`not enough free space in ${dir}: the rip needs about ${gb(neededBytes)} GB, ${gb(free)} GB are free`);
  }
}

/** Most read errors one rip lists in the job log (each with its position; repeats are dropped too, all are counted). */
export const RIP_READ_ERROR_LIMIT = 20;

/**
 * The read errors a ripper reports (messages starting with READ_ERROR_PREFIX): each distinct one
 * logged as a warning, at most `limit`, all counted; `summary` is the closing line (null: none).
 */
export function readErrorLog(limit: number, write: (text: string) => void): { add(text: string): void; summary(): string | null; count(): number } {
  const seen = new Set<string>();
  let count = 0;
  return {
    add(text) {
      count++;
      if (seen.has(text) || seen.size >= limit) return;
      seen.add(text);
      write(text);
    },
    summary() {
      if (count === 0) return null;
      const unlisted = count > seen.size ? ` (${count - seen.size} not listed)` : '';
      return `the ripper reported ${count} read error(s)${unlisted}: the raw files may have gaps where the disc could not be read`;
    },
    count: () => count,
  };
}

/** Most ripper messages one rip writes to the job log (repeats are dropped too). */
export const RIP_MESSAGE_LIMIT = 40;

/** Passes each distinct message once, at most `limit` per rip (over all ripper calls of the rip). */
export function messageBudget(limit: number, write: (text: string) => void): (text: string) => void {
  const seen = new Set<string>();
  return (text) => {
    if (seen.has(text) || seen.size >= limit) return;
    seen.add(text);
    write(text);
  };
}

export interface RipResult {
  files: string[];
  /** Per raw file (same order): the title it was ripped from, with its role on a recognised disc. */
  titles: RippedTitle[];
  /** Set when the job ended here (no transcode stage). */
  output?: { output_path: string; files: string[] };
  /** An audio CD's tracks checked against AccurateRip. */
  accuraterip?: AccurateRipReport;
}

/**
 * worker.tasks.rip_disc: one ripper call per selected title into the raw dir (named like the job id),
 * progress shared in proportion. Free space is checked against the disc size first (the selected
 * titles' size when the disc size is not known). Without a transcode stage the files move into the
 * output folder.
 */
export async function runRip(args: RipJob, source: DiscSource, ripper: Ripper, ctx: TaskContext, disc?: Pick<DiscInfo, 'type' | 'size_bytes'>): Promise<RipResult> {
  await fs.mkdir(args.raw_dir, { recursive: true });
  const tracks = await ripper.scan(source, ctx.signal, disc?.type);
  const { titles: selected, notes, roles, main, feature } = chooseTitles(tracks, args);
  if (main) ctx.log('info', main);
  for (const note of notes) ctx.log('info', note);
  await checkFreeSpace(args.raw_dir, disc?.size_bytes || selected.reduce((sum, t) => sum + t.size_bytes, 0));
  ctx.log('info', `ripping ${selected.length} title(s) (${selected.map((t) => t.number).join(', ')}) with ${ripper.name} into ${args.raw_dir}`);

  const throttle = new ProgressThrottle(ctx.progress, ctx.progressEveryMs);
  const totalSeconds = selected.reduce((sum, t) => sum + Math.max(t.seconds, 1), 0);
  let doneSeconds = 0;
  const files: string[] = [];
  const ripped: RippedTitle[] = [];
  const budget = messageBudget(RIP_MESSAGE_LIMIT, (text) => ctx.log('info', text));
  const readErrors = readErrorLog(RIP_READ_ERROR_LIMIT, (text) => ctx.log('warn', text));
  const message = (text: string): void => (text.startsWith(READ_ERROR_PREFIX) ? readErrors.add(text) : budget(text));
  try {
    for (const track of selected) {
      const weight = Math.max(track.seconds, 1);
      const produced = await ripper.rip(source, track, args.raw_dir, {
        signal: ctx.signal,
        onSpawn: ctx.onSpawn,
        onMessage: message,
        ...(disc ? { discType: disc.type } : {}),
        ...(args.careful ? { careful: true } : {}),
        onProgress: (pct) => throttle.update(((doneSeconds + (weight * pct) / 100) / totalSeconds) * 100),
      });
      const kept = await Promise.all(produced.map((file) => ownName(file, track.number)));
      files.push(...kept);
      for (const file of kept) {
        ripped.push({ number: track.number, file, source_file: track.source_file ?? null, segment_map: track.segment_map ?? null, seconds: track.seconds, size_bytes: track.size_bytes, role: roles.get(track.number) ?? null, ...(track.number === feature ? { main_feature: true } : {}) });
      }
      doneSeconds += weight;
      throttle.update((doneSeconds / totalSeconds) * 100);
    }
  } finally {
    // Also when the rip fails: the count says why its files may have gaps, or why it stopped.
    const summary = readErrors.summary();
    if (summary) ctx.log('warn', summary, { read_errors: readErrors.count() });
  }
  throttle.flush();
  if (args.transcode) return { files, titles: ripped };

  const plan = await planOutput({ ...args });
  const byRole = ripped.some((t) => t.role !== null) && ripped.length === files.length;
  const named = byRole
    ? roleNames(
        ripped.map((t) => t.role),
        plan,
        { series: Boolean(args.series), extrasFolder: args.extras_folder || DEFAULT_EXTRAS_FOLDER, byKind: args.extras_by_kind ?? false, ext: '.mkv' },
      )
    : null;
  const out: string[] = [];
  for (const [i, file] of files.entries()) {
    const dir = named ? path.join(plan.dir, named[i].subdir) : plan.dir;
    await fs.mkdir(dir, { recursive: true });
    const name = await claimFileName(dir, named ? `${path.parse(named[i].name).name}${path.extname(file)}` : outputFileName(plan, i, files.length, path.extname(file), Boolean(args.series)));
    const dest = path.join(dir, name);
    try {
      if (args.keep_original) await fs.copyFile(file, dest);
      else await moveFile(file, dest);
    } catch (err) {
      await fs.rm(dest, { force: true });
      throw err;
    } finally {
      releaseFileName(dir, name);
    }
    out.push(dest);
  }
  if (!args.keep_original) await fs.rm(args.raw_dir, { recursive: true, force: true });
  if (args.library) await describeOutput(plan.dir, args.library, ctx, args.target_dir);
  return { files, titles: ripped, output: { output_path: plan.dir, files: out } };
}
