import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DRIVE_TOOL_TIMEOUT_MS,
  EJECT_POLL_MS,
  EJECT_REPLY_TIMEOUT_MS,
  EJECT_TIMEOUT_MS,
  EJECT_WAIT_MS,
  EJECT_WORST_CASE_MS,
  STATUS_READ_WORST_MS,
  toolRunWorstMs,
} from '../../../shared/drive-limits.js';
import { KILL_GRACE_MS } from '../../../shared/process.js';

describe('eject limits (shared/drive-limits.ts)', () => {
  it('verifies an eject for up to 5 s, as the spec says', () => {
    assert.equal(EJECT_WAIT_MS, 5_000);
  });

  it('count a tool run as its limit plus the kill grace, a status read as udevadm beside python3 then setcd', () => {
    assert.equal(toolRunWorstMs(1_000), 1_000 + KILL_GRACE_MS);
    assert.equal(STATUS_READ_WORST_MS, 2 * (DRIVE_TOOL_TIMEOUT_MS + KILL_GRACE_MS));
  });

  it("make the agent's worst case cover both eject calls, the whole verification and the reading after it", () => {
    const ejectCalls = 2 * (EJECT_TIMEOUT_MS + KILL_GRACE_MS);
    const verification = EJECT_WAIT_MS + EJECT_POLL_MS + STATUS_READ_WORST_MS;
    const readingAfter = STATUS_READ_WORST_MS + DRIVE_TOOL_TIMEOUT_MS + KILL_GRACE_MS;
    assert.ok(EJECT_WORST_CASE_MS >= ejectCalls + verification + readingAfter, `${EJECT_WORST_CASE_MS} ms`);
  });

  it("let the coordinator wait longer than the agent's worst case (the old 15 s was shorter than two eject calls)", () => {
    assert.ok(EJECT_REPLY_TIMEOUT_MS > EJECT_WORST_CASE_MS, `${EJECT_REPLY_TIMEOUT_MS} ms against ${EJECT_WORST_CASE_MS} ms`);
    assert.ok(EJECT_REPLY_TIMEOUT_MS - EJECT_WORST_CASE_MS >= 5_000, 'a margin for the broker round trip');
    assert.ok(EJECT_REPLY_TIMEOUT_MS > 2 * EJECT_TIMEOUT_MS + EJECT_WAIT_MS);
  });
});
