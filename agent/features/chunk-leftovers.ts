import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isChunkFile } from '../../shared/chunking.js';
import { PRIVATE_FILE_MODE } from '../../shared/private-files.js';
import { killProcessGroup } from '../../shared/process.js';

/** One chunk encoder this agent started: its process (group) and the file it writes. */
export interface ChunkEncoderEntry {
  command_id: string;
  pid: number;
  output: string;
  /** When the encoder started (ISO time): a pid from before the host's last boot is someone else's. */
  started_at: string;
}

/** Where an agent keeps its running chunk encoders: one file per worker in its data folder. */
export function chunkEncodersFile(dataDir: string, workerName: string): string {
  return path.join(dataDir, `chunk-encoders-${workerName}.json`);
}

/**
 * Whether the process `pid` is still the encoder of `entry`. Where /proc is, its command line must
 * name the chunk's file (HandBrakeCLI's `-o`); elsewhere (the native worker on Windows) the encoder
 * must have started after the host's last boot, so the pid cannot be a reused one of an earlier boot.
 */
export function isStillTheEncoder(entry: ChunkEncoderEntry, now = Date.now(), procDir = '/proc'): boolean {
  try {
    if (fs.existsSync(path.join(procDir, 'self', 'cmdline'))) return fs.readFileSync(path.join(procDir, String(entry.pid), 'cmdline'), 'utf8').includes(entry.output);
  } catch {
    return false; // no such process
  }
  return Date.parse(entry.started_at) > now - os.uptime() * 1000;
}

/**
 * The chunk encoders an agent runs, kept on disk while they run (docs/scaling.md). A chunk is no
 * stored task, and its HandBrakeCLI runs in a process group of its own: an agent that is killed leaves
 * it encoding a file nobody will join (the coordinator hands the chunk out again under a new file).
 * At its next start the agent ends each such encoder that is still running and removes its partial
 * file (endLeftovers). Written synchronously, before the encoder can have written much; a file that
 * cannot be written only means such a leftover runs on until it ends by itself.
 */
export class ChunkEncoderLedger {
  constructor(private readonly file: string) {}

  private read(): ChunkEncoderEntry[] {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as unknown;
      return Array.isArray(parsed) ? parsed.filter(isEntry) : [];
    } catch {
      return [];
    }
  }

  private write(entries: ChunkEncoderEntry[]): void {
    try {
      if (entries.length === 0) {
        fs.rmSync(this.file, { force: true });
        return;
      }
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      const tmp = `${this.file}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(entries), { mode: PRIVATE_FILE_MODE });
      fs.renameSync(tmp, this.file);
    } catch {
      /* see the class comment */
    }
  }

  /** The encoder of chunk `commandId` started as `pid`, writing `output` (a local path). */
  started(commandId: string, pid: number, output: string): void {
    const entries = this.read().filter((e) => e.command_id !== commandId);
    entries.push({ command_id: commandId, pid, output, started_at: new Date().toISOString() });
    this.write(entries);
  }

  /** The chunk's encoder ended (done, failed or stopped by this agent). */
  ended(commandId: string): void {
    const entries = this.read();
    const left = entries.filter((e) => e.command_id !== commandId);
    if (left.length !== entries.length) this.write(left);
  }

  /**
   * Ends the encoders a run before this one left (it was killed) and removes their partial files.
   * Answers what it found, for the log: ended (still running, now stopped) and gone (already ended).
   */
  async endLeftovers(): Promise<{ ended: ChunkEncoderEntry[]; gone: ChunkEncoderEntry[] }> {
    const found = { ended: [] as ChunkEncoderEntry[], gone: [] as ChunkEncoderEntry[] };
    for (const entry of this.read()) {
      if (isStillTheEncoder(entry)) {
        await killProcessGroup(entry.pid);
        found.ended.push(entry);
      } else found.gone.push(entry);
      fs.rmSync(entry.output, { force: true });
    }
    this.write([]);
    return found;
  }
}

function isEntry(v: unknown): v is ChunkEncoderEntry {
  const e = v as Partial<ChunkEncoderEntry> | null;
  return (
    typeof e === 'object' && e !== null &&
    typeof e.command_id === 'string' && Number.isInteger(e.pid) && (e.pid ?? 0) > 1 &&
    typeof e.output === 'string' && path.isAbsolute(e.output) && isChunkFile(e.output, process.platform === 'win32') &&
    typeof e.started_at === 'string'
  );
}
