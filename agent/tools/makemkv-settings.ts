import fs from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../shared/private-files.js';

/**
 * MakeMKV's settings.conf in its data folder ($HOME/.MakeMKV, makemkv.md §5): one `name = "value"`
 * line per setting, `#` comments. makemkvcon reads it only when it starts, so a setting for one run
 * is written before that run and put back after it.
 */
export const SETTINGS_FILE = 'settings.conf';
/** MakeMKV's read retries per failing read (ApSettingId io_ErrorRetryCount). */
export const READ_RETRIES_SETTING = 'io_ErrorRetryCount';
/** Next to settings.conf while a careful run holds it: the value to put back, also after a crash. */
const BEFORE_FILE = 'settings.conf.ripwerk-before';

function lineOf(name: string): RegExp {
  return new RegExp(`^\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*=(.*)$`);
}

/** The value of `name` (quotes taken off; the last line of that name counts), or null when it is not set. */
export function settingValue(conf: string, name: string): string | null {
  const re = lineOf(name);
  let value: string | null = null;
  for (const line of conf.split(/\r?\n/)) {
    const m = re.exec(line);
    if (!m) continue;
    const raw = m[1].trim();
    value = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  }
  return value;
}

/** settings.conf with `name = "value"` set (every line of that name replaced by one at the end), or without it for null; every other line kept as it was. */
export function withSetting(conf: string, name: string, value: string | null): string {
  const re = lineOf(name);
  const lines = conf.split('\n').filter((l, i, all) => !(i === all.length - 1 && l === ''));
  const kept = lines.filter((l) => !re.test(l));
  if (value !== null) kept.push(`${name} = "${value}"`);
  return kept.length ? `${kept.join('\n')}\n` : '';
}

/** Writes the file whole or not at all, readable by the service user only (settings.conf holds the application key). */
export async function writePrivateAtomic(file: string, data: Buffer | string): Promise<void> {
  const tmp = `${file}.ripwerk-tmp`;
  await fs.rm(tmp, { force: true });
  await fs.writeFile(tmp, data, { mode: PRIVATE_FILE_MODE });
  await fs.rename(tmp, file);
}

/** What was there before a careful run: the value (null: not set) and whether settings.conf existed. */
interface Before {
  value: string | null;
  existed: boolean;
}

/** Per data folder: how many careful runs hold it now, and the queue its file changes go through one at a time. */
const holders = new Map<string, { count: number; queue: Promise<unknown> }>();

function serial<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const entry = holders.get(dir) ?? { count: 0, queue: Promise.resolve() };
  holders.set(dir, entry);
  const next = entry.queue.then(work, work);
  entry.queue = next.catch(() => undefined);
  return next;
}

async function readBefore(dir: string): Promise<Before | null> {
  const text = await fs.readFile(path.join(dir, BEFORE_FILE), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as Partial<Before>;
    return { value: typeof parsed.value === 'string' ? parsed.value : null, existed: parsed.existed !== false };
  } catch {
    return null;
  }
}

async function putBack(dir: string, before: Before): Promise<void> {
  const file = path.join(dir, SETTINGS_FILE);
  const current = (await fs.readFile(file, 'utf8').catch(() => null)) ?? '';
  const next = withSetting(current, READ_RETRIES_SETTING, before.value);
  if (next === '' && !before.existed) await fs.rm(file, { force: true });
  else await writePrivateAtomic(file, next);
  await fs.rm(path.join(dir, BEFORE_FILE), { force: true });
}

/**
 * Sets MakeMKV's read retries to `retries` for the runs that start now (io_IgnoreReadErrors and every
 * other line stay as they are). The returned function puts the value from before back when the last
 * careful run of this data folder ends; calling it again does nothing. The value from before is kept in
 * a file next to settings.conf until then, so a crash leaves nothing for good (restoreLeftSetting).
 */
export async function carefulReads(dataDir: string, retries: number): Promise<() => Promise<void>> {
  await serial(dataDir, async () => {
    const entry = holders.get(dataDir) as { count: number };
    if (entry.count === 0) {
      await fs.mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
      const file = path.join(dataDir, SETTINGS_FILE);
      const current = await fs.readFile(file, 'utf8').catch(() => null);
      // A file left by a careful run that never ended holds the real old value: the current one is ours.
      if ((await readBefore(dataDir)) === null) {
        const before: Before = { value: current === null ? null : settingValue(current, READ_RETRIES_SETTING), existed: current !== null };
        await writePrivateAtomic(path.join(dataDir, BEFORE_FILE), JSON.stringify(before));
      }
      await writePrivateAtomic(file, withSetting(current ?? '', READ_RETRIES_SETTING, String(retries)));
    }
    entry.count++;
  });
  let released = false;
  return () => {
    if (released) return Promise.resolve();
    released = true;
    return serial(dataDir, async () => {
      const entry = holders.get(dataDir) as { count: number };
      entry.count = Math.max(0, entry.count - 1);
      if (entry.count > 0) return;
      const before = await readBefore(dataDir);
      if (before) await putBack(dataDir, before);
    });
  };
}

/** At the agent's start: puts back what a careful run that did not end (a crash) left in settings.conf; true when it did. */
export async function restoreLeftSetting(dataDir: string): Promise<boolean> {
  return serial(dataDir, async () => {
    const before = await readBefore(dataDir);
    (holders.get(dataDir) as { count: number }).count = 0;
    if (!before) return false;
    await putBack(dataDir, before);
    return true;
  });
}
