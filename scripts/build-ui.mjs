// Bundles the web UI (ui/src, Preact + TSX) into dist/ui with esbuild, next to its HTML and CSS.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'ui');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [path.join(root, 'ui', 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2020',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: path.join(out, 'app.js'),
  logLevel: 'warning',
});
for (const f of ['index.html', 'style.css']) copyFileSync(path.join(root, 'ui', f), path.join(out, f));
