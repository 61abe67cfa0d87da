import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { DriveSpec } from '../../shared/config.js';
import type { AudioCdInfo, DiscInfo, DriveState } from '../../shared/protocol.js';
import type { Logger } from '../../shared/log.js';
import { audioCdFingerprints, makeDiscInfo } from '../disc/disc-info.js';
import { titleFromLabel } from '../disc/disc-title.js';
import { identifyDisc } from '../disc/identify.js';
import { ejectImage, readImageDrive, type ImageDisc } from '../disc/image-drive.js';
import { describeDrive, ejectDrive, readDriveStatus, type PhysicalDriveReading } from './physical-drive.js';

export const DRIVE_POLL_MS = 3_000;

/** The disc a drive holds and where a ripper reads it from. */
export type LoadedDisc = ImageDisc;

interface ManagedDrive {
  spec: DriveSpec;
  name: string;
  state: DriveState;
  loaded: LoadedDisc | null;
  /** Physical drives: the reading the loaded disc was identified from (identification runs once per insert). */
  identifiedFrom: string | null;
}

export function driveName(spec: DriveSpec): string {
  const base = spec.kind === 'image' ? path.basename(spec.dir) : path.basename(spec.path);
  return base.replace(/[^A-Za-z0-9._-]/g, '_') || 'drive';
}

/** Reads an audio CD's TOC and CD-Text from a drive (cdparanoia and cd-info); null when it cannot. */
export type AudioCdReader = (devicePath: string) => Promise<AudioCdInfo | null>;
const noAudioCdReader: AudioCdReader = async () => null;

/** What identifies a physical disc between two polls without reading it again. */
function readingKey(r: PhysicalDriveReading): string {
  return [r.media.mediaKind, r.media.fsLabel, r.media.audioTracks, r.sizeBytes].join('|');
}

/**
 * Identifies the disc in a physical drive, once per insert: labels, layout, 4K UHD marker and the
 * Blu-ray clear-text title are read from the medium in user space (opened read-only and non-blocking,
 * so an open tray is never pulled in); the udev media profile stands in for an unreadable layout.
 * The content ids (disc-ids.ts) are read from the same file system. Audio CDs have no file system:
 * their fingerprint is the MusicBrainz disc id of the TOC, else the track count and the size.
 */
export async function physicalDisc(devicePath: string, r: PhysicalDriveReading, readAudioCd: AudioCdReader = noAudioCdReader): Promise<DiscInfo> {
  const size = r.sizeBytes ?? 0;
  if (r.media.mediaKind === 'cd' && r.media.audioTracks) {
    // The TOC gives the MusicBrainz disc id (the fingerprint then tells two CDs of equal track count apart).
    const audioCd = await readAudioCd(devicePath).catch(() => null);
    const fingerprints = audioCdFingerprints(audioCd?.musicbrainz_disc_id ?? null, `AUDIO_CD_${r.media.audioTracks}_TRACKS`, size);
    const text = audioCd?.cd_text;
    const title = text?.title ? (text.performer ? `${text.performer} - ${text.title}` : text.title) : 'Audio CD';
    return { label: '', title, year: null, type: 'cd', size_bytes: size, ...fingerprints, source: devicePath, audio_tracks: r.media.audioTracks, audio_cd: audioCd };
  }
  const udevLayout = r.media.mediaKind === 'dvd' || r.media.mediaKind === 'bluray' ? r.media.mediaKind : 'unknown';
  const fallback = r.media.fsLabel ?? path.basename(devicePath);
  const fh = await fs.open(devicePath, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK).catch(() => null);
  const identity = fh ? await identifyDisc(fh, size, fallback).finally(() => fh.close()) : null;
  if (identity) return makeDiscInfo({ ...identity, layout: identity.layout === 'unknown' ? udevLayout : identity.layout }, size, devicePath);
  const label = r.media.fsLabel ?? '';
  return makeDiscInfo({ label, ...titleFromLabel(label || fallback), layout: udevLayout, uhdMarker: false }, size, devicePath);
}

/**
 * The drives this agent owns, polled every 3 s. Image drives (a folder holding one disc image) count
 * an image appearing as an insert and its disappearance as an eject. Physical drives are read from
 * the udev database and the kernel's drive status, never by reading the disc in the poll.
 */
export class DriveManager {
  private readonly drives = new Map<string, ManagedDrive>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;

  constructor(
    specs: DriveSpec[],
    node: string,
    private readonly log: Logger,
    private readonly onChange: (state: DriveState, previous: DriveState | null) => void,
    private readonly readAudioCd: AudioCdReader = noAudioCdReader,
  ) {
    for (const spec of specs) {
      const name = driveName(spec);
      if (this.drives.has(name)) throw new Error(`two drives share the name "${name}"`);
      this.drives.set(name, {
        spec,
        name,
        loaded: null,
        identifiedFrom: null,
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
    for (const drive of this.drives.values()) {
      if (drive.spec.kind !== 'device') continue;
      const info = await describeDrive(drive.spec.path);
      drive.state = { ...drive.state, vendor: info.vendor, model: info.model };
    }
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

  /** Reads every drive now and reports changes; a poll already running is joined, not doubled. */
  poll(initial = false): Promise<void> {
    if (!this.polling) {
      this.polling = (async () => {
        for (const drive of this.drives.values()) await this.refresh(drive, initial);
      })().finally(() => {
        this.polling = null;
      });
    }
    return this.polling;
  }

  private async read(drive: ManagedDrive): Promise<{ status: DriveState['status']; loaded: LoadedDisc | null } | null> {
    if (drive.spec.kind === 'image') {
      const image = await readImageDrive(drive.spec.dir);
      return { status: image ? 'disc_present' : 'no_disc', loaded: image };
    }
    const devicePath = drive.spec.path;
    const reading = await readDriveStatus(devicePath);
    if (reading.status !== 'disc_present') return { status: reading.status, loaded: null };
    // The kernel may see the disc before udev has described it: wait for the next poll.
    if (!reading.media.mediaPresent || reading.sizeBytes === null) return null;
    const key = readingKey(reading);
    if (drive.loaded && drive.identifiedFrom === key) return { status: 'disc_present', loaded: drive.loaded };
    drive.identifiedFrom = key;
    return { status: 'disc_present', loaded: { source: { kind: 'device', path: devicePath }, disc: await physicalDisc(devicePath, reading, this.readAudioCd) } };
  }

  private async refresh(drive: ManagedDrive, initial: boolean): Promise<void> {
    const next = await this.read(drive);
    if (!next) return;
    const previous = drive.state;
    const state: DriveState = { ...previous, status: next.status, disc: next.loaded?.disc ?? null };
    drive.loaded = next.loaded;
    const changed = initial || previous.status !== state.status || previous.disc?.fingerprint !== state.disc?.fingerprint;
    drive.state = state;
    if (!changed) return;
    if (state.disc && (initial || previous.disc?.fingerprint !== state.disc.fingerprint)) {
      this.log.info(`drive ${drive.name}: disc ${initial ? 'present at start' : 'inserted'}: "${state.disc.title}" (${state.disc.type}, ${state.disc.size_bytes} bytes)`);
    } else if (!state.disc && previous.disc) {
      this.log.info(`drive ${drive.name}: disc ejected${state.status === 'tray_open' ? ' (tray open)' : ''}`);
    }
    this.onChange(state, initial ? null : previous);
  }

  /**
   * Ejects the disc. Physical drives: unlock the door, eject, then the drive must read tray open or
   * no disc within 5 s, else a plain-text error. Image drives: the image moves into ejected/.
   */
  async eject(name: string): Promise<void> {
    const drive = this.drives.get(name);
    if (!drive) throw new Error(`no drive named "${name}" on this agent`);
    if (drive.spec.kind === 'device') {
      const result = await ejectDrive(drive.spec.path);
      this.log.info(`drive ${name}: ejected (${result === 'tray_open' ? 'tray open' : 'no disc'})`);
      await this.refresh(drive, false);
      return;
    }
    await this.refresh(drive, false);
    if (!drive.loaded) return;
    const dest = await ejectImage(drive.spec.dir, drive.loaded);
    this.log.info(`drive ${name}: image moved to ${dest}`);
    await this.refresh(drive, false);
    if (drive.loaded) throw new Error(`drive ${name}: the disc is still inside after eject`);
  }
}
