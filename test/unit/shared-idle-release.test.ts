import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IdleRelease } from '../../shared/idle-release.js';

/** An IdleRelease over a counter and a clock the test moves. */
function setup() {
  const state = { now: 0, changes: 0, released: 0 };
  const idle = new IdleRelease({
    activity: () => state.changes,
    release: () => state.released++,
    burstChanges: 100,
    quietChanges: 5,
    quietMs: 30_000,
    checkMs: 10_000,
    clock: () => state.now,
  });
  /** Moves the clock by one check interval, adds `changes` and checks. */
  const step = (changes = 0): boolean => {
    state.now += 10_000;
    state.changes += changes;
    return idle.check();
  };
  return { state, idle, step };
}

describe('idle release', () => {
  it('releases once, after a burst and quietMs of quiet, not during the burst', () => {
    const { state, step } = setup();
    for (let i = 0; i < 6; i++) assert.equal(step(400), false, 'busy checks never release');
    assert.equal(step(), false);
    assert.equal(step(), false);
    assert.equal(step(2), true, 'quiet for 30 s (small trickles count as quiet)');
    assert.equal(state.released, 1);
    for (let i = 0; i < 20; i++) step();
    assert.equal(state.released, 1, 'no second release without new work');
  });

  it('does nothing while the process is idle from the start', () => {
    const { state, step } = setup();
    for (let i = 0; i < 50; i++) step();
    assert.equal(state.released, 0);
  });

  it('starts the quiet period over when work comes back', () => {
    const { state, step } = setup();
    step(500);
    step();
    step();
    step(50); // work again before 30 s of quiet
    step();
    step();
    assert.equal(state.released, 0);
    step();
    assert.equal(state.released, 1);
  });

  it('turns a slow trickle into a release only once it adds up to a burst', () => {
    const { state, step } = setup();
    for (let i = 0; i < 19; i++) step(5);
    assert.equal(state.released, 0, '95 changes: below burstChanges');
    step(5);
    assert.equal(state.released, 1, 'the 100th change, and the trickle has been quiet all along');
  });
});
