import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/sqlite.js';
import { TASKS, type Command } from '../../shared/protocol.js';
import type { CommandLink } from './link.js';

export type CommandState = 'sent' | 'accepted' | 'done' | 'superseded';
export type JobTask = typeof TASKS.ripDisc | typeof TASKS.transcodeFiles;
export type JobCommand = Extract<Command, { task: JobTask }>;

/** A rip or transcode sent to an agent (the table commands): its state follows the agent's events. */
export interface CommandRow {
  id: string;
  node: string;
  task: JobTask;
  job_id: string;
  payload: string;
  state: CommandState;
  /** 1 once a transcode's encoder has finished (transcode_encoded): the command no longer takes a slot. */
  encoded: number;
  /** 1 once a transcode's last encoder run is expected to end within seconds (transcode_ending). */
  ending: number;
}

/** An open command as the live worker view reads it. */
export interface OpenWork {
  node: string;
  task: JobTask;
  job_id: string;
  /** When it was sent: the start of its phase on that worker. */
  created_at: string;
  encoded: number;
}

/** The states of a command still open. The partial index commands_open (migration 10) repeats this list. */
const OPEN = `'sent','accepted'`;

/**
 * The command table: every rip and transcode the coordinator sent, to which node, for which job, and
 * how far it got. Sending a job command records it first, so that a reconnecting agent can be given
 * what it should hold (see handshake.ts).
 */
export class CommandTable {
  private readonly stmts;

  constructor(
    private readonly db: Db,
    private readonly link: CommandLink,
  ) {
    this.stmts = {
      get: db.prepare<[string], CommandRow>('SELECT * FROM commands WHERE id = ?'),
      active: db.prepare<[string], CommandRow>(`SELECT * FROM commands WHERE job_id = ? AND state IN (${OPEN}) ORDER BY created_at DESC`),
      others: db.prepare<[string, string], CommandRow>(`SELECT * FROM commands WHERE job_id = ? AND id != ? AND state IN (${OPEN})`),
      setState: db.prepare<[CommandState, string]>('UPDATE commands SET state = ? WHERE id = ?'),
      // A transcode whose encoder has finished (transcode_encoded) is still open, but its slot is free.
      slotsByNode: db.prepare<[], { node: string; n: number; ending: number }>(
        `SELECT node, COUNT(*) AS n, SUM(ending) AS ending FROM commands WHERE state IN (${OPEN}) AND encoded = 0 GROUP BY node`,
      ),
      // Finished or run again: either way it is no longer about to end.
      setEncoded: db.prepare<[number, string]>('UPDATE commands SET encoded = ?, ending = 0 WHERE id = ?'),
      setEnding: db.prepare<[string]>('UPDATE commands SET ending = 1 WHERE id = ?'),
      openWork: db.prepare<[], OpenWork>(`SELECT node, task, job_id, created_at, encoded FROM commands WHERE state IN (${OPEN}) ORDER BY created_at, rowid`),
      openNodes: db.prepare<[], { node: string }>(`SELECT DISTINCT node FROM commands WHERE state IN (${OPEN})`),
      insert: db.prepare<[string, string, string, string, string, string]>(`INSERT INTO commands (id, node, task, job_id, payload, state, created_at) VALUES (?, ?, ?, ?, ?, 'sent', ?)`),
      unanswered: db.prepare<[string], CommandRow>(`SELECT * FROM commands WHERE state = 'sent' AND created_at < ? ORDER BY created_at`),
      prune: db.prepare<[string]>(`DELETE FROM commands WHERE state IN ('done','superseded') AND created_at < ?`),
    };
  }

  get(id: string): CommandRow | undefined {
    return this.stmts.get.get(id);
  }

  /** The commands of a node in the given states, oldest first. */
  of(node: string, states: CommandState[]): CommandRow[] {
    return this.db.prepare<[string], CommandRow>(`SELECT * FROM commands WHERE node = ? AND state IN (${states.map((s) => `'${s}'`).join(',')}) ORDER BY created_at`).all(node);
  }

  /** The newest open (sent or accepted) command of a job. */
  active(jobId: string): CommandRow | undefined {
    return this.stmts.active.get(jobId);
  }

  /** The open commands of a job other than `id`. */
  othersOpen(jobId: string, id: string): CommandRow[] {
    return this.stmts.others.all(jobId, id);
  }

  setState(id: string, state: CommandState): void {
    this.stmts.setState.run(state, id);
  }

  /**
   * How many slots of each node its rips and transcodes take: the open ones (sent or accepted) but
   * transcodes whose encoder has finished, which only check and describe their output now; `ending`:
   * how many of them are transcodes whose encoder is about to end (transcode_ending). Nodes taking
   * none are left out.
   */
  slotCountsByNode(): { node: string; n: number; ending: number }[] {
    return this.stmts.slotsByNode.all();
  }

  /** Every open rip and transcode, oldest first: what the workers hold now (GET /capabilities). */
  openWork(): OpenWork[] {
    return this.stmts.openWork.all();
  }

  /** Marks whether the command's encoder has finished (its slot is free) or runs (again); either way it is no longer ending. */
  setEncoded(id: string, encoded: boolean): void {
    this.stmts.setEncoded.run(encoded ? 1 : 0, id);
  }

  /** Marks a transcode whose last encoder run is expected to end within seconds. */
  setEnding(id: string): void {
    this.stmts.setEnding.run(id);
  }

  /** The nodes that hold open work. */
  nodesWithOpenWork(): string[] {
    return this.stmts.openNodes.all().map((r) => r.node);
  }

  /** Commands sent before `cutoff` that no agent has answered yet (neither accepted nor refused). */
  unanswered(cutoff: string): CommandRow[] {
    return this.stmts.unanswered.all(cutoff);
  }

  /** Records a rip or transcode as sent and sends it. */
  send(node: string, cmd: JobCommand): void {
    this.stmts.insert.run(cmd.id, node, cmd.task, cmd.job_id, JSON.stringify(cmd), new Date().toISOString());
    this.link.sendCommand(node, cmd);
  }

  /** Sends a chunk's command (issue 41): recorded by the chunk board (chunk-board.ts), not in this table. */
  sendChunkCommand(node: string, cmd: Extract<Command, { task: typeof TASKS.encodeChunk | typeof TASKS.joinChunks }>): void {
    this.link.sendCommand(node, cmd);
  }

  /** Sends a recorded command again, as it was. */
  resend(cmd: CommandRow): void {
    this.link.sendCommand(cmd.node, JSON.parse(cmd.payload) as Command);
  }

  /** Tells a node to stop the command `commandId` of a job. */
  sendCancel(node: string, jobId: string, commandId: string): void {
    this.link.sendCommand(node, { id: randomUUID(), task: TASKS.cancel, job_id: jobId, args: { command_id: commandId } });
  }

  /** Tells a node that restarted that the command `commandId` it recovered is still its work (answers its status of `startedAt`). */
  sendResume(node: string, jobId: string, commandId: string, startedAt: string): void {
    this.link.sendCommand(node, { id: randomUUID(), task: TASKS.resume, job_id: jobId, args: { command_id: commandId, started_at: startedAt } });
  }

  /** Drops finished commands created before `cutoff`. */
  prune(cutoff: string): void {
    this.stmts.prune.run(cutoff);
  }
}
