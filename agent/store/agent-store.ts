import path from 'node:path';
import { makePrivateTree } from '../../shared/private-files.js';
import { openDatabase, type Db, type Migration } from '../../shared/sqlite.js';
import type { AgentEvent, Command } from '../../shared/protocol.js';
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

/** The agent's statements, prepared once when the store opens: preparing on every call took more time than running them. */
function prepareStatements(db: Db) {
  return {
    addTask: db.prepare<[string, string, string | null, string, string, string]>(
      `INSERT OR IGNORE INTO tasks (id, task, job_id, payload, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'waiting', ?, ?)`,
    ),
    getTask: db.prepare<[string], TaskRow>('SELECT id, task, job_id, payload, state, pid FROM tasks WHERE id = ?'),
    setTaskState: db.prepare<[TaskState, number | null, string, string]>('UPDATE tasks SET state = ?, pid = COALESCE(?, pid), updated_at = ? WHERE id = ?'),
    setTaskPid: db.prepare<[number, string]>('UPDATE tasks SET pid = ? WHERE id = ?'),
    // The states as a JSON array: one statement serves every set of states.
    tasksIn: db.prepare<[string], TaskRow>('SELECT id, task, job_id, payload, state, pid FROM tasks WHERE state IN (SELECT value FROM json_each(?)) ORDER BY created_at'),
    pendingOutcomeIds: db.prepare<[], { id: string }>(
      `SELECT DISTINCT json_extract(payload, '$.command_id') AS id FROM outbox
       WHERE json_extract(payload, '$.type') IN ('rip_done', 'job_done', 'job_failed', 'job_canceled') AND json_extract(payload, '$.command_id') IS NOT NULL`,
    ),
    pruneTasks: db.prepare<[string]>(`DELETE FROM tasks WHERE state IN ('done','failed','canceled','interrupted') AND updated_at < ?`),
    coalesceEvent: db.prepare<[string, string, string, string]>(
      `INSERT INTO outbox (event_id, coalesce_key, payload, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(coalesce_key) DO UPDATE SET event_id = excluded.event_id, payload = excluded.payload`,
    ),
    addEvent: db.prepare<[string, string, string]>('INSERT INTO outbox (event_id, payload, created_at) VALUES (?, ?, ?)'),
    pendingEvents: db.prepare<[], { seq: number; payload: string }>('SELECT seq, payload FROM outbox ORDER BY seq'),
    ackEvent: db.prepare<[string]>('DELETE FROM outbox WHERE event_id = ?'),
    outboxSize: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM outbox'),
  };
}

/** The agent's own SQLite: the tasks it runs and the events the coordinator has not acknowledged. */
export class AgentStore implements TaskStore {
  readonly db: Db;
  private readonly sql: ReturnType<typeof prepareStatements>;
  private readonly ackAll: (ids: string[]) => void;

  constructor(file: string, private readonly node: string) {
    this.db = openDatabase(file, migrations);
    this.sql = prepareStatements(this.db);
    this.ackAll = this.db.transaction((ids: string[]) => {
      for (const id of ids) this.sql.ackEvent.run(id);
    });
  }

  addTask(cmd: Command & { job_id?: string }): boolean {
    const now = new Date().toISOString();
    return this.sql.addTask.run(cmd.id, cmd.task, cmd.job_id ?? null, JSON.stringify(cmd), now, now).changes === 1;
  }

  getTask(id: string): TaskRow | undefined {
    return this.sql.getTask.get(id);
  }

  setTaskState(id: string, state: TaskState, pid: number | null = null): void {
    this.sql.setTaskState.run(state, pid ?? null, new Date().toISOString(), id);
  }

  setTaskPid(id: string, pid: number): void {
    this.sql.setTaskPid.run(pid, id);
  }

  tasksIn(states: TaskState[]): TaskRow[] {
    return this.sql.tasksIn.all(JSON.stringify(states));
  }

  heldTaskIds(): string[] {
    const active = this.tasksIn(['waiting', 'running']).map((t) => t.id);
    const pending = this.sql.pendingOutcomeIds.all().map((r) => r.id);
    return [...new Set([...active, ...pending])];
  }

  pruneTasks(olderThanMs: number): void {
    this.sql.pruneTasks.run(new Date(Date.now() - olderThanMs).toISOString());
  }

  enqueueEvent(body: EventBody, coalesceKey?: string): AgentEvent {
    const event = stampEvent(body, this.node);
    const payload = JSON.stringify(event);
    if (coalesceKey) this.sql.coalesceEvent.run(event.event_id, coalesceKey, payload, event.ts);
    else this.sql.addEvent.run(event.event_id, payload, event.ts);
    return event;
  }

  pendingEvents(): { seq: number; payload: string }[] {
    return this.sql.pendingEvents.all();
  }

  ackEvents(ids: string[]): void {
    this.ackAll(ids);
  }

  outboxSize(): number {
    return (this.sql.outboxSize.get() as { n: number }).n;
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
