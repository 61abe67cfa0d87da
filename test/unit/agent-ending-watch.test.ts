import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndingWatch } from '../../agent/ending-watch.js';

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
});
