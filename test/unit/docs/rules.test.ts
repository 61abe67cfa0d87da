import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO_DIR } from '../../fixtures/tools-samples.js';

interface RuleRow {
  id: string;
  /** Backticked tokens of the "Implemented in" cell: a path, then the names in that file. */
  implementation: string[];
  /** `test file` "test name" pairs of the "Checked by" cell. */
  tests: { file: string; name: string }[];
}

/** The rule rows of docs/rules.md: `| L1 | rule | implemented in | checked by |`. */
function ruleRows(doc: string): RuleRow[] {
  const rows: RuleRow[] = [];
  for (const line of doc.split('\n')) {
    const m = /^\| ([A-Z]\d+[a-z]?) \| (.*) \| (.*) \| (.*) \|$/.exec(line);
    if (!m) continue;
    const [, id, , impl, checked] = m as unknown as [string, string, string, string, string];
    rows.push({
      id,
      implementation: [...impl.matchAll(/`([^`]+)`/g)].map((t) => t[1] as string),
      tests: [...checked.matchAll(/`([^`]+)`\s*"([^"]+)"/g)].map((t) => ({ file: t[1] as string, name: t[2] as string })),
    });
  }
  return rows;
}

const isPath = (token: string): boolean => /^[\w.-]+(\/[\w.-]+)+\.(ts|tsx|conf)$/.test(token);
const read = (file: string): string => fs.readFileSync(path.join(REPO_DIR, file), 'utf8');

describe('docs/rules.md names real code and real tests', () => {
  const rows = ruleRows(read('docs/rules.md'));

  it('has a row for every limit of the spec table and the rule lists', () => {
    assert.ok(rows.length >= 80, `${rows.length} rows`);
    assert.equal(new Set(rows.map((r) => r.id)).size, rows.length, 'row ids are unique');
    for (const r of rows) {
      assert.ok(r.implementation.some(isPath), `${r.id} names the file that implements it`);
      assert.ok(r.tests.length > 0, `${r.id} names a test`);
    }
  });

  it('finds every named constant or function in the file named before it', () => {
    const missing: string[] = [];
    for (const r of rows) {
      let file: string | null = null;
      for (const token of r.implementation) {
        if (isPath(token)) {
          file = token;
          if (!fs.existsSync(path.join(REPO_DIR, token))) missing.push(`${r.id}: no file ${token}`);
        } else if (file && fs.existsSync(path.join(REPO_DIR, file)) && !read(file).includes(token)) {
          missing.push(`${r.id}: ${token} is not in ${file}`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it('finds every named test in its test file', () => {
    const missing: string[] = [];
    for (const r of rows) {
      for (const t of r.tests) {
        if (!fs.existsSync(path.join(REPO_DIR, t.file))) {
          missing.push(`${r.id}: no file ${t.file}`);
          continue;
        }
        const source = read(t.file).replace(/\\'/g, "'");
        if (!source.includes(`'${t.name}'`) && !source.includes(`"${t.name}"`) && !source.includes(`\`${t.name}\``)) missing.push(`${r.id}: "${t.name}" is not a test of ${t.file}`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
