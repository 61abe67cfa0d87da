import { nativeWorkerRefusal } from '../../shared/native-worker.js';
import { TASKS, type Command, type Track } from '../../shared/protocol.js';
import type { AgentContext } from '../agent-context.js';
import { scanAudioCd } from '../tasks/audio-cd-ripper.js';

const SCAN_TIMEOUT_MS = 10 * 60_000;

/** The commands answered at once, without a slot or a stored task. */
export type DriveCommand = Extract<Command, { task: typeof TASKS.pingWorker | typeof TASKS.scanTracks | typeof TASKS.eject }>;

/** Ping, title scan and eject: answered at once with an event, or `command_failed` with the reason. */
export class DriveCommands {
  constructor(private readonly ctx: AgentContext) {}

  async handle(cmd: DriveCommand): Promise<void> {
    const { config, drives, emit } = this.ctx;
    if (config.native && (cmd.task === TASKS.scanTracks || cmd.task === TASKS.eject)) {
      this.ctx.log.warn(`refused ${cmd.task} (command ${cmd.id}): native worker without drives`);
      emit({ type: 'rejected', command_id: cmd.id, reason: nativeWorkerRefusal(config.workerName) });
      return;
    }
    try {
      if (cmd.task === TASKS.pingWorker) {
        emit({ type: 'pong', command_id: cmd.id, capabilities: this.ctx.capabilities });
      } else if (cmd.task === TASKS.scanTracks) {
        emit({ type: 'tracks', command_id: cmd.id, drive: cmd.args.drive, tracks: await this.scan(cmd.args.drive) });
      } else {
        await drives.eject(cmd.args.drive);
        emit({ type: 'ejected', command_id: cmd.id, drive: cmd.args.drive });
      }
    } catch (err) {
      emit({ type: 'command_failed', command_id: cmd.id, reason: (err as Error).message });
    }
  }

  private async scan(name: string): Promise<Track[]> {
    const { drives, ripper } = this.ctx;
    const drive = drives.get(name);
    if (!drive) throw new Error(`this worker has no drive named "${name}"`);
    await drives.poll();
    const loaded = drive.loaded;
    if (!loaded) throw new Error(`there is no disc in drive ${name}`);
    const signal = AbortSignal.timeout(SCAN_TIMEOUT_MS);
    if (loaded.disc.type === 'cd') return scanAudioCd(loaded.source, signal, this.ctx.audioTools);
    if (ripper) return ripper.scan(loaded.source, signal, loaded.disc.type);
    throw new Error('this worker has no ripper to read titles with');
  }
}
