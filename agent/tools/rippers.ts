import { execFile } from 'node:child_process';
import { toolEnvironment } from '../../shared/process.js';
import path from 'node:path';
import type { DiscType, Track } from '../../shared/protocol.js';
import type { DiscSource } from '../disc/image-drive.js';
import type { ProbedFile } from './ffprobe-parser.js';
import type { Track as ScannedTitle } from './makemkv-parser.js';
import type { TrackFlag, TrackFlagEdit } from './mkvpropedit-runner.js';
import { carefulReads } from './makemkv-settings.js';

export interface RipHooks {
  signal: AbortSignal;
  onSpawn(pid: number): void;
  onMessage(text: string): void;
  onProgress(pct: number): void;
  /** The type of the disc being ripped (a 4K UHD failure gets its own reason). */
  discType?: DiscType;
  /** A careful re-read (RipArgs.careful): MakeMKV retries failing reads CAREFUL_READ_RETRIES times, dvdbackup skips single blocks. */
  careful?: boolean;
}

/**
 * MakeMKV's read retries (io_ErrorRetryCount) for a careful re-read; docs/rules.md says why this many.
 * makemkvcon reads settings.conf only when it starts: the value is set before each run and put back after it.
 */
export const CAREFUL_READ_RETRIES = 20;

/** A title as the scan found it, in the shape the title scan sends to the coordinator. */
function toProtocolTrack(t: ScannedTitle): Track {
  const source = sourceFields(t);
  return { number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters, ...source, audio: t.audio, subtitles: t.subtitles };
}

/**
 * The fields TheDiscDB matches a title on (never its number, which shifts with MakeMKV's minimum
 * length): source_file is TINFO 16 on a Blu-ray and the DVD title number (TINFO 24) on a DVD, as
 * TheDiscDB's SourceFile is. Only the fields the scan knows are sent.
 */
export function sourceFields(t: ScannedTitle): Pick<Track, 'source_file' | 'original_title_id' | 'segment_count' | 'segment_map'> {
  const out: Pick<Track, 'source_file' | 'original_title_id' | 'segment_count' | 'segment_map'> = {};
  const sourceFile = t.sourceFileName ?? t.originalTitleId ?? null;
  if (sourceFile) out.source_file = sourceFile;
  if (t.originalTitleId) out.original_title_id = t.originalTitleId;
  if (t.segmentCount !== undefined && t.segmentCount !== null) out.segment_count = t.segmentCount;
  if (t.segmentMap) out.segment_map = t.segmentMap;
  return out;
}

/** The title's streams have a role the disc states (forced, commentary, audio description, for the hard of hearing). */
export function hasDiscRoles(t: Pick<Track, 'audio' | 'subtitles'>): boolean {
  return (t.audio ?? []).some((a) => a.commentary || a.visual_impaired) || (t.subtitles ?? []).some((s) => s.forced || s.hearing_impaired || s.commentary);
}

/**
 * The flags that give a ripped file the roles the disc states for the title's streams, where the file
 * lacks them; null when the file's tracks are not the title's streams (per kind, the same number in
 * the same languages: MakeMKV's stream selection may have left some out), so no role lands on the
 * wrong track.
 */
export function discRoleEdits(t: Pick<Track, 'audio' | 'subtitles'>, file: Pick<ProbedFile, 'audio' | 'subtitles'>): TrackFlagEdit[] | null {
  const audio = t.audio ?? [];
  const subtitles = t.subtitles ?? [];
  const lined = <S extends { language: string }>(disc: S[], raw: S[]): boolean => disc.length === raw.length && disc.every((d, i) => d.language === raw[i].language);
  if (!lined(audio, file.audio) || !lined(subtitles, file.subtitles)) return null;
  const edits: TrackFlagEdit[] = [];
  audio.forEach((a, i) => {
    const has = file.audio[i];
    const flags: TrackFlag[] = [];
    if (a.visual_impaired && !has.visual_impaired) flags.push('visual-impaired');
    if (a.commentary && !has.commentary) flags.push('commentary');
    if (flags.length) edits.push({ track: `a${i + 1}`, flags });
  });
  subtitles.forEach((s, i) => {
    const has = file.subtitles[i];
    const flags: TrackFlag[] = [];
    if (s.forced && !has.forced) flags.push('forced');
    if (s.hearing_impaired && !has.hearing_impaired) flags.push('hearing-impaired');
    if (s.commentary && !has.commentary) flags.push('commentary');
    if (flags.length) edits.push({ track: `s${i + 1}`, flags });
  });
  return edits;
}

/**
 * Writes the roles MakeMKV's scan states for the title's streams (its SINFO stream flags) into the
 * raw file as Matroska track flags, where MakeMKV did not: the transcode, on any worker and on a
 * retry, reads them from the file. A file that cannot be read or written keeps its own flags, and the
 * job log says so: the raw file itself is fine.
 */
async function writeDiscRoles(file: string, track: Track, hooks: RipHooks): Promise<void> {
  if (!hasDiscRoles(track)) return;
  const name = path.basename(file);
  try {
    const { readMatroskaStreams } = await import('./matroska-head.js');
    const { ffprobeStreams } = await import('./ffprobe-runner.js');
    const { describeTrackFlags, setTrackFlags } = await import('./mkvpropedit-runner.js');
    const probed = (await readMatroskaStreams(file, hooks.signal)) ?? (await ffprobeStreams('ffprobe', file, { signal: hooks.signal, timeoutMs: 120_000 }));
    const edits = discRoleEdits(track, probed);
    if (edits === null) {
      hooks.onMessage(`the tracks of ${name} are not the streams the disc lists: the disc's track roles are not written into it`);
      return;
    }
    if (edits.length === 0) return;
    await setTrackFlags('mkvpropedit', file, edits, { signal: hooks.signal, timeoutMs: 120_000 });
    hooks.onMessage(`the disc's track roles are written into ${name}: ${describeTrackFlags(edits)}`);
  } catch (err) {
    if (hooks.signal.aborted) throw err;
    hooks.onMessage(`warning: the disc's track roles could not be written into ${name} (${(err as Error).message}): the transcode sees only the flags MakeMKV wrote`);
  }
}

/** One rip backend: reads the titles of a disc and rips one title into the raw dir. */
export interface Ripper {
  readonly name: 'makemkv' | 'open-dvd';
  scan(source: DiscSource, signal: AbortSignal, discType?: DiscType): Promise<Track[]>;
  rip(source: DiscSource, track: Track, rawDir: string, hooks: RipHooks): Promise<string[]>;
}

/** MakeMKV's source syntax: iso:FILE for images, file:DIR for VIDEO_TS/BDMV folders, dev:/dev/srN for drives. */
export function makemkvSource(source: DiscSource): string {
  if (source.kind === 'cue') throw new Error('MakeMKV does not read audio CDs');
  return source.kind === 'iso' ? `iso:${source.path}` : source.kind === 'device' ? `dev:${source.path}` : `file:${source.path}`;
}

/**
 * Rethrows a failed MakeMKV run on a 4K UHD disc with the UHD-specific reason (unknown volume key:
 * install a key store, naming how many keys this worker knows; code 11: raw drive access needed).
 */
async function withUhdReason<T>(discType: DiscType | undefined, keyCount: () => number, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (discType !== 'uhd') throw err;
    const { MakemkvError } = await import('./makemkv-runner.js');
    const { uhdFailureReason } = await import('./makemkv-parser.js');
    if (!(err instanceof MakemkvError)) throw err;
    const reason = uhdFailureReason(err.codes, err.exitCode, keyCount());
    throw reason ? new MakemkvError(reason, err.codes, err.exitCode ?? null) : err;
  }
}

/**
 * MakeMKV backend. `home` is the HOME it runs with (its data folder is $HOME/.MakeMKV); keyCount
 * tells how many disc keys (hkd_*.bin) this worker has installed there.
 */
export function makemkvRipper(bin: string, home: string, keyCount: () => number): Ripper {
  return {
    name: 'makemkv',
    async scan(source, signal, discType) {
      const { makemkvInfo } = await import('./makemkv-runner.js');
      const info = await withUhdReason(discType, keyCount, () => makemkvInfo(bin, makemkvSource(source), { home, signal, timeoutMs: 10 * 60_000 }));
      return info.titles.map(toProtocolTrack);
    },
    async rip(source, track, rawDir, hooks) {
      const { makemkvRip } = await import('./makemkv-runner.js');
      const release = hooks.careful ? await carefulReads(path.join(home, '.MakeMKV'), CAREFUL_READ_RETRIES) : null;
      if (release) hooks.onMessage(`careful read: MakeMKV read retries ${CAREFUL_READ_RETRIES}`);
      let result: Awaited<ReturnType<typeof makemkvRip>>;
      try {
        result = await withUhdReason(hooks.discType, keyCount, () => makemkvRip(bin, makemkvSource(source), track.number, rawDir, { ...hooks, home }));
      } finally {
        // Also when the run fails or is canceled: the next runs read with the retries from before.
        await release?.();
      }
      for (const file of result.files) await writeDiscRoles(file, track, hooks);
      return result.files;
    },
  };
}

// The backends load on first use: an idle agent does not carry their parsers (fast-xml-parser) in memory.

/** Unencrypted DVDs without MakeMKV: lsdvd + dvdbackup + ffmpeg (see agent/tools/open-dvd-runner.ts). */
export function openDvdRipper(): Ripper {
  return {
    name: 'open-dvd',
    async scan(source, signal) {
      const { openDvdScan } = await import('./open-dvd-runner.js');
      const scan = await openDvdScan(source.path, { signal, timeoutMs: 10 * 60_000 });
      return scan.titles.map(toProtocolTrack);
    },
    async rip(source, track, rawDir, hooks) {
      const out = path.join(rawDir, `title_t${String(track.number).padStart(2, '0')}.mkv`);
      const { openDvdRip } = await import('./open-dvd-runner.js');
      const result = await openDvdRip(source.path, track.number, out, hooks);
      return result.files;
    },
  };
}

/** The first output line of a tool's version call ("" when it prints nothing), or null when it cannot be run. */
export function probeTool(bin: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 10_000, maxBuffer: 1024 * 1024, env: toolEnvironment() }, (err, stdout, stderr) => {
      if (err && ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EACCES' || err.killed)) return resolve(null);
      const line = `${stdout}\n${stderr}`.split('\n').map((l) => l.trim()).find((l) => l.length > 0);
      resolve(line ?? '');
    });
  });
}
