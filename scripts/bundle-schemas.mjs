// Bundles dist/shared/protocol-schemas.js (as tsc wrote it) with the parts of zod/mini it uses,
// in place. Loaded from node_modules, zod's index pulls in all of zod with its 50 locales: about
// 12 MB of RSS in every coordinator and agent. The bundle holds only what the schemas call (about
// 1.5 MB). Run by `npm run build` after tsc; a dist built by tsc alone (the tests) works the same,
// only heavier. Every other module stays as tsc wrote it: relative imports are left to Node.
import { readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const file = path.join(root, 'dist', 'shared', 'protocol-schemas.js');
const BANNER = '// bundled by scripts/bundle-schemas.mjs';
if (readFileSync(file, 'utf8').startsWith(BANNER)) process.exit(0);

const tmp = `${file}.tmp`;
await build({
  entryPoints: [file],
  outfile: tmp,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  banner: { js: BANNER },
  logLevel: 'warning',
  plugins: [
    {
      name: 'relative-external',
      setup(b) {
        // Our own modules stay separate files; only packages (zod) go into the bundle.
        b.onResolve({ filter: /^\.\.?\// }, (args) => (args.kind === 'entry-point' || args.importer.includes(`${path.sep}node_modules${path.sep}`) ? undefined : { path: args.path, external: true }));
      },
    },
  ],
});
const out = readFileSync(tmp, 'utf8');
if (/from\s*["']zod/.test(out)) throw new Error('the schema bundle still imports zod');
renameSync(tmp, file);
