import path from 'node:path';
import { makePrivateTree } from '../shared/private-files.js';
import { openDatabase, type Db, type Migration } from '../shared/sqlite.js';
import type { AgentEvent, Command } from '../shared/protocol.js';
import { stampEvent, type EventBody, type OpenTaskStore, type TaskRow, type TaskState, type TaskStore } from './task-store.js';

export type { TaskRow, TaskState } from './task-store.js';

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

/** The agent's own SQLite: the tasks it runs and the events the coordinator has not acknowledged. */
export class AgentStore implements TaskStore {
  readonly db: Db;

  constructor(file: string, private readonly node: string) {
    this.db = openDatabase(file, migrations);
  }

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
    this.db.prepare('UPDATE tasks SET state = ?, pid = COALESCE(?, pid), updated_at = ? WHERE id = ?').run(state, pid ?? null, new Date().toISOString(), id);
  }

  setTaskPid(id: string, pid: number): void {
    this.db.prepare('UPDATE tasks SET pid = ? WHERE id = ?').run(pid, id);
  }

  tasksIn(states: TaskState[]): TaskRow[] {
    const marks = states.map(() => '?').join(',');
    return this.db.prepare<TaskState[], TaskRow>(`SELECT id, task, job_id, payload, state, pid FROM tasks WHERE state IN (${marks}) ORDER BY created_at`).all(...states);
  }

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

  pruneTasks(olderThanMs: number): void {
    const cutoff = new Date(Date.now() - olderThanMs).toISOString();
    this.db.prepare(`DELETE FROM tasks WHERE state IN ('done','failed','canceled','interrupted') AND updated_at < ?`).run(cutoff);
  }

  enqueueEvent(body: EventBody, coalesceKey?: string): AgentEvent {
    const event = stampEvent(body, this.node);
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

/** The usual agent's store: DATA_DIR/agent-<WORKER_NAME>.sqlite. */
/** Opens the agent's store in DATA_DIR, which is made private first (0700, Ripwerk's files in it 0600). */
export const openSqliteTaskStore: OpenTaskStore = (dataDir, workerName, node) => {
  makePrivateTree(dataDir);
  return new AgentStore(path.join(dataDir, `agent-${workerName}.sqlite`), node);
};
