import type { Statement } from 'better-sqlite3';
import type { Db } from '../../shared/sqlite.js';
import type { Phase } from '../../shared/protocol.js';
import type { Job, JobLogLine, JobMeta } from '../../shared/api-types.js';
import { appendPoint, computeEtaSeconds, etaText, type ProgressPoint } from './eta.js';

import { ACTIVE_STATUSES, apiStatus, isLive, RETRYABLE_STATUSES, sqlList, type JobStatus } from './job-status.js';
import { JobListBody, type LiveJson } from './list-body.js';

export type { JobStatus } from './job-status.js';
export type { JobMeta };
export type RawState = 'present' | 'absent' | 'unclear';


export interface JobRow {
  id: string;
  title: string;
  status: JobStatus;
  progress: number;
  output_path: string | null;
  target_dir: string | null;
  meta: string | null;
  device: string | null;
  node: string | null;
  transcode_node: string | null;
  error: string | null;
  phase: Phase | null;
  eta_points: string | null;
  raw_state: RawState | null;
  raw_path: string | null;
  raw_size: number | null;
  raw_checked_at: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** What the raw-data sweep reads of a job (coordinator/jobs/raw-data.ts): SQLite takes the work_dir out of meta, so no meta reaches JS. */
export type RawSweepRow = Pick<JobRow, 'id' | 'raw_state' | 'raw_path' | 'raw_size'> & { work_dir: unknown };

export function parseMeta(raw: string | null): JobMeta | null {
  if (!raw) return null;
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as JobMeta) : null;
  } catch {
    return null;
  }
}

/** A language list of a job's meta, or null when the job has none (made before languages were chosen). */
export function metaLanguages(meta: JobMeta | null, key: 'audio_languages' | 'subtitle_languages'): string[] | null {
  const v = meta?.[key];
  return Array.isArray(v) && v.every((c) => typeof c === 'string') ? v : null;
}

function parsePoints(raw: string | null): ProgressPoint[] {
  if (!raw) return [];
  try {
    const value: unknown = JSON.parse(raw);
    return Array.isArray(value) ? (value as ProgressPoint[]) : [];
  } catch {
    return [];
  }
}

/** Title, year and series/season of a job's output folder, from its row and meta. */
export function outputTarget(row: Pick<JobRow, 'title' | 'meta'>): { title: string; year: number | null; series: string | null; season: number | null } {
  const meta = parseMeta(row.meta) ?? {};
  return {
    title: row.title,
    year: typeof meta.year === 'number' ? meta.year : null,
    series: typeof meta.series === 'string' ? meta.series : null,
    season: typeof meta.season === 'number' ? meta.season : null,
  };
}

export function toView(row: JobRow, now: number): Job {
  return viewWithEta(row, isLive(row.status) ? computeEtaSeconds(parsePoints(row.eta_points), now) : null);
}

function viewWithEta(row: JobRow, eta: number | null): Job {
  return {
    id: row.id,
    title: row.title,
    status: apiStatus(row.status),
    progress: row.progress,
    output_path: row.output_path,
    target_dir: row.target_dir,
    meta: parseMeta(row.meta),
    can_retry: row.raw_state === 'present',
    eta_sekunden: eta,
    eta_text: etaText(eta),
    device: row.device,
    node: row.node,
    transcode_node: row.transcode_node,
    phase: row.phase,
    error: row.error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
  };
}

/** The ETA fields as JSON.stringify writes them in a view without an estimate. */
const NO_ETA = '"eta_sekunden":null,"eta_text":null';

/**
 * A live row's JSON at any moment, equal to JSON.stringify(toView(row, now)): the row is parsed and
 * rendered once, and each call puts in only the ETA, the one part that moves with the clock. A row
 * whose progress series gives no estimate (too few points, too short a span, no progress: a queued
 * transcode) has none at any moment (coordinator/jobs/eta.ts): its JSON is fixed, and returned as a string.
 */
export function liveRenderer(row: JobRow): LiveJson {
  const points = parsePoints(row.eta_points);
  const fixed = JSON.stringify(viewWithEta(row, null));
  // The last match is the view's own: the fields after meta are scalars, whose quotes are escaped.
  const at = fixed.lastIndexOf(NO_ETA);
  const last = points[points.length - 1];
  if (!isLive(row.status) || at < 0 || !last || computeEtaSeconds(points, last.t) === null) return fixed;
  const head = fixed.slice(0, at);
  const tail = fixed.slice(at + NO_ETA.length);
  return (now) => {
    const eta = computeEtaSeconds(points, now);
    return `${head}"eta_sekunden":${JSON.stringify(eta)},"eta_text":${JSON.stringify(etaText(eta))}${tail}`;
  };
}

export interface NewJob {
  id: string;
  title: string;
  target_dir: string;
  device: string;
  node: string;
  meta: JobMeta;
}

/** Job rows: every write goes through here, so the serialised-row cache of GET /jobs stays right. */
export class JobsStore {
  /** The GET /jobs body, kept in step with every write. */
  private readonly list: JobListBody<JobRow>;
  /** Prepared UPDATEs by column set: progress events write the same columns again and again. */
  private readonly updateStmts = new Map<string, Statement>();
  private readonly stmts;

  constructor(private readonly db: Db, private readonly clock: () => number = Date.now) {
    this.list = new JobListBody<JobRow>({ all: () => this.all(), get: (id) => this.get(id), view: toView, live: liveRenderer }, clock);
    this.stmts = {
      get: db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE id = ?'),
      all: db.prepare<[], JobRow>('SELECT * FROM jobs ORDER BY created_at DESC, id'),
      active: db.prepare<[], JobRow>(`SELECT * FROM jobs WHERE status IN (${sqlList(ACTIVE_STATUSES)})`),
      rawSweepPage: db.prepare<[string, number], RawSweepRow>(
        // "+status": walk the primary key from `id > ?` and stop after LIMIT matches. With the status
        // index SQLite would collect and sort every match for each page: work in proportion to all jobs.
        // Only the columns the sweep reads: a page of whole rows cost two and a half times as much, and
        // the meta of each row, parsed for its work_dir, was a sixth of what a sweep allocated.
        `SELECT id, raw_state, raw_path, raw_size, CASE WHEN json_valid(meta) THEN json_extract(meta, '$.work_dir') END AS work_dir FROM jobs WHERE id > ? AND (+status IN (${sqlList(RETRYABLE_STATUSES)}) OR (+status = 'completed' AND raw_state = 'present')) ORDER BY id LIMIT ?`,
      ),
      insert: db.prepare(
        `INSERT INTO jobs (id, title, status, progress, target_dir, meta, device, node, created_at, updated_at)
         VALUES (@id, @title, 'pending', 0, @target_dir, @meta, @device, @node, @now, @now)`,
      ),
      remove: db.prepare<[string]>('DELETE FROM jobs WHERE id = ?'),
      log: db.prepare('INSERT INTO job_logs (job_id, ts, level, message) VALUES (?, ?, ?, ?)'),
      logs: db.prepare<[string], { ts: string; level: string; message: string }>('SELECT ts, level, message FROM job_logs WHERE job_id = ? ORDER BY id'),
      removeLogs: db.prepare<[string]>('DELETE FROM job_logs WHERE job_id = ?'),
    };
  }

  private nowIso(): string {
    return new Date(this.clock()).toISOString();
  }

  get(id: string): JobRow | undefined {
    return this.stmts.get.get(id);
  }

  all(): JobRow[] {
    return this.stmts.all.all();
  }

  active(): JobRow[] {
    return this.stmts.active.all();
  }

  /**
   * The next `limit` jobs after `afterId` (by id) whose raw data the sweep looks at: failed,
   * canceled, and completed ones that still have raw data. Read page by page, so no single read
   * costs in proportion to the number of jobs.
   */
  rawSweepPage(afterId: string, limit: number): RawSweepRow[] {
    return this.stmts.rawSweepPage.all(afterId, limit);
  }

  create(job: NewJob): JobRow {
    this.stmts.insert.run({ ...job, meta: JSON.stringify(job.meta), now: this.nowIso() });
    const row = this.get(job.id) as JobRow;
    this.list.track(job.id, row);
    return row;
  }

  /** Every job of a disc (meta.fingerprint), newest first; a job with corrupt meta is none of them. */
  byFingerprint(fingerprint: string): JobRow[] {
    return this.db
      .prepare<[string], JobRow>(`SELECT * FROM jobs WHERE CASE WHEN json_valid(meta) THEN json_extract(meta, '$.fingerprint') END = ? ORDER BY created_at DESC`)
      .all(fingerprint);
  }

  /** Runs several writes as one SQLite transaction (one commit instead of one per row). */
  inTransaction(fn: () => void): void {
    this.db.transaction(fn)();
  }

  /** Updates the given columns; `updated_at` is set. */
  update(id: string, fields: Partial<Omit<JobRow, 'id' | 'created_at'>>): JobRow | undefined {
    const entries = Object.entries({ ...fields, updated_at: this.nowIso() });
    const columns = entries.map(([k]) => k).join(',');
    let stmt = this.updateStmts.get(columns);
    if (!stmt) {
      // RETURNING: the written row in the same statement, not read again by a second one.
      stmt = this.db.prepare(`UPDATE jobs SET ${entries.map(([k]) => `${k} = @${k}`).join(', ')} WHERE id = @id RETURNING *`);
      this.updateStmts.set(columns, stmt);
    }
    const row = stmt.get({ ...Object.fromEntries(entries), id }) as JobRow | undefined;
    this.list.track(id, row);
    return row;
  }

  updateMeta(id: string, patch: Partial<JobMeta>): JobRow | undefined {
    const row = this.get(id);
    if (!row) return undefined;
    return this.update(id, { meta: JSON.stringify({ ...(parseMeta(row.meta) ?? {}), ...patch }) });
  }

  /** Records a progress value of one phase; a new phase starts a new ETA series. */
  recordProgress(id: string, phase: Phase, progress: number): JobRow | undefined {
    const row = this.get(id);
    if (!row) return undefined;
    const series = row.phase === phase ? parsePoints(row.eta_points) : [];
    const points = appendPoint(series, { t: this.clock(), p: progress });
    const last = points.length ? points[points.length - 1].p : progress;
    return this.update(id, { phase, progress: Math.max(0, Math.min(100, last)), eta_points: JSON.stringify(points) });
  }

  startPhase(id: string, phase: Phase, fields: Partial<JobRow> = {}): JobRow | undefined {
    return this.update(id, { ...fields, phase, progress: 0, eta_points: JSON.stringify([]) });
  }

  remove(id: string): void {
    this.db.transaction(() => {
      this.stmts.remove.run(id);
      this.stmts.removeLogs.run(id);
    })();
    this.list.track(id, undefined);
  }

  addLog(id: string, level: string, message: string): void {
    this.stmts.log.run(id, this.nowIso(), level, message);
  }

  logs(id: string): JobLogLine[] {
    return this.stmts.logs.all(id);
  }

  /** GET /jobs body, in pieces (the route writes them one after the other); a request reads no rows. */
  listParts(): Buffer[] {
    return this.list.parts();
  }
}
