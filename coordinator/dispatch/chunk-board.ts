import { randomUUID } from 'node:crypto';
import posix from 'node:path/posix';
import type { Db } from '../../shared/sqlite.js';
import { CHUNK_MAX_ATTEMPTS, CHUNKS_AT_ONCE_PER_AGENT, chunkFileName } from '../../shared/chunking.js';
import type { ChunkCut } from '../../shared/protocol.js';
import { freestNode } from './freest-node.js';

/**
 * The chunks of long titles encoded by several agents (issue 41; docs/scaling.md, "One title on
 * several agents"), in the table transcode_chunks. A title's lead plans its chunks; the board hands
 * them to agents with a free slot (the lead's node too), follows each agent's reports, takes a chunk
 * back from an agent that was lost, and says when a title's chunks are all encoded or its job must
 * fail. Each hand-out has its own command id: an agent may report only the chunk it was handed under
 * that id, and only while it holds it.
 */

export type ChunkState = 'queued' | 'running' | 'done' | 'failed' | 'canceled';

/** A title to be chunked: its job, its index among the transcode's files, its lead, and what every chunk encode needs. */
export interface ChunkedTitle {
  job_id: string;
  title: number;
  lead_node: string;
  /** The raw file (container path). */
  input: string;
  /** The folder the chunk files go into (container path, shared/chunking.ts chunkFolder). */
  folder: string;
  preset: string;
}

export interface ChunkRow {
  job_id: string;
  title: number;
  idx: number;
  lead_node: string;
  input: string;
  output: string;
  preset: string;
  /** The cut as JSON (ChunkCut). */
  cut: string;
  frames: number;
  state: ChunkState;
  node: string | null;
  command_id: string | null;
  /** When it was handed to `node`. */
  handed_at: string | null;
  frames_done: number;
  attempts: number;
  reason: string | null;
  created_at: string;
  updated_at: string;
}

/** One chunk handed to an agent: what its encode_chunk command carries. */
export interface ChunkHandOut {
  node: string;
  command_id: string;
  job_id: string;
  title: number;
  input: string;
  output: string;
  preset: string;
  cut: ChunkCut;
}

/** An agent's report about a chunk, or why it is refused (the event is dropped with this reason). */
export type ChunkReport<T> = { ok: true; value: T } | { ok: false; refusal: string };

/**
 * What a failed chunk leads to: handed out again, or the job fails with the reason; `unreadable`: its
 * agent cannot read the raw file, and the job's chunks go to the others (no attempt counted).
 */
export type ChunkFailure = { verdict: 'requeued'; row: ChunkRow } | { verdict: 'unreadable'; row: ChunkRow; first: boolean } | { verdict: 'job_failed'; row: ChunkRow; reason: string };

/** Frames encoded over all chunks of a job, and how many frames each node encoded. */
export interface ChunkTally {
  frames: number;
  done: number;
  by_node: Record<string, number>;
}

/** A running chunk with the number of chunks its title was cut into (the live worker view). */
export interface RunningChunk extends ChunkRow {
  of: number;
}

const OPEN: ChunkState[] = ['queued', 'running'];

export class ChunkBoard {
  private readonly stmts;
  /**
   * Per job, the nodes that cannot read its raw files (they reported a chunk `unreadable`): none of
   * its chunks goes to them again. Kept in memory: after a restart such a node says so once more.
   */
  private readonly cannotRead = new Map<string, Set<string>>();

  constructor(
    private readonly db: Db,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {
    this.stmts = {
      dropTitle: db.prepare<[string, number]>('DELETE FROM transcode_chunks WHERE job_id = ? AND title = ?'),
      insert: db.prepare<[string, number, number, string, string, string, string, string, number, string, string]>(
        `INSERT INTO transcode_chunks (job_id, title, idx, lead_node, input, output, preset, cut, frames, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
      ),
      // The oldest title's chunks first, in order: a title is finished before the next one starts.
      queued: db.prepare<[], ChunkRow>(`SELECT * FROM transcode_chunks WHERE state = 'queued' ORDER BY created_at, job_id, title, idx`),
      assign: db.prepare<[string, string, string, string, string, string, number, number]>(
        `UPDATE transcode_chunks SET state = 'running', node = ?, command_id = ?, output = ?, handed_at = ?, frames_done = 0, updated_at = ? WHERE job_id = ? AND title = ? AND idx = ? AND state = 'queued'`,
      ),
      byCommand: db.prepare<[string], ChunkRow>('SELECT * FROM transcode_chunks WHERE command_id = ?'),
      setFrames: db.prepare<[number, string, string]>('UPDATE transcode_chunks SET frames_done = ?, updated_at = ? WHERE command_id = ?'),
      setDone: db.prepare<[string, string]>(`UPDATE transcode_chunks SET state = 'done', frames_done = frames, updated_at = ? WHERE command_id = ?`),
      requeue: db.prepare<[number, string | null, string, string]>(
        `UPDATE transcode_chunks SET state = 'queued', node = NULL, command_id = NULL, frames_done = 0, attempts = ?, reason = ?, updated_at = ? WHERE command_id = ?`,
      ),
      setFailed: db.prepare<[number, string, string, string]>(`UPDATE transcode_chunks SET state = 'failed', attempts = ?, reason = ?, updated_at = ? WHERE command_id = ?`),
      runningOf: db.prepare<[string], ChunkRow>(`SELECT * FROM transcode_chunks WHERE node = ? AND state = 'running'`),
      running: db.prepare<[], RunningChunk>(
        `SELECT c.*, (SELECT COUNT(*) FROM transcode_chunks t WHERE t.job_id = c.job_id AND t.title = c.title) AS "of"
         FROM transcode_chunks c WHERE c.state = 'running' ORDER BY c.handed_at, c.job_id, c.title, c.idx`,
      ),
      runningByNode: db.prepare<[], { node: string; n: number }>(`SELECT node, COUNT(*) AS n FROM transcode_chunks WHERE state = 'running' GROUP BY node`),
      ofJob: db.prepare<[string], ChunkRow>('SELECT * FROM transcode_chunks WHERE job_id = ? ORDER BY title, idx'),
      ofTitle: db.prepare<[string, number], ChunkRow>('SELECT * FROM transcode_chunks WHERE job_id = ? AND title = ? ORDER BY idx'),
      endJob: db.prepare<[string, string]>(`UPDATE transcode_chunks SET state = 'canceled', updated_at = ? WHERE job_id = ? AND state IN ('queued','running')`),
      dropJob: db.prepare<[string]>('DELETE FROM transcode_chunks WHERE job_id = ?'),
    };
  }

  /**
   * Enters the planned chunks of a title, all queued. A plan made again for the same title (its lead
   * restarted and runs the transcode anew) replaces the old one: answers the old one's running
   * chunks, whose agents are to be told to stop.
   */
  plan(title: ChunkedTitle, cuts: readonly ChunkCut[]): ChunkRow[] {
    const at = this.now();
    const replaced = this.stmts.ofTitle.all(title.job_id, title.title).filter((r) => r.state === 'running');
    this.db.transaction(() => {
      this.stmts.dropTitle.run(title.job_id, title.title);
      for (const cut of cuts) {
        const output = posix.join(title.folder, chunkFileName(cut.index));
        this.stmts.insert.run(title.job_id, title.title, cut.index, title.lead_node, title.input, output, title.preset, JSON.stringify(cut), cut.frames, at, at);
      }
    })();
    return replaced;
  }

  /**
   * Hands queued chunks to the nodes with free slots (`free`: node → free slots, lowered for each
   * hand-out) that run fewer than CHUNKS_AT_ONCE_PER_AGENT chunks, oldest title first and in order,
   * each to the node with the most free slots (the name decides a tie). Answers the hand-outs for
   * their encode_chunk commands.
   */
  handOut(free: Map<string, number>): ChunkHandOut[] {
    const out: ChunkHandOut[] = [];
    const at = this.now();
    const running = this.runningByNode();
    this.db.transaction(() => {
      for (const row of this.stmts.queued.all()) {
        const excluded = this.cannotRead.get(row.job_id);
        const takers = new Map([...free].filter(([n]) => !excluded?.has(n) && (running.get(n) ?? 0) < CHUNKS_AT_ONCE_PER_AGENT));
        const node = freestNode(takers);
        if (!node) {
          if (excluded) continue; // the nodes that could take it are busy; another job's chunk may fit
          break;
        }
        const commandId = randomUUID();
        // Each hand-out writes its own file: the encoder of an agent that was lost may still be writing the one before.
        const output = posix.join(posix.dirname(row.output), chunkFileName(row.idx, commandId));
        this.stmts.assign.run(node, commandId, output, at, at, row.job_id, row.title, row.idx);
        free.set(node, (free.get(node) ?? 0) - 1);
        running.set(node, (running.get(node) ?? 0) + 1);
        out.push({ node, command_id: commandId, job_id: row.job_id, title: row.title, input: row.input, output, preset: row.preset, cut: JSON.parse(row.cut) as ChunkCut });
      }
    })();
    return out;
  }

  /** The chunk handed out under `commandId` (whatever its state now). */
  byCommand(commandId: string): ChunkRow | undefined {
    return this.stmts.byCommand.get(commandId);
  }

  /** Running chunks per node: each takes one of its node's slots. */
  runningByNode(): Map<string, number> {
    return new Map(this.stmts.runningByNode.all().map((r) => [r.node, r.n]));
  }

  /** Every running chunk, the earliest handed out first, each with its title's chunk count (GET /capabilities). */
  running(): RunningChunk[] {
    return this.stmts.running.all();
  }

  /** The chunk `node` holds under `commandId`, or why a report about it is refused. */
  private held(node: string, commandId: string): ChunkReport<ChunkRow> {
    const row = this.stmts.byCommand.get(commandId);
    if (!row) return { ok: false, refusal: `chunk report from ${node} for command ${commandId}, which is no chunk handed out` };
    if (row.node !== node) return { ok: false, refusal: `chunk report from ${node} for chunk ${row.idx} of job ${row.job_id}, which was handed to ${row.node ?? 'nobody'}` };
    if (row.state !== 'running') return { ok: false, refusal: `chunk report from ${node} for chunk ${row.idx} of job ${row.job_id}, which is ${row.state}` };
    return { ok: true, value: row };
  }

  /** An agent's progress on its chunk: frames encoded so far (kept within the chunk's frames, never going back). */
  progress(node: string, commandId: string, framesDone: number): ChunkReport<ChunkRow> {
    const held = this.held(node, commandId);
    if (!held.ok) return held;
    const frames = Math.max(held.value.frames_done, Math.min(held.value.frames, Math.max(0, Math.floor(framesDone))));
    this.stmts.setFrames.run(frames, this.now(), commandId);
    return { ok: true, value: { ...held.value, frames_done: frames } };
  }

  /** An agent finished its chunk; `titleDone`: every chunk of that title is encoded now (the lead may join). */
  done(node: string, commandId: string): ChunkReport<{ row: ChunkRow; titleDone: boolean }> {
    const held = this.held(node, commandId);
    if (!held.ok) return held;
    this.stmts.setDone.run(this.now(), commandId);
    const rows = this.stmts.ofTitle.all(held.value.job_id, held.value.title);
    return { ok: true, value: { row: { ...held.value, state: 'done', frames_done: held.value.frames }, titleDone: rows.every((r) => r.state === 'done') } };
  }

  /**
   * An agent's chunk encode failed: the chunk is handed out again, or, at its CHUNK_MAX_ATTEMPTS-th
   * failure, the job fails with the reason. `unreadable` (the agent cannot read the raw file): the
   * chunk goes back to the queue uncounted and no chunk of the job goes to that node again; the lead,
   * which holds the raw file, is never counted out.
   */
  failed(node: string, commandId: string, reason: string, unreadable = false): ChunkReport<ChunkFailure> {
    const held = this.held(node, commandId);
    if (!held.ok) return held;
    const why = `chunk ${held.value.idx + 1} on ${node}: ${reason}`;
    if (unreadable && node !== held.value.lead_node) {
      const set = this.cannotRead.get(held.value.job_id) ?? new Set<string>();
      const first = !set.has(node);
      this.cannotRead.set(held.value.job_id, set.add(node));
      this.stmts.requeue.run(held.value.attempts, held.value.reason, this.now(), commandId);
      return { ok: true, value: { verdict: 'unreadable', first, row: { ...held.value, state: 'queued', node: null, command_id: null, frames_done: 0, reason: why } } };
    }
    const attempts = held.value.attempts + 1;
    if (attempts < CHUNK_MAX_ATTEMPTS) {
      this.stmts.requeue.run(attempts, why, this.now(), commandId);
      return { ok: true, value: { verdict: 'requeued', row: { ...held.value, attempts, reason: why } } };
    }
    this.stmts.setFailed.run(attempts, why, this.now(), commandId);
    const first = held.value.reason ? `; before that ${held.value.reason}` : '';
    return { ok: true, value: { verdict: 'job_failed', row: { ...held.value, state: 'failed', attempts, reason: why }, reason: `chunk ${held.value.idx + 1} of the title failed ${attempts} times: ${why}${first}` } };
  }

  /** A node was lost: the chunks it was encoding go back to the queue (no attempt counted: the chunk did not fail). */
  nodeLost(node: string): ChunkRow[] {
    const rows = this.stmts.runningOf.all(node);
    const at = this.now();
    this.db.transaction(() => {
      for (const r of rows) if (r.command_id) this.stmts.requeue.run(r.attempts, r.reason, at, r.command_id);
    })();
    return rows;
  }

  /**
   * The node's status lists the command ids it holds (`tasks`): a chunk handed to it before `before`
   * that the list lacks is not there any more (the agent restarted and lost it) and goes back to the
   * queue, like a lost agent's. Chunks handed out later may not have arrived yet and are left alone.
   */
  notHeld(node: string, tasks: readonly string[], before: string): ChunkRow[] {
    const held = new Set(tasks);
    const gone = this.stmts.runningOf.all(node).filter((r) => r.command_id && !held.has(r.command_id) && (r.handed_at ?? '') < before);
    const at = this.now();
    this.db.transaction(() => {
      for (const r of gone) this.stmts.requeue.run(r.attempts, r.reason, at, r.command_id as string);
    })();
    return gone;
  }

  /**
   * The job's chunks end (canceled, failed, or its lead lost): none is handed out any more. Answers
   * the chunks that were running, whose agents are to be told to stop.
   */
  endJob(jobId: string): ChunkRow[] {
    const running = this.stmts.ofJob.all(jobId).filter((r) => r.state === 'running');
    this.stmts.endJob.run(this.now(), jobId);
    return running;
  }

  /** Forgets the job's chunks (after the join, or once they are ended and their files removed). */
  forget(jobId: string): void {
    this.cannotRead.delete(jobId);
    this.stmts.dropJob.run(jobId);
  }

  /** Every chunk of a job, by title and index. */
  ofJob(jobId: string): ChunkRow[] {
    return this.stmts.ofJob.all(jobId);
  }

  /** Whether the job has chunks still to encode. */
  hasOpen(jobId: string): boolean {
    return this.stmts.ofJob.all(jobId).some((r) => OPEN.includes(r.state));
  }

  /** Frames over all chunks of a job: the total, those encoded (finished and running chunks' reports), and by node (a node running a chunk is named from its hand-out on). */
  tally(jobId: string): ChunkTally {
    const tally: ChunkTally = { frames: 0, done: 0, by_node: {} };
    for (const r of this.stmts.ofJob.all(jobId)) {
      tally.frames += r.frames;
      if (!r.node || (r.state !== 'running' && r.state !== 'done')) continue;
      tally.done += r.frames_done;
      tally.by_node[r.node] = (tally.by_node[r.node] ?? 0) + r.frames_done;
    }
    return tally;
  }
}
