import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../shared/sqlite.js';

/** Who holds an issued MQTT credential: a worker (its user name is its worker name or its node, agent-node.ts) or Home Assistant. */
export type CredentialRole = 'agent' | 'home-assistant';

/** The user name the coordinator's own client logs in with (its password is the broker secret). */
export const COORDINATOR_USERNAME = 'ripwerk-coordinator';
/** The user name of Home Assistant's credential. */
export const HOME_ASSISTANT_USERNAME = 'homeassistant';

// scrypt with the parameters Node documents as its defaults (N=2^14, r=8, p=1): about 50 ms a check.
const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function derive(password: Buffer, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, KEY_LENGTH, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))));
}

/** scrypt$N$r$p$salt$hash, salt and hash in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(Buffer.from(password), salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function passwordMatches(hash: string, password: Buffer): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = hash.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p));
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * The MQTT credentials the coordinator issued (POST /workers/{name}/credentials, POST
 * /home-assistant/credentials). Only scrypt hashes are stored; a password is shown once, in the
 * answer that creates it. Issuing again replaces the old password.
 */
export class MqttCredentials {
  /** Per user name, how often its credential was issued or revoked since the start (see epoch()). */
  private readonly epochs = new Map<string, number>();
  /** The user names of this process's own local agent (all-in-one): issued at every start, not through the API. */
  private readonly local = new Set<string>();

  constructor(private readonly db: Db) {}

  /** Creates or replaces the credential; returns the new password (24 random bytes, base64url). */
  async issue(username: string, role: CredentialRole): Promise<string> {
    const password = randomBytes(24).toString('base64url');
    const hash = await hashPassword(password);
    this.db
      .prepare('INSERT INTO mqtt_credentials (username, role, hash, created_at, node) VALUES (?, ?, ?, ?, NULL) ON CONFLICT(username) DO UPDATE SET role = excluded.role, hash = excluded.hash, created_at = excluded.created_at, node = NULL')
      .run(username, role, hash, new Date().toISOString());
    this.bump(username);
    return password;
  }

  /** The local agent's credential (all-in-one process): issued afresh, and from then on not replaced or revoked through the API. */
  async issueLocal(username: string): Promise<string> {
    const password = await this.issue(username, 'agent');
    this.local.add(username);
    return password;
  }

  /** Whether `username` is this process's own local agent. */
  isLocal(username: string): boolean {
    return this.local.has(username);
  }

  /**
   * A number that changes whenever the credential of `username` is issued anew or revoked. A login
   * takes it before its password check (scrypt, ~50 ms on the thread pool) and is refused when it
   * changed meanwhile: a revocation wins over every login in flight.
   */
  epoch(username: string): number {
    return this.epochs.get(username) ?? 0;
  }

  private bump(username: string): void {
    this.epochs.set(username, this.epoch(username) + 1);
  }

  /** The role of the credential when the password is right, else null. */
  async verify(username: string, password: Buffer | undefined): Promise<CredentialRole | null> {
    const row = this.db.prepare<[string], { role: CredentialRole; hash: string }>('SELECT role, hash FROM mqtt_credentials WHERE username = ?').get(username);
    if (!row || !password) return null;
    return (await passwordMatches(row.hash, password)) ? row.role : null;
  }

  has(username: string): boolean {
    return this.db.prepare<[string], { username: string }>('SELECT username FROM mqtt_credentials WHERE username = ?').get(username) !== undefined;
  }

  /** The node a worker credential is bound to (its first login as `<name>@<host>`), null before that. */
  boundNode(username: string): string | null {
    return this.db.prepare<[string], { node: string | null }>('SELECT node FROM mqtt_credentials WHERE username = ?').get(username)?.node ?? null;
  }

  /**
   * Binds a worker credential to the node of its first login; false when it was bound meanwhile (two
   * first logins at once as two nodes: the first wins) or is gone.
   */
  bind(username: string, node: string): boolean {
    if (this.db.prepare('UPDATE mqtt_credentials SET node = ? WHERE username = ? AND node IS NULL').run(node, username).changes > 0) return true;
    return this.boundNode(username) === node;
  }

  /** The worker credential that is the node (user name = node) or is bound to it, else null. */
  holderOf(node: string): string | null {
    return this.db.prepare<[string, string, string], { username: string }>("SELECT username FROM mqtt_credentials WHERE role = 'agent' AND (username = ? OR node = ?) ORDER BY username = ? DESC LIMIT 1").get(node, node, node)?.username ?? null;
  }

  /**
   * The worker credential that may act as `node` now: the one that is it or is bound to it, else
   * the one issued as its worker name and not bound yet (issued anew, say); null when there is none.
   */
  credentialFor(node: string): string | null {
    const holder = this.holderOf(node);
    if (holder !== null) return holder;
    const name = node.split('@')[0] as string;
    return name !== node && this.db.prepare<[string], { username: string }>("SELECT username FROM mqtt_credentials WHERE username = ? AND role = 'agent' AND node IS NULL").get(name) ? name : null;
  }

  /** Removes the credential; true when there was one. */
  revoke(username: string): boolean {
    this.bump(username);
    return this.db.prepare('DELETE FROM mqtt_credentials WHERE username = ?').run(username).changes > 0;
  }

  list(): { username: string; role: CredentialRole; created_at: string; node: string | null }[] {
    return this.db.prepare<[], { username: string; role: CredentialRole; created_at: string; node: string | null }>('SELECT username, role, created_at, node FROM mqtt_credentials ORDER BY username').all();
  }
}
