import fs from 'node:fs';
import path from 'node:path';
import { checkMediaPath } from '../../shared/media-paths.js';
import { mapPath, type PathMapEntry } from '../../shared/path-map.js';
import { TASKS, type Command } from '../../shared/protocol.js';
import { isChunkFile } from '../../shared/chunking.js';

/**
 * The folders an agent reads, writes and deletes in, whoever sends the command: its MEDIA_ROOT and
 * RAW_DIR (a job's work folder lies under one of them) and the coordinator-side folders of its
 * RIPWERK_PATH_MAP. Paths in commands are the coordinator's (POSIX); they are checked before they are
 * mapped to local paths, and where a local path exists its real path (symlinks resolved) must stay
 * under the real path of its root as well.
 */
export class PathRoots {
  private readonly roots: string[];

  constructor(
    mediaRoot: string,
    rawDir: string,
    private readonly pathMap: readonly PathMapEntry[],
  ) {
    this.roots = [...new Set([mediaRoot, rawDir, ...pathMap.map((e) => e.from)])];
  }

  /** The root a coordinator path lies under (strictly below it when `below`), or null. */
  private rootOf(p: string, below: boolean): string | null {
    for (const root of this.roots) {
      const check = checkMediaPath(root, p);
      if (!check.ok) continue;
      if (below && check.path === path.posix.normalize(root).replace(/\/+$/, '')) continue;
      if (this.realPathEscapes(root, p)) continue;
      return root;
    }
    return null;
  }

  /** True when the local path exists (or an ancestor of it does) and its real path leaves the real path of the root. */
  private realPathEscapes(root: string, p: string): boolean {
    const localRoot = mapPath(this.pathMap, root);
    const local = mapPath(this.pathMap, p);
    if (!path.isAbsolute(localRoot) || !path.isAbsolute(local)) return false; // a Windows share: the lexical check only
    let realRoot: string;
    try {
      realRoot = fs.realpathSync(localRoot);
    } catch {
      return false; // the root does not exist yet: nothing below it can be a link
    }
    let probe = local;
    for (;;) {
      try {
        const real = fs.realpathSync(probe);
        return real !== realRoot && !real.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep);
      } catch {
        const parent = path.dirname(probe);
        if (parent === probe) return false;
        probe = parent;
      }
    }
  }

  /** Why the folder may not be deleted or written as a job's raw folder (it must lie strictly below a root), or null. */
  rawDirRefusal(p: string): string | null {
    return this.rootOf(p, true) ? null : `the raw folder ${p.slice(0, 300)} is not inside this worker's folders (${this.roots.join(', ')}): refused`;
  }

  /**
   * Why this worker does not read an encode_chunk command's raw file (issue 41), or null: it must lie
   * strictly below a root. Outside, it is not this worker's to read (another host's own disk, say).
   */
  chunkInputRefusal(input: string): string | null {
    return this.rootOf(input, true) ? null : `the raw file ${input.slice(0, 300)} is not inside this worker's folders (${this.roots.join(', ')})`;
  }

  /** Why an encode_chunk command's output is a path this worker must not write, or null: a `cNN.mkv` in a `.ripwerk-chunks` folder strictly below a root. */
  chunkOutputRefusal(output: string): string | null {
    return isChunkFile(output) && this.rootOf(output, true) ? null : `the chunk file ${output.slice(0, 300)} is no cNN.mkv in a .ripwerk-chunks folder inside this worker's folders: refused`;
  }

  /** Why a rip or transcode command names a path this worker must not touch, or null when all are inside its roots. */
  commandRefusal(cmd: Command): string | null {
    if (cmd.task !== TASKS.ripDisc && cmd.task !== TASKS.transcodeFiles) return null;
    const raw = this.rawDirRefusal(cmd.args.raw_dir);
    if (raw) return raw;
    if (!this.rootOf(cmd.args.target_dir, false)) return `the target folder ${cmd.args.target_dir.slice(0, 300)} is not inside this worker's folders (${this.roots.join(', ')}): refused`;
    if (cmd.task === TASKS.transcodeFiles) {
      const outside = cmd.args.files.find((f) => !checkMediaPath(cmd.args.raw_dir, f).ok || f === cmd.args.raw_dir || this.rootOf(f, true) === null);
      if (outside !== undefined) return `the file ${outside.slice(0, 300)} is not inside the job's raw folder ${cmd.args.raw_dir.slice(0, 300)}: refused`;
    }
    return null;
  }
}
