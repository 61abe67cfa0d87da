import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import unzipper from 'unzipper';
import type { KeydbMessage, KeystoreMessage } from '../../shared/protocol.js';
import { isBareFileName } from '../../shared/media-paths.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../shared/private-files.js';
import { HttpError } from '../http/errors.js';
import { keydbEntryCount } from './keydb-titles.js';

/** Largest key store or KEYDB body, and largest total unpacked size of a key store archive. */
export const KEY_BODY_LIMIT_BYTES = 64 * 1024 * 1024;
/**
 * All AACS dumps the workers sent, together (DATA_DIR/aacs-dumps). MakeMKV's dumps are a few KB to
 * some hundred KB (one is at most 512 KiB on the wire): a household's years of unknown discs fit, a
 * worker sending made-up dumps fills 16 MiB and no more.
 */
export const AACS_DUMPS_LIMIT_BYTES = 16 * 1024 * 1024;

/** Most entries a key store archive may have (a real one has a few thousand hashed keys). */
export const KEY_ENTRIES_LIMIT = 10_000;

/** Longest entry path in a key store archive. */
export const KEY_ENTRY_NAME_LIMIT = 255;

/** The hashed-key files of a key store (the only entries Ripwerk installs). */
const HASHED_KEY = /^hkd_[^/\\]*\.bin$/i;

export interface HashedKeyFile {
  name: string;
  data: Buffer;
}

/**
 * The entry's path inside the archive, or a refusal: no absolute path, no drive letter, no
 * backslash and no ".." segment, so nothing can land outside the folder it is unpacked into.
 */
export function safeEntryPath(entry: string): string {
  if (entry.length > KEY_ENTRY_NAME_LIMIT) throw new HttpError(400, `an archive entry name is ${entry.length} characters long, more than ${KEY_ENTRY_NAME_LIMIT}: refused`);
  if (entry.includes('\\')) throw new HttpError(400, `the archive entry "${entry}" uses a backslash: refused`);
  if (entry.startsWith('/') || /^[A-Za-z]:/.test(entry)) throw new HttpError(400, `the archive entry "${entry}" has an absolute path: refused`);
  if (entry.split('/').some((part) => part === '..')) throw new HttpError(400, `the archive entry "${entry}" points outside its folder: refused`);
  const resolved = path.posix.normalize(entry);
  if (resolved.startsWith('../') || resolved === '..') throw new HttpError(400, `the archive entry "${entry}" points outside its folder: refused`);
  return resolved;
}

/** Reads one entry, counting the bytes as they come: a size past `budget` stops the read. */
async function readEntry(file: unzipper.File, budget: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of file.stream() as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > budget) throw new HttpError(413, `the archive unpacks to more than ${KEY_BODY_LIMIT_BYTES / 1024 / 1024} MB: refused`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The hashed-key files (hkd_*.bin) of a key store archive (zip). Every entry is checked first: its
 * path must stay inside the folder, and the declared sizes together must stay within the limit;
 * while reading, the real sizes are counted against the same limit. An archive without any
 * hkd_*.bin is refused.
 */
export async function readKeystoreArchive(body: Buffer): Promise<HashedKeyFile[]> {
  let directory: unzipper.CentralDirectory;
  try {
    directory = await unzipper.Open.buffer(body);
  } catch {
    throw new HttpError(400, 'the key store must be a zip archive holding hashed-key files (hkd_*.bin); this body is not a zip archive');
  }
  if (directory.files.length > KEY_ENTRIES_LIMIT) throw new HttpError(400, `the archive has ${directory.files.length} entries, more than the ${KEY_ENTRIES_LIMIT} a key store may have: refused, nothing was installed`);
  let declared = 0;
  for (const file of directory.files) {
    safeEntryPath(file.path);
    // Bit 0 of the general purpose flags (APPNOTE 4.4.4): the entry is encrypted, and no password is known here.
    if ((file.flags & 0x1) !== 0) throw new HttpError(400, `the archive entry "${file.path}" is encrypted: send a key store without a password`);
    declared += file.uncompressedSize;
  }
  if (declared > KEY_BODY_LIMIT_BYTES) throw new HttpError(413, `the archive declares ${Math.ceil(declared / 1024 / 1024)} MB unpacked, more than the limit of ${KEY_BODY_LIMIT_BYTES / 1024 / 1024} MB: refused`);
  const keys = directory.files.filter((f) => f.type === 'File' && HASHED_KEY.test(path.posix.basename(f.path)));
  if (keys.length === 0) throw new HttpError(400, 'the archive holds no hashed-key files (hkd_*.bin): refused, nothing was installed');
  const out = new Map<string, HashedKeyFile>();
  let budget = KEY_BODY_LIMIT_BYTES;
  for (const file of keys) {
    const data = await readEntry(file, budget);
    budget -= data.length;
    const name = path.posix.basename(file.path);
    out.set(name, { name, data });
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
}




import type { DumpFile, KeydbStatus, KeystoreStatus } from '../../shared/api-types.js';

export type { DumpFile, KeydbStatus, KeystoreStatus };

interface KeystoreMeta {
  sha256: string;
  installed_at: string;
}

/**
 * The disc-key material the household uploaded, kept in DATA_DIR: keystore/ (hkd_*.bin plus
 * meta.json), KEYDB.cfg (upper case, exactly), aacs-dumps/ (dumps the workers' ripper wrote).
 */
export class KeyStore {
  readonly keystoreDir: string;
  readonly keydbFile: string;
  readonly dumpsDir: string;
  /** The dump being stored (storeDump takes one at a time). */
  private dumpWrites: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string, private readonly dumpsLimitBytes = AACS_DUMPS_LIMIT_BYTES) {
    this.keystoreDir = path.join(dataDir, 'keystore');
    this.keydbFile = path.join(dataDir, 'KEYDB.cfg');
    this.dumpsDir = path.join(dataDir, 'aacs-dumps');
  }

  /** Installs a key store archive; on any refusal the installed one stays as it was. */
  async installKeystore(body: Buffer): Promise<KeystoreStatus> {
    const files = await readKeystoreArchive(body);
    const parent = path.dirname(this.keystoreDir);
    await fs.mkdir(parent, { recursive: true, mode: PRIVATE_DIR_MODE });
    const staging = await fs.mkdtemp(path.join(parent, '.keystore-'));
    try {
      for (const f of files) await fs.writeFile(path.join(staging, f.name), f.data, { mode: PRIVATE_FILE_MODE });
      const meta: KeystoreMeta = { sha256: createHash('sha256').update(body).digest('hex'), installed_at: new Date().toISOString() };
      await fs.writeFile(path.join(staging, 'meta.json'), JSON.stringify(meta), { mode: PRIVATE_FILE_MODE });
      const old = `${this.keystoreDir}.old`;
      await fs.rm(old, { recursive: true, force: true });
      await fs.rename(this.keystoreDir, old).catch(() => undefined);
      await fs.rename(staging, this.keystoreDir);
      await fs.rm(old, { recursive: true, force: true });
    } catch (err) {
      await fs.rm(staging, { recursive: true, force: true });
      throw err;
    }
    return this.keystoreStatus();
  }

  private async keyFiles(): Promise<string[]> {
    const names = await fs.readdir(this.keystoreDir).catch(() => [] as string[]);
    return names.filter((n) => HASHED_KEY.test(n)).sort();
  }

  async keystoreStatus(): Promise<KeystoreStatus> {
    const files = await this.keyFiles();
    const meta = await fs
      .readFile(path.join(this.keystoreDir, 'meta.json'), 'utf8')
      .then((t) => JSON.parse(t) as KeystoreMeta)
      .catch(() => null);
    return { installed: files.length > 0, schluessel: files.length, files, sha256: meta?.sha256 ?? null, installed_at: meta?.installed_at ?? null };
  }

  /** The retained MQTT message that hands the key store to every worker. */
  async keystoreMessage(): Promise<KeystoreMessage> {
    const status = await this.keystoreStatus();
    // One file after the other: thousands of reads at once would run out of file descriptors (EMFILE).
    const files: KeystoreMessage['files'] = [];
    for (const name of status.files) files.push({ name, data_base64: (await fs.readFile(path.join(this.keystoreDir, name))).toString('base64') });
    return { sha256: status.sha256, installed_at: status.installed_at, files };
  }

  async setKeydb(content: string): Promise<KeydbStatus> {
    await fs.mkdir(path.dirname(this.keydbFile), { recursive: true, mode: PRIVATE_DIR_MODE });
    const tmp = `${this.keydbFile}.tmp`;
    await fs.rm(tmp, { force: true });
    // Exclusive: a link put at the temporary name meanwhile fails the write instead of being written
    // through; the rename replaces a link at KEYDB.cfg itself, it does not follow it.
    await fs.writeFile(tmp, content, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    await fs.rename(tmp, this.keydbFile);
    return this.keydbStatus();
  }

  /** Removes KEYDB.cfg; false when there was none. */
  async removeKeydb(): Promise<boolean> {
    return fs.rm(this.keydbFile).then(
      () => true,
      () => false,
    );
  }

  async keydbStatus(): Promise<KeydbStatus> {
    const st = await fs.stat(this.keydbFile).catch(() => null);
    if (!st) return { present: false, file: 'KEYDB.cfg', size_bytes: null, modified_at: null, entries: null };
    const text = await fs.readFile(this.keydbFile, 'utf8');
    const entries = keydbEntryCount(text);
    return { present: true, file: 'KEYDB.cfg', size_bytes: st.size, modified_at: st.mtime.toISOString(), entries };
  }

  async keydbMessage(): Promise<KeydbMessage> {
    return { content: await fs.readFile(this.keydbFile, 'utf8').catch(() => null) };
  }

  /**
   * The dumps folder when it is DATA_DIR's own: its real path inside the real DATA_DIR. A link put
   * there that leads elsewhere is neither written into nor listed (issue 42); null then, or when the
   * folder is missing.
   */
  private async dumpsFolder(): Promise<string | null> {
    const [realData, real] = await Promise.all([fs.realpath(path.dirname(this.dumpsDir)).catch(() => null), fs.realpath(this.dumpsDir).catch(() => null)]);
    if (realData === null || real === null || path.dirname(real) !== realData) return null;
    return this.dumpsDir;
  }

  async listDumps(): Promise<DumpFile[]> {
    if (!(await this.dumpsFolder())) return [];
    const entries = await fs.readdir(this.dumpsDir, { withFileTypes: true }).catch(() => []);
    const out: DumpFile[] = [];
    for (const e of entries) {
      if (!e.isFile() || !isBareFileName(e.name)) continue;
      const st = await fs.stat(path.join(this.dumpsDir, e.name));
      out.push({ name: e.name, size_bytes: st.size, modified_at: st.mtime.toISOString() });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Path of a dump by its bare name, or null when there is no such file. */
  async dumpPath(name: string): Promise<string | null> {
    if (!isBareFileName(name) || name === '..' || !(await this.dumpsFolder())) return null;
    const file = path.join(this.dumpsDir, name);
    const st = await fs.lstat(file).catch(() => null);
    return st?.isFile() ? file : null;
  }

  /**
   * Stores a dump a worker sent, once (a name already there, a link too, is kept as it is). The dumps
   * together stay below their limit (AACS_DUMPS_LIMIT_BYTES): past it a dump is refused with the
   * reason (thrown). One dump at a time, so two at once cannot both pass the limit. A dumps folder that
   * is a link leading elsewhere is refused with an error (the caller logs it).
   */
  storeDump(name: string, data: Buffer): Promise<boolean> {
    const next = this.dumpWrites.then(() => this.storeDumpNow(name, data));
    this.dumpWrites = next.catch(() => undefined);
    return next;
  }

  private async storeDumpNow(name: string, data: Buffer): Promise<boolean> {
    if (!isBareFileName(name) || name === '..') return false;
    await fs.mkdir(this.dumpsDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    if (!(await this.dumpsFolder())) throw new Error(`${this.dumpsDir} is a symbolic link that leads out of ${path.dirname(this.dumpsDir)}: the dump was not stored`);
    const held = (await this.listDumps()).reduce((sum, d) => sum + d.size_bytes, 0);
    if (held + data.length > this.dumpsLimitBytes) throw new Error(`the AACS dumps hold ${held} bytes; with ${data.length} more they would pass their limit of ${this.dumpsLimitBytes} bytes: remove some (DATA_DIR/aacs-dumps)`);
    return fs.writeFile(path.join(this.dumpsDir, name), data, { flag: 'wx', mode: PRIVATE_FILE_MODE }).then(
      () => true,
      () => false,
    );
  }
}
