import fs from 'node:fs';
import yazl from 'yazl';
import type { SetupOrigin } from './origin.js';

/** The folder inside the zip that holds everything. */
export const PACKAGE_FOLDER = 'ripwerk-worker';
export const PACKAGE_FILE_NAME = 'ripwerk-worker.zip';
export const BUNDLE_NAME = 'ripwerk-worker.cjs';

const crlf = (text: string): string => text.replace(/\r?\n/g, '\r\n');

/** The coordinator's folders: a worker touches nothing outside them (and the folders of its path map). */
export interface WorkerRoots {
  mediaRoot: string;
  rawDir: string;
}

/**
 * config/worker.json: the broker and the coordinator's folders filled in; the worker's own MQTT
 * credentials left empty (POST /api/workers/{name}/credentials gives them); never the broker secret.
 */
export function packageConfig(origin: SetupOrigin, roots: WorkerRoots): string {
  return `${JSON.stringify({ MQTT_URL: origin.mqttUrl, MQTT_USERNAME: '', MQTT_PASSWORD: '', WORKER_NAME: '', HANDBRAKE_CLI: '', ENCODER_NICE: '', RIPWERK_PATH_MAP: '', MEDIA_ROOT: roots.mediaRoot, RAW_DIR: roots.rawDir }, null, 2)}\n`;
}

function packageJson(version: string): string {
  return `${JSON.stringify(
    {
      name: 'ripwerk-worker',
      version,
      private: true,
      description: 'Ripwerk native worker: transcodes jobs of a Ripwerk coordinator (no drives, no ripping)',
      license: 'MIT',
      type: 'commonjs',
      main: BUNDLE_NAME,
      engines: { node: '>=20.19' },
      scripts: { start: `node ${BUNDLE_NAME} --config config/worker.json` },
    },
    null,
    2,
  )}\n`;
}

function readme(origin: SetupOrigin): string {
  return `Ripwerk worker (native, without containers)
===========================================

This folder holds a Ripwerk worker for a computer with Node.js 20 (Windows, macOS or Linux).
It compresses (transcodes) the ripped discs of the Ripwerk coordinator at
${origin.coordinatorUrl}. It has no drives and never rips: it only takes jobs from the
queue "transcode".

Deutsch: Dieser Ordner enthaelt einen Ripwerk-Worker fuer einen Rechner mit Node.js 20. Er
komprimiert die gerippten Discs des Ripwerk-Koordinators und nimmt nur Transcode-Auftraege an.

What you need
-------------
1. Node.js 20 (https://nodejs.org, the "LTS" installer is fine; version 20.19 or newer).
2. HandBrakeCLI, the command-line HandBrake (https://handbrake.fr/downloads2.php).
   If it is not on the PATH, write its full path into config/worker.json as HANDBRAKE_CLI,
   on Windows for example "C:\\\\Program Files\\\\HandBrake\\\\HandBrakeCLI.exe" (double backslashes).
3. This worker's own MQTT user name and password. They are NOT in this package. Ask the
   coordinator for them once (the password is shown only in that answer):
     curl -X POST ${origin.coordinatorUrl}/api/workers/<worker name>/credentials
   and copy "username" to MQTT_USERNAME and "password" to MQTT_PASSWORD. The user name is the
   worker's node: the worker can act only as that node.
   Older setups used the shared broker secret instead (on the coordinator host in the file
   DATA_DIR/broker-secret, or RIPWERK_BROKER_SECRET there): it still works, is logged as legacy,
   and gives away more than this worker needs.
4. The same media folders as the coordinator (network shares). The jobs name the coordinator's
   paths; RIPWERK_PATH_MAP translates them, for example
   "/srv/media=\\\\\\\\nas\\\\media" (coordinator path=path on this computer; several separated by ;).

Setup
-----
Open config/worker.json in a text editor:
  MQTT_URL               the coordinator's broker, filled in already: ${origin.mqttUrl}
  MQTT_USERNAME          the "username" of the credentials (step 3)
  MQTT_PASSWORD          the "password" of the credentials (step 3)
  WORKER_NAME            a name for this computer (letters, digits, . _ -); empty: the host name
  HANDBRAKE_CLI          path of HandBrakeCLI; empty: HandBrakeCLI from the PATH
  ENCODER_NICE           the encoder's priority, 0 (normal) to 19 (lowest); empty: 10, below normal,
                         so the computer stays usable while it encodes
  RIPWERK_PATH_MAP       see above; empty: the paths are the same here
  MEDIA_ROOT, RAW_DIR    the coordinator's folders, filled in already: the worker refuses every
                         path outside them and outside the coordinator side of RIPWERK_PATH_MAP
Environment variables of the same names win over the file.

Start
-----
Windows: double-click start-worker.cmd (or run it in a command prompt).
macOS / Linux: sh start-worker.sh
The worker prints one line per event. It keeps its state (tasks, unsent events) in the folder
"state" next to this file (DATA_DIR to change it). Stop it with Ctrl-C; unfinished transcodes
start again on the next start.

The worker then shows up in the coordinator's list of workers (${origin.coordinatorUrl}/api/capabilities)
with "native": true.

To run it as a Windows service-like task at every boot, use the installer instead:
${origin.coordinatorUrl}/api/worker-setup/desktop (PowerShell script) or the single
executable ${origin.coordinatorUrl}/api/worker-setup/desktop-exe (ripwerk-worker.exe install).
`;
}

const START_SH = `#!/bin/sh
# Starts the Ripwerk worker with Node.js 20 or newer; settings in config/worker.json.
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "Node.js was not found. Install Node.js 20 (https://nodejs.org). / Node.js wurde nicht gefunden." >&2
  exit 1
fi
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a===20&&b>=19)?0:1)'; then
  echo "Node.js $(node --version) is too old: the worker needs 20.19 or newer. / Node.js ist zu alt." >&2
  exit 1
fi
: "\${DATA_DIR:=$here/state}"
export DATA_DIR
exec node "$here/${BUNDLE_NAME}" --config "$here/config/worker.json" "$@"
`;

const START_CMD = `@echo off
rem Starts the Ripwerk worker with Node.js 20 or newer; settings in config\\worker.json.
setlocal
set "HERE=%~dp0"
where node >nul 2>nul
if errorlevel 1 (
  echo Node.js was not found. Install Node.js 20 from https://nodejs.org - Node.js wurde nicht gefunden.
  pause
  exit /b 1
)
node -e "const [a,b]=process.versions.node.split('.').map(Number);process.exit(a>20||(a===20&&b>=19)?0:1)"
if errorlevel 1 (
  echo Node.js is too old: the worker needs 20.19 or newer - Node.js ist zu alt.
  pause
  exit /b 1
)
if "%DATA_DIR%"=="" set "DATA_DIR=%HERE%state"
node "%HERE%${BUNDLE_NAME}" --config "%HERE%config\\worker.json" %*
if errorlevel 1 pause
`;

/**
 * The worker as a zip: the bundled worker (one .cjs, no native modules), package.json, README.txt,
 * config/worker.json with the broker and folders filled in (never a secret) and start scripts for Windows and
 * for macOS/Linux.
 */
export function workerPackage(bundle: string, origin: SetupOrigin, roots: WorkerRoots, version: string): NodeJS.ReadableStream {
  const zip = new yazl.ZipFile();
  const mtime = fs.statSync(bundle).mtime;
  const at = (name: string): string => `${PACKAGE_FOLDER}/${name}`;
  zip.addFile(bundle, at(BUNDLE_NAME), { mtime, mode: 0o100644 });
  zip.addBuffer(Buffer.from(packageJson(version)), at('package.json'), { mtime, mode: 0o100644 });
  zip.addBuffer(Buffer.from(crlf(readme(origin))), at('README.txt'), { mtime, mode: 0o100644 });
  zip.addBuffer(Buffer.from(packageConfig(origin, roots)), at('config/worker.json'), { mtime, mode: 0o100600 });
  zip.addBuffer(Buffer.from(START_SH), at('start-worker.sh'), { mtime, mode: 0o100755 });
  zip.addBuffer(Buffer.from(crlf(START_CMD)), at('start-worker.cmd'), { mtime, mode: 0o100644 });
  zip.end();
  return zip.outputStream;
}
