import fs from 'node:fs/promises';
import path from 'node:path';
import { checkMediaPath, isBareFileName, openInside } from '../../shared/media-paths.js';
import type { DownloadFile } from '../http/file-download.js';
import { HttpError } from '../http/errors.js';

/** A file of a job's output folder, opened and checked, ready for sendOpenedFile. */
export interface OpenedJobFile extends DownloadFile {
  close(): Promise<void>;
}

/** True when `child` equals `parent` or lies below it (both real paths), boundary-aware. */
function within(parent: string, child: string): boolean {
  if (child === parent) return true;
  return child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
}

const realOrNull = (p: string): Promise<string | null> => fs.realpath(p).catch(() => null);

/**
 * Opens the file `name` of a job's output folder for GET /jobs/{id}/files/{name}, with every check of
 * the other file routes: the output path lies under MEDIA_ROOT lexically (else 403) and after
 * following links (a missing folder 404, one leading outside 403); the name is a bare name (400); the
 * file's real path lies inside the folder's (missing 404, outside 403); the opened file is checked
 * again where the kernel names it (openInside: a folder swapped for a link meanwhile leads nowhere);
 * and it must be a regular file (404). The refusals, their order and their texts are those of the
 * folder listing and of the route before.
 *
 * Every async fs call is a round trip through libuv's thread pool, and each waits for a core twice:
 * on a busy two-core host that waiting, not the calls, was most of what a download cost before its
 * first byte. The three real paths do not depend on each other, so they are asked for at once, and
 * the folder's real path is not asked for a second time; after the open, the kernel's path of the
 * file and its fstat come together (openInside). Nothing is opened before all three real paths are
 * judged.
 */
export async function openJobFile(mediaRoot: string, outputPath: string | null, name: string): Promise<OpenedJobFile> {
  if (!outputPath) throw new HttpError(404, 'the job has no output yet');
  const check = checkMediaPath(mediaRoot, outputPath);
  if (!check.ok) throw new HttpError(403, `the output path is outside ${mediaRoot}: ${check.reason}`);
  const bare = isBareFileName(name) && name !== '..';
  const [realDir, realRoot, realFile] = await Promise.all([
    realOrNull(check.path),
    realOrNull(mediaRoot),
    // The name joins the lexical folder path: it resolves through the same links as the folder's real path.
    bare ? realOrNull(path.join(check.path, name)) : Promise.resolve(null),
  ]);
  if (realDir === null) throw new HttpError(404, `the output folder ${check.path} is gone`);
  if (realRoot === null || !within(realRoot, realDir)) throw new HttpError(403, `the output folder ${check.path} leads outside ${mediaRoot} through a symbolic link: refused`);
  if (!bare) throw new HttpError(400, 'the file name must be a bare name: no slash, no .., no leading dot');
  if (realFile === null) throw new HttpError(404, `no file "${name}" inside the output folder`);
  // Made only when it is thrown: an Error records its stack when it is made, and most downloads need none.
  const outside = (): HttpError => new HttpError(403, `"${name}" leads outside the output folder through a symbolic link: refused`);
  if (!within(realDir, realFile)) throw outside();
  // Checked again after opening: a folder swapped for a link meanwhile does not lead the download out.
  const opened = await openInside(realDir, realFile);
  if (!opened) throw outside();
  if (!opened.stat.isFile()) {
    await opened.close();
    throw new HttpError(404, `"${name}" is not a file`);
  }
  return { handle: opened.handle, size: opened.stat.size, mtime: opened.stat.mtime, close: () => opened.close() };
}
