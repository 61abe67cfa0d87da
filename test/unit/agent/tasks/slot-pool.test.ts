import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SlotPool } from '../../../../agent/tasks/slot-pool.js';

interface Gate {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

function gate(): Gate {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets the pool's promise callbacks (finally → pump) run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A pool of work items that record when they start and how many run at once. */
function harness(size: number) {
  const pool = new SlotPool(size);
  const started: string[] = [];
  const gates = new Map<string, Gate>();
  let running = 0;
  let peak = 0;
  const submit = (id: string): void => {
    const g = gate();
    gates.set(id, g);
    pool.submit(id, async () => {
      started.push(id);
      running++;
      peak = Math.max(peak, running);
      try {
        await g.promise;
      } finally {
        running--;
      }
    });
  };
  return { pool, started, gates, submit, peak: () => peak, running: () => running };
}

describe('SlotPool', () => {
  it('tells whether submitted work started at once or waits for a slot', () => {
    const pool = new SlotPool(1);
    const never = (): Promise<void> => new Promise<void>(() => undefined);
    assert.equal(pool.submit('a', never), true);
    assert.equal(pool.submit('b', never), false);
    assert.deepEqual([pool.busy, pool.withdraw('b')], [1, true]);
  });

  it('never runs more than its size and starts waiting work in submission order', async () => {
    const h = harness(2);
    for (const id of ['a', 'b', 'c', 'd', 'e']) h.submit(id);
    await settle();
    assert.deepEqual(h.started, ['a', 'b']);
    assert.equal(h.pool.busy, 2);
    assert.equal(h.pool.free, 0);

    h.gates.get('b')?.resolve();
    await settle();
    assert.deepEqual(h.started, ['a', 'b', 'c']);
    assert.equal(h.pool.busy, 2);

    h.gates.get('a')?.resolve();
    h.gates.get('c')?.resolve();
    await settle();
    assert.deepEqual(h.started, ['a', 'b', 'c', 'd', 'e']);

    h.gates.get('d')?.resolve();
    h.gates.get('e')?.resolve();
    await settle();
    assert.equal(h.peak(), 2);
    assert.equal(h.pool.busy, 0);
    assert.equal(h.pool.free, 2);
  });

  it('starts work at once while slots are free', async () => {
    const h = harness(3);
    h.submit('x');
    assert.deepEqual(h.started, ['x'], 'an async start runs synchronously up to its first await');
    assert.equal(h.pool.busy, 1);
    assert.equal(h.pool.free, 2);
    h.gates.get('x')?.resolve();
    await settle();
    assert.equal(h.pool.busy, 0);
  });

  it('withdraws waiting work so it never starts, and refuses running or unknown work', async () => {
    const h = harness(1);
    h.submit('run');
    h.submit('wait-1');
    h.submit('wait-2');
    assert.equal(h.pool.withdraw('wait-1'), true);
    assert.equal(h.pool.withdraw('wait-1'), false, 'a second withdraw finds nothing');
    assert.equal(h.pool.withdraw('run'), false, 'running work cannot be withdrawn');
    assert.equal(h.pool.withdraw('nope'), false);

    h.gates.get('run')?.resolve();
    await settle();
    assert.deepEqual(h.started, ['run', 'wait-2']);
    h.gates.get('wait-2')?.resolve();
    await settle();
    assert.deepEqual(h.started, ['run', 'wait-2']);
    assert.equal(h.pool.busy, 0);
  });

  it('lets work give its slot back before it ends, once: the next starts while it finishes', async () => {
    const pool = new SlotPool(1);
    const started: string[] = [];
    const finish = gate();
    const rest = gate();
    let giveBack!: () => void;
    pool.submit('encoded', async (release) => {
      started.push('encoded');
      giveBack = release;
      await finish.promise;
    });
    pool.submit('next', async () => {
      started.push('next');
      await rest.promise;
    });
    pool.submit('third', async () => {
      started.push('third');
    });
    assert.deepEqual(started, ['encoded']);
    giveBack();
    assert.deepEqual(started, ['encoded', 'next'], 'the slot went to the next at once');
    assert.equal(pool.busy, 1);
    giveBack();
    finish.resolve();
    await settle();
    assert.deepEqual(started, ['encoded', 'next'], 'neither a second release nor the end of released work frees a slot again');
    assert.equal(pool.busy, 1);
    rest.resolve();
    await settle();
    assert.deepEqual(started, ['encoded', 'next', 'third']);
    await settle();
    assert.equal(pool.busy, 0);
  });

  it('frees the slot of work that fails, and the next one starts', async () => {
    const h = harness(1);
    h.submit('bad');
    h.submit('next');
    h.gates.get('bad')?.reject(new Error('boom'));
    await settle();
    assert.deepEqual(h.started, ['bad', 'next']);
    assert.equal(h.pool.busy, 1);
    h.gates.get('next')?.resolve();
    await settle();
    assert.equal(h.pool.busy, 0);
  });

  it('frees the slot of a start function that throws before returning a promise', async () => {
    const pool = new SlotPool(1);
    const started: string[] = [];
    assert.doesNotThrow(() =>
      pool.submit('sync-throw', () => {
        started.push('sync-throw');
        throw new Error('thrown synchronously');
      }),
    );
    pool.submit('after', async () => {
      started.push('after');
    });
    await settle();
    assert.deepEqual(started, ['sync-throw', 'after']);
    assert.equal(pool.busy, 0);
  });

  it('take: waits in order for a slot and gives it back with the release it resolves with; an abort while waiting withdraws it', async () => {
    const pool = new SlotPool(1);
    const order: string[] = [];
    const first = await pool.take('a', new AbortController().signal);
    const aborted = new AbortController();
    const b = pool.take('b', aborted.signal).then(() => order.push('b'), () => order.push('b aborted'));
    const c = pool.take('c', new AbortController().signal).then((release) => {
      order.push('c');
      return release;
    });
    await settle();
    assert.deepEqual([order, pool.busy], [[], 1]);
    aborted.abort();
    first();
    first(); // idempotent
    const releaseC = await c;
    await b;
    assert.deepEqual(order, ['b aborted', 'c']);
    assert.equal(pool.busy, 1);
    releaseC();
    await settle();
    assert.equal(pool.busy, 0);
    await assert.rejects(pool.take('d', AbortSignal.abort()), 'an aborted signal takes nothing');
    assert.equal(pool.busy, 0);
  });
});
