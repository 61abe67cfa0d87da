import type { Command } from '../../shared/protocol.js';
import { TASKS } from '../../shared/protocol.js';

type JoinChunksCommand = Extract<Command, { task: typeof TASKS.joinChunks }>;

/**
 * A chunked title's lead waits here for the coordinator's word that every chunk is encoded
 * (join_chunks, issue 41): one waiter per transcode command and title, ended by that command or by
 * the transcode's abort.
 */
export class ChunkJoins {
  private readonly waiters = new Map<string, { resolve: (files: string[]) => void; reject: (err: Error) => void }>();

  /** Resolves with the chunk files (coordinator paths, in order) of `title` of the transcode `commandId`; rejects when `signal` aborts. */
  wait(commandId: string, title: number, signal: AbortSignal): Promise<string[]> {
    const key = `${commandId}:${title}`;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const onAbort = (): void => {
        this.waiters.delete(key);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(key, {
        resolve: (files) => {
          signal.removeEventListener('abort', onAbort);
          resolve(files);
        },
        reject,
      });
    });
  }

  /** Hands a join_chunks command to its waiting lead; false when nothing waits for it. */
  deliver(cmd: JoinChunksCommand): boolean {
    const key = `${cmd.args.command_id}:${cmd.args.title}`;
    const waiter = this.waiters.get(key);
    if (!waiter) return false;
    this.waiters.delete(key);
    waiter.resolve(cmd.args.files);
    return true;
  }
}
