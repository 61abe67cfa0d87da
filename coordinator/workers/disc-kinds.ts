import type { Capabilities } from '../../shared/protocol.js';
import type { DiscKind, DiscKindAbility, DiscKinds, MissingPart } from '../../shared/api-types.js';
import type { Fleet } from './fleet.js';

export type { DiscKind, DiscKinds, MissingPart };

/** The disc kinds GET /system/info and GET /capabilities report per worker. */
export const DISC_KINDS: readonly DiscKind[] = ['audio_cd', 'dvd', 'dvd_protected', 'bluray', 'uhd'];


/** What a worker's rips need: its capabilities (tools, key count) and the kinds of its drives. */
export interface WorkerParts {
  capabilities: Pick<Capabilities, 'tools' | 'schluessel' | 'native'> | null | undefined;
  /** The kinds of the worker's drives; a physical drive needs abcde for audio CDs, an image drive ffmpeg. */
  driveKinds: ('device' | 'image')[];
}

const able: DiscKindAbility = { can: true, missing: null };

/** The first part of the list the worker lacks, or null when it has them all. */
function firstMissing(tools: Record<string, string | null>, parts: MissingPart[]): MissingPart | null {
  return parts.find((p) => !tools[p]) ?? null;
}

function result(missing: MissingPart | null): DiscKindAbility {
  return missing === null ? able : { can: false, missing };
}

/**
 * Which disc kinds a worker can rip, and for each it cannot, the first thing missing:
 * - audio CD: abcde and cdparanoia for a physical drive, ffmpeg for a CD image (cue sheet); a
 *   worker with both kinds of drive needs all three;
 * - unprotected DVD: makemkvcon, or the open tools lsdvd, dvdbackup and ffmpeg;
 * - protected (CSS) DVD: makemkvcon, or the open tools plus libdvdcss;
 * - Blu-ray: makemkvcon;
 * - 4K UHD: makemkvcon and a key store (at least one disc key on this worker).
 * Where neither way is complete, the open tools' gap is named first (they are in Debian), then
 * makemkvcon. A native worker rips nothing: every kind says "native".
 */
export function discKinds(worker: WorkerParts): DiscKinds {
  const caps = worker.capabilities;
  if (caps?.native) return Object.fromEntries(DISC_KINDS.map((k) => [k, { can: false, missing: 'native' }])) as DiscKinds;
  const tools = caps?.tools ?? {};
  const hasMakemkv = Boolean(tools.makemkvcon);
  const drives: WorkerParts['driveKinds'] = worker.driveKinds.length ? worker.driveKinds : ['device'];
  const audioParts: MissingPart[] = [...(drives.includes('device') ? (['abcde', 'cdparanoia'] as const) : []), ...(drives.includes('image') ? (['ffmpeg'] as const) : [])];
  const open = firstMissing(tools, ['lsdvd', 'dvdbackup', 'ffmpeg']);
  const openCss = open ?? firstMissing(tools, ['libdvdcss']);
  return {
    audio_cd: result(firstMissing(tools, audioParts)),
    dvd: result(hasMakemkv ? null : open),
    dvd_protected: result(hasMakemkv ? null : openCss),
    bluray: result(hasMakemkv ? null : 'makemkvcon'),
    uhd: result(!hasMakemkv ? 'makemkvcon' : (caps?.schluessel ?? 0) > 0 ? null : 'keystore'),
  };
}

/** discKinds for a worker of the fleet: its reported capabilities and the drives it announced. */
export function workerDiscKinds(fleet: Pick<Fleet, 'devices'>, node: string, capabilities: WorkerParts['capabilities']): DiscKinds {
  const driveKinds = fleet
    .devices()
    .filter((d) => d.state.node === node)
    .map((d) => d.state.kind);
  return discKinds({ capabilities, driveKinds });
}
