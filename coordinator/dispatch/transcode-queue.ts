import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/sqlite.js';
import { TASKS, type LibraryInfo, type TranscodeArgs } from '../../shared/protocol.js';
import type { Fleet } from '../workers/fleet.js';
import { outputTarget, type JobRow, type JobsStore } from '../jobs/jobs-store.js';
import type { SettingsStore } from '../system/settings-store.js';
import { extrasByKind, extrasFolder, jobEpisodes } from '../library/library-info.js';
import type { TitleRole } from '../../shared/disc-titles.js';
import type { RippedTitle } from '../../shared/protocol.js';
import type { CommandTable } from './commands.js';
import type { JobJournal } from './job-journal.js';
import { chunkingFor } from './chunk-decision.js';
import { freestNode } from './freest-node.js';
import type { ChunkIntake } from './chunk-intake.js';
import type { RunningChunk } from './chunk-board.js';

/** A worker that tells no slot count holds this many rips and transcodes at once. */
const DEFAULT_SLOTS = 4;

/**
 * A chunk handed out this long ago must be in its agent's status `tasks`; one handed out later may
 * not have reached the agent when it published the status.
 */
const CHUNK_SETTLE_MS = 30_000;

/** Queued rows read per page while slots are free. */
const PUMP_PAGE = 64;

/** What pump reads of a queued row (the arguments only once it is handed out). */
interface QueuePageRow {
  id: string;
  job_id: string;
  preferred_node: string | null;
  created_at: string;
  /** SQLite's rowid: the order of rows created in the same millisecond. */
  seq: number;
}

/** A transcode waiting in the queue: its job, the node chosen for it, since when it waits. */
export interface WaitingTranscode {
  job_id: string;
  preferred_node: string | null;
  created_at: string;
}

/**
 * The transcode stage's queue (the table transcode_queue): a transcode waits for the node chosen for
 * it while that node is online, else for any worker with an encoder and a free slot; the oldest goes
 * first, and the freest worker takes it.
 */
export class TranscodeQueue {
  private readonly stmts;

  constructor(
    private readonly db: Db,
    private readonly jobs: JobsStore,
    private readonly settings: SettingsStore,
    private readonly fleet: Fleet,
    private readonly commands: CommandTable,
    private readonly journal: JobJournal,
    /** The media-server files (nfo, poster) the agent writes for a job. */
    private readonly libraryFor: (job: JobRow) => LibraryInfo | null,
    /** The chunks of long titles (issue 41): they take slots too, and are handed out before whole transcodes. Absent: none. */
    private readonly chunks?: ChunkIntake,
  ) {
    this.stmts = {
      // Along the index (state, created_at), whose entries end in the rowid: a page costs its rows only.
      queuedPage: db.prepare<[string, string, number, number], QueuePageRow>(
        `SELECT id, job_id, preferred_node, created_at, rowid AS seq FROM transcode_queue
         WHERE state = 'queued' AND (created_at > ? OR (created_at = ? AND rowid > ?)) ORDER BY created_at, rowid LIMIT ?`,
      ),
      args: db.prepare<[string], { args: string }>('SELECT args FROM transcode_queue WHERE id = ?'),
      assign: db.prepare<[string, string, string]>(`UPDATE transcode_queue SET state = 'assigned', assigned_node = ?, assigned_at = ? WHERE id = ?`),
      waiting: db.prepare<[number], WaitingTranscode>(`SELECT job_id, preferred_node, created_at FROM transcode_queue WHERE state = 'queued' ORDER BY created_at, rowid LIMIT ?`),
      isQueued: db.prepare<[string], { id: string }>(`SELECT id FROM transcode_queue WHERE job_id = ? AND state = 'queued'`),
      endOpen: db.prepare<[string]>(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ? AND state != 'done'`),
      insert: db.prepare<[string, string, string, string | null, string]>(`INSERT INTO transcode_queue (id, job_id, args, preferred_node, state, created_at) VALUES (?, ?, ?, ?, 'queued', ?)`),
      // A redone transcode never joins the title's folder as a version: the lost worker's output may be in it (TranscodeArgs.redone).
      requeue: db.prepare<[string]>(`UPDATE transcode_queue SET state = 'queued', assigned_node = NULL, preferred_node = NULL, args = json_set(args, '$.redone', json('true')) WHERE job_id = ? AND state = 'assigned'`),
    };
  }

  /** Queues the transcode stage of a job: the chosen node when it is online, else any worker with a free slot. */
  enqueue(jobId: string, rawDir: string, files: string[]): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    const meta = job.meta ?? {};
    const s = this.settings.all();
    const args: TranscodeArgs = {
      raw_dir: rawDir,
      files,
      target_dir: job.target_dir ?? '',
      ...outputTarget(job),
      preset: s.transcodePreset,
      keep_original: s.keepOriginal,
      episodes: jobEpisodes(job),
      disc_number: meta.disc_number ?? null,
      library: this.libraryFor(job),
      extras_folder: extrasFolder(s.mediaServerType),
      extras_by_kind: extrasByKind(s.mediaServerType),
      titles: rolesOf(meta.ripped_titles, files),
      main_file: mainFileOf(meta.ripped_titles, files),
      audio_languages: meta.audio_languages ?? [...s.audioLanguages],
      subtitle_languages: meta.subtitle_languages ?? [...s.subtitleLanguages],
      audio: {
        keep_surround: s.keepSurround,
        stereo_companion: s.stereoCompanion,
        burn_forced_subtitles: s.burnForcedSubtitles,
        original_language: s.originalLanguage ? (meta.original_language ?? null) : null,
        keep_commentary: s.keepCommentary,
        keep_audio_description: s.keepAudioDescription,
      },
      first_episode: meta.first_episode ?? null,
    };
    const preferred = meta.transcode_node || null;
    this.stmts.endOpen.run(jobId);
    this.stmts.insert.run(randomUUID(), jobId, JSON.stringify(args), preferred, new Date().toISOString());
    this.journal.note(jobId, 'info', preferred ? `transcode queued for ${preferred}` : 'transcode queued for any free worker');
    this.pump();
  }

  /**
   * Hands queued transcodes to workers, oldest first. Called on every event that may free a slot, so
   * its cost must not grow with the queue times the fleet: the free slots are counted once (one
   * query), nothing is read while no slot is free, and the queue is read a page at a time only until
   * the free slots are used up.
   */
  pump(): void {
    const free = this.freeSlotsByNode();
    // A title being encoded in chunks comes first: its lead waits for them, and the film is in the library sooner.
    this.chunks?.handOut(free);
    let left = [...free.values()].reduce((a, n) => a + Math.max(0, n), 0);
    let after: { created_at: string; seq: number } = { created_at: '', seq: -1 };
    while (left > 0) {
      const page = this.stmts.queuedPage.all(after.created_at, after.created_at, after.seq, PUMP_PAGE);
      // One commit for the page's hand-outs instead of one per row.
      this.db.transaction(() => {
        for (const row of page) {
          if (left <= 0) break;
          const node = this.chooseNode(row, free);
          if (!node) continue;
          free.set(node, (free.get(node) ?? 0) - 1);
          left--;
          this.assign(row, node, [...free.keys()]);
        }
      })();
      if (page.length < PUMP_PAGE) break;
      const last = page[page.length - 1];
      after = { created_at: last.created_at, seq: last.seq };
    }
  }

  /** The node a queued transcode goes to now: its chosen node while that one is online (or null while it is busy), else the freest worker. */
  private chooseNode(row: QueuePageRow, free: Map<string, number>): string | null {
    if (row.preferred_node && free.has(row.preferred_node)) return (free.get(row.preferred_node) ?? 0) > 0 ? row.preferred_node : null;
    return freestNode(free);
  }

  /** Sends the row's transcode to `node`, with the chunking its long titles may get from the other encoder nodes online (`encoderNodes`). */
  private assign(row: QueuePageRow, node: string, encoderNodes: string[]): void {
    const stored = JSON.parse((this.stmts.args.get(row.id) as { args: string }).args) as TranscodeArgs;
    const chunking = chunkingFor({ chunkMinMinutes: this.settings.get('chunkMinMinutes'), chosenNode: row.preferred_node, leadNode: node, encoderNodes });
    const args: TranscodeArgs = chunking ? { ...stored, chunking } : stored;
    this.stmts.assign.run(node, new Date().toISOString(), row.id);
    if (row.preferred_node && row.preferred_node !== node) this.journal.note(row.job_id, 'warn', `worker ${row.preferred_node} is offline; the transcode goes to ${node}`);
    this.jobs.update(row.job_id, { transcode_node: node });
    this.commands.send(node, { id: randomUUID(), task: TASKS.transcodeFiles, job_id: row.job_id, args });
  }

  /**
   * Free slots of every online worker with an encoder: its slot count minus the rips and transcodes
   * that take one, plus one for each transcode whose encoder is about to end (transcode_ending). That
   * one's successor is sent ahead and waits in the agent for the slot, which it takes the moment the
   * encoder ends, without a round trip through the coordinator. It waits seconds at most, so no other
   * worker would have started it sooner by much.
   */
  private freeSlotsByNode(): Map<string, number> {
    const taken = new Map(this.commands.slotCountsByNode().map((r) => [r.node, r.n - r.ending]));
    for (const [node, n] of this.chunks?.board.runningByNode() ?? []) taken.set(node, (taken.get(node) ?? 0) + n);
    const free = new Map<string, number>();
    for (const agent of this.fleet.online()) {
      if ((agent.status?.capabilities?.encoders.length ?? 0) === 0) continue;
      free.set(agent.node, (agent.status?.slots ?? DEFAULT_SLOTS) - (taken.get(agent.node) ?? 0));
    }
    return free;
  }

  /** The transcodes no worker has yet, in the order pump hands them out (the first `limit`). */
  waiting(limit: number): WaitingTranscode[] {
    return this.stmts.waiting.all(limit);
  }

  /** Whether the job's transcode still waits in the queue (no worker has it). */
  isQueued(jobId: string): boolean {
    return this.stmts.isQueued.get(jobId) !== undefined;
  }

  /** The job's transcode stage has ended (finished, failed, canceled or taken over): its rows leave the queue. */
  close(jobId: string): void {
    this.stmts.endOpen.run(jobId);
    this.chunks?.stopChunks(jobId);
  }

  /** The chunks being encoded now, on any node (none without chunking). */
  runningChunks(): RunningChunk[] {
    return this.chunks?.board.running() ?? [];
  }

  /** Whether the node is encoding a chunk. */
  hasChunksOn(node: string): boolean {
    return (this.chunks?.board.runningByNode().get(node) ?? 0) > 0;
  }

  /** An online status listing what the node holds: its chunks it no longer holds go back to the queue (handed out by the next pump). */
  chunksNotHeld(node: string, tasks: readonly string[]): void {
    this.chunks?.notHeld(node, tasks, CHUNK_SETTLE_MS);
  }

  /** A node was lost: the chunks it was encoding go back to the queue (handed out by the next pump). */
  nodeLost(node: string): void {
    this.chunks?.nodeLost(node);
  }

  /** The job's chunks stop (a cancel asked for): none is handed out any more, the running ones are told to stop. */
  stopChunks(jobId: string): void {
    this.chunks?.stopChunks(jobId);
  }

  /** A worker holding the job's transcode was lost: the transcode goes back to the shared queue (no preferred node). */
  requeue(jobId: string): void {
    this.stmts.requeue.run(jobId);
    // The lead is gone: the title is encoded whole again by the next taker; chunks still running are stopped.
    this.chunks?.stopChunks(jobId);
    this.jobs.update(jobId, { transcode_node: null });
  }

  /** Drops ended queue rows created before `cutoff`. */
  prune(cutoff: string): void {
    this.db.prepare(`DELETE FROM transcode_queue WHERE state = 'done' AND created_at < ?`).run(cutoff);
  }
}

/** The role of each file to transcode (a recognised disc), from the titles the rip reported; null when it reported none for these files. */
export function rolesOf(ripped: readonly RippedTitle[] | undefined, files: readonly string[]): (TitleRole | null)[] | null {
  if (!ripped?.length) return null;
  const byFile = new Map(ripped.map((t) => [t.file, t.role]));
  const roles = files.map((f) => byFile.get(f) ?? null);
  return roles.some((r) => r !== null) ? roles : null;
}

/** The index among the files to transcode of the main feature the rip chose by evidence; null when it marked none of them. */
export function mainFileOf(ripped: readonly RippedTitle[] | undefined, files: readonly string[]): number | null {
  const main = ripped?.find((t) => t.main_feature === true);
  const index = main ? files.indexOf(main.file) : -1;
  return index >= 0 ? index : null;
}
