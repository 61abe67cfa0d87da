import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectFully, IdleCollection } from '../../shared/idle-collection.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('collectFully', () => {
  it('frees garbage the heap still holds, without --expose-gc on the command line', () => {
    let junk: string[][] | null = Array.from({ length: 400 }, (_, i) => Array.from({ length: 1000 }, (_, k) => `garbage ${i} ${k} ${'x'.repeat(40)}`));
    assert.equal(junk.length, 400);
    junk = null;
    const before = process.memoryUsage().heapUsed;
    assert.equal(collectFully(), true);
    const after = process.memoryUsage().heapUsed;
    assert.ok(before - after > 20 * 1024 * 1024, `heap used ${(before / 1048576).toFixed(1)} → ${(after / 1048576).toFixed(1)} MB`);
  });
});

describe('IdleCollection', () => {
  it('collects once the last end of work is quietMs ago, once per quiet spell', async () => {
    let collected = 0;
    const idle = new IdleCollection(40, () => true, () => collected++);
    idle.workEnded();
    await sleep(20);
    idle.workEnded(); // more work ended: the wait starts again
    await sleep(30);
    assert.equal(collected, 0);
    await sleep(40);
    assert.equal(collected, 1);
    await sleep(60);
    assert.equal(collected, 1, 'not again without new work');
    idle.workEnded();
    await sleep(60);
    assert.equal(collected, 2);
  });

  it('does not collect while work still runs, and not after stop', async () => {
    let collected = 0;
    let busy = true;
    const idle = new IdleCollection(20, () => !busy, () => collected++);
    idle.workEnded();
    await sleep(50);
    assert.equal(collected, 0, 'busy when the time came');
    busy = false;
    idle.workEnded();
    idle.stop();
    await sleep(50);
    assert.equal(collected, 0, 'stopped');
  });
});
