import fs from 'node:fs/promises';
import type { Logger } from '../../shared/log.js';
import type { DiscInfo } from '../../shared/protocol.js';
import { labelIdentity, type DiscIdentity } from '../metadata/disc-identity.js';

/**
 * A disc entry of KEYDB.cfg (FindVUK's format, as libaacs's keydbcfg lexer reads it):
 * `0x<40 hex digits> = <title> | D | <date> | V | 0x<VUK> | …`. The title runs from the `=` to the
 * first `|` (or a `\`, libaacs's line continuation) and may carry a year or other text; a line that
 * starts with `;` (or `#`, which the key store counts as a comment too) is a comment, as are device,
 * processing and host key lines (`| DK |`, `| PK |`, `| HC |`), which do not start with a disc id.
 */
const DISC_ENTRY = /^[ \t]*0[xX]([0-9a-fA-F]{40})[ \t]*=([^|\\\r\n]*)/;

/** The disc id and title of one line of KEYDB.cfg, or null when the line is no disc entry or has no title. */
function entryOf(line: string): { id: string; title: string } | null {
  const m = DISC_ENTRY.exec(line);
  if (!m) return null;
  const title = (m[2] as string).trim();
  return title ? { id: (m[1] as string).toUpperCase(), title } : null;
}

/** An AACS disc id as the index keys it (40 hex digits, upper case, no 0x), or null when it is none. */
function normaliseDiscId(aacsDiscId: string): string | null {
  const id = aacsDiscId.trim().replace(/^0x/i, '').toUpperCase();
  return /^[0-9A-F]{40}$/.test(id) ? id : null;
}

function lines(content: string): string[] {
  return content.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
}

/** A key line of KEYDB.cfg that is no disc entry: device keys, processing keys, host certificates. */
const KEY_LINE = /^[ \t]*\|[ \t]*(DK|PK|HC)[ \t]*\|/;
/** A disc entry with or without a title: the disc id and the `=`. */
const ANY_DISC_ENTRY = /^[ \t]*0[xX][0-9a-fA-F]{40}[ \t]*=/;

/**
 * The entries of KEYDB.cfg: disc entries and key lines (DK, PK, HC). A text file of any other kind
 * has none, however many lines it has; comments and blank lines are none either.
 */
export function keydbEntryCount(content: string): number {
  return lines(content).filter((line) => ANY_DISC_ENTRY.test(line) || KEY_LINE.test(line)).length;
}

/** KEYDB.cfg's title for an AACS disc id (hex in either case), trimmed; null when the file has no entry with a title for it. */
export function keydbTitle(content: string, aacsDiscId: string): string | null {
  const id = normaliseDiscId(aacsDiscId);
  if (!id) return null;
  for (const line of lines(content)) {
    const entry = entryOf(line);
    if (entry?.id === id) return entry.title;
  }
  return null;
}

/** Every disc id of KEYDB.cfg with its title; of an id listed twice, the first entry with a title counts. */
export function keydbTitleIndex(content: string): Map<string, string> {
  const index = new Map<string, string>();
  for (const line of lines(content)) {
    const entry = entryOf(line);
    if (entry && !index.has(entry.id)) index.set(entry.id, entry.title);
  }
  return index;
}

/** A year in parentheses after the title: "MOVIE NAME (2010)". */
const TITLE_YEAR = /\(\s*((?:19|20)\d{2})\s*\)/;

/**
 * The identity a KEYDB title gives a Blu-ray or UHD, in place of its label's: underscores become spaces, a year
 * in parentheses becomes the year (what follows it is dropped), a season in the title makes it a series
 * as a label would ("SHOW SEASON 2 DISC 1"). Without a year or a season of its own, the label's stay.
 */
export function keydbIdentity(disc: DiscInfo, label: DiscIdentity, title: string): DiscIdentity {
  let text = title.replace(/_/g, ' ').replace(/\s+/g, ' ').trim();
  let year: number | null = null;
  const y = TITLE_YEAR.exec(text);
  if (y && y.index > 0 && text.slice(0, y.index).trim()) {
    year = Number(y[1]);
    text = text.slice(0, y.index).replace(/[\s,:-]+$/, '').trim();
  }
  const named = labelIdentity({ ...disc, title: text, year: year ?? label.year });
  if (named.kind !== 'series' && label.kind === 'series') return { ...named, kind: 'series', season: label.season, disc_number: label.disc_number ?? null };
  return named;
}

interface Stamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

const sameStamp = (a: Stamp, b: Stamp): boolean => a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;

/**
 * The titles of the household's KEYDB.cfg (`KeyStore.keydbFile`) by AACS disc id. The file can be
 * tens of MB: it is read and indexed once per change (modification time, size and inode, by a stat
 * at each lookup), and a lookup is a map access. No file (or an unreadable one) names no disc.
 */
export class KeydbTitles {
  private stamp: Stamp | null = null;
  private index = new Map<string, string>();
  /** The read under way, shared by lookups that come while it runs. */
  private loading: Promise<void> | null = null;
  /** How often the file was read and indexed (for tests). */
  reads = 0;

  constructor(
    readonly file: string,
    private readonly log: Logger | null = null,
  ) {}

  /** The file's title for the disc id, or null. */
  async titleFor(aacsDiscId: string): Promise<string | null> {
    const id = normaliseDiscId(aacsDiscId);
    if (!id) return null;
    await this.refresh();
    return this.index.get(id) ?? null;
  }

  /** The identity the file's title gives a Blu-ray or UHD (see `keydbIdentity`), or null when it does not name the disc. */
  async identityFor(disc: DiscInfo, label: DiscIdentity): Promise<DiscIdentity | null> {
    const id = disc.ids?.aacs_disc_id;
    if (!id || (disc.type !== 'bluray' && disc.type !== 'uhd')) return null;
    const title = await this.titleFor(id);
    return title ? keydbIdentity(disc, label, title) : null;
  }

  private async refresh(): Promise<void> {
    while (this.loading) await this.loading;
    const st = await fs.stat(this.file).catch(() => null);
    if (!st) {
      this.drop();
      return;
    }
    if (this.stamp && sameStamp(this.stamp, st)) return;
    this.loading = this.load().finally(() => {
      this.loading = null;
    });
    await this.loading;
  }

  /** Reads the file through one handle, so that the stamp kept is the one of the content read. */
  private async load(): Promise<void> {
    let handle: fs.FileHandle | null = null;
    try {
      handle = await fs.open(this.file, 'r');
      const st = await handle.stat();
      const content = await handle.readFile('utf8');
      this.index = keydbTitleIndex(content);
      this.stamp = { mtimeMs: st.mtimeMs, size: st.size, ino: st.ino };
      this.reads++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log?.warn(`KEYDB.cfg could not be read for disc titles: ${(err as Error).message}`);
      this.drop();
    } finally {
      await handle?.close();
    }
  }

  private drop(): void {
    this.stamp = null;
    this.index = new Map();
  }
}
