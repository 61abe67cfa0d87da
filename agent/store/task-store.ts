import { randomUUID } from 'node:crypto';
import type { AgentEvent, Command } from '../../shared/protocol.js';

export type TaskState = 'waiting' | 'running' | 'done' | 'failed' | 'canceled' | 'interrupted';

export interface TaskRow {
  id: string;
  task: string;
  job_id: string | null;
  payload: string;
  state: TaskState;
  pid: number | null;
}

/** An event as the agent writes it: the store adds event_id, node and ts. */
export type EventBody = AgentEvent extends infer E ? (E extends AgentEvent ? Omit<E, 'event_id' | 'node' | 'ts'> : never) : never;

/** The event types that end a task: while one of them waits in the outbox, the agent still answers for the task. */
export const OUTCOME_EVENTS: ReadonlySet<string> = new Set(['rip_done', 'job_done', 'job_failed', 'job_canceled']);

/**
 * What an agent keeps across restarts: the tasks it runs and an outbox of events the coordinator has
 * not acknowledged. Two implementations: SQLite (agent-store.ts, the usual agent) and a JSON file
 * (json-task-store.ts, the native worker, which must run without native addons).
 */
export interface TaskStore {
  /** Inserts a task unless its id is known (a QoS 1 redelivery). Returns true when new. */
  addTask(cmd: Command & { job_id?: string }): boolean;
  getTask(id: string): TaskRow | undefined;
  /** Changes the state; a pid given replaces the stored one, none keeps it. */
  setTaskState(id: string, state: TaskState, pid?: number | null): void;
  setTaskPid(id: string, pid: number): void;
  /** The tasks in these states, oldest first. */
  tasksIn(states: TaskState[]): TaskRow[];
  /**
   * The command ids this agent answers for: tasks running or waiting, and finished tasks whose outcome
   * is still in the outbox (it is on its way, so the coordinator must not take the task as lost).
   */
  heldTaskIds(): string[];
  /** Drops finished tasks whose last change is older than the given age, so the list stays small. */
  pruneTasks(olderThanMs: number): void;
  /**
   * Stores an event for delivery. Events with the same coalesce key replace each other (keeping their
   * place in the order), so an outage leaves one pending progress value per task instead of thousands.
   */
  enqueueEvent(body: EventBody, coalesceKey?: string): AgentEvent;
  /** Unacknowledged events in the order they were first queued. */
  pendingEvents(): { seq: number; payload: string }[];
  ackEvents(ids: string[]): void;
  outboxSize(): number;
  close(): void;
}

/** Opens the store of one worker in its data folder. */
export type OpenTaskStore = (dataDir: string, workerName: string, node: string) => TaskStore;

/** Stamps an event body with a fresh event id, the node and the time. */
export function stampEvent(body: EventBody, node: string): AgentEvent {
  return { ...body, event_id: randomUUID(), node, ts: new Date().toISOString() } as AgentEvent;
}
