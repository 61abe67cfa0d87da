// Bundles the native worker (agent/native-worker.ts) into ONE CommonJS file,
// dist/native-worker/ripwerk-worker.cjs: what the worker-setup zip ships and what the Windows
// single-executable application embeds. A SEA can require() built-in modules only, so the bundle
// must hold everything else and no native addon. The build fails when one gets in.
import { readFileSync, mkdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'dist', 'native-worker');
const outfile = path.join(outDir, 'ripwerk-worker.cjs');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
mkdirSync(outDir, { recursive: true });

// Optional packages that ws and debug try to load inside try/catch, falling back to plain JS without
// them. In the bundle they are modules that throw "not found" at once: a SEA's require() would print a
// warning for every module that is not built in.
const OPTIONAL = /^(bufferutil|utf-8-validate|supports-color)$/;
const absentOptional = {
  name: 'absent-optional',
  setup(b) {
    b.onResolve({ filter: OPTIONAL }, (args) => ({ path: args.path, namespace: 'absent-optional' }));
    b.onLoad({ filter: /.*/, namespace: 'absent-optional' }, (args) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path}' (left out of the native worker bundle)`)}), { code: 'MODULE_NOT_FOUND' });`,
      loader: 'js',
    }));
  },
};

// shared/mqtt-client.ts loads mqtt.js with require() at run time (an ES import of it costs a Node
// process more memory, see there); the bundle needs mqtt.js as a static import, with the same setting.
const staticMqtt = {
  name: 'static-mqtt',
  setup(b) {
    b.onLoad({ filter: /[\\/]shared[\\/]mqtt-client\.ts$/ }, () => ({
      contents: [
        "import { connect } from 'mqtt';",
        "import packet from 'mqtt-packet';",
        'packet.writeToStream.cacheNumbers = false;',
        'export const connectMqtt = connect;',
        "export type { MqttClient } from 'mqtt';",
      ].join('\n'),
      loader: 'ts',
      resolveDir: root,
    }));
  },
};

const result = await build({
  entryPoints: [path.join(root, 'agent', 'native-worker.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile,
  metafile: true,
  legalComments: 'none',
  // ESM packages (node-cron, via shared/config.ts) read import.meta.url at load time; in CommonJS it
  // is this file's URL (in a SEA: the executable's).
  banner: { js: `// Ripwerk native worker ${version}: one file, Node.js 20 or newer, no native modules.\nvar __ripwerkImportMetaUrl = require('node:url').pathToFileURL(__filename).href;` },
  define: { 'import.meta.url': '__ripwerkImportMetaUrl' },
  logLevel: 'warning',
  plugins: [absentOptional, staticMqtt],
});

const problems = [];
for (const input of Object.keys(result.metafile.inputs)) {
  if (/(^|\/)node_modules\/(better-sqlite3|bindings|node-gyp-build|prebuild-install)\//.test(input) || input.endsWith('.node')) problems.push(`the bundle pulls in ${input} (a native module)`);
}
const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const code = readFileSync(outfile, 'utf8');
for (const [, name] of code.matchAll(/\brequire\("([^"]+)"\)/g)) {
  if (!builtins.has(name)) problems.push(`the bundle still requires "${name}" at run time (a single-executable application can load built-in modules only)`);
}
if (problems.length) {
  console.error(`native worker bundle refused:\n  ${[...new Set(problems)].join('\n  ')}\nThe native worker must not import agent/store/agent-store.ts or shared/sqlite.ts (better-sqlite3).`);
  process.exit(1);
}
