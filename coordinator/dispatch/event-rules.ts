import { TASKS, type AgentEvent, type Phase } from '../../shared/protocol.js';
import { EVENT_STATUSES, isActive, type JobStatus } from '../jobs/job-status.js';

/** The command row an agent's job event refers to (the fields the rules look at). */
export interface EventCommand {
  node: string;
  task: string;
  job_id: string;
  state: 'sent' | 'accepted' | 'done' | 'superseded';
}

/**
 * Whether an event of a command taken away from its worker (superseded) still acts: only a finished
 * transcode (`job_done`), because its files are written and its raw folder may be gone already. It
 * completes the job while the job is still transcoding (the newer attempt is then stopped), and also
 * when the newer attempt failed in the transcode stage: that failure is usually this very encode's
 * doing ("raw file … is missing" once the first worker removed the raw folder), and crediting the
 * finished encode beats encoding the job a second time.
 */
export function supersededResultCounts(event: AgentEvent, cmd: EventCommand, jobStatus: JobStatus, jobPhase: Phase | null): boolean {
  if (event.type !== 'job_done' || cmd.task !== TASKS.transcodeFiles) return false;
  return jobStatus === 'transcoding' || (jobStatus === 'failed' && jobPhase === 'transcode');
}

/**
 * Why a job event from `node` is not applied, or null when it may be: it must name a command this
 * coordinator sent to that very node for that very job, the command must still be open (a
 * superseded transcode may still finish, see supersededResultCounts), and the event must be a valid
 * transition from the job's current status (the table EVENT_STATUSES of jobs/job-status.ts).
 */
export function jobEventRefusal(event: AgentEvent, node: string, cmd: EventCommand | undefined, jobStatus: JobStatus, jobPhase: Phase | null = null): string | null {
  if (!event.command_id || !cmd) return `${event.type} names no command of this coordinator`;
  if (cmd.node !== node) return `${event.type} for a command of ${cmd.node} came from ${node}`;
  if (cmd.job_id !== event.job_id) return `${event.type} names job ${event.job_id ?? '(none)'} but its command belongs to job ${cmd.job_id}`;
  if (cmd.state === 'done') return `${event.type} for command ${event.command_id} that has ended already`;
  if (cmd.state === 'superseded' && supersededResultCounts(event, cmd, jobStatus, jobPhase)) return null;
  const rules = EVENT_STATUSES[event.type];
  if (!rules) return `${event.type} is not a job event`;
  const stage = cmd.task === TASKS.ripDisc ? 'rip' : cmd.task === TASKS.transcodeFiles ? 'transcode' : null;
  if (!stage) return `${event.type} for a command that is no rip or transcode`;
  if (!rules[stage].includes(jobStatus)) return `${event.type} of the ${stage} is no valid transition for a job that is ${jobStatus}`;
  return null;
}

/**
 * Whether a job's end is told to the household (webhook) and acted on (library refresh): its first end
 * (the job was active before) always; an end of a job that had ended already only with a different
 * outcome. That is a job that failed in its transcode stage and is completed after all by the late
 * job_done of a superseded transcode (supersededResultCounts): its "failed" went out and cannot be
 * taken back, so its "completed" goes out too, and the library is refreshed for it. The same outcome
 * is never told twice.
 */
export function endNoticeDue(before: JobStatus | undefined, after: JobStatus): boolean {
  return before === undefined || isActive(before) || before !== after;
}
