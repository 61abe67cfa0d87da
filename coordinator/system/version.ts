import fs from 'node:fs';

/** Ripwerk's version from package.json (three folders above the compiled file: dist/coordinator/system → the project). */
function readVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' && pkg.version ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const RIPWERK_VERSION = readVersion();
