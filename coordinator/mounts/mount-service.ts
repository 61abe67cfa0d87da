import type { Mount } from '../../shared/api-types.js';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../shared/log.js';
import { HttpError } from '../http/errors.js';
import { explainMountError } from './mount-errors.js';
import { mountArgs, mountSource, MountSpecError, parseMountRequest, type MountCredentials, type MountSpec } from './mount-spec.js';
import { isReadOnly } from './mountinfo.js';
import { detachAll, layersOf, runMount } from './mount-tools.js';
import type { MountRow, MountsStore } from './mounts-store.js';
import { probeMount, writeTest, type ProbeResult } from './probe.js';


export interface LiveCheck {
  mounted: boolean;
  readOnly: boolean;
  probe: ProbeResult | null;
}

/**
 * Attaches, checks, repairs and removes the network shares Ripwerk mounts under the media root.
 * One operation per mount name at a time; at most one reachability probe in flight per mount.
 */
export class MountService {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly probes = new Map<string, Promise<ProbeResult>>();
  private closed = false;

  constructor(
    readonly store: MountsStore,
    private readonly mediaRoot: string,
    private readonly log: Logger,
  ) {}

  /** Mounted (a layer at the mount point) and reachable (stat -f answers within 3 s), looked at now. */
  async check(row: MountRow): Promise<LiveCheck> {
    const layers = await layersOf(row.mount_point);
    if (layers.length === 0) return { mounted: false, readOnly: false, probe: null };
    return { mounted: true, readOnly: isReadOnly(layers[layers.length - 1]), probe: await this.probe(row) };
  }

  private probe(row: MountRow): Promise<ProbeResult> {
    const running = this.probes.get(row.name);
    if (running) return running;
    const p = probeMount(row.mount_point).finally(() => this.probes.delete(row.name));
    this.probes.set(row.name, p);
    return p;
  }

  view(row: MountRow, live: LiveCheck): Mount {
    const reachable = live.probe?.ok === true;
    const readOnly = live.mounted ? live.readOnly || row.read_only === 1 : row.read_only === 1;
    let warning: string | null = null;
    if (!live.mounted) warning = `not mounted${row.last_error ? `: ${row.last_error}` : ''}; repair it (POST /storage-mounts/${row.name}/repair)`;
    else if (!reachable) warning = `mounted but not answering (${live.probe && !live.probe.ok ? live.probe.detail : 'no answer'}); repair it when the NAS is back`;
    else if (readOnly) warning = readOnlyWarning(row.name);
    return {
      name: row.name,
      protocol: row.protocol === 'smb' ? 'SMB' : 'NFS',
      host: row.host,
      port: row.port,
      share: row.share,
      source: mountSource(row),
      mount_point: row.mount_point,
      mounted: live.mounted,
      reachable,
      read_only: readOnly,
      has_credentials: row.has_credentials === 1,
      free_bytes: live.probe?.ok ? live.probe.freeBytes : null,
      total_bytes: live.probe?.ok ? live.probe.totalBytes : null,
      warning,
      last_error: row.last_error,
    };
  }

  async list(): Promise<Mount[]> {
    const rows = this.store.all();
    return Promise.all(rows.map(async (row) => this.view(row, await this.check(row))));
  }

  async get(name: string): Promise<Mount> {
    const row = this.store.get(name);
    if (!row) throw new HttpError(404, `no storage mount named ${name}`);
    return this.view(row, await this.check(row));
  }

  /**
   * POST /storage-mounts: a new mount, or new details for a dead one (which repairs it). An active
   * mount of that name is left alone (409). Returns the mount and whether it is new.
   */
  async add(body: Record<string, unknown>): Promise<{ created: boolean; mount: Mount }> {
    let parsed: { spec: MountSpec; credentials: MountCredentials | null };
    try {
      parsed = parseMountRequest(body);
    } catch (err) {
      if (err instanceof MountSpecError) throw new HttpError(400, err.message);
      throw err;
    }
    const { spec, credentials } = parsed;
    return this.locked(spec.name, async () => {
      const existing = this.store.get(spec.name);
      if (existing) {
        const live = await this.check(existing);
        if (live.mounted && live.probe?.ok) throw new HttpError(409, `a storage mount named ${spec.name} is active (mounted and reachable); choose another name, or remove it first`, 'mountNameActive', { name: spec.name });
      }
      const mountPoint = await this.mountPointFor(spec.name, existing !== undefined);
      const earlierCredentials = existing ? await this.store.credentialsText(spec.name) : null;
      this.store.save(spec, mountPoint, credentials !== null);
      await this.store.writeCredentials(spec.name, credentials);
      if (existing) this.log.info(`storage mount ${spec.name}: new details for the dead mount, repairing it with them`);
      try {
        const mount = await this.attach(this.store.get(spec.name) as MountRow);
        return { created: !existing, mount };
      } catch (err) {
        // Details that do not mount are not kept, least of all a password: a new mount is forgotten,
        // a dead one gets its earlier details (and credentials) back, so repair retries what was there.
        const failure = this.store.get(spec.name)?.last_error ?? (err as Error).message;
        if (existing) {
          this.store.save({ name: existing.name, protocol: existing.protocol, host: existing.host, port: existing.port, share: existing.share, vers: existing.vers }, existing.mount_point, existing.has_credentials === 1);
          await this.store.restoreCredentialsText(spec.name, earlierCredentials);
          this.store.setState(spec.name, 'unreachable', { lastError: failure });
        } else {
          await this.store.writeCredentials(spec.name, null);
          this.store.remove(spec.name);
        }
        if (err instanceof HttpError) {
          const source = mountSource(spec);
          throw new HttpError(err.status, `storage mount ${spec.name} (${source}) failed: ${failure}. ${existing ? 'The new details were not kept (the earlier ones stay, repair retries them)' : 'Nothing was saved (no password kept)'}: correct the details and add it again`);
        }
        throw err;
      }
    });
  }

  /**
   * POST /storage-mounts/{name}/repair: all layers detached lazily, mounted afresh with the stored
   * details. `quiet` (the mount guard) leaves the logging of the outcome to the caller.
   */
  async repair(name: string, opts: { quiet?: boolean } = {}): Promise<Mount> {
    return this.locked(name, async () => {
      const row = this.store.get(name);
      if (!row) throw new HttpError(404, `no storage mount named ${name}`);
      return this.attach(row, opts.quiet ?? false);
    });
  }

  /**
   * DELETE /storage-mounts/{name}: detached, forgotten, credentials deleted. The empty mount folder
   * stays (a household may have pointed a quick pick at it). Refused while an unfinished job writes
   * below it.
   */
  async remove(name: string, unfinishedDirs: string[]): Promise<void> {
    return this.locked(name, async () => {
      const row = this.store.get(name);
      if (!row) throw new HttpError(404, `no storage mount named ${name}`);
      const prefix = `${row.mount_point}/`;
      if (unfinishedDirs.some((d) => d === row.mount_point || d.startsWith(prefix))) {
        throw new HttpError(409, `storage mount ${name} is in use: an unfinished job writes below ${row.mount_point}; remove it when the job has ended`, 'mountInUse', { name, dir: row.mount_point });
      }
      const detached = await detachAll(row.mount_point);
      await this.store.writeCredentials(name, null);
      this.store.remove(name);
      this.log.info(`storage mount ${name} removed (${detached} layer${detached === 1 ? '' : 's'} detached)`);
    });
  }

  /** At start: every saved mount that is not mounted and answering is attached again, in the background. */
  remountAll(): Promise<void> {
    return Promise.all(
      this.store.all().map((row) =>
        this.locked(row.name, async () => {
          const live = await this.check(row);
          if (live.mounted && live.probe?.ok) return;
          await this.attach(row).catch(() => undefined);
        }),
      ),
    ).then(() => undefined);
  }

  /** Waits for running operations (at most `ms`) and stops further writes. */
  async close(ms = 5000): Promise<void> {
    this.closed = true;
    await Promise.race([Promise.allSettled([...this.locks.values()]), new Promise((r) => setTimeout(r, ms).unref())]);
  }

  /**
   * The mount sequence: stale layers off, mount, probe; when the probe fails, detach and mount once
   * more; when that fails too, detach and refuse with words pointing to repair. Then the write test.
   */
  private async attach(row: MountRow, quiet = false): Promise<Mount> {
    const credentialsFile = row.has_credentials ? this.store.credentialsFile(row.name) : null;
    // The share's files belong to whoever owns the media root, as the local files do (the service may run as root to mount).
    const owner = await fs.stat(this.mediaRoot).catch(() => null);
    const args = mountArgs(row, row.mount_point, { credentialsFile, uid: owner?.uid ?? process.getuid?.() ?? 0, gid: owner?.gid ?? process.getgid?.() ?? 0 });
    const source = mountSource(row);
    let failure = '';
    for (let attempt = 1; attempt <= 2; attempt++) {
      const stale = await this.detach(row);
      if (stale > 0 && attempt === 1 && !quiet) this.log.info(`storage mount ${row.name}: ${stale} stale layer${stale === 1 ? '' : 's'} detached before mounting`);
      const run = await runMount(args);
      if (!run.ok) {
        failure = run.timedOut ? `mounting ${source} did not finish in time: the NAS is not answering` : explainMountError(run.stderr, { protocol: row.protocol, guest: credentialsFile === null });
        // A refusal (wrong password, no such share) will not change on a second try.
        if (!run.timedOut) break;
        continue;
      }
      const probe = await probeMount(row.mount_point);
      if (probe.ok) return this.settled(row, quiet);
      failure = `${source} was mounted but did not answer (${probe.detail})`;
      if (!quiet) this.log.warn(`storage mount ${row.name}: ${failure}${attempt === 1 ? '; detaching and mounting once more' : ''}`);
    }
    await this.detach(row);
    const message = `storage mount ${row.name} (${source}) failed: ${failure}. Fix the cause, then repair it (POST /storage-mounts/${row.name}/repair or "Reparieren" on the storage page)`;
    if (!this.closed) this.store.setState(row.name, 'unreachable', { lastError: failure });
    if (!quiet) this.log.warn(message);
    throw new HttpError(502, message);
  }

  /** After a good probe: the write test, the read-only warning, the state saved. */
  private async settled(row: MountRow, quiet: boolean): Promise<Mount> {
    const layers = await layersOf(row.mount_point);
    const top = layers[layers.length - 1];
    const write = await writeTest(row.mount_point);
    const readOnly = (top !== undefined && isReadOnly(top)) || !write.writable;
    if (!write.writable) this.log.warn(`storage mount ${row.name}: ${readOnlyWarning(row.name)} (${write.reason})`);
    else if (!quiet) this.log.info(`storage mount ${row.name}: ${mountSource(row)} mounted at ${row.mount_point}, reachable and writable`);
    if (!this.closed) this.store.setState(row.name, 'active', { readOnly, lastError: null });
    const fresh = this.store.get(row.name) ?? row;
    return this.view(fresh, { mounted: top !== undefined, readOnly, probe: await this.probe(fresh) });
  }

  private async detach(row: MountRow): Promise<number> {
    try {
      return await detachAll(row.mount_point);
    } catch (err) {
      throw new HttpError(500, `storage mount ${row.name}: ${(err as Error).message}`);
    }
  }

  /**
   * MEDIA_ROOT/<name>, made when missing. Never a symbolic link, and never a folder that holds files
   * but no mount: mounting there would hide them.
   */
  private async mountPointFor(name: string, known: boolean): Promise<string> {
    const mountPoint = path.join(this.mediaRoot, name);
    const st = await fs.lstat(mountPoint).catch(() => null);
    if (st?.isSymbolicLink()) throw new HttpError(409, `${mountPoint} is a symbolic link; a mount point must be a plain folder under ${this.mediaRoot}`, 'mountPointLink', { dir: mountPoint });
    if (st && !st.isDirectory()) throw new HttpError(409, `${mountPoint} is a file; choose another name`, 'mountPointFile', { dir: mountPoint });
    if (st && !known && (await layersOf(mountPoint)).length === 0 && (await fs.readdir(mountPoint)).length > 0) {
      throw new HttpError(409, `${mountPoint} already holds files; a share mounted there would hide them. Choose another name`, 'mountPointNotEmpty', { dir: mountPoint });
    }
    await fs.mkdir(mountPoint, { recursive: true });
    return mountPoint;
  }

  private locked<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(name) ?? Promise.resolve();
    const next = before.catch(() => undefined).then(fn);
    const tail = next.catch(() => undefined);
    this.locks.set(name, tail);
    void tail.then(() => {
      if (this.locks.get(name) === tail) this.locks.delete(name);
    });
    return next;
  }
}

function readOnlyWarning(name: string): string {
  return `storage mount ${name} is read-only: Ripwerk can read from it but cannot write rips there`;
}
