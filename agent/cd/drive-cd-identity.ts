import type { AudioCdInfo } from '../../shared/protocol.js';
import { runTool } from '../../shared/process.js';
import { parseCdInfoCdText, parseCdInfoToc } from './cd-info.js';
import { musicbrainzDiscId, musicbrainzToc, tocParam, type DiscLayout } from './cd-toc.js';
import { parseParanoiaToc, type ParanoiaTrack } from './cdparanoia-toc.js';

export interface CdIdentityTools {
  cdparanoia: string;
  /** libcdio-utils' cd-info, for CD-Text and the data tracks; optional (a missing tool just means no CD-Text). */
  cdInfo: string;
}

/**
 * The layout from `cdparanoia -Q` alone (audio tracks only): a track number missing before the first
 * audio track is a mixed-mode CD's data track 1 at LBA 0 (where every CD's first track starts), one
 * missing between audio tracks starts where the audio track before it ends (cdparanoia's lengths run
 * to the next track of any kind). A trailing data track does not show at all.
 */
export function paranoiaLayout(tracks: ParanoiaTrack[]): DiscLayout {
  const sorted = [...tracks].sort((a, b) => a.number - b.number);
  const layout: DiscLayout = { tracks: [], leadout: 0 };
  for (let n = 1; n < (sorted[0]?.number ?? 1); n++) layout.tracks.push({ number: n, lba: 0, audio: false });
  for (const [i, t] of sorted.entries()) {
    const prev = sorted[i - 1];
    if (prev) for (let n = prev.number + 1; n < t.number; n++) layout.tracks.push({ number: n, lba: prev.start + prev.frames, audio: false });
    layout.tracks.push({ number: t.number, lba: t.start, audio: true });
  }
  const last = sorted[sorted.length - 1];
  layout.leadout = last ? last.start + last.frames : 0;
  return layout;
}

/**
 * The full layout of the CD in a drive: the audio tracks from `cdparanoia -Q`, the data tracks and the
 * last session's lead-out from `cd-info` where it agrees with cdparanoia, else pieced together from
 * cdparanoia's rows (paranoiaLayout). Null when the TOC cannot be read; `infoText` is cd-info's
 * output ("" when it is missing or failed).
 */
export async function readDriveLayout(device: string, tools: CdIdentityTools, signal?: AbortSignal): Promise<{ layout: DiscLayout; infoText: string } | null> {
  const paranoia = await runTool(tools.cdparanoia, ['-Q', '-d', device], { signal, timeoutMs: 60_000 }).catch(() => null);
  const tracks = paranoia && paranoia.exitCode === 0 ? parseParanoiaToc(paranoia.stderr) : [];
  if (tracks.length === 0) return null;
  const info = await runTool(tools.cdInfo, ['--no-device-info', '-C', device], { signal, timeoutMs: 60_000, captureStdout: true }).catch(() => null);
  const infoText = info && info.exitCode === 0 ? info.stdout : '';
  const fromInfo = parseCdInfoToc(infoText);
  // cd-info's list counts only when it holds the audio tracks cdparanoia saw.
  const agrees = fromInfo && tracks.every((t) => fromInfo.tracks.some((x) => x.number === t.number && x.audio && x.lba === t.start));
  return { layout: agrees ? fromInfo : paranoiaLayout(tracks), infoText };
}

/**
 * An audio CD in a drive as MusicBrainz identifies it: its layout (readDriveLayout), the disc id by
 * libdiscid's rules (musicbrainzToc) and the CD-Text from `cd-info`. Null when the TOC cannot be
 * read; the CD-Text is left out when cd-info is missing or fails.
 */
export async function readDriveCdIdentity(device: string, tools: CdIdentityTools, signal?: AbortSignal): Promise<AudioCdInfo | null> {
  const read = await readDriveLayout(device, tools, signal);
  if (!read) return null;
  const toc = musicbrainzToc(read.layout);
  return { musicbrainz_disc_id: toc ? musicbrainzDiscId(toc) : null, toc: toc ? tocParam(toc) : null, cd_text: read.infoText ? parseCdInfoCdText(read.infoText) : null };
}
