import path from 'node:path';
import type { Logger } from '../shared/log.js';
import { runTool } from '../shared/process.js';
import type { JobRow, JobsStore, RawState } from './jobs-store.js';
import { parseMeta } from './jobs-store.js';
import type { SettingsStore } from './settings-store.js';

export const PROBE_TIMEOUT_MS = 4_000;
export const REFRESH_MS = 30_000;

export interface RawFinding {
  state: RawState;
  path: string | null;
  size_bytes: number | null;
  checked_at: string | null;
}

// Prints "<bytes>\t<dir>" for the first candidate that is a directory; nothing when none is.
// du's exit status is passed on: a folder that is there but cannot be measured is not "absent".
const PROBE_SCRIPT = 'for d in "$@"; do if [ -d "$d" ]; then du -sb -- "$d"; exit $?; fi; done; exit 0';

/**
 * Finds the raw data of a job: a directory named exactly like the job id in the container default,
 * the current workDir and the job's own work dir (storage targets join with issue 5). Each probe is
 * a child process with a hard time limit, so a hanging network mount answers "unclear", never "absent".
 */
export class RawDataFinder {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly jobs: JobsStore,
    private readonly settings: SettingsStore,
    private readonly rawDir: string,
    private readonly log: Logger,
  ) {}

  candidates(job: JobRow): string[] {
    const roots = [this.rawDir, this.settings.get('workDir'), parseMeta(job.meta)?.work_dir].filter((r): r is string => typeof r === 'string' && r.length > 0);
    const dirs = roots.map((r) => path.join(r, job.id));
    if (job.raw_path) dirs.unshift(job.raw_path);
    return [...new Set(dirs)];
  }

  async probe(dirs: string[]): Promise<{ state: RawState; path: string | null; size: number | null }> {
    try {
      // runTool stops the whole process group at the limit: a du stuck on a dead mount included.
      const result = await runTool('sh', ['-c', PROBE_SCRIPT, 'probe', ...dirs], { timeoutMs: PROBE_TIMEOUT_MS, captureStdout: true });
      const line = result.stdout.split('\n').find((l) => l.includes('\t'));
      if (line) {
        // du prints the total even when it could not read everything below (exit 1): the folder is there.
        const [size, dir] = line.split('\t');
        return { state: 'present', path: dir, size: Number(size) };
      }
      if (result.exitCode !== 0) return { state: 'unclear', path: null, size: null };
      return { state: 'absent', path: null, size: null };
    } catch {
      return { state: 'unclear', path: null, size: null };
    }
  }

  /** Probes one job and stores the answer; "unclear" keeps the last known answer. */
  async refresh(job: JobRow): Promise<RawFinding> {
    const found = await this.probe(this.candidates(job));
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

  /** The background loop: every 30 s the finished jobs are probed again. */
  start(): void {
    const run = async (): Promise<void> => {
      for (const job of this.jobs.all()) {
        if (job.status !== 'failed' && job.status !== 'canceled' && !(job.status === 'completed' && job.raw_state === 'present')) continue;
        await this.refresh(job);
      }
    };
    const loop = (): void => {
      void run()
        .catch((err: Error) => this.log.warn(`raw-data refresh failed: ${err.message}`))
        .finally(() => {
          if (this.timer !== null) this.timer = setTimeout(loop, REFRESH_MS);
        });
    };
    this.timer = setTimeout(loop, REFRESH_MS);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
