import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Track } from '../shared/protocol.js';
import type { DiscSource } from './disc/image-drive.js';

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

/** MakeMKV's source syntax: iso:FILE for images, file:DIR for VIDEO_TS/BDMV folders, dev:/dev/srN for drives. */
export function makemkvSource(source: DiscSource): string {
  if (source.kind === 'cue') throw new Error('MakeMKV does not read audio CDs');
  return source.kind === 'iso' ? `iso:${source.path}` : source.kind === 'device' ? `dev:${source.path}` : `file:${source.path}`;
}

export function makemkvRipper(bin: string): Ripper {
  return {
    name: 'makemkv',
    async scan(source, signal) {
      const { makemkvInfo } = await import('./tools/makemkv-runner.js');
      const info = await makemkvInfo(bin, makemkvSource(source), { signal, timeoutMs: 10 * 60_000 });
      return info.titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters }));
    },
    async rip(source, track, rawDir, hooks) {
      const { makemkvRip } = await import('./tools/makemkv-runner.js');
      const result = await makemkvRip(bin, makemkvSource(source), track.number, rawDir, hooks);
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
      const { openDvdScan } = await import('./tools/open-dvd-runner.js');
      const scan = await openDvdScan(source.path, { signal, timeoutMs: 10 * 60_000 });
      return scan.titles.map((t) => ({ number: t.number, seconds: t.seconds, size_bytes: t.sizeBytes, chapters: t.chapters }));
    },
    async rip(source, track, rawDir, hooks) {
      const out = path.join(rawDir, `title_t${String(track.number).padStart(2, '0')}.mkv`);
      const { openDvdRip } = await import('./tools/open-dvd-runner.js');
      const result = await openDvdRip(source.path, track.number, out, hooks);
      return result.files;
    },
  };
}

/** The first output line of a tool's version call ("" when it prints nothing), or null when it cannot be run. */
export function probeTool(bin: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 10_000, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EACCES' || err.killed)) return resolve(null);
      const line = `${stdout}\n${stderr}`.split('\n').map((l) => l.trim()).find((l) => l.length > 0);
      resolve(line ?? '');
    });
  });
}
