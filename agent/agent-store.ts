import { randomUUID } from 'node:crypto';
import { openDatabase, type Db, type Migration } from '../shared/sqlite.js';
import type { AgentEvent, Command } from '../shared/protocol.js';

const migrations: Migration[] = [
  {
    version: 1,
    name: 'tasks and outbox',
    up: `
      CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        task TEXT NOT NULL,
        job_id TEXT,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        pid INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL UNIQUE,
        coalesce_key TEXT UNIQUE,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
];

export type TaskState = 'waiting' | 'running' | 'done' | 'failed' | 'canceled' | 'interrupted';

export interface TaskRow {
  id: string;
  task: string;
  job_id: string | null;
  payload: string;
  state: TaskState;
  pid: number | null;
}

type EventBody = AgentEvent extends infer E ? (E extends AgentEvent ? Omit<E, 'event_id' | 'node' | 'ts'> : never) : never;

/** The agent's own SQLite: the tasks it runs and the events the coordinator has not acknowledged. */
export class AgentStore {
  readonly db: Db;

  constructor(file: string, private readonly node: string) {
    this.db = openDatabase(file, migrations);
  }

  /** Inserts a task unless its id is known (a QoS 1 redelivery). Returns true when new. */
  addTask(cmd: Command & { job_id?: string }): boolean {
    const now = new Date().toISOString();
    const res = this.db
      .prepare(`INSERT OR IGNORE INTO tasks (id, task, job_id, payload, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'waiting', ?, ?)`)
      .run(cmd.id, cmd.task, cmd.job_id ?? null, JSON.stringify(cmd), now, now);
    return res.changes === 1;
  }

  getTask(id: string): TaskRow | undefined {
    return this.db.prepare<[string], TaskRow>('SELECT id, task, job_id, payload, state, pid FROM tasks WHERE id = ?').get(id);
  }

  setTaskState(id: string, state: TaskState, pid: number | null = null): void {
    this.db.prepare('UPDATE tasks SET state = ?, pid = COALESCE(?, pid), updated_at = ? WHERE id = ?').run(state, pid, new Date().toISOString(), id);
  }

  setTaskPid(id: string, pid: number): void {
    this.db.prepare('UPDATE tasks SET pid = ? WHERE id = ?').run(pid, id);
  }

  tasksIn(states: TaskState[]): TaskRow[] {
    const marks = states.map(() => '?').join(',');
    return this.db.prepare<TaskState[], TaskRow>(`SELECT id, task, job_id, payload, state, pid FROM tasks WHERE state IN (${marks}) ORDER BY created_at`).all(...states);
  }

  /**
   * The command ids this agent answers for: tasks running or waiting, and finished tasks whose outcome
   * is still in the outbox (it is on its way, so the coordinator must not take the task as lost).
   */
  heldTaskIds(): string[] {
    const active = this.tasksIn(['waiting', 'running']).map((t) => t.id);
    const pending = this.db
      .prepare<[], { id: string }>(
        `SELECT DISTINCT json_extract(payload, '$.command_id') AS id FROM outbox
         WHERE json_extract(payload, '$.type') IN ('rip_done', 'job_done', 'job_failed', 'job_canceled') AND json_extract(payload, '$.command_id') IS NOT NULL`,
      )
      .all()
      .map((r) => r.id);
    return [...new Set([...active, ...pending])];
  }

  /** Drops finished task rows older than the given age, so the table stays small. */
  pruneTasks(olderThanMs: number): void {
    const cutoff = new Date(Date.now() - olderThanMs).toISOString();
    this.db.prepare(`DELETE FROM tasks WHERE state IN ('done','failed','canceled','interrupted') AND updated_at < ?`).run(cutoff);
  }

  /**
   * Stores an event for delivery. Progress events with the same coalesce key replace each other,
   * so an outage leaves one pending progress value per task instead of thousands.
   */
  enqueueEvent(body: EventBody, coalesceKey?: string): AgentEvent {
    const event = { ...body, event_id: randomUUID(), node: this.node, ts: new Date().toISOString() } as AgentEvent;
    const payload = JSON.stringify(event);
    const now = event.ts;
    if (coalesceKey) {
      this.db
        .prepare(
          `INSERT INTO outbox (event_id, coalesce_key, payload, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT(coalesce_key) DO UPDATE SET event_id = excluded.event_id, payload = excluded.payload`,
        )
        .run(event.event_id, coalesceKey, payload, now);
    } else {
      this.db.prepare('INSERT INTO outbox (event_id, payload, created_at) VALUES (?, ?, ?)').run(event.event_id, payload, now);
    }
    return event;
  }

  pendingEvents(): { seq: number; payload: string }[] {
    return this.db.prepare<[], { seq: number; payload: string }>('SELECT seq, payload FROM outbox ORDER BY seq').all();
  }

  ackEvents(ids: string[]): void {
    const stmt = this.db.prepare('DELETE FROM outbox WHERE event_id = ?');
    this.db.transaction(() => {
      for (const id of ids) stmt.run(id);
    })();
  }

  outboxSize(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM outbox').get() as { n: number }).n;
  }

  close(): void {
    this.db.close();
  }
}
