import type { AgentConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import type { AgentEvent, Capabilities } from '../shared/protocol.js';
import type { AudioCdTools } from './tasks/audio-cd-ripper.js';
import type { DriveManager } from './drives/drive-manager.js';
import type { AgentLink } from './mqtt/link.js';
import type { PathRoots } from './output/path-roots.js';
import type { Ripper } from './tools/rippers.js';
import type { SlotPool } from './tasks/slot-pool.js';
import type { EventBody, TaskStore } from './store/task-store.js';

/** What every part of an agent shares: its configuration, store, tools, drives, link and path rules. */
export interface AgentContext {
  readonly config: AgentConfig;
  readonly log: Logger;
  /** `<WORKER_NAME>@<host>`. */
  readonly node: string;
  readonly store: TaskStore;
  /** Found at start; the key count (`schluessel`) changes when the coordinator hands out a key store. */
  readonly capabilities: Capabilities;
  readonly ripper: Ripper | null;
  readonly audioTools: AudioCdTools;
  readonly drives: Pick<DriveManager, 'get' | 'poll' | 'eject'>;
  readonly link: Pick<AgentLink, 'publishStatus'>;
  readonly pool: SlotPool;
  readonly roots: PathRoots;
  /** Stores an event in the outbox and sends it. */
  emit(body: EventBody, coalesceKey?: string): AgentEvent;
  /** A coordinator path as this host sees it (RIPWERK_PATH_MAP), and back. */
  toLocal(p: string): string;
  toShared(p: string): string;
  /** Set once the agent stops: running work ends quietly, nothing new is taken. */
  stopping: boolean;
}

/** A part of the agent with its own start and stop; the agent starts them in order and stops them in reverse. */
export interface AgentFeature {
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}
