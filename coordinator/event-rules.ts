import { TASKS, type AgentEvent } from '../shared/protocol.js';
import type { JobStatus } from './jobs-store.js';

/** The command row an agent's job event refers to (the fields the rules look at). */
export interface EventCommand {
  node: string;
  task: string;
  job_id: string;
  state: 'sent' | 'accepted' | 'done' | 'superseded';
}

const ACTIVE: readonly JobStatus[] = ['pending', 'running', 'transcoding', 'canceling'];

/**
 * The job statuses in which an event of a job's rip or transcode command may act, after the spec's
 * table of states and transitions: an ended job (completed, failed, canceled) takes no event, the
 * rip's events belong to the rip stage, the transcode's to the transcode stage.
 */
const ALLOWED: Record<string, { rip: readonly JobStatus[]; transcode: readonly JobStatus[] }> = {
  accepted: { rip: ACTIVE, transcode: ACTIVE },
  rejected: { rip: ACTIVE, transcode: ACTIVE },
  log: { rip: ACTIVE, transcode: ACTIVE },
  progress: { rip: ['pending', 'running', 'canceling'], transcode: ['transcoding', 'canceling'] },
  rip_started: { rip: ['pending', 'running', 'canceling'], transcode: [] },
  rip_done: { rip: ['pending', 'running', 'canceling'], transcode: [] },
  transcode_started: { rip: [], transcode: ['transcoding', 'canceling'] },
  // A rip that is the last stage (no transcode, audio CDs) ends with job_done itself.
  job_done: { rip: ['pending', 'running', 'canceling'], transcode: ['transcoding', 'canceling'] },
  job_failed: { rip: ['pending', 'running', 'canceling'], transcode: ['transcoding', 'canceling'] },
  job_canceled: { rip: ['pending', 'running', 'canceling'], transcode: ['transcoding', 'canceling'] },
};

/**
 * Why a job event from `node` is not applied, or null when it may be: it must name a command this
 * coordinator sent to that very node for that very job, the command must still be open (a
 * superseded transcode may still finish, see the dispatcher), and the event must be a valid
 * transition from the job's current status.
 */
export function jobEventRefusal(event: AgentEvent, node: string, cmd: EventCommand | undefined, jobStatus: JobStatus): string | null {
  if (!event.command_id || !cmd) return `${event.type} names no command of this coordinator`;
  if (cmd.node !== node) return `${event.type} for a command of ${cmd.node} came from ${node}`;
  if (cmd.job_id !== event.job_id) return `${event.type} names job ${event.job_id ?? '(none)'} but its command belongs to job ${cmd.job_id}`;
  if (cmd.state === 'done') return `${event.type} for command ${event.command_id} that has ended already`;
  const rules = ALLOWED[event.type];
  if (!rules) return `${event.type} is not a job event`;
  const stage = cmd.task === TASKS.ripDisc ? 'rip' : cmd.task === TASKS.transcodeFiles ? 'transcode' : null;
  if (!stage) return `${event.type} for a command that is no rip or transcode`;
  if (!rules[stage].includes(jobStatus)) return `${event.type} of the ${stage} is no valid transition for a job that is ${jobStatus}`;
  return null;
}
