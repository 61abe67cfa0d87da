import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { EJECT_REPLY_TIMEOUT_MS, EJECT_WORST_CASE_MS } from '../../../../shared/drive-limits.js';
import { TASKS } from '../../../../shared/protocol.js';
import { dispatchParts, onlineStatus } from '../../../fixtures/dispatch-parts.js';

const NODE = 'ripper@1';

function ejectRequest() {
  const p = dispatchParts();
  p.fleet.applyStatus(onlineStatus(NODE));
  mock.timers.enable({ apis: ['setTimeout'] });
  const outcome = p.requests.request(NODE, TASKS.eject, 'sr0').then(
    (event) => ({ ok: true as const, event }),
    (err: Error & { status?: number }) => ({ ok: false as const, err }),
  );
  const sent = p.link.of(TASKS.eject)[0]!;
  return { p, outcome, sent };
}

describe('DriveRequests: the wait for an eject answer', () => {
  afterEach(() => mock.timers.reset());

  it("takes the agent's answer that comes at its worst case (every tool at its limit)", async () => {
    const { p, outcome, sent } = ejectRequest();
    mock.timers.tick(EJECT_WORST_CASE_MS);
    p.requests.answer(NODE, { type: 'ejected', drive: 'sr0', command_id: sent.id, event_id: 'e1', node: NODE, ts: new Date().toISOString() });
    const result = await outcome;
    assert.equal(result.ok, true);
  });

  it('gives up with a 502 only once EJECT_REPLY_TIMEOUT_MS has passed', async () => {
    const { p, outcome, sent } = ejectRequest();
    mock.timers.tick(EJECT_REPLY_TIMEOUT_MS - 1);
    assert.equal(p.requests.awaits(sent.id, NODE), true, 'still waiting a millisecond before the limit');
    mock.timers.tick(1);
    const result = await outcome;
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.equal(result.err.status, 502);
      assert.match(result.err.message, new RegExp(`did not answer within ${Math.round(EJECT_REPLY_TIMEOUT_MS / 1000)} s`));
    }
  });
});
