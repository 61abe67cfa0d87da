import fs from 'node:fs';
import path from 'node:path';
import type { AgentEvent, Command } from '../../shared/protocol.js';
import { OUTCOME_EVENTS, stampEvent, type EventBody, type OpenTaskStore, type TaskRow, type TaskState, type TaskStore } from './task-store.js';

interface StoredTask extends TaskRow {
  created_at: string;
  updated_at: string;
}

interface StoredEvent {
  seq: number;
  event_id: string;
  coalesce_key: string | null;
  payload: string;
  /** The event's type and command id, kept beside the payload so heldTaskIds need not parse it. */
  type: string;
  command_id: string | null;
  created_at: string;
}

interface StateFile {
  version: 1;
  next_seq: number;
  tasks: StoredTask[];
  outbox: StoredEvent[];
}

const TASK_STATES: ReadonlySet<string> = new Set(['waiting', 'running', 'done', 'failed', 'canceled', 'interrupted']);
const RENAME_RETRIES = 5;

function emptyState(): StateFile {
  return { version: 1, next_seq: 1, tasks: [], outbox: [] };
}

/** Checks the parsed file field by field; a reason when it is not a state file of this version. */
function validate(data: unknown): string | null {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return 'it is not a JSON object';
  const d = data as Record<string, unknown>;
  if (d.version !== 1) return `version ${JSON.stringify(d.version)} is not 1`;
  if (!Number.isInteger(d.next_seq) || (d.next_seq as number) < 1) return 'next_seq is not a positive whole number';
  if (!Array.isArray(d.tasks) || !Array.isArray(d.outbox)) return 'tasks or outbox is not a list';
  for (const t of d.tasks as Record<string, unknown>[]) {
    if (typeof t?.id !== 'string' || typeof t.task !== 'string' || typeof t.payload !== 'string' || !TASK_STATES.has(String(t.state)) || typeof t.updated_at !== 'string') return 'a task entry is incomplete';
  }
  for (const e of d.outbox as Record<string, unknown>[]) {
    if (!Number.isInteger(e?.seq) || typeof e.event_id !== 'string' || typeof e.payload !== 'string' || typeof e.type !== 'string') return 'an outbox entry is incomplete';
  }
  return null;
}

/** Blocks the thread for a few milliseconds (between rename attempts; the store is synchronous like SQLite). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * The task and outbox store of the native worker, in one JSON file (no native addon, so it fits into
 * a single-executable application). Same behaviour as the SQLite store. Every change rewrites the file
 * atomically: the new content goes to a temporary file in the same folder, is flushed to disk, then
 * renamed over the old one, so a crash leaves either the old or the new state, never a torn one.
 * The file stays small: finished tasks are pruned and acknowledged events removed.
 */
export class JsonTaskStore implements TaskStore {
  private state: StateFile;
  private closed = false;

  /** `onWarn` hears about a state file that could not be read (it is moved aside, the worker starts empty). */
  constructor(readonly file: string, private readonly node: string, onWarn: (message: string) => void = () => undefined) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.state = this.load(onWarn);
  }

  private load(onWarn: (message: string) => void): StateFile {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyState();
      throw err;
    }
    let reason: string | null;
    let data: unknown = null;
    try {
      data = JSON.parse(text);
      reason = validate(data);
    } catch (err) {
      reason = `it is not valid JSON (${(err as Error).message})`;
    }
    if (reason === null) return data as StateFile;
    const aside = `${this.file}.broken-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    fs.renameSync(this.file, aside);
    onWarn(`the state file ${this.file} could not be read (${reason}); it was moved to ${aside} and the worker starts with no tasks and an empty outbox`);
    return emptyState();
  }

  /** Writes the whole state: temporary file, fsync, rename over the old file. */
  private save(): void {
    if (this.closed) throw new Error(`the task store ${this.file} is closed`);
    const tmp = `${this.file}.tmp-${process.pid}`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeFileSync(fd, JSON.stringify(this.state));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    // Windows refuses the rename for a moment while a virus scanner or indexer holds the target open.
    for (let attempt = 1; ; attempt++) {
      try {
        fs.renameSync(tmp, this.file);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (attempt >= RENAME_RETRIES || (code !== 'EPERM' && code !== 'EBUSY' && code !== 'EACCES')) {
          fs.rmSync(tmp, { force: true });
          throw err;
        }
        pause(20 * attempt);
      }
    }
  }

  private row(t: StoredTask): TaskRow {
    return { id: t.id, task: t.task, job_id: t.job_id, payload: t.payload, state: t.state, pid: t.pid };
  }

  addTask(cmd: Command & { job_id?: string }): boolean {
    if (this.state.tasks.some((t) => t.id === cmd.id)) return false;
    const now = new Date().toISOString();
    this.state.tasks.push({ id: cmd.id, task: cmd.task, job_id: cmd.job_id ?? null, payload: JSON.stringify(cmd), state: 'waiting', pid: null, created_at: now, updated_at: now });
    this.save();
    return true;
  }

  getTask(id: string): TaskRow | undefined {
    const t = this.state.tasks.find((x) => x.id === id);
    return t ? this.row(t) : undefined;
  }

  setTaskState(id: string, state: TaskState, pid: number | null = null): void {
    const t = this.state.tasks.find((x) => x.id === id);
    if (!t) return;
    t.state = state;
    if (pid !== null && pid !== undefined) t.pid = pid;
    t.updated_at = new Date().toISOString();
    this.save();
  }

  setTaskPid(id: string, pid: number): void {
    const t = this.state.tasks.find((x) => x.id === id);
    if (!t) return;
    t.pid = pid;
    this.save();
  }

  tasksIn(states: TaskState[]): TaskRow[] {
    const wanted = new Set(states);
    return this.state.tasks
      .filter((t) => wanted.has(t.state))
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0))
      .map((t) => this.row(t));
  }

  heldTaskIds(): string[] {
    const active = this.tasksIn(['waiting', 'running']).map((t) => t.id);
    const pending = this.state.outbox.filter((e) => OUTCOME_EVENTS.has(e.type) && e.command_id !== null).map((e) => e.command_id as string);
    return [...new Set([...active, ...pending])];
  }

  pruneTasks(olderThanMs: number): void {
    const cutoff = new Date(Date.now() - olderThanMs).toISOString();
    const before = this.state.tasks.length;
    this.state.tasks = this.state.tasks.filter((t) => !(t.state !== 'waiting' && t.state !== 'running' && t.updated_at < cutoff));
    if (this.state.tasks.length !== before) this.save();
  }

  enqueueEvent(body: EventBody, coalesceKey?: string): AgentEvent {
    const event = stampEvent(body, this.node);
    const payload = JSON.stringify(event);
    const fields = { event_id: event.event_id, payload, type: event.type, command_id: event.command_id ?? null };
    const existing = coalesceKey ? this.state.outbox.find((e) => e.coalesce_key === coalesceKey) : undefined;
    if (existing) {
      Object.assign(existing, fields); // the replaced value keeps its place in the order
    } else {
      this.state.outbox.push({ seq: this.state.next_seq++, coalesce_key: coalesceKey ?? null, created_at: event.ts, ...fields });
    }
    this.save();
    return event;
  }

  pendingEvents(): { seq: number; payload: string }[] {
    return [...this.state.outbox].sort((a, b) => a.seq - b.seq).map((e) => ({ seq: e.seq, payload: e.payload }));
  }

  ackEvents(ids: string[]): void {
    const acked = new Set(ids);
    const before = this.state.outbox.length;
    this.state.outbox = this.state.outbox.filter((e) => !acked.has(e.event_id));
    if (this.state.outbox.length !== before) this.save();
  }

  outboxSize(): number {
    return this.state.outbox.length;
  }

  close(): void {
    this.closed = true;
  }
}

/** The native worker's store: DATA_DIR/agent-<WORKER_NAME>.json. */
export function jsonTaskStoreOpener(onWarn: (message: string) => void): OpenTaskStore {
  return (dataDir, workerName, node) => new JsonTaskStore(path.join(dataDir, `agent-${workerName}.json`), node, onWarn);
}
