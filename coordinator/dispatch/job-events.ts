/** One handler per job event type: what an accepted, progress, rip_done, job_done, … event does to its job. */
import path from 'node:path';
import { isOriginalsDir } from '../../shared/originals.js';
import { TASKS, type AgentEvent, type AgentEventType, type RippedTitle } from '../../shared/protocol.js';
import { phaseStart, type JobRow, type JobsStore } from '../jobs/jobs-store.js';
import { isActive } from '../jobs/job-status.js';
import type { CommandRow, CommandTable } from './commands.js';
import type { JobJournal } from './job-journal.js';
import type { TranscodeQueue } from './transcode-queue.js';
import type { SizeKey } from '../jobs/job-sizes.js';
import type { ChunkIntake } from './chunk-intake.js';

/** The events of a job's rip or transcode command (the others, pong, tracks, …, are the node's; see event-intake.ts). */
export type JobEventType = Exclude<AgentEventType, 'pong' | 'tracks' | 'aacs_dump' | 'ejected' | 'command_failed' | ChunkEventType>;

/** The events about the chunks of a long title (chunk-intake.ts). */
export type ChunkEventType = 'chunk_plan' | 'chunk_progress' | 'chunk_done' | 'chunk_failed';

/** What a job event's handler works with. */
export interface JobEventParts {
  jobs: JobsStore;
  commands: CommandTable;
  queue: TranscodeQueue;
  journal: JobJournal;
  /** A rip is done: whether its transcode is queued now (a box-set disc may wait for the discs before it, coordinator/sessions). */
  beforeTranscode?: (job: JobRow, files: string[], titles: RippedTitle[] | undefined) => boolean;
  /** MEDIA_ROOT, where kept originals must lie to count as a job's raw data (unset: they never do). */
  mediaRoot?: () => string | null;
  /** The chunks of long titles (issue 41); absent: chunk events are dropped. */
  chunks?: ChunkIntake;
  /** Measures the named files after the event's transaction and records their bytes in the job's meta (job-sizes.ts). */
  measure?: (jobId: string, key: SizeKey, files: string[]) => void;
}

/** Whole seconds from an ISO time recorded in the meta to now; undefined when none was recorded. */
export function secondsSince(startedAt: string | undefined, now: number): number | undefined {
  if (!startedAt) return undefined;
  const start = Date.parse(startedAt);
  return Number.isFinite(start) ? Math.max(0, Math.round((now - start) / 1000)) : undefined;
}

/** One job event that passed the rules (event-rules.ts): from `node`, for `job`, of the command `cmd`. */
export interface JobEventContext<T extends JobEventType> {
  node: string;
  job: JobRow;
  cmd: CommandRow | undefined;
  event: Extract<AgentEvent, { type: T }>;
}

type JobEventHandler<T extends JobEventType> = (parts: JobEventParts, ctx: JobEventContext<T>) => void;

/**
 * The rip finished: its files are recorded and the transcode stage is queued (unless the job is being
 * canceled). The job row is written once: its raw data, rip_fertig and the files, with its new status.
 */
function ripDone({ jobs, commands, queue, journal, beforeTranscode, measure }: JobEventParts, { node, job, event }: JobEventContext<'rip_done'>): void {
  const cmd = commands.active(job.id);
  if (cmd) commands.setState(cmd.id, 'done');
  const raw = { raw_path: event.raw_dir, raw_state: 'present', raw_checked_at: new Date().toISOString() } as const;
  // The titles the files were ripped from (their source and, on a recognised disc, their role), in the files' order.
  const ripped = event.titles && event.titles.length === event.files.length && event.titles.every((t, i) => t.file === event.files[i]) ? event.titles : undefined;
  const ripSeconds = secondsSince(job.meta?.rip_started_at, Date.now());
  const meta = { rip_fertig: true, raw_files: event.files, ...(ripped ? { ripped_titles: ripped } : {}), ...(ripSeconds !== undefined ? { rip_seconds: ripSeconds } : {}) };
  journal.note(job.id, 'info', `rip finished on ${node}: ${event.files.length} file(s)`);
  measure?.(job.id, 'raw_bytes', event.files);
  journal.recordHistory(job);
  if (job.status === 'canceling') {
    journal.finish(job.id, 'canceled', raw, 'canceled after the rip; the raw data is kept', meta);
    return;
  }
  if (!jobs.move(job.id, 'transcoding', { ...raw, ...phaseStart('transcode') }, meta)) return;
  if (beforeTranscode && !beforeTranscode(job, event.files, ripped)) return;
  queue.enqueue(job.id, event.raw_dir, event.files);
}

/** Each job event type with what it does to the job, its command and the queue (inside the transaction that records the event). */
export const JOB_EVENT_HANDLERS: { [T in JobEventType]: JobEventHandler<T> } = {
  accepted({ commands, journal }, { node, job, cmd }) {
    if (cmd) commands.setState(cmd.id, 'accepted');
    journal.note(job.id, 'info', `worker ${node} accepted the ${cmd?.task === TASKS.transcodeFiles ? 'transcode' : 'rip'}`);
  },
  rejected({ commands, journal }, { node, job, cmd, event }) {
    if (cmd) commands.setState(cmd.id, 'done');
    if (!isActive(job.status)) return;
    journal.finish(job.id, 'failed', { error: event.reason }, `worker ${node} refused: ${event.reason}`);
  },
  log({ jobs }, { job, event }) {
    jobs.addLog(job.id, event.level, event.message);
    // The rip's closing line about read errors carries their count: the job keeps it for a careful re-read.
    if (typeof event.read_errors === 'number') jobs.update(job.id, {}, { read_errors: event.read_errors });
  },
  progress({ jobs }, { job, event }) {
    if (isActive(job.status)) jobs.recordProgress(job.id, event.phase, event.progress, event.fps);
  },
  rip_started({ jobs, journal }, { node, job, event }) {
    // A rip that starts again (an agent that resumed it) keeps its status: only its raw folder and rip_fertig are written.
    // The rip's time counts from its first start: a rip the agent resumed keeps it.
    const meta = { rip_fertig: false, ...(job.status === 'pending' || !job.meta?.rip_started_at ? { rip_started_at: new Date().toISOString() } : {}) };
    if (job.status === 'pending') jobs.move(job.id, 'running', { ...phaseStart('rip'), node, raw_path: event.raw_dir }, meta);
    else jobs.update(job.id, { raw_path: event.raw_dir }, meta);
    journal.note(job.id, 'info', `rip started on ${node} into ${event.raw_dir}`);
  },
  rip_done: ripDone,
  transcode_started({ jobs, commands, journal }, { node, job, cmd }) {
    // A transcode run again (an agent that resumed it after a restart) takes its slot again.
    if (cmd?.encoded || cmd?.ending) commands.setEncoded(cmd.id, false);
    // The job is transcoding already (or canceling): its status stays, the phase starts anew.
    // The transcode's time counts from its first start (retry-transcode clears it): a resumed one keeps it.
    jobs.update(job.id, { ...(job.status !== 'canceling' ? phaseStart('transcode') : {}), transcode_node: node }, job.meta?.transcode_started_at ? undefined : { transcode_started_at: new Date().toISOString() });
    journal.note(job.id, 'info', `transcode started on ${node}`);
  },
  transcode_ending({ commands, queue }, { cmd }) {
    if (!cmd || cmd.ending || cmd.encoded) return;
    commands.setEnding(cmd.id);
    queue.pump();
  },
  transcode_encoded({ commands, queue }, { cmd }) {
    if (!cmd) return;
    commands.setEncoded(cmd.id, true);
    queue.pump();
  },
  job_done({ commands, queue, journal, mediaRoot, measure }, { job, cmd, event }) {
    if (cmd) commands.setState(cmd.id, 'done');
    // The stage that ended: a transcode, or a rip that was the last stage (audio CDs, no transcode).
    const transcoded = cmd ? cmd.task === TASKS.transcodeFiles : job.phase === 'transcode';
    const took = secondsSince(transcoded ? job.meta?.transcode_started_at : job.meta?.rip_started_at, Date.now());
    queue.close(job.id);
    // keepOriginal: the folder the originals were moved into is the job's raw data from now on
    // (GET /jobs/{id}/rohdaten, DELETE ?rohdaten=true), when it has the shape of one (shared/originals.ts).
    const root = mediaRoot?.() ?? null;
    const originals = event.originals_dir && root && isOriginalsDir(root, event.originals_dir, job.id) ? event.originals_dir : null;
    const rawKept = originals ? { raw_path: originals, raw_state: 'present' as const } : { raw_state: event.raw_removed ? ('absent' as const) : ('present' as const) };
    journal.finish(
      job.id,
      'completed',
      // error: null, since a late finish of a superseded transcode may complete a job a newer attempt failed.
      { progress: 100, error: null, output_path: event.output_path, ...rawKept, raw_checked_at: new Date().toISOString() },
      `finished: ${event.files.length} file(s) in ${event.output_path}${originals ? `; raw data kept as the originals in ${originals}` : event.raw_removed ? '; raw data removed' : '; raw data kept'}`,
      // In the same write: the streams of each file, guessed episode numbers, and the files relative to
      // the output folder (a correction after the fact renames exactly these).
      {
        ...(event.streams ? { streams: event.streams } : {}),
        ...(event.episodes_guessed ? { episodes_guessed: true } : {}),
        ...(event.accuraterip ? { accuraterip: event.accuraterip } : {}),
        output_files: event.files.map((f) => path.relative(event.output_path, f)).filter((f) => f && !f.startsWith('..')),
        ...(took !== undefined ? (transcoded ? { transcode_seconds: took } : { rip_seconds: took }) : {}),
      },
    );
    measure?.(job.id, 'output_bytes', event.files);
    journal.recordHistory(job);
    // The titles now in the library: a rip that was the last stage reports them with its files; a
    // transcode's files follow the rip's titles in order.
    const fromRip = event.titles?.filter((t) => event.files.includes(t.file));
    journal.recordLibraryTitles(job, fromRip?.length ? fromRip : (job.meta?.ripped_titles ?? []), fromRip?.length ? fromRip.map((t) => t.file) : event.files);
    queue.pump();
  },
  job_failed({ commands, queue, journal }, { node, job, cmd, event }) {
    if (cmd) commands.setState(cmd.id, 'done');
    queue.close(job.id);
    const rawPresent = event.phase === 'transcode';
    journal.finish(job.id, 'failed', { error: event.reason, ...(rawPresent ? { raw_state: 'present', raw_checked_at: new Date().toISOString() } : {}) }, `${event.phase} failed on ${node}: ${event.reason}`);
    queue.pump();
  },
  job_canceled({ commands, queue, journal }, { node, job, cmd, event }) {
    if (cmd) commands.setState(cmd.id, 'done');
    queue.close(job.id);
    journal.finish(job.id, 'canceled', {}, `${event.phase} canceled on ${node}`);
    queue.pump();
  },
};

export function isJobEvent(type: AgentEventType): type is JobEventType {
  return Object.hasOwn(JOB_EVENT_HANDLERS, type);
}

/** Runs the handler of a job event's type. */
export function handleJobEvent(parts: JobEventParts, ctx: JobEventContext<JobEventType>): void {
  const handler = JOB_EVENT_HANDLERS[ctx.event.type] as JobEventHandler<JobEventType>;
  handler(parts, ctx);
}
