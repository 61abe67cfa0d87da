import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/sqlite.js';
import type { Session, SessionDisc } from './session-plan.js';

/** A sessions row: the session without its discs. */
type SessionRow = Omit<Session, 'discs'>;

/** A session_discs row: SQLite keeps `waiting` as 0 or 1. */
type DiscRow = Omit<SessionDisc, 'waiting'> & { session_id: string; waiting: number };

/** How many sessions GET /sessions lists (open ones first, then the newest ended). */
const LIST_LIMIT = 50;

/** The tables sessions and session_discs (migration 13): a session and its discs, nothing decided here. */
export class SessionStore {
  constructor(private readonly db: Db) {}

  create(s: Omit<Session, 'id' | 'state' | 'created_at' | 'ended_at' | 'discs'>): Session {
    const id = randomUUID();
    const created_at = new Date().toISOString();
    this.db
      .prepare('INSERT INTO sessions (id, kind, series, season, disc_total, drive, release, origin, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, s.kind, s.series, s.season, s.disc_total, s.drive, s.release, s.origin, 'open', created_at);
    return this.get(id) as Session;
  }

  get(id: string): Session | undefined {
    const row = this.db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?').get(id);
    return row ? this.withDiscs(row) : undefined;
  }

  open(): Session[] {
    return this.db.prepare<[], SessionRow>(`SELECT * FROM sessions WHERE state = 'open' ORDER BY created_at, rowid`).all().map((r) => this.withDiscs(r));
  }

  list(): Session[] {
    return this.db
      .prepare<[number], SessionRow>(`SELECT * FROM sessions ORDER BY state = 'ended', COALESCE(ended_at, created_at) DESC, rowid DESC LIMIT ?`)
      .all(LIST_LIMIT)
      .map((r) => this.withDiscs(r));
  }

  /** The session a job's disc belongs to, with the disc. */
  byJob(jobId: string): { session: Session; disc: SessionDisc } | undefined {
    const row = this.db.prepare<[string], { session_id: string }>('SELECT session_id FROM session_discs WHERE job_id = ?').get(jobId);
    const session = row ? this.get(row.session_id) : undefined;
    const disc = session?.discs.find((d) => d.job_id === jobId);
    return session && disc ? { session, disc } : undefined;
  }

  /** A disc joins (a failed disc of the same number is replaced by the new try). */
  addDisc(sessionId: string, discNumber: number, jobId: string): void {
    this.db
      .prepare(
        `INSERT INTO session_discs (session_id, disc_number, job_id, state, updated_at) VALUES (?, ?, ?, 'ripping', ?)
         ON CONFLICT(session_id, disc_number) DO UPDATE SET job_id = excluded.job_id, state = 'ripping', files = NULL, episode_first = NULL, episode_last = NULL, waiting = 0, updated_at = excluded.updated_at`,
      )
      .run(sessionId, discNumber, jobId, new Date().toISOString());
  }

  updateDisc(jobId: string, fields: Partial<Pick<SessionDisc, 'state' | 'files' | 'episode_first' | 'episode_last' | 'waiting'>>): void {
    const sets: string[] = [];
    const values: (string | number | null)[] = [];
    for (const [key, value] of Object.entries(fields)) {
      sets.push(`${key} = ?`);
      values.push(typeof value === 'boolean' ? Number(value) : (value as string | number | null));
    }
    if (!sets.length) return;
    this.db.prepare(`UPDATE session_discs SET ${sets.join(', ')}, updated_at = ? WHERE job_id = ?`).run(...values, new Date().toISOString(), jobId);
  }

  setRelease(id: string, release: string, discTotal: number | null): void {
    this.db.prepare('UPDATE sessions SET release = ?, disc_total = COALESCE(disc_total, ?) WHERE id = ?').run(release, discTotal, id);
  }

  end(id: string): void {
    this.db.prepare(`UPDATE sessions SET state = 'ended', ended_at = ? WHERE id = ? AND state = 'open'`).run(new Date().toISOString(), id);
  }

  private withDiscs(row: SessionRow): Session {
    const discs = this.db
      .prepare<[string], DiscRow>('SELECT * FROM session_discs WHERE session_id = ? ORDER BY disc_number')
      .all(row.id)
      .map((d): SessionDisc => ({ disc_number: d.disc_number, job_id: d.job_id, state: d.state, files: d.files, episode_first: d.episode_first, episode_last: d.episode_last, waiting: d.waiting === 1 }));
    return { ...row, discs };
  }
}
