import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../shared/log.js';
import { AnswersInFlight } from '../http/answers-in-flight.js';
import { RAW_MEDIA_EXTENSIONS, TRANSCODE_INPUT_EXTENSIONS } from '../../shared/raw-media.js';
import type { JobRow, JobsStore, RawState, RawSweepRow } from './jobs-store.js';
import { ProbeShellPool } from '../../shared/probe-shell.js';
import type { SettingsStore } from '../system/settings-store.js';

export const PROBE_TIMEOUT_MS = 4_000;
export const REFRESH_MS = 30_000;

export interface RawFinding {
  state: RawState;
  path: string | null;
  size_bytes: number | null;
  checked_at: string | null;
}

/** find's test for a raw media file (shared/raw-media.ts): `-iname '*.mkv' -o -iname '*.m2ts' …`. */
const MEDIA_TEST = RAW_MEDIA_EXTENSIONS.map((ext) => `-iname '*.${ext}'`).join(' -o ');
/** Globs for files directly in "$d" (nocaseglob): `"$d"/*.mkv "$d"/*.mp4 …`. */
const globsIn = (extensions: readonly string[]): string => extensions.map((ext) => `"$d"/*.${ext}`).join(' ');

/**
 * The probe shell's script (shared/probe-shell.ts). Its function `answer` is called per request
 * with a mode, then each job's candidate folders followed by "".
 *
 * Mode "measure": a candidate counts only when it is a folder holding at least one video or audio
 * file (an empty folder left by a rip that failed before writing is no raw data). For job number i it
 * prints "i<TAB>absent" when no candidate counts, "i<TAB><bytes><TAB><dir>" for the first that does
 * (du prints its total even when it could not read everything below: the folder is there), or
 * "i<TAB>unclear" when du measured nothing or find could not look into a folder. A media file directly
 * in the folder is found by the shell's globbing; find runs only for one deeper (a DVD's VIDEO_TS, a
 * Blu-ray's BDMV/STREAM). One du measures all the request's folders at its end, so a sweep batch of
 * usual raw folders costs one process instead of one or two per job. The answers need not come in
 * job order.
 *
 * Mode "locate" (what "transcode again" needs): the first candidate holding a video file directly in
 * it, found with the shell's own globbing, so no process is started (find and du cost about 10 ms of
 * host CPU each to start): "i<TAB>-<TAB><dir>", or "i<TAB>absent".
 */
const PROBE_SCRIPT = [
  'shopt -s nullglob nocaseglob',
  // media= the first of its arguments that is a file and no link (as find -type f), else empty. A
  // function, not $(…): no subshell. Globbing starts no process either.
  'first_file() { media=; local f; for f; do if [ -f "$f" ] && [ ! -L "$f" ]; then media=$f; return; fi; done; }',
  // The folders found in measure mode (dirs, with their job numbers in jobs) are measured by one du
  // for the whole request, not one per job.
  "tab=$'\\t'",
  'measure_all() {',
  '  [ "${#dirs[@]}" = 0 ] && return',
  '  local k=0 line',
  // -0: one NUL-ended "bytes<TAB>folder" per folder du could measure, in the order given (a folder it
  // could not measure at all is left out). -l: a hard link counts in every folder it is in, so a
  // folder's size does not depend on which other folders share the request.
  '  while IFS= read -r -d "" line; do',
  '    while [ "$k" -lt "${#dirs[@]}" ] && [ "${dirs[k]}" != "${line#*"$tab"}" ]; do printf "%s\\tunclear\\n" "${jobs[k]}"; k=$((k+1)); done',
  '    [ "$k" -lt "${#dirs[@]}" ] || break',
  '    printf "%s\\t%s\\t%s\\n" "${jobs[k]}" "${line%%"$tab"*}" "${dirs[k]}"; k=$((k+1))',
  '  done < <(du -sbDl0 -- "${dirs[@]}" 2>/dev/null 3<&-)',
  '  while [ "$k" -lt "${#dirs[@]}" ]; do printf "%s\\tunclear\\n" "${jobs[k]}"; k=$((k+1)); done',
  '}',
  'answer() {',
  '  local mode=$1 d; shift',
  '  i=0; found=0; unclear=0; jobs=(); dirs=()',
  '  for d; do',
  '    if [ -z "$d" ]; then',
  '      if [ "$found" = 0 ]; then if [ "$unclear" = 1 ]; then printf "%s\\tunclear\\n" "$i"; else printf "%s\\tabsent\\n" "$i"; fi; fi',
  '      i=$((i+1)); found=0; unclear=0; continue',
  '    fi',
  '    [ "$found" = 1 ] && continue',
  '    case "$d" in /*) ;; *) continue ;; esac',
  '    if [ -d "$d" ] && [ "$mode" = locate ]; then',
  `      first_file ${globsIn(TRANSCODE_INPUT_EXTENSIONS)}`,
  '      if [ -n "$media" ]; then found=1; printf "%s\\t-\\t%s\\n" "$i" "$d"; fi',
  '    elif [ -d "$d" ]; then',
  // A media file directly in the folder needs no find; one deeper (VIDEO_TS, BDMV/STREAM) does.
  `      first_file ${globsIn(RAW_MEDIA_EXTENSIONS)}; st=0`,
  // -H and -D: a candidate that is a link is looked through, so it is reported and the routes refuse it (403).
  `      [ -n "$media" ] || { media=$(find -H "$d" -type f \\( ${MEDIA_TEST} \\) -print -quit 2>/dev/null 3<&-); st=$?; }`,
  '      if [ -z "$media" ]; then [ "$st" = 0 ] || unclear=1; continue; fi',
  '      found=1; jobs+=("$i"); dirs+=("$d")',
  '    fi',
  '  done',
  '  measure_all',
  '}',
].join('\n');

/** Jobs read per page of the background sweep (one short synchronous query each). */
const SWEEP_PAGE = 64;
/** Jobs per request to the sweep's probe shell (four pages): a few hundred bytes per job. */
const SWEEP_BATCH = 4 * SWEEP_PAGE;
/** A probe shell with nothing to do this long ends; the sweep's comes back every REFRESH_MS. */
const SHELL_IDLE_MS = 2 * REFRESH_MS;
/** Probes someone waits for (raw data of a job, delete, retry) run in up to this many shells at once. */
const FOREGROUND_SHELLS = 16;
/**
 * How long the sweep stores answers in one SQLite transaction before it lets the event loop go. A
 * request's 8 MB answer goes out in several writes, each waiting for the socket to drain: a fixed 16
 * answers per slice (about 5 ms on a busy 2-core host) held each of those writes that long.
 */
const STORE_SLICE_MS = 1;
/**
 * How long the sweep waits, between two of its steps, for the GET /jobs answers being sent to go out
 * (coordinator/http/answers-in-flight.ts); after that it takes its next step anyway, so clients asking
 * without pause or reading slowly delay the sweep but never stop it.
 */
const ANSWER_WAIT_MS = 50;
/**
 * The share of the time the sweep's storing may take while it runs: after a slice of t ms it pauses
 * 3t. A sweep that finds many answers changed at once (2,000 rows written, each rendered anew for the
 * list) spreads that work over one to two seconds instead of taking a core for half of one, so the other
 * processes of the host (the browser, a media server) keep theirs, as a database's background vacuum
 * is paced.
 */
const STORE_DUTY = 0.25;

type Probe = { state: RawState; path: string | null; size: number | null };
const UNCLEAR: Probe = { state: 'unclear', path: null, size: null };

/** The answers of one probe process, by job number; null when it did not finish within the limit. */
export function parseProbeOutput(stdout: string, count: number): Probe[] {
  const out: Probe[] = Array.from({ length: count }, () => UNCLEAR);
  for (const line of stdout.split('\n')) {
    const m = /^(\d+)\t(absent|unclear|(\d+|-)\t(.*))$/.exec(line);
    if (!m || Number(m[1]) >= count) continue;
    const i = Number(m[1]);
    if (m[2] === 'absent') out[i] = { state: 'absent', path: null, size: null };
    else if (m[3] !== undefined) out[i] = { state: 'present', path: m[4], size: m[3] === '-' ? null : Number(m[3]) };
  }
  return out;
}

/** A job as the sweep reads it, or whole (the routes). */
type RawJob = RawSweepRow | JobRow;

/** A plain folder name: joined to a root without path.join's normalising (a sweep joins several per job). */
const PLAIN_NAME = /^(?!\.\.?$)[A-Za-z0-9._-]+$/;
const NOT_NORMAL = /\/\.{0,2}\/|\/\.{1,2}$/;

/** path.join(root, name), the same folder for a job id; cheaper for the usual root and id. */
export function folderIn(root: string, name: string): string {
  // Anything path.join would change ("//", "/./", "/../", a trailing "/." or "/..", a relative root) goes through it.
  if (!PLAIN_NAME.test(name) || !path.isAbsolute(root) || NOT_NORMAL.test(root)) return path.join(root, name);
  return root.endsWith('/') ? root + name : `${root}/${name}`;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Lets the event loop go: for `ms` when given, else until the waiting I/O has been seen to. */
function yieldToLoop(ms = 0): Promise<void> {
  return new Promise<void>((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}

/**
 * Finds the raw data of a job: a directory named exactly like the job id in the container default,
 * the current workDir, the job's own work dir and every storage target (the media root, the
 * quick-pick folders and the mounted shares). Each probe is a child process with a hard time limit,
 * so a hanging network mount answers "unclear", never "absent".
 */
export class RawDataFinder {
  private timer: NodeJS.Timeout | null = null;
  /**
   * The probes run in long-lived shells (shared/probe-shell.ts), not a process each: the sweep's
   * one at the lowest CPU priority, so find and du leave the cores to the API, and up to
   * FOREGROUND_SHELLS at normal priority for probes someone waits for, so a busy host cannot starve
   * those into their time limit and one slow probe does not hold up the others.
   */
  private readonly background = new ProbeShellPool({ script: PROBE_SCRIPT, max: 1, lowPriority: true, idleMs: SHELL_IDLE_MS });
  private readonly foreground = new ProbeShellPool({ script: PROBE_SCRIPT, max: FOREGROUND_SHELLS, lowPriority: false, idleMs: SHELL_IDLE_MS });

  constructor(
    private readonly jobs: JobsStore,
    private readonly settings: SettingsStore,
    private readonly rawDir: string,
    private readonly log: Logger,
    /** The storage targets' folders (GET /storage-targets), searched after the work dirs. */
    private readonly storageTargets: () => string[] = () => [],
    /** The list answers being sent: the sweep's steps wait for them. */
    private readonly answers = new AnswersInFlight(),
  ) {}

  /**
   * Between two steps of the sweep: waiting requests are let in, and the answers they started go out
   * first; after `busyMs` of storing, the sweep pauses for its STORE_DUTY.
   */
  private async giveWay(busyMs = 0): Promise<void> {
    await yieldToLoop(busyMs * (1 / STORE_DUTY - 1));
    await this.answers.idle(ANSWER_WAIT_MS);
  }

  candidates(job: RawJob, shared = this.sharedRoots()): string[] {
    const dirs: string[] = [];
    const add = (dir: string): void => {
      if (!dirs.includes(dir)) dirs.push(dir);
    };
    if (job.raw_path) add(job.raw_path);
    const workDir = 'work_dir' in job ? job.work_dir : job.meta?.work_dir;
    for (const root of [shared[0], shared[1], workDir, ...shared.slice(2)]) {
      if (typeof root === 'string' && root.length > 0) add(folderIn(root, job.id));
    }
    return dirs;
  }

  /** The folders searched for every job: the container default, workDir, then the storage targets (read anew each call). */
  private sharedRoots(): (string | null | undefined)[] {
    return [this.rawDir, this.settings.get('workDir'), ...this.storageTargets()];
  }

  /**
   * Probes several jobs' candidate folders in one request with the hard time limit; null when it did
   * not finish in time (a hanging mount: its shell is stopped, find and du included), so the caller
   * can tell the slow one apart. `background`: the sweep's probe.
   */
  async probeMany(groups: string[][], background = false, mode: 'measure' | 'locate' = 'measure'): Promise<Probe[] | null> {
    // An empty field ends a job's list: candidates are absolute paths, never empty.
    const fields = [mode, ...groups.flatMap((dirs) => [...dirs.filter((d) => d !== ''), ''])];
    // The limit grows with the batch (a slow disk answers 256 jobs more slowly than 64), one job keeps PROBE_TIMEOUT_MS.
    const timeoutMs = PROBE_TIMEOUT_MS * Math.max(1, Math.ceil(groups.length / SWEEP_PAGE));
    const answer = await (background ? this.background : this.foreground).run(fields, timeoutMs);
    return answer === null ? null : parseProbeOutput(answer, groups.length);
  }

  async probe(dirs: string[]): Promise<Probe> {
    return (await this.probeMany([dirs]))?.[0] ?? UNCLEAR;
  }

  /** Probes one job and stores the answer; "unclear" keeps the last known answer. */
  async refresh(job: RawJob): Promise<RawFinding> {
    return this.store(job, await this.probe(this.candidates(job)));
  }

  /**
   * Where "transcode again" finds the job's video files: the first candidate folder with a video file
   * directly in it, looked up by the shell's globbing without starting a process (a burst of retries
   * started two per job before: find and du). The folder is stored as the job's raw data; its size
   * is kept when it is the folder already known, else left to the next sweep. When no candidate has
   * one, the full probe answers, so a folder with only audio files or only subfolders is told apart
   * from no raw data as before; a lookup that ran into the time limit answers unclear, without the full probe.
   */
  async locate(job: RawJob): Promise<RawFinding> {
    const found = await this.lookUp(this.candidates(job));
    if (found.state === 'absent') return this.refresh(job);
    const known = found.path === job.raw_path && job.raw_state === 'present';
    return this.store(job, found.state === 'present' ? { ...found, size: known ? job.raw_size : null } : found);
  }

  /** Lookups asked for in this turn of the event loop, to go to one shell together. */
  private lookups: { dirs: string[]; resolve: (found: Probe) => void }[] = [];

  /**
   * The "locate" probe of one job's folders. The lookups asked for in one turn of the event loop go
   * to one shell as one request (up to SWEEP_PAGE jobs): a burst of "transcode again" woke a shell,
   * and started ones up to FOREGROUND_SHELLS, for every job. A batch that runs into its time limit
   * (one job's folder on a dead mount) is asked again job by job, so the others still get their answer.
   */
  private lookUp(dirs: string[]): Promise<Probe> {
    return new Promise((resolve) => {
      if (this.lookups.length === 0) setImmediate(() => this.sendLookups());
      this.lookups.push({ dirs, resolve });
    });
  }

  private sendLookups(): void {
    for (const batch of chunks(this.lookups.splice(0), SWEEP_PAGE)) {
      void this.probeMany(
        batch.map((l) => l.dirs),
        false,
        'locate',
      ).then((answer) => {
        if (answer) batch.forEach((l, i) => l.resolve(answer[i]));
        else if (batch.length === 1) batch[0].resolve(UNCLEAR);
        else for (const l of batch) void this.probeMany([l.dirs], false, 'locate').then((one) => l.resolve(one?.[0] ?? UNCLEAR));
      });
    }
  }

  private store(job: RawJob, found: Probe): RawFinding {
    const now = new Date().toISOString();
    if (found.state === 'unclear') {
      this.log.warn(`raw-data probe for job ${job.id} timed out; keeping the last answer (${job.raw_state ?? 'unknown'})`, job.id);
      return { state: job.raw_state ?? 'unclear', path: job.raw_path, size_bytes: job.raw_size, checked_at: now };
    }
    const rawPath = found.path ?? job.raw_path;
    // Only a changed answer is written: a sweep over unchanged jobs leaves rows (and the GET /jobs cache) alone.
    if (found.state !== job.raw_state || rawPath !== job.raw_path || found.size !== job.raw_size) {
      this.jobs.update(job.id, { raw_state: found.state, raw_path: rawPath, raw_size: found.size, raw_checked_at: now });
    }
    return { state: found.state, path: found.state === 'present' ? found.path : null, size_bytes: found.size, checked_at: now };
  }

  /**
   * One sweep: the finished jobs in batches of SWEEP_BATCH per probe process; a batch that runs into
   * the time limit is probed again job by job, so one dead mount does not blur the others' answers.
   * The jobs are read page by page (by id) and the event loop is let go between pages, so the API
   * never waits for work that grows with the number of jobs.
   */
  async sweep(): Promise<void> {
    let jobs = 0;
    let present = 0;
    let after = '';
    for (let done = false; !done; ) {
      const batch: RawSweepRow[] = [];
      const groups: string[][] = [];
      const shared = this.sharedRoots();
      while (batch.length < SWEEP_BATCH) {
        const page = this.jobs.rawSweepPage(after, SWEEP_PAGE);
        for (const job of page) {
          batch.push(job);
          groups.push(this.candidates(job, shared));
        }
        if (page.length < SWEEP_PAGE) {
          done = true;
          break;
        }
        after = page[page.length - 1].id;
        // Let waiting requests in between pages.
        await this.giveWay();
      }
      if (batch.length === 0) break;
      jobs += batch.length;
      const found = await this.probeMany(groups, true);
      if (found) {
        for (let k = 0; k < batch.length; ) {
          // As many answers per commit as fit in STORE_SLICE_MS (at least one), then waiting requests go first.
          const started = performance.now();
          const until = started + STORE_SLICE_MS;
          this.jobs.inTransaction(() => {
            do {
              if (this.store(batch[k], found[k]).state === 'present') present++;
              k++;
            } while (k < batch.length && performance.now() < until);
          });
          await this.giveWay(performance.now() - started);
        }
      } else {
        for (const job of batch) if ((await this.refresh(job)).state === 'present') present++;
      }
      await this.giveWay();
    }
    this.lastSweep = { at: Date.now(), jobs, present };
  }

  /** When the last sweep ended, how many jobs it probed and how many had raw data (GET /health/vorraete). */
  lastSweep: { at: number; jobs: number; present: number } | null = null;

  /**
   * The background loop: every 30 s the finished jobs are probed again. The sweep's shell is started
   * now, with the coordinator, rather than by the first sweep: it stays while the sweeps come every
   * REFRESH_MS (it ends after SHELL_IDLE_MS without one), so no sweep holds the API with a fork.
   */
  start(): void {
    this.background.warm();
    const loop = (): void => {
      void this.sweep()
        .catch((err: Error) => this.log.warn(`raw-data refresh failed: ${err.message}`))
        .finally(() => {
          if (this.timer !== null) this.timer = setTimeout(loop, REFRESH_MS);
        });
    };
    this.timer = setTimeout(loop, REFRESH_MS);
  }

  /** Ends the sweep and the probe shells; a probe still running answers unclear. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.background.close();
    this.foreground.close();
  }
}
