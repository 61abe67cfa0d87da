/**
 * An offline copy of TheDiscDB's data repository (github.com/TheDiscDb/data), indexed in memory by
 * ContentHash and GlobalDiscId. Layout: `[data/]<movie|series|…>/<Title (Year)>/<release>/discNN.json`
 * next to `release.json`, with `metadata.json` one folder up; `discNN.ref` stands for a disc of
 * another release. The index keeps only the keys and the paths; a hit reads its three files then.
 * A real copy has tens of thousands of disc files: each is read only up to its title list.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../../shared/log.js';
import { isContentHash, normaliseId, parseDisc, parseMediaItem, parseRelease, type TddbEntry } from './types.js';

/** How often the folder is looked at for a change (a git pull, a copy): modest, it is a stat or six. */
export const MIRROR_POLL_MS = 5 * 60_000;
/** A disc file's keys come before its title list; this much of the file holds them. */
const HEAD_BYTES = 8192;
/** Disc files read at once while indexing. */
const READ_PARALLEL = 8;

/** Where a hit's files are. */
export interface MirrorDisc {
  /** The discNN.json with the titles (for a .ref: the referenced one). */
  discFile: string;
  /** The release folder the disc was found in (release.json); its parent holds metadata.json. */
  releaseDir: string;
  contentHash: string | null;
  globalDiscId: string | null;
  /** A .ref's own name, when it gives one. */
  name: string | null;
}

export interface MirrorIndex {
  dataDir: string;
  byHash: Map<string, MirrorDisc[]>;
  byDiscId: Map<string, MirrorDisc[]>;
  /** Disc files indexed (.ref files included). */
  discs: number;
  refs: number;
  /** A 16-hex (legacy) ContentHash, or none: found only by GlobalDiscId. */
  withoutHash: number;
  /** .ref files whose disc is missing from the copy, or that point outside it. */
  danglingRefs: number;
  unreadable: number;
}

/** The repository's `data/` folder when the path is the clone, else the path itself. */
export async function mirrorDataDir(root: string): Promise<string> {
  const data = path.join(root, 'data');
  const st = await fs.stat(data).catch(() => null);
  return st?.isDirectory() ? data : root;
}

/** Why a folder cannot be the mirror setting, or null when it can (an empty value switches it off). */
export async function checkMirrorFolder(folder: string): Promise<string | null> {
  if (folder === '') return null;
  if (!path.isAbsolute(folder)) return `thediscdbMirror must be an absolute path, got "${folder}"`;
  const st = await fs.stat(folder).catch(() => null);
  if (!st) return `thediscdbMirror: the folder ${folder} does not exist`;
  if (!st.isDirectory()) return `thediscdbMirror: ${folder} is not a folder`;
  return null;
}

async function dirs(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => path.join(dir, e.name));
}

const HASH_KEY = /"ContentHash"\s*:\s*"([^"]*)"/;
const DISC_ID_KEY = /"GlobalDiscId"\s*:\s*"([^"]*)"/;

/** ContentHash and GlobalDiscId of a discNN.json, reading no further than its title list when it can. */
export async function discKeys(file: string): Promise<{ contentHash: string | null; globalDiscId: string | null }> {
  const handle = await fs.open(file, 'r');
  let head: string;
  let whole: boolean;
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buf, 0, HEAD_BYTES, 0);
    head = buf.subarray(0, bytesRead).toString('utf8');
    whole = bytesRead < HEAD_BYTES;
  } finally {
    await handle.close();
  }
  // TheDiscDB writes the keys before the title list; a file without them, or in another order, is parsed whole.
  const titles = head.indexOf('"Titles"');
  if (titles >= 0 && !whole) {
    const keys = head.slice(0, titles);
    const contentHash = HASH_KEY.exec(keys)?.[1];
    const globalDiscId = DISC_ID_KEY.exec(keys)?.[1];
    if (contentHash !== undefined || globalDiscId !== undefined) return { contentHash: normaliseId(contentHash), globalDiscId: normaliseId(globalDiscId) };
  }
  const disc = parseDisc(JSON.parse(whole ? head : await fs.readFile(file, 'utf8')));
  return { contentHash: disc?.contentHash ?? null, globalDiscId: disc?.globalDiscId ?? null };
}

const DISC_FILE = /^disc\d+\.(json|ref)$/i;

function add(map: Map<string, MirrorDisc[]>, key: string | null, disc: MirrorDisc): void {
  if (!key) return;
  const list = map.get(key);
  if (list) list.push(disc);
  else map.set(key, [disc]);
}

/** The disc a .ref names: `<data>/<releasePath>/<disc>.json`; null when it would leave the copy. */
function refTarget(dataDir: string, ref: { releasePath?: unknown; disc?: unknown }): string | null {
  if (typeof ref.releasePath !== 'string' || typeof ref.disc !== 'string') return null;
  const release = ref.releasePath.replace(/\\/g, '/').replace(/^\/+/, '').replace(/^data\//, '');
  const target = path.resolve(dataDir, release, `${ref.disc.replace(/\.json$/i, '')}.json`);
  return target.startsWith(dataDir + path.sep) ? target : null;
}

/** Reads the whole copy's disc keys. */
export async function indexMirror(root: string): Promise<MirrorIndex> {
  const dataDir = path.resolve(await mirrorDataDir(root));
  const index: MirrorIndex = { dataDir, byHash: new Map(), byDiscId: new Map(), discs: 0, refs: 0, withoutHash: 0, danglingRefs: 0, unreadable: 0 };
  const files: { file: string; releaseDir: string }[] = [];
  for (const kind of await dirs(dataDir)) {
    for (const item of await dirs(kind)) {
      for (const release of await dirs(item)) {
        const names = await fs.readdir(release).catch(() => [] as string[]);
        for (const name of names.sort()) if (DISC_FILE.test(name)) files.push({ file: path.join(release, name), releaseDir: release });
      }
    }
  }
  const one = async ({ file, releaseDir }: { file: string; releaseDir: string }): Promise<void> => {
    try {
      if (file.toLowerCase().endsWith('.ref')) {
        index.refs++;
        const ref = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
        const target = refTarget(dataDir, ref);
        const keys = target ? await discKeys(target).catch(() => null) : null;
        if (!target || !keys) {
          index.danglingRefs++;
          return;
        }
        // TheDiscDB's importer gives a referencing disc its own GlobalDiscId, never the referenced one's.
        const disc: MirrorDisc = { discFile: target, releaseDir, contentHash: keys.contentHash, globalDiscId: normaliseId(ref.globalDiscId), name: typeof ref.name === 'string' ? ref.name : null };
        record(disc);
        return;
      }
      const keys = await discKeys(file);
      record({ discFile: file, releaseDir, contentHash: keys.contentHash, globalDiscId: keys.globalDiscId, name: null });
    } catch {
      index.unreadable++;
    }
  };
  const record = (disc: MirrorDisc): void => {
    index.discs++;
    if (isContentHash(disc.contentHash)) add(index.byHash, disc.contentHash, disc);
    else index.withoutHash++;
    add(index.byDiscId, disc.globalDiscId, disc);
  };
  for (let i = 0; i < files.length; i += READ_PARALLEL) await Promise.all(files.slice(i, i + READ_PARALLEL).map(one));
  return index;
}

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
}

/** A hit's media item, release and disc, read from its files; null when they are gone or unreadable. */
export async function readMirrorDisc(hit: MirrorDisc): Promise<TddbEntry | null> {
  try {
    const [discJson, releaseJson, metadataJson] = await Promise.all([readJson(hit.discFile), readJson(path.join(hit.releaseDir, 'release.json')).catch(() => ({})), readJson(path.join(path.dirname(hit.releaseDir), 'metadata.json'))]);
    const disc = parseDisc(discJson);
    const mediaItem = parseMediaItem(metadataJson);
    if (!disc || !mediaItem) return null;
    const release = parseRelease(releaseJson);
    if (!release.slug) release.slug = path.basename(hit.releaseDir);
    return { mediaItem, release, disc: { ...disc, globalDiscId: hit.globalDiscId, name: hit.name ?? disc.name } };
  } catch {
    return null;
  }
}

/** The mtimes that change when the copy does: its folders' listings, and a git checkout's HEAD and index. */
async function signature(root: string): Promise<string> {
  const dataDir = await mirrorDataDir(root);
  const watched = [root, dataDir, ...(await dirs(dataDir)), path.join(root, '.git', 'HEAD'), path.join(root, '.git', 'index'), path.join(root, '.git', 'FETCH_HEAD')];
  const stamps = await Promise.all(watched.map(async (p) => `${p}:${(await fs.stat(p).catch(() => null))?.mtimeMs ?? '-'}`));
  return stamps.join('|');
}

export interface MirrorStatus {
  folder: string;
  /** false while the first index of this folder is being built. */
  ready: boolean;
  discs: number;
  error: string | null;
}

/**
 * The mirror the setting names: indexed in the background when the folder is set or changes, and
 * again when the copy changes (checked every MIRROR_POLL_MS). Lookups use the last complete index.
 */
export class TheDiscDbMirror {
  private index: MirrorIndex | null = null;
  private indexedFolder = '';
  private indexedSignature = '';
  private error: string | null = null;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly folder: () => string,
    private readonly log: Logger,
    private readonly pollMs = MIRROR_POLL_MS,
  ) {}

  /** Starts watching (an unref'd timer: it never keeps the process alive) and indexes once now. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
    this.timer.unref();
    void this.refresh();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Re-indexes when the setting or the copy changed; resolves when that is done (one run at a time). */
  refresh(): Promise<void> {
    this.running ??= this.check().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async check(): Promise<void> {
    const folder = this.folder().trim();
    if (!folder) {
      this.index = null;
      this.indexedFolder = '';
      this.error = null;
      return;
    }
    try {
      const sig = await signature(folder);
      if (folder === this.indexedFolder && sig === this.indexedSignature && this.index) return;
      const reason = await checkMirrorFolder(folder);
      if (reason) throw new Error(reason);
      const started = Date.now();
      const index = await indexMirror(folder);
      if (this.folder().trim() !== folder) return;
      this.index = index;
      this.indexedFolder = folder;
      this.indexedSignature = sig;
      this.error = null;
      this.log.info(`TheDiscDB copy ${folder}: ${index.discs} discs indexed in ${Math.round((Date.now() - started) / 100) / 10} s (${index.byHash.size} content hashes, ${index.byDiscId.size} disc ids; ${index.withoutHash} without a current hash, ${index.danglingRefs} references to missing discs)`);
    } catch (err) {
      this.error = (err as Error).message;
      if (folder !== this.indexedFolder) this.index = null;
      this.log.warn(`TheDiscDB copy ${folder} could not be indexed: ${this.error}`);
    }
  }

  /** The discs with this ContentHash or GlobalDiscId in the last index, read from their files. */
  async find(kind: 'contentHash' | 'globalDiscId', id: string): Promise<TddbEntry[]> {
    const index = this.index;
    if (!index) return [];
    const hits = (kind === 'contentHash' ? index.byHash : index.byDiscId).get(id.toUpperCase()) ?? [];
    const entries = await Promise.all(hits.map(readMirrorDisc));
    return entries.filter((e): e is TddbEntry => e !== null);
  }

  status(): MirrorStatus | null {
    const folder = this.folder().trim();
    if (!folder) return null;
    const ready = this.index !== null && this.indexedFolder === folder;
    return { folder, ready, discs: ready ? (this.index?.discs ?? 0) : 0, error: this.error };
  }
}
