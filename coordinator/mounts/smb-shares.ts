import { runTool, ToolError } from '../../shared/process.js';
import { explainSmbStatus } from './mount-errors.js';

/** smbclient -L with -g prints one "Type|Name|Comment" line per share; everything else is chatter. */
export interface SmbShare {
  name: string;
  comment: string;
}

export function parseShareList(stdout: string): SmbShare[] {
  const shares: SmbShare[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^Disk\|([^|]+)\|(.*)$/u.exec(line.trim());
    // Hidden administrative shares (C$, ADMIN$) are not for media.
    if (m && !m[1].endsWith('$')) shares.push({ name: m[1], comment: m[2] });
  }
  return shares;
}

export class SmbListError extends Error {
  constructor(message: string, readonly timedOut: boolean) {
    super(message);
  }
}

/** smbclient waits 20 s on a host that accepts but never answers; our limit is a little longer. */
const LIST_LIMIT_MS = 25_000;

/** The disk shares of an SMB host, listed anonymously (a guest login). */
export async function listShares(host: string, port: number | null): Promise<SmbShare[]> {
  const args = ['-L', `//${host}`, '-N', '-g', ...(port ? ['-p', String(port)] : [])];
  let result;
  try {
    result = await runTool('smbclient', args, { timeoutMs: LIST_LIMIT_MS, captureStdout: true });
  } catch (err) {
    if (err instanceof ToolError && err.timedOut) throw new SmbListError(`the NAS ${host} did not answer within ${LIST_LIMIT_MS / 1000} s`, true);
    throw new SmbListError((err as Error).message, false);
  }
  const text = `${result.stdout}\n${result.stderr}`;
  if (result.exitCode !== 0) throw new SmbListError(explainSmbStatus(text, { guest: true }), /NT_STATUS_IO_TIMEOUT/u.test(text));
  return parseShareList(result.stdout);
}
