import fs from 'node:fs/promises';
import path from 'node:path';

export interface DiscEntry {
  name: string;
  isDirectory: boolean;
  /** False for what is neither a directory nor a regular file (a symbolic link, device, FIFO); absent where the listing cannot tell. */
  isFile?: boolean;
}

/** The head of a file: its full size and its first bytes (at most the limit asked for). */
export interface FileHead {
  size: number;
  data: Buffer;
}

/**
 * A read-only view of a disc's file system (UDF, ISO 9660, or a real folder). Paths are lists of names
 * from the root; names match exactly first, then ignoring case, then as ISO 9660 8.3 names.
 */
export interface DiscTree {
  list(dirPath: readonly string[]): Promise<DiscEntry[] | null>;
  readFile(filePath: readonly string[], maxBytes: number): Promise<FileHead | null>;
}

/** "index.bdmv" as ISO 9660 level 1 records it: "INDEX.BDM". */
function isoShortName(name: string): string {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot + 1) : '';
  return (ext ? `${stem.slice(0, 8)}.${ext.slice(0, 3)}` : stem.slice(0, 8)).toUpperCase();
}

/** The entry called `name`: exact match, else ignoring case, else the ISO 9660 8.3 form of it. */
export function findEntry<T extends DiscEntry>(entries: readonly T[], name: string): T | undefined {
  const upper = name.toUpperCase();
  const short = isoShortName(name);
  return (
    entries.find((e) => e.name === name) ??
    entries.find((e) => e.name.toUpperCase() === upper) ??
    entries.find((e) => e.name.toUpperCase() === short)
  );
}

/** A disc folder on disk (a copy holding VIDEO_TS or BDMV) seen through the DiscTree interface. */
export function folderTree(root: string): DiscTree {
  async function resolve(names: readonly string[]): Promise<string | null> {
    let current = root;
    for (const name of names) {
      const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => null);
      const found = entries && findEntry(entries.map((e) => ({ name: e.name, isDirectory: e.isDirectory() })), name);
      if (!found) return null;
      current = path.join(current, found.name);
    }
    return current;
  }
  return {
    async list(dirPath) {
      const dir = await resolve(dirPath);
      if (dir === null) return null;
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => null);
      return entries && entries.map((e) => ({ name: e.name, isDirectory: e.isDirectory(), isFile: e.isFile() }));
    },
    async readFile(filePath, maxBytes) {
      const file = await resolve(filePath);
      if (file === null) return null;
      const fh = await fs.open(file, 'r').catch(() => null);
      if (!fh) return null;
      try {
        const stat = await fh.stat();
        if (!stat.isFile()) return null;
        const data = Buffer.alloc(Math.min(stat.size, maxBytes));
        const { bytesRead } = await fh.read(data, 0, data.length, 0);
        return { size: stat.size, data: data.subarray(0, bytesRead) };
      } finally {
        await fh.close();
      }
    },
  };
}
