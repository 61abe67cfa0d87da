import path from 'node:path';
import type { Track } from '../shared/protocol.js';
import type { DiscSource } from './disc/image-drive.js';
import { makemkvInfo, makemkvRip } from './tools/makemkv-runner.js';
import { openDvdRip, openDvdScan } from './tools/open-dvd-runner.js';
import { runTool } from './tools/process.js';

export interface RipHooks {
  signal: AbortSignal;
  onSpawn(pid: number): void;
  onMessage(text: string): void;
  onProgress(pct: number): void;
}

/** One rip backend: reads the titles of a disc and rips one title into the raw dir. */
export interface Ripper {
  readonly name: 'makemkv' | 'open-dvd';
  scan(source: DiscSource, signal: AbortSignal): Promise<Track[]>;
  rip(source: DiscSource, track: Track, rawDir: string, hooks: RipHooks): Promise<string[]>;
}

/** MakeMKV's source syntax: iso:FILE for images, file:DIR for VIDEO_TS/BDMV folders. */
export function makemkvSource(source: DiscSource): string {
  return source.kind === 'iso' ? `iso:${source.path}` : `file:${source.path}`;
}

export function makemkvRipper(bin: string): Ripper {
  return {
    name: 'makemkv',
    async scan(source, signal) {
      const info = await makemkvInfo(bin, makemkvSource(source), { signal, timeoutMs: 10 * 60_000 });
      return info.titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters }));
    },
    async rip(source, track, rawDir, hooks) {
      const result = await makemkvRip(bin, makemkvSource(source), track.number, rawDir, hooks);
      return result.files;
    },
  };
}

/** Unencrypted DVDs without MakeMKV: lsdvd + dvdbackup + ffmpeg (see agent/tools/open-dvd-runner.ts). */
export function openDvdRipper(): Ripper {
  return {
    name: 'open-dvd',
    async scan(source, signal) {
      const scan = await openDvdScan(source.path, { signal, timeoutMs: 10 * 60_000 });
      return scan.titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters }));
    },
    async rip(source, track, rawDir, hooks) {
      const out = path.join(rawDir, `title_t${String(track.number).padStart(2, '0')}.mkv`);
      const result = await openDvdRip(source.path, track.number, out, hooks);
      return result.files;
    },
  };
}

/** The version line of a tool, or null when it cannot be run. */
export async function probeTool(bin: string, args: string[]): Promise<string | null> {
  try {
    const result = await runTool(bin, args, { captureStdout: true, timeoutMs: 10_000 });
    const text = `${result.stdout}\n${result.stderr}`.split('\n').map((l) => l.trim()).find((l) => l.length > 0);
    return text ?? '';
  } catch {
    return null;
  }
}
