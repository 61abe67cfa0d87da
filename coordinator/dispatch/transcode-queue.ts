import { randomUUID } from 'node:crypto';
import type { Db } from '../../shared/sqlite.js';
import { TASKS, type LibraryInfo, type TranscodeArgs } from '../../shared/protocol.js';
import type { Fleet } from '../fleet.js';
import { metaLanguages, outputTarget, parseMeta, type JobRow, type JobsStore } from '../jobs-store.js';
import type { SettingsStore } from '../settings-store.js';
import { extrasFolder, jobEpisodes } from '../library-info.js';
import type { CommandTable } from './commands.js';
import type { JobJournal } from './job-journal.js';

/** A worker that tells no slot count holds this many rips and transcodes at once. */
const DEFAULT_SLOTS = 4;

interface QueueRow {
  id: string;
  job_id: string;
  args: string;
  preferred_node: string | null;
  state: 'queued' | 'assigned' | 'done';
  assigned_node: string | null;
}

/**
 * The transcode stage's queue (the table transcode_queue): a transcode waits for the node chosen for
 * it while that node is online, else for any worker with an encoder and a free slot; the oldest goes
 * first, and the freest worker takes it.
 */
export class TranscodeQueue {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobsStore,
    private readonly settings: SettingsStore,
    private readonly fleet: Fleet,
    private readonly commands: CommandTable,
    private readonly journal: JobJournal,
    /** The media-server files (nfo, poster) the agent writes for a job. */
    private readonly libraryFor: (job: JobRow) => LibraryInfo | null,
  ) {}

  /** Queues the transcode stage of a job: the chosen node when it is online, else any worker with a free slot. */
  enqueue(jobId: string, rawDir: string, files: string[]): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    const meta = parseMeta(job.meta) ?? {};
    const s = this.settings.all();
    const args: TranscodeArgs = {
      raw_dir: rawDir,
      files,
      target_dir: job.target_dir ?? '',
      ...outputTarget(job),
      preset: s.transcodePreset,
      keep_original: s.keepOriginal,
      episodes: jobEpisodes(job),
      disc_number: typeof meta.disc_number === 'number' ? meta.disc_number : null,
      library: this.libraryFor(job),
      extras_folder: extrasFolder(s.mediaServerType),
      audio_languages: metaLanguages(meta, 'audio_languages') ?? [...s.audioLanguages],
      subtitle_languages: metaLanguages(meta, 'subtitle_languages') ?? [...s.subtitleLanguages],
      audio: {
        keep_surround: s.keepSurround,
        stereo_companion: s.stereoCompanion,
        burn_forced_subtitles: s.burnForcedSubtitles,
        original_language: s.originalLanguage && typeof meta.original_language === 'string' ? meta.original_language : null,
      },
    };
    const preferred = typeof meta.transcode_node === 'string' && meta.transcode_node ? meta.transcode_node : null;
    this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ? AND state != 'done'`).run(jobId);
    this.db
      .prepare(`INSERT INTO transcode_queue (id, job_id, args, preferred_node, state, created_at) VALUES (?, ?, ?, ?, 'queued', ?)`)
      .run(randomUUID(), jobId, JSON.stringify(args), preferred, new Date().toISOString());
    this.journal.note(jobId, 'info', preferred ? `transcode queued for ${preferred}` : 'transcode queued for any free worker');
    this.pump();
  }

  /** Hands queued transcodes to workers, oldest first. */
  pump(): void {
    const queued = this.db.prepare<[], QueueRow>(`SELECT * FROM transcode_queue WHERE state = 'queued' ORDER BY created_at`).all();
    for (const row of queued) {
      let node: string | null = null;
      if (row.preferred_node && this.canTranscode(row.preferred_node)) {
        if (this.freeSlots(row.preferred_node) <= 0) continue; // the chosen node is busy: wait for it
        node = row.preferred_node;
      } else {
        const candidates = this.fleet
          .online()
          .filter((a) => this.canTranscode(a.node))
          .map((a) => ({ node: a.node, free: this.freeSlots(a.node) }))
          .filter((c) => c.free > 0)
          .sort((a, b) => b.free - a.free || a.node.localeCompare(b.node));
        node = candidates[0]?.node ?? null;
      }
      if (!node) continue;
      const args = JSON.parse(row.args) as TranscodeArgs;
      this.db.prepare(`UPDATE transcode_queue SET state = 'assigned', assigned_node = ?, assigned_at = ? WHERE id = ?`).run(node, new Date().toISOString(), row.id);
      if (row.preferred_node && row.preferred_node !== node) this.journal.note(row.job_id, 'warn', `worker ${row.preferred_node} is offline; the transcode goes to ${node}`);
      this.jobs.update(row.job_id, { transcode_node: node });
      this.commands.send(node, { id: randomUUID(), task: TASKS.transcodeFiles, job_id: row.job_id, args });
    }
  }

  /** Whether the job's transcode still waits in the queue (no worker has it). */
  isQueued(jobId: string): boolean {
    return this.db.prepare<[string], QueueRow>(`SELECT * FROM transcode_queue WHERE job_id = ? AND state = 'queued'`).get(jobId) !== undefined;
  }

  /** The job's transcode stage has ended (finished, failed, canceled or taken over): its rows leave the queue. */
  close(jobId: string): void {
    this.db.prepare(`UPDATE transcode_queue SET state = 'done' WHERE job_id = ?`).run(jobId);
  }

  /** A worker holding the job's transcode was lost: the transcode goes back to the shared queue (no preferred node). */
  requeue(jobId: string): void {
    this.db.prepare(`UPDATE transcode_queue SET state = 'queued', assigned_node = NULL, preferred_node = NULL WHERE job_id = ? AND state = 'assigned'`).run(jobId);
    this.jobs.update(jobId, { transcode_node: null });
  }

  /** Drops ended queue rows created before `cutoff`. */
  prune(cutoff: string): void {
    this.db.prepare(`DELETE FROM transcode_queue WHERE state = 'done' AND created_at < ?`).run(cutoff);
  }

  /** Slots a worker has free: its slot count minus the rips and transcodes it holds. */
  private freeSlots(node: string): number {
    const slots = this.fleet.get(node)?.status?.slots ?? DEFAULT_SLOTS;
    return slots - this.commands.openCount(node);
  }

  private canTranscode(node: string): boolean {
    const agent = this.fleet.get(node);
    return Boolean(agent?.online && (agent.status?.capabilities?.encoders.length ?? 0) > 0);
  }
}
