import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

const FILE = 'broker-secret';

/**
 * The secret agents authenticate to the broker with: RIPWERK_BROKER_SECRET when set, else the one
 * generated at the first start and kept in DATA_DIR/broker-secret (readable by the service user only).
 */
export async function loadBrokerSecret(dataDir: string, fromEnv: string | null): Promise<{ secret: string; source: 'environment' | 'file' | 'generated'; file: string }> {
  const file = path.join(dataDir, FILE);
  if (fromEnv) return { secret: fromEnv, source: 'environment', file };
  const stored = (await fs.readFile(file, 'utf8').catch(() => '')).trim();
  if (stored) return { secret: stored, source: 'file', file };
  const secret = randomBytes(24).toString('base64url');
  await fs.writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  // Another start may have won the race: its secret is the one.
  return { secret: (await fs.readFile(file, 'utf8')).trim(), source: 'generated', file };
}

/** Constant-time comparison of a client's password with the secret. */
export function secretMatches(secret: string, password: Buffer | undefined): boolean {
  if (!password) return false;
  const expected = Buffer.from(secret);
  return password.length === expected.length && timingSafeEqual(password, expected);
}
