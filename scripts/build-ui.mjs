// Bundles the web UI (ui/src, Preact + TSX) into dist/ui with esbuild, next to its HTML and CSS.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
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
// Each file once more compressed, brotli and gzip at their strongest: the coordinator sends the one the
// browser takes (express-static-gzip), so a phone by the drive loads about a quarter of the bytes.
for (const f of ['index.html', 'style.css', 'app.js']) {
  const data = readFileSync(path.join(out, f));
  writeFileSync(path.join(out, `${f}.br`), brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }));
  writeFileSync(path.join(out, `${f}.gz`), gzipSync(data, { level: 9 }));
}
