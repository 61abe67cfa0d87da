import { topics, type AppKeyMessage, type KeydbMessage, type KeystoreMessage } from '../../shared/protocol.js';
import type { AgentContext } from '../agent-context.js';
import { DUMP_LIMIT_BYTES, type RipperKeys } from '../keys/ripper-keys.js';

/**
 * Disc-key material: the coordinator's retained ripwerk/keys/* messages written where MakeMKV reads
 * them, and AACS dumps the ripper wrote (a disc whose key is unknown) sent back to the coordinator.
 */
export class KeyMaterial {
  constructor(
    private readonly ctx: AgentContext,
    private readonly keys: RipperKeys,
  ) {}

  async install(topic: string, body: KeystoreMessage | KeydbMessage | AppKeyMessage): Promise<void> {
    const { config, capabilities, log } = this.ctx;
    if (config.native) return; // no ripper: disc keys are of no use here
    try {
      if (topic === topics.keystore) {
        const count = await this.keys.applyKeystore(body as KeystoreMessage);
        if (count !== capabilities.schluessel) log.info(`key store installed in ${config.makemkvDataDir}: ${count} disc key file(s)`);
        capabilities.schluessel = count;
        this.ctx.link.publishStatus();
      } else if (topic === topics.keydb) {
        await this.keys.applyKeydb(body as KeydbMessage);
      } else if (topic === topics.appKey) {
        await this.keys.applyAppKey(body as AppKeyMessage);
      }
    } catch (err) {
      log.warn(`installing key material from ${topic} failed: ${(err as Error).message}`);
    }
  }

  async sendDumps(): Promise<void> {
    const { log } = this.ctx;
    const tooLarge = (file: string, bytes: number): void => log.warn(`AACS dump ${file} has ${bytes} bytes, more than the ${DUMP_LIMIT_BYTES} that travel to the coordinator: copy it by hand if needed`);
    for (const dump of await this.keys.newDumps(tooLarge).catch(() => [])) {
      log.info(`sending AACS dump ${dump.name} to the coordinator`);
      this.ctx.emit({ type: 'aacs_dump', name: dump.name, data_base64: dump.data.toString('base64') });
    }
  }
}
