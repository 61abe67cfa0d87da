import type { AudioCdInfo } from '../../shared/protocol.js';
import { runTool } from '../../shared/process.js';
import { parseCdInfoCdText } from './cd-info.js';
import { musicbrainzDiscId, tocFromTracks, tocParam } from './cd-toc.js';
import { parseParanoiaToc } from './cdparanoia-toc.js';

export interface CdIdentityTools {
  cdparanoia: string;
  /** libcdio-utils' cd-info, for CD-Text; optional (a missing tool just means no CD-Text). */
  cdInfo: string;
}

/**
 * An audio CD in a drive as MusicBrainz identifies it: the TOC from `cdparanoia -Q` (begin + 150 per
 * track, lead-out after the last, audio-cd.md §4) and the CD-Text from `cd-info`. Null when the TOC
 * cannot be read; the CD-Text is left out when cd-info is missing or fails.
 */
export async function readDriveCdIdentity(device: string, tools: CdIdentityTools, signal?: AbortSignal): Promise<AudioCdInfo | null> {
  const paranoia = await runTool(tools.cdparanoia, ['-Q', '-d', device], { signal, timeoutMs: 60_000 }).catch(() => null);
  const tracks = paranoia && paranoia.exitCode === 0 ? parseParanoiaToc(paranoia.stderr) : [];
  if (tracks.length === 0) return null;
  const toc = tocFromTracks(tracks);
  const info = await runTool(tools.cdInfo, ['--no-device-info', '-C', device], { signal, timeoutMs: 60_000, captureStdout: true }).catch(() => null);
  return { musicbrainz_disc_id: musicbrainzDiscId(toc), toc: tocParam(toc), cd_text: info && info.exitCode === 0 ? parseCdInfoCdText(info.stdout) : null };
}
