import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../shared/sqlite.js';
import { credentialsFileText, type MountCredentials, type MountSpec } from './mount-spec.js';

/** active: mounted and answering at the last look; unreachable: not mounted, or mounted but silent. */
export type MountState = 'active' | 'unreachable';

/** A saved mount: its spec plus where it is mounted and what the last attempt found. */
export interface MountRow extends MountSpec {
  mount_point: string;
  has_credentials: number;
  state: MountState;
  read_only: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The saved mounts (SQLite) and their credentials: one mount.cifs credentials file per mount in
 * DATA_DIR/mount-credentials, folder 0700 and files 0600, so only the service's user can read them.
 * They are never put into the database, an API answer or a log line.
 */
export class MountsStore {
  readonly credentialsDir: string;

  private readonly stmts;

  constructor(private readonly db: Db, dataDir: string, private readonly clock: () => number = Date.now) {
    this.credentialsDir = path.join(dataDir, 'mount-credentials');
    // Read for every raw-data probe (the storage targets are searched too): prepared once.
    this.stmts = {
      all: db.prepare<[], MountRow>('SELECT * FROM storage_mounts ORDER BY name'),
      get: db.prepare<[string], MountRow>('SELECT * FROM storage_mounts WHERE name = ?'),
    };
  }

  all(): MountRow[] {
    return this.stmts.all.all();
  }

  get(name: string): MountRow | undefined {
    return this.stmts.get.get(name);
  }

  /** Inserts or replaces the mount's details; state and findings stay as they were for an existing row. */
  save(spec: MountSpec, mountPoint: string, hasCredentials: boolean): void {
    const now = new Date(this.clock()).toISOString();
    this.db
      .prepare(
        `INSERT INTO storage_mounts (name, protocol, host, port, share, vers, mount_point, has_credentials, state, read_only, created_at, updated_at)
         VALUES (@name, @protocol, @host, @port, @share, @vers, @mount_point, @has_credentials, 'unreachable', 0, @now, @now)
         ON CONFLICT(name) DO UPDATE SET protocol = @protocol, host = @host, port = @port, share = @share, vers = @vers,
           mount_point = @mount_point, has_credentials = @has_credentials, updated_at = @now`,
      )
      .run({ ...spec, mount_point: mountPoint, has_credentials: hasCredentials ? 1 : 0, now });
  }

  setState(name: string, state: MountState, findings: { readOnly?: boolean; lastError?: string | null }): void {
    const row = this.get(name);
    if (!row) return;
    this.db
      .prepare('UPDATE storage_mounts SET state = ?, read_only = ?, last_error = ?, updated_at = ? WHERE name = ?')
      .run(state, findings.readOnly === undefined ? row.read_only : findings.readOnly ? 1 : 0, findings.lastError === undefined ? row.last_error : findings.lastError, new Date(this.clock()).toISOString(), name);
  }

  remove(name: string): void {
    this.db.prepare('DELETE FROM storage_mounts WHERE name = ?').run(name);
  }

  credentialsFile(name: string): string {
    return path.join(this.credentialsDir, name);
  }

  /** The credentials file as it is (null without one): kept aside while new details are tried. */
  async credentialsText(name: string): Promise<string | null> {
    return fs.readFile(this.credentialsFile(name), 'utf8').catch(() => null);
  }

  /** Puts back a credentials file read with credentialsText (null: none), mode 0600 from the start. */
  async restoreCredentialsText(name: string, text: string | null): Promise<void> {
    const file = this.credentialsFile(name);
    if (text === null) {
      await fs.rm(file, { force: true });
      return;
    }
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, text, { mode: 0o600 });
    await fs.rename(tmp, file);
  }

  /** Writes (or, with null, deletes) the credentials file; written to a temporary name first, mode 0600 from the start. */
  async writeCredentials(name: string, credentials: MountCredentials | null): Promise<void> {
    const file = this.credentialsFile(name);
    if (!credentials) {
      await fs.rm(file, { force: true });
      return;
    }
    await fs.mkdir(this.credentialsDir, { recursive: true, mode: 0o700 });
    await fs.chmod(this.credentialsDir, 0o700);
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, credentialsFileText(credentials), { mode: 0o600 });
    await fs.rename(tmp, file);
  }
}
