import fs from 'node:fs/promises';

/**
 * Whether a name is taken in the file system: a file, a folder or a link, a link whose target is gone
 * included (lstat, the link itself is not followed). What every caller asks before it takes a name
 * (a rename, a new folder, a file it must not overwrite) or checks that a recorded file is still
 * there: a dangling link still holds the name, and writing through it would create its target.
 */
export async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}
