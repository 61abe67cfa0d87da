import { deviceErrorReason, lastErrorLine } from './device-errors.js';

export type EjectFailureKind = 'no_device' | 'busy' | 'lock_unsupported' | 'failed';

/** Why an `eject` run (exit 1) failed, with a plain reason. */
export interface EjectFailure {
  kind: EjectFailureKind;
  reason: string;
}

/**
 * Classifies eject's stderr (util-linux): a missing device ("not found mountpoint or device with
 * the given name"), another opener ("cannot open /dev/sr0: Resource busy", from the O_EXCL open, or
 * "other users have the drive open and not CAP_SYS_ADMIN" when unlocking), a drive that cannot lock
 * ("CD-ROM door lock is not supported"), and failed eject commands.
 */
export function classifyEjectError(stderr: string, exitCode: number | null, device: string): EjectFailure {
  if (/not found mountpoint or device with the given name|unable to find (or open )?device/.test(stderr)) {
    return { kind: 'no_device', reason: `there is no device ${device}` };
  }
  if (/resource busy|other users have the drive open/i.test(stderr)) {
    return { kind: 'busy', reason: `another program is using ${device}; close it (or wait until it is done) and try again` };
  }
  if (/door lock is not supported/.test(stderr)) return { kind: 'lock_unsupported', reason: `${device} has no door lock` };
  const open = /cannot open [^:]+: (.+)/.exec(stderr);
  const osReason = open ? deviceErrorReason(device, open[1]) : null;
  if (osReason) return { kind: 'failed', reason: osReason };
  const line = lastErrorLine(stderr, 'eject');
  const exit = exitCode === null ? 'it was stopped' : `exit code ${exitCode}`;
  return { kind: 'failed', reason: line ? `the eject command failed: ${line}` : `the eject command failed (${exit})` };
}
