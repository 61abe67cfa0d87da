/**
 * Plain words for what mount.cifs, mount.nfs and smbclient report (storage-mounts reference note).
 * Pure functions of the tool's text, so they are tested on the captured lines.
 */

/** mount.cifs: "mount error(N): strerror" with N the kernel's errno. */
const CIFS_ERRNO: Record<number, (guest: boolean) => string> = {
  13: (guest) =>
    guest
      ? 'the NAS refused the guest login (error 13, permission denied): this share needs a user name and password'
      : 'the NAS refused the login (error 13, permission denied): check user name and password, and that this user may open the share; on some NAS boxes vers=2.1 or 3.0 helps',
  2: () => 'the share name is wrong: the NAS has no share or folder of that name (error 2)',
  112: () => 'the NAS is down or speaks only an old protocol (error 112, host is down): try vers=1.0 or update the NAS',
  115: () => 'the NAS is not answering (error 115, timed out connecting to it): is it switched on and is the address right?',
  110: () => 'the NAS is not answering (error 110, connection timed out): is it switched on and is the address right?',
  111: () => 'the computer answered, but file sharing is off or on another port (error 111, connection refused)',
  95: () => 'the NAS and this machine share no protocol version (error 95, operation not supported): try another vers',
  22: () => 'the mount settings are invalid (error 22, invalid argument)',
  19: () => 'this machine cannot mount SMB shares: its kernel has no cifs support (error 19)',
};

export function explainMountError(stderr: string, opts: { protocol: 'smb' | 'nfs'; guest: boolean }): string {
  const cifs = /mount error\((\d+)\)/u.exec(stderr);
  if (cifs) {
    const n = Number(cifs[1]);
    const known = CIFS_ERRNO[n];
    return known ? known(opts.guest) : `mounting failed: ${firstLine(stderr)}`;
  }
  const lower = stderr.toLowerCase();
  if (opts.protocol === 'nfs') {
    if (lower.includes('access denied by server')) return 'the NAS refused this machine access to the export: allow this computer\'s address in the NAS\'s NFS settings';
    if (lower.includes('timed out')) return 'the NAS is not answering on NFS (connection timed out): is it switched on and is the address right?';
    if (lower.includes('protocol not supported')) return 'the NAS does not offer this NFS version (protocol not supported)';
    if (lower.includes('no such file or directory')) return 'the NAS has no export of that path';
    if (lower.includes('no such device')) return 'this machine cannot mount NFS exports: its kernel has no nfs support';
  }
  if (lower.includes('only root can') || lower.includes('must be superuser') || lower.includes('operation not permitted')) {
    return 'Ripwerk may not mount here: the service needs the right to mount (on a systemd install: sudo bash scripts/install.sh --with-mounts, see docs/install.md)';
  }
  return `mounting failed: ${firstLine(stderr) || 'no reason given'}`;
}

/** smbclient's NT_STATUS codes in plain words. */
export function explainSmbStatus(output: string, opts: { guest: boolean }): string {
  const m = /NT_STATUS_[A-Z_]+/u.exec(output);
  const status = m?.[0];
  switch (status) {
    case 'NT_STATUS_ACCESS_DENIED':
      return opts.guest
        ? 'the NAS refused the guest login (NT_STATUS_ACCESS_DENIED): it lists its shares only to a user with a password'
        : 'the NAS accepted the login but does not allow this (NT_STATUS_ACCESS_DENIED)';
    case 'NT_STATUS_LOGON_FAILURE':
      return 'user name or password is wrong (NT_STATUS_LOGON_FAILURE)';
    case 'NT_STATUS_BAD_NETWORK_NAME':
      return 'the NAS has no share of that name (NT_STATUS_BAD_NETWORK_NAME)';
    case 'NT_STATUS_CONNECTION_REFUSED':
      return 'the computer answered, but file sharing is off or on another port (NT_STATUS_CONNECTION_REFUSED)';
    case 'NT_STATUS_IO_TIMEOUT':
      return 'the NAS is not responding (NT_STATUS_IO_TIMEOUT): it accepted the connection but never answered';
    case 'NT_STATUS_HOST_UNREACHABLE':
    case 'NT_STATUS_NETWORK_UNREACHABLE':
      return `the NAS cannot be reached on the network (${status}): is it switched on and is the address right?`;
    case 'NT_STATUS_UNSUCCESSFUL':
      return 'the NAS name could not be resolved or the connection failed (NT_STATUS_UNSUCCESSFUL): try its IP address';
    case undefined:
      return `listing the shares failed: ${firstLine(output) || 'no reason given'}`;
    default:
      return `the NAS answered ${status}`;
  }
}

function firstLine(text: string): string {
  return text.split('\n').map((l) => l.trim()).find((l) => l && !l.startsWith('Refer to the mount.cifs')) ?? '';
}
