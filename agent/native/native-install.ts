import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { NATIVE_CONFIG_KEYS, type Env } from '../../shared/config.js';
import { PS_IS_ADMIN, protectConfigLines, psEncoded, psQuote, registerTaskLines, unregisterTaskLines, WINDOWS } from '../../shared/windows-task.js';

/** A refusal of install/uninstall: printed as one plain line, exit code 1 (2 for wrong use). */
export class InstallError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export interface InstallOptions {
  mqttUrl?: string;
  brokerSecret?: string;
  /** The worker's own MQTT credentials; with them the broker secret is not asked for. */
  mqttUsername?: string;
  mqttPassword?: string;
  workerName?: string;
  handbrakeCli?: string;
  pathMap?: string;
}

export interface WindowsPaths {
  installDir: string;
  exe: string;
  dataDir: string;
  config: string;
  log: string;
}

export function windowsPaths(env: Env): WindowsPaths {
  const installDir = path.win32.join(env.ProgramFiles || 'C:\\Program Files', WINDOWS.installFolder);
  const dataDir = path.win32.join(env.ProgramData || 'C:\\ProgramData', WINDOWS.dataFolder);
  return {
    installDir,
    exe: path.win32.join(installDir, WINDOWS.exeName),
    dataDir,
    config: path.win32.join(dataDir, WINDOWS.configName),
    log: path.win32.join(dataDir, WINDOWS.logName),
  };
}

function notOnWindows(what: string): InstallError {
  return new InstallError(
    `"${what}" sets up the Windows scheduled task and works on Windows only. On this system run the worker without a subcommand ` +
      `(it reads --config FILE and the environment), for example under systemd or launchd. ` +
      `"${what}" richtet die geplante Aufgabe von Windows ein und geht nur unter Windows.`,
    2,
  );
}

/** Runs a PowerShell script; its output is shown, a failure becomes an InstallError with the script's error text. */
function powershell(script: string, what: string): string {
  const r = spawnSync('powershell.exe', ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand', psEncoded(`$ErrorActionPreference = 'Stop'\n${script}`)], { encoding: 'utf8', windowsHide: true });
  if (r.error) throw new InstallError(`${what}: powershell.exe could not be started (${r.error.message})`);
  if (r.status !== 0) throw new InstallError(`${what} failed: ${(r.stderr || r.stdout).trim().split(/\r?\n/)[0] || `exit code ${r.status}`}`);
  return r.stdout;
}

function isAdmin(): boolean {
  return powershell(`if (${PS_IS_ADMIN}) { 'yes' } else { 'no' }`, 'checking for administrator rights').trim() === 'yes';
}

/** Reads a line from the console without showing it (the MQTT password or the broker secret). */
export function promptHidden(question: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) return Promise.reject(new InstallError('no console to ask for the broker secret: give it with --mqtt-password (or --broker-secret)', 2));
  process.stdout.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    input.setRawMode(true);
    input.resume();
    input.setEncoding('utf8');
    const done = (err: Error | null): void => {
      input.setRawMode(false);
      input.pause();
      input.removeListener('data', onData);
      process.stdout.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(null);
        if (ch === '\u0003') return done(new InstallError('canceled', 1));
        if (ch === '\b' || ch === '\u007f') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    input.on('data', onData);
  });
}

function readExisting(file: string): Record<string, string> {
  try {
    const data = JSON.parse(fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '')) as Record<string, unknown>;
    const out: Record<string, string> = {};
    for (const key of NATIVE_CONFIG_KEYS) if (typeof data[key] === 'string') out[key] = data[key] as string;
    return out;
  } catch {
    return {};
  }
}

/** HandBrakeCLI.exe next to the worker or in HandBrake's usual folder, else null. */
function findHandbrake(paths: WindowsPaths, env: Env): string | null {
  const candidates = [path.win32.join(paths.installDir, 'HandBrakeCLI.exe'), path.win32.join(env.ProgramFiles || 'C:\\Program Files', 'HandBrake', 'HandBrakeCLI.exe')];
  return candidates.find((c) => fs.existsSync(c)) ?? null;
}

/**
 * `ripwerk-worker.exe install`: what the installer script of GET /worker-setup/desktop does. Copies
 * this executable to %ProgramFiles%\Ripwerk, writes %ProgramData%\Ripwerk\worker.json (readable by
 * SYSTEM and Administrators only), and registers and starts the scheduled task.
 */
export async function installWindows(opts: InstallOptions, env: Env, self: string, platform: NodeJS.Platform = process.platform): Promise<string[]> {
  if (platform !== 'win32') throw notOnWindows('install');
  if (!isAdmin()) throw new InstallError('administrator rights are needed: open the command prompt with "Run as administrator" and run this again');
  const p = windowsPaths(env);
  const existing = readExisting(p.config);
  const config: Record<string, string> = { ...existing };
  const mqttUrl = opts.mqttUrl ?? existing.MQTT_URL;
  if (!mqttUrl) throw new InstallError('the coordinator\'s broker is unknown: give it with --mqtt-url mqtt://server:1883 (the installer script of GET /api/worker-setup/desktop fills it in)', 2);
  try {
    new URL(mqttUrl);
  } catch {
    throw new InstallError(`--mqtt-url must be a URL like mqtt://server:1883, got "${mqttUrl}"`, 2);
  }
  config.MQTT_URL = mqttUrl;
  const username = opts.mqttUsername ?? existing.MQTT_USERNAME;
  if (username) {
    // The worker's own credentials (POST /api/workers/{name}/credentials): the broker secret is not needed any more.
    if (!/^[A-Za-z0-9._@-]{1,120}$/.test(username)) throw new InstallError(`--mqtt-username may hold letters, digits, dot, dash, underscore and @ only, got "${username}"`, 2);
    const password = opts.mqttPassword ?? (opts.mqttUsername ? undefined : existing.MQTT_PASSWORD) ?? (await promptHidden('MQTT password (the "password" of POST /api/workers/<name>/credentials on the coordinator): '));
    if (!password.trim()) throw new InstallError('the MQTT password is empty: without it the coordinator\'s broker refuses the worker', 2);
    config.MQTT_USERNAME = username;
    config.MQTT_PASSWORD = password.trim();
    delete config.RIPWERK_BROKER_SECRET;
  } else {
    const secret = opts.brokerSecret ?? existing.RIPWERK_BROKER_SECRET ?? (await promptHidden('Broker secret (legacy; better: --mqtt-username and --mqtt-password from POST /api/workers/<name>/credentials): '));
    if (!secret.trim()) throw new InstallError('the broker secret is empty: without it the coordinator\'s broker refuses the worker', 2);
    config.RIPWERK_BROKER_SECRET = secret.trim();
  }
  if (opts.workerName) config.WORKER_NAME = opts.workerName;
  if (opts.pathMap !== undefined) config.RIPWERK_PATH_MAP = opts.pathMap;
  const handbrake = opts.handbrakeCli ?? existing.HANDBRAKE_CLI ?? findHandbrake(p, env);
  if (handbrake) config.HANDBRAKE_CLI = handbrake;
  config.DATA_DIR = p.dataDir;

  const notes: string[] = [];
  // A running worker holds its executable open: stop the task before the copy.
  powershell(unregisterTaskLines().join('\n'), 'stopping the previous task');
  fs.mkdirSync(p.installDir, { recursive: true });
  fs.mkdirSync(p.dataDir, { recursive: true });
  if (path.win32.resolve(self).toLowerCase() !== p.exe.toLowerCase()) {
    fs.copyFileSync(self, p.exe);
    notes.push(`copied the worker to ${p.exe}`);
  }
  fs.writeFileSync(p.config, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  const lines = [`$exe = ${psQuote(p.exe)}`, `$config = ${psQuote(p.config)}`, `$log = ${psQuote(p.log)}`, `$dataDir = ${psQuote(p.dataDir)}`, ...protectConfigLines(), ...registerTaskLines()];
  powershell(lines.join('\n'), 'registering the scheduled task');
  notes.push(`wrote ${p.config} (readable by SYSTEM and Administrators only)`);
  notes.push(`registered and started the scheduled task "${WINDOWS.taskPath}${WINDOWS.taskName}" (at start-up, as SYSTEM, no time limit, restart on failure); log: ${p.log}`);
  if (!handbrake) notes.push(`HandBrakeCLI.exe was not found: put it into ${p.installDir} or give --handbrake-cli, else this worker takes no transcodes`);
  return notes;
}

/** `ripwerk-worker.exe uninstall`: removes the task and the program folder; --purge also removes %ProgramData%\Ripwerk. */
export function uninstallWindows(purge: boolean, env: Env, platform: NodeJS.Platform = process.platform): string[] {
  if (platform !== 'win32') throw notOnWindows('uninstall');
  if (!isAdmin()) throw new InstallError('administrator rights are needed: open the command prompt with "Run as administrator" and run this again');
  const p = windowsPaths(env);
  powershell(unregisterTaskLines().join('\n'), 'removing the scheduled task');
  const notes = [`removed the scheduled task "${WINDOWS.taskPath}${WINDOWS.taskName}"`];
  // This executable may be the one in the program folder, which Windows keeps locked while it runs:
  // a detached cmd.exe removes the folders once this process has ended.
  const folders = purge ? [p.installDir, p.dataDir] : [p.installDir];
  const removal = folders.map((f) => `rmdir /s /q "${f}"`).join(' & ');
  // /s with the whole command in one pair of quotes and verbatim arguments: how Node itself hands a command line to cmd.exe.
  spawn('cmd.exe', ['/d', '/s', '/c', `"ping -n 3 127.0.0.1 >nul & ${removal}"`], { detached: true, stdio: 'ignore', windowsHide: true, windowsVerbatimArguments: true }).unref();
  notes.push(`${folders.join(' and ')} will be removed in a few seconds`);
  if (!purge) notes.push(`${p.dataDir} (configuration, log, state) is kept; remove it with "uninstall --purge"`);
  return notes;
}
