/**
 * Time limits of an eject, in one place for both sides: the agent runs the drive tools with them
 * (agent/drives/drive-tools.ts, agent/drives/physical-drive.ts, agent/drives/drive-manager.ts), and
 * the coordinator waits for the agent's answer (coordinator/dispatch/drive-requests.ts) longer than
 * the agent can take with them, so a slow tray never gets a 502 while its eject succeeds.
 */
import { KILL_GRACE_MS } from './process.js';

/** Limit for one status or listing call of a drive tool (lsblk, udevadm, python3, setcd, blockdev); they answer in milliseconds. */
export const DRIVE_TOOL_TIMEOUT_MS = 5_000;

/** Limit for `eject` itself (and for `eject -i off`): it returns once the tray motor has run. */
export const EJECT_TIMEOUT_MS = 20_000;

/** Spec, Limits: "Eject verification: up to 5 seconds" (the drive status is polled this long after the eject command). */
export const EJECT_WAIT_MS = 5_000;

/** Pause between two status reads of the eject verification. */
export const EJECT_POLL_MS = 250;

/** The longest one tool run can take: its limit, then SIGTERM and up to KILL_GRACE_MS until SIGKILL (shared/process.ts runTool). */
export function toolRunWorstMs(limitMs: number): number {
  return limitMs + KILL_GRACE_MS;
}

/**
 * The longest one drive status read can take (physical-drive.ts readStatus): udevadm runs beside the
 * kernel status, which is python3 and, when python3 cannot answer, setcd after it.
 */
export const STATUS_READ_WORST_MS = 2 * toolRunWorstMs(DRIVE_TOOL_TIMEOUT_MS);

/**
 * The longest the agent takes from an eject command to its answer, every tool running into its limit:
 * `eject -i off` and `eject` (physical-drive.ts ejectDrive), the verification (EJECT_WAIT_MS, then a
 * pause and one more status read that started just before the deadline), and the drive manager's
 * reading after the eject (a status read and blockdev; drive-manager.ts eject).
 */
export const EJECT_WORST_CASE_MS =
  2 * toolRunWorstMs(EJECT_TIMEOUT_MS) + EJECT_WAIT_MS + EJECT_POLL_MS + STATUS_READ_WORST_MS + STATUS_READ_WORST_MS + toolRunWorstMs(DRIVE_TOOL_TIMEOUT_MS);

/** What the coordinator adds to the agent's worst case: the command and the answer through the broker, a busy host. */
export const EJECT_REPLY_MARGIN_MS = 10_000;

/** How long the coordinator waits for an agent's answer to an eject before it answers 502. */
export const EJECT_REPLY_TIMEOUT_MS = EJECT_WORST_CASE_MS + EJECT_REPLY_MARGIN_MS;
