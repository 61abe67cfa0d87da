/**
 * Plain reasons for the OS errors the drive tools print when they cannot open or query a device
 * (the strerror texts of glibc, as printed by python3, setcd, blockdev and eject).
 */
const REASONS: Array<[RegExp, (device: string) => string]> = [
  [/No such file or directory/i, (d) => `there is no device ${d}`],
  [/No such device or address|No such device\b/i, (d) => `${d} exists, but no drive answers behind it`],
  [/Operation not permitted|Permission denied/i, (d) => `the agent is not allowed to open ${d} (it needs to run as root or in the cdrom group)`],
  [/Inappropriate ioctl for device|Invalid argument/i, (d) => `${d} is not an optical drive`],
  [/Resource busy/i, (d) => `another program is using ${d}`],
];

/** The plain reason for an OS error text about DEVICE, or null when the text names no known error. */
export function deviceErrorReason(device: string, text: string): string | null {
  for (const [pattern, reason] of REASONS) if (pattern.test(text)) return reason(device);
  return null;
}

/** The last non-empty line of a tool's stderr without the "tool: " prefix, for unknown failures. */
export function lastErrorLine(stderr: string, tool: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const last = lines.at(-1) ?? '';
  return last.startsWith(`${tool}: `) ? last.slice(tool.length + 2) : last;
}

/** A reason for a tool that failed in a way no parser knows: its last error line, or its exit code. */
export function unknownFailure(tool: string, stderr: string, exitCode: number | null): string {
  const line = lastErrorLine(stderr, tool);
  const exit = exitCode === null ? 'was stopped' : `exit code ${exitCode}`;
  return line ? `${tool} failed (${exit}): ${line}` : `${tool} failed (${exit})`;
}
