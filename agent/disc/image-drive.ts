import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { exists } from '../../shared/fs-exists.js';
import type { DiscInfo } from '../../shared/protocol.js';
import { audioCdFingerprints, makeDiscInfo } from './disc-info.js';
import type { DiscFile } from './disc-ids.js';
import { findEntry } from './disc-tree.js';
import { identifyImageFile, identifyImageFolder } from './identify.js';
import { musicbrainzDiscId, musicbrainzToc, tocParam } from '../cd/cd-toc.js';
import { cueCdText, cueLayout, parseCueSheet } from '../cd/cue-sheet.js';

export const EJECTED_DIR = 'ejected';

/**
 * Where a ripper reads the disc from: an ISO file, a folder holding VIDEO_TS or BDMV, a physical
 * drive (/dev/srN), or an audio CD image (a .cue sheet beside its .bin).
 */
export type DiscSource =
  | { kind: 'iso'; path: string }
  | { kind: 'folder'; path: string }
  | { kind: 'device'; path: string }
  | { kind: 'cue'; path: string };

export interface ImageDisc {
  source: DiscSource;
  disc: DiscInfo;
}

/** The regular files under a folder (symbolic links and other kinds left out), with sizes and change times. */
async function folderFiles(root: string): Promise<(DiscFile & { mtimeMs: number })[]> {
  const files: (DiscFile & { mtimeMs: number })[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(full, relPath);
      else if (entry.isFile()) {
        const st = await fs.stat(full);
        files.push({ path: relPath, size: st.size, mtimeMs: st.mtimeMs });
      }
    }
  }
  await walk(root, '');
  return files;
}

/**
 * The last ISO read per path with what it was read from (entry, size, time of the last change): the
 * drive poll (every 3 s, and before every rip) reads an unchanged image's labels once, not every time.
 */
const isoSeen = new Map<string, { key: string; disc: ImageDisc }>();
/** The same for disc folders, keyed by every file's path, size and change time (the size needs that walk anyway). */
const folderSeen = new Map<string, { key: string; disc: ImageDisc | null }>();

async function inspectIso(file: string): Promise<ImageDisc> {
  const st = await fs.stat(file);
  const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  const seen = isoSeen.get(file);
  if (seen?.key === key) return seen.disc;
  const identity = await identifyImageFile(file);
  const disc: ImageDisc = { source: { kind: 'iso', path: file }, disc: makeDiscInfo(identity, st.size, file) };
  if (isoSeen.size >= 64) isoSeen.clear(); // images that went (ejected, replaced): the map stays small
  isoSeen.set(file, { key, disc });
  return disc;
}

async function inspectFolder(dir: string): Promise<ImageDisc | null> {
  // Only a folder that looks like a disc is walked: any other folder in the drive stays cheap to poll.
  const root = (await fs.readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => ({ name: e.name, isDirectory: true }));
  if (!findEntry(root, 'VIDEO_TS') && !findEntry(root, 'BDMV')) return null;
  const files = await folderFiles(dir);
  const key = createHash('sha256')
    .update(files.map((f) => `${f.path}\0${f.size}\0${f.mtimeMs}`).join('\n'))
    .digest('hex');
  const seen = folderSeen.get(dir);
  if (seen?.key === key) return seen.disc;
  const identity = await identifyImageFolder(dir, files);
  const size = files.reduce((total, f) => total + f.size, 0);
  const disc: ImageDisc | null = identity.layout === 'unknown' ? null : { source: { kind: 'folder', path: dir }, disc: makeDiscInfo(identity, size, dir) };
  if (folderSeen.size >= 64) folderSeen.clear();
  folderSeen.set(dir, { key, disc });
  return disc;
}

/**
 * An audio CD image: a cue sheet whose audio file (raw CD-DA) lies beside it. Title "Performer -
 * Title" from the sheet; the fingerprint is the MusicBrainz disc id of its table of contents, the
 * sheet's data tracks included by libdiscid's rules (cueLayout, musicbrainzToc). A TOC libdiscid
 * refuses (a lead-out past the longest disc) gives no disc id: the CD is named from its sheet.
 */
async function inspectCue(file: string): Promise<ImageDisc | null> {
  const sheet = parseCueSheet(await fs.readFile(file, 'utf8').catch(() => ''));
  if (!sheet.file || sheet.tracks.length === 0) return null;
  const size = (await fs.stat(path.resolve(path.dirname(file), sheet.file)).catch(() => null))?.size;
  if (size === undefined) return null;
  const toc = musicbrainzToc(cueLayout(sheet, size));
  const discId = toc ? musicbrainzDiscId(toc) : null;
  const title = sheet.title ? (sheet.performer ? `${sheet.performer} - ${sheet.title}` : sheet.title) : 'Audio CD';
  return {
    source: { kind: 'cue', path: file },
    disc: { label: '', title, year: null, type: 'cd', size_bytes: size, ...audioCdFingerprints(discId, `AUDIO_CD_${sheet.tracks.length}_TRACKS:${title}`, size), source: file, audio_tracks: sheet.tracks.length, audio_cd: { musicbrainz_disc_id: discId, toc: toc ? tocParam(toc) : null, cd_text: cueCdText(sheet) } },
  };
}

/** The files that make up an image: an ISO or folder, or a cue sheet with its audio file. */
async function imageFiles(disc: ImageDisc): Promise<string[]> {
  if (disc.source.kind !== 'cue') return [disc.source.path];
  const sheet = parseCueSheet(await fs.readFile(disc.source.path, 'utf8').catch(() => ''));
  const bin = sheet.file ? path.resolve(path.dirname(disc.source.path), sheet.file) : null;
  return bin && path.dirname(bin) === path.dirname(disc.source.path) ? [disc.source.path, bin] : [disc.source.path];
}

/**
 * The disc "inserted" in an image drive: the one .iso file or disc folder in DIR (ejected/ and hidden
 * entries ignored). Several candidates: the first by name is used.
 */
export async function readImageDrive(dir: string): Promise<ImageDisc | null> {
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  const candidates = entries.filter((e) => !e.name.startsWith('.') && e.name !== EJECTED_DIR).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of candidates) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.toLowerCase().endsWith('.iso')) return inspectIso(full);
    if (entry.isFile() && entry.name.toLowerCase().endsWith('.cue')) {
      const cd = await inspectCue(full);
      if (cd) return cd;
    }
    if (entry.isDirectory()) {
      const found = await inspectFolder(full);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Ejects an image drive: the disc image moves into DIR/ejected/ (a unique name if taken). A cue sheet
 * and its audio file move together into a folder of their own, so the sheet still finds its file.
 */
export async function ejectImage(dir: string, disc: ImageDisc): Promise<string> {
  const target = path.join(dir, EJECTED_DIR);
  await fs.mkdir(target, { recursive: true });
  const files = await imageFiles(disc);
  const base = disc.source.kind === 'cue' ? path.basename(disc.source.path, path.extname(disc.source.path)) : path.basename(disc.source.path);
  let dest = path.join(target, base);
  for (let i = 1; await exists(dest); i++) dest = path.join(target, `${i}-${base}`);
  if (disc.source.kind !== 'cue') {
    await fs.rename(disc.source.path, dest);
    return dest;
  }
  await fs.mkdir(dest);
  for (const file of files) await fs.rename(file, path.join(dest, path.basename(file)));
  return dest;
}
