/**
 * Which titles of a disc are in the library: each title a finished job put there, remembered with
 * the disc's identity and the title's own source (playlist or DVD title, segment map, duration,
 * size) and its role. A disc inserted again is compared title by title (shared/disc-titles.ts), so
 * the automatic rip can take only what is missing.
 */
import type { TitleEvidence, TitleRole } from '../../shared/disc-titles.js';
import type { RippedTitle } from '../../shared/protocol.js';
import type { Db } from '../../shared/sqlite.js';
import type { Statement } from 'better-sqlite3';

/** A remembered title: what it was ripped from, its role, and the file it became. */
export interface LibraryTitle extends TitleEvidence {
  number: number;
  role: TitleRole | null;
  output_file: string | null;
  job_id: string;
}

interface Row {
  job_id: string;
  source_file: string | null;
  segment_map: string | null;
  seconds: number;
  size_bytes: number;
  role: string | null;
  output_file: string | null;
}

function parseRole(text: string | null): TitleRole | null {
  if (!text) return null;
  try {
    const role = JSON.parse(text) as TitleRole;
    return role && typeof role === 'object' && typeof role.role === 'string' ? role : null;
  } catch {
    return null;
  }
}

export class LibraryTitles {
  private readonly insert: Statement<[string, string, string | null, string | null, number, number, string | null, string | null, string]>;
  private readonly byDisc: Statement<[string], Row>;
  private readonly dropJob: Statement<[string]>;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      'INSERT INTO library_titles (fingerprint, job_id, source_file, segment_map, seconds, size_bytes, role, output_file, ripped_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.byDisc = db.prepare('SELECT job_id, source_file, segment_map, seconds, size_bytes, role, output_file FROM library_titles WHERE fingerprint = ? ORDER BY id');
    this.dropJob = db.prepare('DELETE FROM library_titles WHERE job_id = ?');
  }

  /**
   * A finished job's titles: each ripped title with the output file at its place (outputs[i] of
   * titles[i] when the counts agree). A job recorded again (a repeated job_done) replaces its rows.
   */
  record(fingerprint: string, jobId: string, titles: readonly RippedTitle[], outputs: readonly string[]): void {
    const now = new Date().toISOString();
    const aligned = outputs.length === titles.length;
    this.db.transaction(() => {
      this.dropJob.run(jobId);
      titles.forEach((t, i) => {
        this.insert.run(fingerprint, jobId, t.source_file ?? null, t.segment_map ?? null, Math.round(t.seconds), Math.round(t.size_bytes), t.role ? JSON.stringify(t.role) : null, aligned ? outputs[i] : null, now);
      });
    })();
  }

  /** The remembered titles of a disc identity, oldest first. */
  forDisc(fingerprint: string): LibraryTitle[] {
    return this.byDisc.all(fingerprint).map((r, i) => ({
      number: i,
      source_file: r.source_file,
      segment_map: r.segment_map,
      seconds: r.seconds,
      size_bytes: r.size_bytes,
      role: parseRole(r.role),
      output_file: r.output_file,
      job_id: r.job_id,
    }));
  }
}
