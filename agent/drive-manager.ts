import path from 'node:path';
import type { DriveSpec } from '../shared/config.js';
import type { DriveState } from '../shared/protocol.js';
import type { Logger } from '../shared/log.js';
import { ejectImage, readImageDrive, type ImageDisc } from './disc/image-drive.js';

export const DRIVE_POLL_MS = 3_000;

interface ManagedDrive {
  spec: DriveSpec;
  name: string;
  state: DriveState;
  image: ImageDisc | null;
}

export function driveName(spec: DriveSpec): string {
  const base = spec.kind === 'image' ? path.basename(spec.dir) : path.basename(spec.path);
  return base.replace(/[^A-Za-z0-9._-]/g, '_') || 'drive';
}

/**
 * The drives this agent owns. Image drives (a folder holding one disc image) are polled like
 * physical drives: an image appearing is an insert, its disappearance an eject.
 */
export class DriveManager {
  private readonly drives = new Map<string, ManagedDrive>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(
    specs: DriveSpec[],
    node: string,
    private readonly log: Logger,
    private readonly onChange: (state: DriveState, previous: DriveState | null) => void,
  ) {
    for (const spec of specs) {
      const name = driveName(spec);
      if (this.drives.has(name)) throw new Error(`two drives share the name "${name}"`);
      this.drives.set(name, {
        spec,
        name,
        image: null,
        state: {
          node,
          drive: name,
          kind: spec.kind,
          path: spec.kind === 'image' ? spec.dir : spec.path,
          vendor: spec.kind === 'image' ? 'Ripwerk' : null,
          model: spec.kind === 'image' ? 'Image drive' : null,
          status: 'unknown',
          disc: null,
        },
      });
    }
  }

  async start(): Promise<void> {
    await this.poll(true);
    this.timer = setInterval(() => void this.poll(false), DRIVE_POLL_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  states(): DriveState[] {
    return [...this.drives.values()].map((d) => d.state);
  }

  get(name: string): ManagedDrive | undefined {
    return this.drives.get(name);
  }

  /** Reads every drive now; reports changes. */
  async poll(initial = false): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const drive of this.drives.values()) await this.refresh(drive, initial);
    } finally {
      this.polling = false;
    }
  }

  private async refresh(drive: ManagedDrive, initial: boolean): Promise<void> {
    if (drive.spec.kind !== 'image') return;
    const image = await readImageDrive(drive.spec.dir);
    const previous = drive.state;
    const next: DriveState = { ...previous, status: image ? 'disc_present' : 'no_disc', disc: image?.disc ?? null };
    drive.image = image;
    const changed = initial || previous.status !== next.status || previous.disc?.fingerprint !== next.disc?.fingerprint;
    drive.state = next;
    if (!changed) return;
    if (next.disc && (initial || previous.disc?.fingerprint !== next.disc.fingerprint)) {
      this.log.info(`drive ${drive.name}: disc ${initial ? 'present at start' : 'inserted'}: "${next.disc.title}" (${next.disc.type}, ${next.disc.size_bytes} bytes)`);
    } else if (!next.disc && previous.disc) {
      this.log.info(`drive ${drive.name}: disc ejected`);
    }
    this.onChange(next, initial ? null : previous);
  }

  /** Ejects the disc; success means the drive reads "no disc" afterwards. */
  async eject(name: string): Promise<void> {
    const drive = this.drives.get(name);
    if (!drive) throw new Error(`no drive named "${name}" on this agent`);
    if (drive.spec.kind !== 'image') throw new Error(`drive ${name}: ejecting physical drives is not supported by this agent build`);
    await this.refresh(drive, false);
    if (!drive.image) return;
    const dest = await ejectImage(drive.spec.dir, drive.image);
    this.log.info(`drive ${name}: image moved to ${dest}`);
    await this.refresh(drive, false);
    if (drive.image) throw new Error(`drive ${name}: the disc is still inside after eject`);
  }
}
