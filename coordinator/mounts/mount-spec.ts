import posix from 'node:path/posix';

/**
 * What a storage mount is made of, checked from a request body, and how it becomes a mount(8) call.
 * Pure: no I/O, so the rules are unit-tested on their own.
 */

export type MountProtocol = 'smb' | 'nfs';

export interface MountCredentials {
  username: string;
  password: string;
  domain?: string;
}

export interface MountSpec {
  name: string;
  protocol: MountProtocol;
  /** Host name or address, without a port. */
  host: string;
  /** A port other than the protocol's default (445 for SMB, 2049 for NFS); null for the default. */
  port: number | null;
  /** SMB: the share name, optionally with a sub-folder ("movies" or "movies/uhd"). NFS: the absolute export path. */
  share: string;
  /** SMB protocol version (mount.cifs vers=); null lets the client negotiate. */
  vers: string | null;
}

export class MountSpecError extends Error {}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/u;
/** Host names (RFC 1123 labels), IPv4 addresses, and bracketed IPv6 addresses. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/u;
/** mount.cifs vers= values (mount.cifs(8)). */
const SMB_VERSIONS = new Set(['1.0', '2.0', '2.1', '3', '3.0', '3.02', '3.1.1', 'default']);
/** A path segment of a share or export: no option separators (the mount source must not smuggle options). */
const SEGMENT = /^[^\s,=\\/:"*?<>|\0]+$/u;

function text(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new MountSpecError(`${field} must be a string`);
  return v.trim();
}

/** Splits "nas.local:4445" or "[fe80::1]:445" into host and port. */
export function splitHostPort(raw: string): { host: string; port: number | null } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/u.exec(raw);
  if (!m || !HOST.test(m[1])) throw new MountSpecError(`host "${raw}" is not a host name or address (optionally with :port)`);
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && (port < 1 || port > 65535)) throw new MountSpecError(`port ${m[2]} is out of range`);
  return { host: m[1], port };
}

/** Checks a mount name: it becomes the folder under the media root, so a single plain folder name. */
export function checkMountName(raw: unknown): string {
  if (typeof raw !== 'string' || !NAME.test(raw)) {
    throw new MountSpecError('name must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit (it becomes the folder under the media root)');
  }
  return raw;
}

/** The spec's POST /storage-mounts body: protocol, host, share or export, name, credentials. */
export function parseMountRequest(body: Record<string, unknown>): { spec: MountSpec; credentials: MountCredentials | null } {
  const protocolRaw = text(body, 'protocol')?.toLowerCase();
  const protocol: MountProtocol | null = protocolRaw === 'smb' || protocolRaw === 'cifs' ? 'smb' : protocolRaw === 'nfs' ? 'nfs' : null;
  if (!protocol) throw new MountSpecError('protocol must be "SMB" or "NFS"');
  const name = checkMountName(body.name);
  const hostRaw = text(body, 'host');
  if (!hostRaw) throw new MountSpecError('host is missing (the NAS name or address)');
  const { host, port } = splitHostPort(hostRaw);
  const shareRaw = protocol === 'nfs' ? (text(body, 'export') ?? text(body, 'share')) : (text(body, 'share') ?? text(body, 'export'));
  if (!shareRaw) throw new MountSpecError(protocol === 'nfs' ? 'export is missing (the exported path, for example /export/movies)' : 'share is missing (the share name, for example movies)');
  let share: string;
  if (protocol === 'nfs') {
    if (!posix.isAbsolute(shareRaw)) throw new MountSpecError(`export "${shareRaw}" must be an absolute path such as /export/movies`);
    const segments = shareRaw.split('/').filter(Boolean);
    if (segments.some((s) => s === '..' || s === '.' || !SEGMENT.test(s))) throw new MountSpecError(`export "${shareRaw}" contains a character or segment a mount source cannot carry`);
    share = `/${segments.join('/')}`;
  } else {
    const segments = shareRaw.replace(/\\/gu, '/').split('/').filter(Boolean);
    if (segments.length === 0 || segments.some((s) => s === '..' || s === '.' || !SEGMENT.test(s))) {
      throw new MountSpecError(`share "${shareRaw}" must be a share name (optionally with a sub-folder) without commas, spaces at the ends, .. or the characters \\ : " * ? < > |`);
    }
    share = segments.join('/');
  }
  const vers = text(body, 'vers') ?? null;
  if (vers !== null && (protocol !== 'smb' || !SMB_VERSIONS.has(vers))) {
    throw new MountSpecError(protocol === 'smb' ? `vers must be one of ${[...SMB_VERSIONS].join(', ')}` : 'vers applies to SMB only');
  }
  return { spec: { name, protocol, host, port, share, vers }, credentials: parseCredentials(body.credentials, protocol) };
}

function parseCredentials(raw: unknown, protocol: MountProtocol): MountCredentials | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (protocol === 'nfs') throw new MountSpecError('NFS exports take no credentials (access is granted by the client address)');
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new MountSpecError('credentials must be an object with username and password');
  const c = raw as Record<string, unknown>;
  const username = typeof c.username === 'string' ? c.username.trim() : '';
  const password = typeof c.password === 'string' ? c.password : '';
  const domain = typeof c.domain === 'string' ? c.domain.trim() : '';
  if (!username) return null; // no user name: a guest login
  // A credentials file is read line by line: a line break would start a new key.
  for (const [field, value] of [['username', username], ['password', password], ['domain', domain]] as const) {
    if (/[\r\n\0]/u.test(value)) throw new MountSpecError(`credentials.${field} must not contain line breaks`);
  }
  return domain ? { username, password, domain } : { username, password };
}

/** The source as the household and the spec write it: //host/share for SMB, host:/export for NFS. */
export function mountSource(spec: Pick<MountSpec, 'protocol' | 'host' | 'share'>): string {
  return spec.protocol === 'smb' ? `//${spec.host}/${spec.share}` : `${spec.host}:${spec.share}`;
}

/** The same SMB source as a Windows UNC path (\\host\share\sub), for a native worker's path map. */
export function uncPath(spec: Pick<MountSpec, 'host' | 'share'>): string {
  return `\\\\${spec.host.replace(/^\[|\]$/gu, '')}\\${spec.share.split('/').join('\\')}`;
}

/** The text of a mount.cifs credentials file (mount.cifs(8) credentials=). */
export function credentialsFileText(c: MountCredentials): string {
  return `username=${c.username}\npassword=${c.password}\n${c.domain ? `domain=${c.domain}\n` : ''}`;
}

/**
 * The argv of mount(8) for a spec. SMB: the credentials file or a guest login (without either,
 * mount.cifs would ask for a password), files owned by the owner of the media root and readable by
 * everyone (the media server reads them), soft so calls on a dead server
 * return errors instead of hanging. NFS: soft with a 10 s timeout and two retries.
 */
export function mountArgs(spec: MountSpec, mountPoint: string, opts: { credentialsFile: string | null; uid: number; gid: number }): string[] {
  if (spec.protocol === 'smb') {
    const o = [
      opts.credentialsFile ? `credentials=${opts.credentialsFile}` : 'guest',
      ...(spec.vers ? [`vers=${spec.vers}`] : []),
      ...(spec.port ? [`port=${spec.port}`] : []),
      `uid=${opts.uid}`,
      `gid=${opts.gid}`,
      'file_mode=0644',
      'dir_mode=0755',
      'iocharset=utf8',
      'noserverino',
      'soft',
    ];
    return ['-t', 'cifs', mountSource(spec), mountPoint, '-o', o.join(',')];
  }
  const o = ['soft', 'timeo=100', 'retrans=2', ...(spec.port ? [`port=${spec.port}`] : [])];
  return ['-t', 'nfs', mountSource(spec), mountPoint, '-o', o.join(',')];
}
