import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppKeyMessage, KeydbMessage, KeystoreMessage } from '../../shared/protocol.js';
import { isBareFileName } from '../../shared/media-paths.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../shared/private-files.js';
import { DUMP_MQTT_LIMIT_BYTES } from '../../shared/protocol-schemas.js';
import { withSetting, writePrivateAtomic } from '../tools/makemkv-settings.js';

const HASHED_KEY = /^hkd_[^/\\]*\.bin$/i;
/** AACS dump files MakeMKV writes into its data folder when a disc's key is unknown (makemkv.md §5). */
const DUMP = /^MKB[^/\\]*\.tgz$/i;
/** Largest dump a worker sends to the coordinator: what fits into one MQTT packet (see DUMP_MQTT_LIMIT_BYTES). */
export const DUMP_LIMIT_BYTES = DUMP_MQTT_LIMIT_BYTES;

/** settings.conf with `app_Key = "<key>"` set (added or replaced), every other line kept as it was. */
export function withAppKey(conf: string, key: string | null): string {
  return withSetting(conf, 'app_Key', key);
}

/** Writes the file whole or not at all, readable by the service user only (keys and the application key). */
const writeAtomic = writePrivateAtomic;

/**
 * The worker's side of the disc-key material: writes what the coordinator hands out (hashed-key
 * files, KEYDB.cfg, the application key in settings.conf) into MakeMKV's data folder, counts the
 * installed keys (the worker's `schluessel`) and finds new AACS dumps to send back.
 */
export class RipperKeys {
  private readonly sentDumps = new Set<string>();

  constructor(private readonly dataDir: string) {}

  /** Number of hashed-key files installed. */
  async count(): Promise<number> {
    const names = await fs.readdir(this.dataDir).catch(() => [] as string[]);
    return names.filter((n) => HASHED_KEY.test(n)).length;
  }

  /** Installs the key store's files and removes hashed-key files it no longer lists; returns the count. */
  async applyKeystore(msg: KeystoreMessage): Promise<number> {
    await fs.mkdir(this.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const wanted = new Set<string>();
    for (const file of Array.isArray(msg.files) ? msg.files : []) {
      if (typeof file?.name !== 'string' || typeof file.data_base64 !== 'string') continue;
      if (!isBareFileName(file.name) || !HASHED_KEY.test(file.name)) continue;
      wanted.add(file.name);
      await writeAtomic(path.join(this.dataDir, file.name), Buffer.from(file.data_base64, 'base64'));
    }
    for (const name of await fs.readdir(this.dataDir)) {
      if (HASHED_KEY.test(name) && !wanted.has(name)) await fs.rm(path.join(this.dataDir, name), { force: true });
    }
    return this.count();
  }

  async applyKeydb(msg: KeydbMessage): Promise<void> {
    const file = path.join(this.dataDir, 'KEYDB.cfg');
    if (typeof msg.content !== 'string') {
      await fs.rm(file, { force: true });
      return;
    }
    await fs.mkdir(this.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await writeAtomic(file, msg.content);
  }

  /** Writes the application key into settings.conf (MakeMKV reads it only from there). */
  async applyAppKey(msg: AppKeyMessage): Promise<void> {
    const file = path.join(this.dataDir, 'settings.conf');
    const key = typeof msg.key === 'string' && msg.key.trim() !== '' ? msg.key.trim().replace(/["\n\r]/g, '') : null;
    const current = await fs.readFile(file, 'utf8').catch(() => null);
    if (current === null && key === null) return;
    const next = withAppKey(current ?? '', key);
    if (next === current) {
      // Unchanged, but perhaps left readable by everyone by MakeMKV or an older version: the key is in it.
      await fs.chmod(file, PRIVATE_FILE_MODE).catch(() => undefined);
      return;
    }
    await fs.mkdir(this.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await writeAtomic(file, next);
  }

  /** AACS dumps in the data folder not sent yet since this agent started (up to DUMP_LIMIT_BYTES each; larger ones are named in `tooLarge` once). */
  async newDumps(tooLarge: (file: string, bytes: number) => void = () => undefined): Promise<{ name: string; data: Buffer }[]> {
    const out: { name: string; data: Buffer }[] = [];
    for (const name of await fs.readdir(this.dataDir).catch(() => [] as string[])) {
      if (!DUMP.test(name) || this.sentDumps.has(name)) continue;
      const file = path.join(this.dataDir, name);
      const st = await fs.stat(file).catch(() => null);
      if (!st?.isFile()) continue;
      this.sentDumps.add(name);
      if (st.size > DUMP_LIMIT_BYTES) {
        tooLarge(file, st.size);
        continue;
      }
      out.push({ name, data: await fs.readFile(file) });
    }
    return out;
  }
}
