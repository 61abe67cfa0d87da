import type { Statement } from 'better-sqlite3';
import type { Db } from '../../shared/sqlite.js';
import { Logger } from '../../shared/log.js';
import type { Phase } from '../../shared/protocol.js';
import type { Job, JobLogLine, JobMeta } from '../../shared/api-types.js';
import { appendPoint, computeEtaSeconds, etaText, type ProgressPoint } from './eta.js';

import { ACTIVE_STATUSES, apiStatus, canMove, isLive, RETRYABLE_STATUSES, sqlList, TERMINAL_STATUSES, type JobStatus } from './job-status.js';
import { JobListBody, type LiveJson } from './list-body.js';
import { mergedMeta, parseJobMeta } from './job-meta.js';
import type { StatsRow } from './job-stats.js';

/** The meta keys the statistics read (coordinator/jobs/job-stats.ts StatsRow); constants, never input. */
const STATS_META_KEYS = ['disc_type', 'rip_seconds', 'transcode_seconds', 'raw_bytes', 'output_bytes'] as const;
import { EncoderSpeeds } from './encoder-speeds.js';

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
  /** Parsed and checked where the row is read (job-meta.ts); null when the stored value is absent or corrupt. */
  meta: JobMeta | null;
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

/** A job row as SQLite holds it: meta is the column's text. */
type StoredRow = Omit<JobRow, 'meta'> & { meta: string | null };

/** The columns a write may set besides status and meta (status: JobsStore.move; meta: a patch merged into the stored one). */
export type JobFields = Partial<Omit<JobRow, 'id' | 'created_at' | 'updated_at' | 'status' | 'meta'>>;

/** A row as read, with its meta parsed and checked: the one place meta is parsed. The row object is reused, not copied. */
function fromStored(row: StoredRow): JobRow;
function fromStored(row: StoredRow | undefined): JobRow | undefined;
function fromStored(row: StoredRow | undefined): JobRow | undefined {
  if (!row) return undefined;
  const typed = row as unknown as JobRow;
  typed.meta = parseJobMeta(row.meta);
  return typed;
}

/** The columns that start a phase: progress from 0, a new ETA series. */
export function phaseStart(phase: Phase): Pick<JobRow, 'phase' | 'progress' | 'eta_points'> {
  return { phase, progress: 0, eta_points: JSON.stringify([]) };
}

/**
 * What the raw-data sweep reads of a job (coordinator/jobs/raw-data.ts): SQLite takes the work_dir out
 * of meta when it is a text (as job-meta.ts checks it), so no meta reaches JS.
 */
export type RawSweepRow = Pick<JobRow, 'id' | 'raw_state' | 'raw_path' | 'raw_size'> & { work_dir: string | null };

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
export function outputTarget(row: Pick<JobRow, 'title' | 'meta'>): { title: string; year: number | null; series: string | null; season: number | null; library_folder?: string } {
  const folder = row.meta?.library_folder;
  return { title: row.title, year: row.meta?.year ?? null, series: row.meta?.series ?? null, season: row.meta?.season ?? null, ...(folder ? { library_folder: folder } : {}) };
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
    meta: row.meta,
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

/**
 * Job rows: every write goes through here, so the serialised-row cache of GET /jobs stays right. A
 * status changes only through move(), which checks the table of job-status.ts; every write of a row
 * is one UPDATE, its meta patch merged into the stored meta in the same statement.
 */
export class JobsStore {
  /** The GET /jobs body, kept in step with every write. */
  private readonly list: JobListBody<JobRow>;
  /** Prepared UPDATEs by column set: progress events write the same columns again and again. */
  private readonly updateStmts = new Map<string, Statement>();
  private readonly stmts;
  /** The encoder speed of each running phase, from its progress events (GET /capabilities). */
  readonly speeds = new EncoderSpeeds();

  constructor(
    private readonly db: Db,
    private readonly clock: () => number = Date.now,
    private readonly log: Logger = new Logger('jobs'),
  ) {
    this.list = new JobListBody<JobRow>({ all: () => this.all(), get: (id) => this.get(id), view: toView, live: liveRenderer }, clock);
    this.stmts = {
      get: db.prepare<[string], StoredRow>('SELECT * FROM jobs WHERE id = ?'),
      progressOf: db.prepare<[string], Pick<JobRow, 'phase' | 'eta_points'>>('SELECT phase, eta_points FROM jobs WHERE id = ?'),
      all: db.prepare<[], StoredRow>('SELECT * FROM jobs ORDER BY created_at DESC, id'),
      active: db.prepare<[], StoredRow>(`SELECT * FROM jobs WHERE status IN (${sqlList(ACTIVE_STATUSES)})`),
      rawSweepPage: db.prepare<[string, number], RawSweepRow>(
        // "+status": walk the primary key from `id > ?` and stop after LIMIT matches. With the status
        // index SQLite would collect and sort every match for each page: work in proportion to all jobs.
        // Only the columns the sweep reads: a page of whole rows cost two and a half times as much, and
        // the meta of each row, parsed for its work_dir, was a sixth of what a sweep allocated.
        `SELECT id, raw_state, raw_path, raw_size, CASE WHEN json_valid(meta) THEN CASE json_type(meta, '$.work_dir') WHEN 'text' THEN json_extract(meta, '$.work_dir') END END AS work_dir FROM jobs WHERE id > ? AND (+status IN (${sqlList(RETRYABLE_STATUSES)}) OR (+status = 'completed' AND raw_state = 'present')) ORDER BY id LIMIT ?`,
      ),
      insert: db.prepare(
        `INSERT INTO jobs (id, title, status, progress, target_dir, meta, device, node, created_at, updated_at)
         VALUES (@id, @title, 'pending', 0, @target_dir, @meta, @device, @node, @now, @now)`,
      ),
      remove: db.prepare<[string]>('DELETE FROM jobs WHERE id = ?'),
      endedSince: db.prepare<[string], StatsRow>(
        // Only what the figures read: the meta's few keys taken out by SQLite (a corrupt meta gives none),
        // so a year of jobs parses no meta in JS.
        `SELECT id, status, error, finished_at, ${STATS_META_KEYS.map((k) => `CASE WHEN json_valid(meta) THEN json_extract(meta, '$.${k}') END AS ${k}`).join(', ')} FROM jobs WHERE finished_at >= ? AND status IN (${sqlList(TERMINAL_STATUSES)})`,
      ),
      log: db.prepare('INSERT INTO job_logs (job_id, ts, level, message) VALUES (?, ?, ?, ?)'),
      logs: db.prepare<[string], { ts: string; level: string; message: string }>('SELECT ts, level, message FROM job_logs WHERE job_id = ? ORDER BY id'),
      removeLogs: db.prepare<[string]>('DELETE FROM job_logs WHERE job_id = ?'),
    };
  }

  private nowIso(): string {
    return new Date(this.clock()).toISOString();
  }

  get(id: string): JobRow | undefined {
    return fromStored(this.stmts.get.get(id));
  }

  all(): JobRow[] {
    return this.stmts.all.all().map((r) => fromStored(r));
  }

  active(): JobRow[] {
    return this.stmts.active.all().map((r) => fromStored(r));
  }

  /**
   * The next `limit` jobs after `afterId` (by id) whose raw data the sweep looks at: failed,
   * canceled, and completed ones that still have raw data. Read page by page, so no single read
   * costs in proportion to the number of jobs.
   */
  rawSweepPage(afterId: string, limit: number): RawSweepRow[] {
    return this.stmts.rawSweepPage.all(afterId, limit);
  }

  /** The ended jobs that finished at `fromIso` or later, with the meta keys the statistics read (GET /stats). */
  endedSince(fromIso: string): StatsRow[] {
    return this.stmts.endedSince.all(fromIso);
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
      .prepare<[string], StoredRow>(`SELECT * FROM jobs WHERE CASE WHEN json_valid(meta) THEN json_extract(meta, '$.fingerprint') END = ? ORDER BY created_at DESC`)
      .all(fingerprint)
      .map((r) => fromStored(r));
  }

  /** Runs several writes as one SQLite transaction (one commit instead of one per row). */
  inTransaction(fn: () => void): void {
    this.db.transaction(fn)();
  }

  /**
   * The one writer of a job's status: moves the job to `to` when the table of job-status.ts allows the
   * move from its current status, and writes the status, the other fields and the meta patch in one
   * UPDATE. A move the table does not allow is refused: logged with the job id, from and to, and not
   * written (undefined, as for a job that does not exist).
   */
  move(id: string, to: JobStatus, fields: JobFields = {}, meta?: JobMeta): JobRow | undefined {
    const row = this.get(id);
    if (!row) return undefined;
    if (!canMove(row.status, to)) {
      this.log.warn(`status change refused: ${row.status} → ${to} is no move of the job state table`, id);
      return undefined;
    }
    const written = this.write(id, { ...fields, status: to, ...(meta ? { meta: mergedMeta(row.meta, meta) } : {}) }, row.status);
    // The guard on the status read above: another connection changed the row in between.
    if (!written) this.log.warn(`status change refused: the job is no longer ${row.status} (wanted ${to})`, id);
    return written;
  }

  /** Writes the given columns and merges the meta patch into the stored meta, in one UPDATE; the status stays (move() changes it). */
  update(id: string, fields: JobFields, meta?: JobMeta): JobRow | undefined {
    if (!meta) return this.write(id, fields);
    const row = this.get(id);
    if (!row) return undefined;
    return this.write(id, { ...fields, meta: mergedMeta(row.meta, meta) }, row.status);
  }

  /**
   * One UPDATE of the given columns (`updated_at` is set), the written row returned by the same
   * statement. With `whileStatus` it writes only while the row still has that status (it was read
   * with it, and the new meta was merged from that read).
   */
  private write(id: string, columns: JobFields & { status?: JobStatus; meta?: string }, whileStatus?: JobStatus): JobRow | undefined {
    const entries = Object.entries({ ...columns, updated_at: this.nowIso() });
    const key = `${entries.map(([k]) => k).join(',')}${whileStatus ? '?' : ''}`;
    let stmt = this.updateStmts.get(key);
    if (!stmt) {
      // RETURNING: the written row in the same statement, not read again by a second one.
      stmt = this.db.prepare(`UPDATE jobs SET ${entries.map(([k]) => `${k} = @${k}`).join(', ')} WHERE id = @id${whileStatus ? ' AND status = @whileStatus' : ''} RETURNING *`);
      this.updateStmts.set(key, stmt);
    }
    const row = fromStored(stmt.get({ ...Object.fromEntries(entries), id, ...(whileStatus ? { whileStatus } : {}) }) as StoredRow | undefined);
    if (row || !whileStatus) this.list.track(id, row);
    return row;
  }

  /** Records a progress value of one phase; a new phase starts a new ETA series. `fps`: the encoder's speed, kept in memory only. */
  recordProgress(id: string, phase: Phase, progress: number, fps?: number): JobRow | undefined {
    const row = this.stmts.progressOf.get(id);
    if (!row) return undefined;
    this.speeds.record(id, phase, fps, this.clock());
    const series = row.phase === phase ? parsePoints(row.eta_points) : [];
    const points = appendPoint(series, { t: this.clock(), p: progress });
    const last = points.length ? points[points.length - 1].p : progress;
    return this.update(id, { phase, progress: Math.max(0, Math.min(100, last)), eta_points: JSON.stringify(points) });
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
