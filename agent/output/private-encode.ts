/**
 * Where an encoder writes (issue 42): never straight to its final name, since HandBrakeCLI opens its
 * output following links and a share user who can write the media tree could swap the checked output
 * folder for a link to elsewhere between the check and the encoder's open. Instead the encoder writes
 * into a fresh private folder (mkdtemp makes it with mode 0700) made inside the checked output folder, whose real
 * path is checked right after it is made. On Linux the folder is then held open and the encoder is
 * given its path through /proc/<agent>/fd/<n>: that names the folder itself, not a path a swap can
 * redirect. The finished, proven file is moved to its final name in one step (a hard link, which
 * never replaces a file that is there, or a rename where the file system has no hard links), after
 * the final folder's real path is checked once more.
 */
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { OutsideWrite } from './output-folder.js';

/** The private folder's name starts with this (a folder the agent made; a crash may leave one behind). */
export const PRIVATE_PREFIX = '.ripwerk-encode-';

export interface PrivateEncode {
  /** The private folder (its name in the checked folder). */
  dir: string;
  /** Where the encoder writes: the final file's name inside the private folder (through the held folder where the system has /proc). */
  file: string;
  /** Moves the file to its final name, after checking the final folder's real path again; removes the private folder. */
  commit(): Promise<void>;
  /** Removes the private folder and what is in it (failure, cancel); safe to call more than once. */
  discard(): Promise<void>;
}

const HAS_PROC_FD = process.platform === 'linux' && fsSync.existsSync(`/proc/${process.pid}/fd`);

/**
 * A private folder for writing `dest` (a name inside `folder`, the checked output folder whose real
 * path is `realFolder`). Throws OutsideWrite when `folder` no longer leads to `realFolder` (nothing
 * is written then: the folder made through the link is removed again, it is empty and the agent's own).
 */
export async function privateEncode(folder: string, realFolder: string, dest: string): Promise<PrivateEncode> {
  const dir = await fs.mkdtemp(path.join(folder, PRIVATE_PREFIX));
  const real = await fs.realpath(dir).catch(() => null);
  if (real !== path.join(realFolder, path.basename(dir))) {
    await fs.rmdir(real ?? dir).catch(() => undefined);
    throw new OutsideWrite(`the folder ${folder} was swapped for a link leading elsewhere before the encode: refused, nothing was written there`);
  }
  const handle = HAS_PROC_FD ? await fs.open(dir, fsSync.constants.O_RDONLY | fsSync.constants.O_DIRECTORY) : null;
  const held = handle ? `/proc/${process.pid}/fd/${handle.fd}` : dir;
  const name = path.basename(dest);
  const file = path.join(held, name);
  let done = false;

  /** Whether `folder` still leads where it was checked. */
  const inPlace = async (): Promise<boolean> => (await fs.realpath(folder).catch(() => null)) === realFolder;

  async function discard(): Promise<void> {
    if (done) return;
    done = true;
    // The contents through the held folder; the folder itself by name only while that name still leads to it.
    for (const entry of await fs.readdir(held).catch(() => [])) await fs.rm(path.join(held, entry), { recursive: true, force: true });
    // Where the folder is now (its checked folder may have been moved away meanwhile); rmdir removes only an empty folder.
    const now = handle ? await fs.realpath(held).catch(() => null) : (await inPlace()) ? dir : null;
    await handle?.close();
    if (now && path.basename(now) === path.basename(dir)) await fs.rmdir(now).catch(() => undefined);
  }

  return {
    dir,
    file,
    discard,
    async commit() {
      if (!(await inPlace())) {
        await discard();
        throw new OutsideWrite(`the folder ${folder} was swapped for a link leading elsewhere during the encode: refused, the output was not moved there`);
      }
      const taken = new Error(`${dest} appeared during the encode: the output was not put over it`);
      try {
        // A hard link never replaces a file at the name; the private name is then dropped.
        await fs.link(file, dest);
        await fs.unlink(file);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') throw taken;
        // No hard links on this file system (some network shares): one rename, inside the same folder.
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'EMLINK') throw err;
        if (await fs.lstat(dest).then(() => true, () => false)) throw taken;
        await fs.rename(file, dest);
      }
      await discard();
    },
  };
}
