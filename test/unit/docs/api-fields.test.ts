import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO_DIR } from '../../fixtures/tools-samples.js';

/** Every field of every record in shared/api-types.ts, as `[record, field]`. */
function apiFields(source: string): [string, string][] {
  const out: [string, string][] = [];
  let record: string | null = null;
  for (const line of source.split('\n')) {
    const start = /^export interface (\w+)/.exec(line);
    if (start) {
      record = start[1];
      continue;
    }
    if (line.startsWith('}')) record = null;
    const field = /^ {2}(\w+)\??:/.exec(line);
    if (field && record) out.push([record, field[1]]);
  }
  return out;
}

describe('docs/api.md names every field of the API records', () => {
  const types = fs.readFileSync(path.join(REPO_DIR, 'shared', 'api-types.ts'), 'utf8');
  const doc = fs.readFileSync(path.join(REPO_DIR, 'docs', 'api.md'), 'utf8');

  it('reads the records of shared/api-types.ts', () => {
    const records = new Set(apiFields(types).map(([r]) => r));
    for (const r of ['Job', 'JobDetail', 'Disc', 'Device', 'Worker', 'StorageTarget', 'Mount', 'Match']) assert.ok(records.has(r), `${r} in api-types.ts`);
  });

  it('finds each field written as `name` or "name" in docs/api.md', () => {
    const missing = apiFields(types).filter(([, f]) => !doc.includes(`\`${f}\``) && !doc.includes(`"${f}"`) && !doc.includes(`.${f}\``));
    assert.deepEqual(missing, [], `fields not in docs/api.md: ${missing.map(([r, f]) => `${r}.${f}`).join(', ')}`);
  });
});
