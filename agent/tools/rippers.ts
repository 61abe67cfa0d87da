import { execFile } from 'node:child_process';
import { toolEnvironment } from '../../shared/process.js';
import path from 'node:path';
import type { DiscType, Track } from '../../shared/protocol.js';
import type { DiscSource } from '../disc/image-drive.js';
import type { Track as ScannedTitle } from './makemkv-parser.js';

export interface RipHooks {
  signal: AbortSignal;
  onSpawn(pid: number): void;
  onMessage(text: string): void;
  onProgress(pct: number): void;
  /** The type of the disc being ripped (a 4K UHD failure gets its own reason). */
  discType?: DiscType;
}

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
      const result = await withUhdReason(hooks.discType, keyCount, () => makemkvRip(bin, makemkvSource(source), track.number, rawDir, { ...hooks, home }));
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
