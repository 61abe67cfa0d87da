import fs from 'node:fs/promises';
import path from 'node:path';
import { checkMediaPath, isBareFileName, isSubfolderPath, OUTPUT_FILE_DEPTH_MAX, openInside } from '../../shared/media-paths.js';
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
 * following links (a missing folder 404, one leading outside 403); the name is a bare name, as the
 * spec has it (else 400); `folder`, when given and not empty, names a folder below the output folder
 * (`Extras`, isSubfolderPath; else 400) and the file is looked for there; the
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
export async function openJobFile(mediaRoot: string, outputPath: string | null, fileName: string, folder = ''): Promise<OpenedJobFile> {
  if (!outputPath) throw new HttpError(404, 'the job has no output yet');
  const check = checkMediaPath(mediaRoot, outputPath);
  if (!check.ok) throw new HttpError(403, `the output path is outside ${mediaRoot}: ${check.reason}`);
  const bare = isBareFileName(fileName);
  const folderOk = folder === '' || isSubfolderPath(folder);
  // The file's path relative to the output folder: what the refusals name.
  const name = folder === '' ? fileName : `${folder}/${fileName}`;
  const [realDir, realRoot, realFile] = await Promise.all([
    realOrNull(check.path),
    realOrNull(mediaRoot),
    // The name joins the lexical folder path: it resolves through the same links as the folder's real path.
    bare && folderOk ? realOrNull(path.join(check.path, name)) : Promise.resolve(null),
  ]);
  if (realDir === null) throw new HttpError(404, `the output folder ${check.path} is gone`);
  if (realRoot === null || !within(realRoot, realDir)) throw new HttpError(403, `the output folder ${check.path} leads outside ${mediaRoot} through a symbolic link: refused`);
  if (!bare) throw new HttpError(400, 'the file name must be a bare name: no slash, no .., no leading dot');
  if (!folderOk) throw new HttpError(400, `the folder must lie below the output folder: bare names joined by /, no .., no leading dot, at most ${OUTPUT_FILE_DEPTH_MAX - 1} deep`);
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

/** At most this many files are listed for one job (a season box with extras has a few dozen). */
export const OUTPUT_FILES_MAX = 2000;

/** One file of a job's output: its bare name, its size in bytes, and the folder below the output folder it lies in (absent for the output folder itself). */
export interface OutputFile {
  name: string;
  size: number;
  folder?: string;
}

/**
 * The regular files of a job's output folder, for GET /jobs/{id}/files: bare names and sizes in bytes,
 * as the spec lists them. With `subfolders`, the files of the folders below it too (`Extras/`, a
 * season's), each with its `folder` relative to the output folder (joined by `/`): the spec's name
 * stays a bare name that GET /jobs/{id}/files/{name}?folder= downloads. The output folder's own files
 * come first, then each folder's, each sorted by name. `realDir` is the folder's checked real path.
 * Symbolic links are neither listed nor followed (a link to a folder is no subfolder), hidden entries
 * are left out, and a subfolder is read only while its real path still lies inside `realDir` (one
 * swapped for a link meanwhile is skipped). At most OUTPUT_FILE_DEPTH_MAX names deep, the file
 * counted, and OUTPUT_FILES_MAX files.
 */
export async function listOutputFiles(realDir: string, subfolders = false): Promise<OutputFile[]> {
  const files: OutputFile[] = [];
  const folders: string[] = [''];
  while (folders.length > 0 && files.length < OUTPUT_FILES_MAX) {
    const rel = folders.shift() as string;
    const dir = rel ? path.join(realDir, rel) : realDir;
    if (rel) {
      const real = await realOrNull(dir);
      if (real === null || real === realDir || !within(realDir, real)) continue;
    }
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => null);
    if (!entries) {
      if (!rel) throw new HttpError(404, `the output folder ${realDir} is gone`);
      continue;
    }
    const depth = rel ? rel.split('/').length + 1 : 1;
    for (const e of entries) {
      if (!isBareFileName(e.name)) continue;
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      if (subfolders && e.isDirectory() && depth < OUTPUT_FILE_DEPTH_MAX) folders.push(relPath);
      if (!e.isFile()) continue;
      const st = await fs.lstat(path.join(realDir, relPath)).catch(() => null);
      if (st?.isFile()) files.push(rel ? { name: e.name, size: st.size, folder: rel } : { name: e.name, size: st.size });
      if (files.length >= OUTPUT_FILES_MAX) break;
    }
  }
  const order = (f: OutputFile): string => f.folder ?? '';
  return files.sort((a, b) => (order(a) === order(b) ? a.name.localeCompare(b.name) : order(a) === '' ? -1 : order(b) === '' ? 1 : order(a).localeCompare(order(b))));
}
