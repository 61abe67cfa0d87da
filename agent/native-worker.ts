/**
 * Entry of the native worker, bundled into one CommonJS file (dist/native-worker/ripwerk-worker.cjs)
 * and, for Windows, into a single-executable application (ripwerk-worker.exe). No native addon may
 * be imported from here: its tasks and outbox live in a JSON file.
 *
 *   ripwerk-worker [--config FILE] [--log-file FILE]     run the worker (transcode queue only)
 *   ripwerk-worker install [--mqtt-url URL] [--broker-secret S] [--worker-name N] [--handbrake-cli PATH] [--path-map MAP]
 *   ripwerk-worker uninstall [--purge]                   Windows only
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { nativeDefaultDataDir, readNativeWorkerConfig } from '../shared/config.js';
import { Logger, type LogEntry } from '../shared/log.js';
import { runService } from '../shared/service.js';
import { startAgent } from './agent.js';
import { jsonTaskStoreOpener } from './store/json-task-store.js';
import { InstallError, installWindows, uninstallWindows } from './native/native-install.js';

const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

const USAGE = `Ripwerk native worker: takes transcode jobs from a Ripwerk coordinator (no drives, no ripping).

  ripwerk-worker [--config FILE] [--log-file FILE]
      Runs the worker. FILE is a JSON object of the settings MQTT_URL, MQTT_USERNAME, MQTT_PASSWORD,
      WORKER_NAME, DATA_DIR, HANDBRAKE_CLI, RIPWERK_PATH_MAP, MEDIA_ROOT, RAW_DIR (environment
      variables win over it; RIPWERK_BROKER_SECRET instead of the credentials is the legacy way in).
      Without --config, worker.json in ${path.join(nativeDefaultDataDir(process.env), 'worker.json')} is read when it exists.
  ripwerk-worker install [--mqtt-url URL] [--mqtt-username USER --mqtt-password PW] [--broker-secret SECRET] [--worker-name NAME] [--handbrake-cli PATH] [--path-map MAP]
      Windows, as administrator: copies the worker to %ProgramFiles%\\Ripwerk, writes
      %ProgramData%\\Ripwerk\\worker.json and starts it at every boot as a scheduled task.
      The credentials come from POST /api/workers/<name>/credentials on the coordinator; without
      --mqtt-password it asks for it. Without --mqtt-username the legacy broker secret is used.
  ripwerk-worker uninstall [--purge]
      Windows, as administrator: removes the task and the program folder (--purge: the data too).
`;

/** Appends every log line to a file; at 10 MB the file becomes FILE.1 and a new one starts. */
function fileSink(file: string): (entry: LogEntry) => void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let size = fs.existsSync(file) ? fs.statSync(file).size : 0;
  return (e) => {
    if (size > LOG_ROTATE_BYTES) {
      fs.renameSync(file, `${file}.1`);
      size = 0;
    }
    const line = `${e.ts} ${e.level.toUpperCase()} [${e.source}]${e.job_id ? ` job=${e.job_id}` : ''} ${e.message}\n`;
    fs.appendFileSync(file, line);
    size += Buffer.byteLength(line);
  };
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        'log-file': { type: 'string' },
        'mqtt-url': { type: 'string' },
        'broker-secret': { type: 'string' },
        'mqtt-username': { type: 'string' },
        'mqtt-password': { type: 'string' },
        'worker-name': { type: 'string' },
        'handbrake-cli': { type: 'string' },
        'path-map': { type: 'string' },
        purge: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const command = positionals[0];
  if (command === 'install' || command === 'uninstall') {
    try {
      const notes =
        command === 'install'
          ? await installWindows({ mqttUrl: values['mqtt-url'], brokerSecret: values['broker-secret'], mqttUsername: values['mqtt-username'], mqttPassword: values['mqtt-password'], workerName: values['worker-name'], handbrakeCli: values['handbrake-cli'], pathMap: values['path-map'] }, process.env, process.execPath)
          : uninstallWindows(values.purge === true, process.env);
      for (const n of notes) process.stdout.write(`${n}\n`);
      return;
    } catch (err) {
      process.stderr.write(`${err instanceof InstallError ? '' : 'unexpected error: '}${(err as Error).message}\n`);
      process.exit(err instanceof InstallError ? err.exitCode : 1);
    }
  }
  if (command !== undefined) {
    process.stderr.write(`unknown subcommand "${command}"\n\n${USAGE}`);
    process.exit(2);
  }
  const defaultConfig = path.join(nativeDefaultDataDir(process.env), 'worker.json');
  const configFile = values.config ?? (fs.existsSync(defaultConfig) ? defaultConfig : null);
  const log = new Logger('worker');
  if (values['log-file']) log.addSink(fileSink(path.resolve(values['log-file'])));
  if (configFile) log.info(`configuration from ${path.resolve(configFile)} and the environment`);
  await runService(log, () => startAgent(readNativeWorkerConfig(process.env, configFile), log, jsonTaskStoreOpener((message) => log.warn(message))));
}

main().catch((err: Error) => {
  process.stderr.write(`the worker stopped: ${err.message}\n`);
  process.exit(1);
});
