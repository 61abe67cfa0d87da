import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndingWatch } from '../../../../agent/tasks/ending-watch.js';

function setup(withinMs = 10_000) {
  let now = 5_000_000;
  let told = 0;
  const watch = new EndingWatch(() => told++, withinMs, () => now);
  return {
    watch,
    told: () => told,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('EndingWatch', () => {
  it('tells once the run, at its rate so far, has at most the given time left', () => {
    const { watch, told, advance } = setup();
    advance(8_000);
    watch.update(40); // 8 s for 40 %: 12 s to go
    assert.equal(told(), 0);
    advance(8_000);
    watch.update(80); // 16 s for 80 %: 4 s to go
    assert.equal(told(), 1);
    advance(2_000);
    watch.update(95);
    watch.update(100);
    assert.equal(told(), 1, 'once per run');
  });

  it('says nothing before the first progress above 0, and for a long encode not until its last seconds', () => {
    const { watch, told, advance } = setup();
    watch.update(0);
    watch.update(Number.NaN);
    assert.equal(told(), 0);
    advance(60 * 60_000);
    watch.update(99); // an hour for 99 %: 36 s to go
    assert.equal(told(), 0);
    advance(30_000);
    watch.update(99.8); // 3630 s for 99.8 %: 7.3 s to go
    assert.equal(told(), 1);
  });

  it('tells at 100 % whatever the rate', () => {
    const { watch, told, advance } = setup(1);
    advance(60_000);
    watch.update(100);
    assert.equal(told(), 1);
  });

  it('once a second piece of output has come, counts the rate between the pieces, not the time before the first progress', () => {
    const { watch, told, advance } = setup();
    advance(20_000); // starting up and scanning the source: no progress yet
    watch.update(10);
    watch.update(20); // the same piece, read at once
    advance(1);
    watch.update(30); // still that piece
    assert.equal(told(), 0, '20 s for 30 %: 47 s to go by the time since the start');
    advance(2_400);
    watch.update(40); // the next piece: 10 % in 2.4 s, 14.4 s to go
    assert.equal(told(), 0, 'the rate is from the last percentage of the first piece (from its first it would be 4.8 s to go)');
    advance(2_400);
    watch.update(50); // 20 % in 4.8 s: 12 s to go
    assert.equal(told(), 0);
    advance(2_400);
    watch.update(60); // 30 % in 7.2 s: 9.6 s to go
    assert.equal(told(), 1);
  });
});
