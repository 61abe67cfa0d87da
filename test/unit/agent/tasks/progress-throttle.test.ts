import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProgressThrottle } from '../../../../agent/tasks/progress-throttle.js';

function setup(minMs = 1000) {
  let now = 1_000_000;
  const sent: number[] = [];
  const throttle = new ProgressThrottle((pct) => sent.push(pct), minMs, () => now);
  return {
    throttle,
    sent,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('ProgressThrottle', () => {
  it('passes the first value on at once', () => {
    const { throttle, sent } = setup();
    throttle.update(0.3);
    assert.deepEqual(sent, [0.3]);
  });

  it('holds small steps inside the interval and passes them once the interval is over', () => {
    const { throttle, sent, advance } = setup();
    throttle.update(10);
    advance(200);
    throttle.update(10.4);
    advance(200);
    throttle.update(10.8);
    assert.deepEqual(sent, [10]);
    advance(600); // 1000 ms since the last send
    throttle.update(10.9);
    assert.deepEqual(sent, [10, 10.9]);
  });

  it('holds big steps inside the interval too: a fast tool sends one value a second', () => {
    const { throttle, sent, advance } = setup();
    // A short encode printing a whole point every 10 ms: 100 updates in one second.
    for (let pct = 0; pct < 100; pct++) {
      throttle.update(pct);
      advance(10);
    }
    assert.deepEqual(sent, [0]);
    throttle.update(100);
    assert.deepEqual(sent, [0, 100], 'the first update after the interval goes out');
  });

  it('honours its own interval', () => {
    const { throttle, sent, advance } = setup(5000);
    throttle.update(0);
    advance(4999);
    throttle.update(50);
    assert.deepEqual(sent, [0]);
    advance(1);
    throttle.update(60);
    assert.deepEqual(sent, [0, 60]);
    throttle.update(70);
    assert.deepEqual(sent, [0, 60]);
  });

  it('does not send the same value again after the interval', () => {
    const { throttle, sent, advance } = setup();
    throttle.update(40);
    advance(100);
    throttle.update(41);
    advance(1000);
    throttle.update(40);
    throttle.flush();
    assert.deepEqual(sent, [40], 'the held 41 was overtaken by 40, the value already sent');
    throttle.update(42);
    assert.deepEqual(sent, [40, 42], 'a new value after the interval goes out at once');
  });

  it('flush sends the held value once, and nothing when nothing is held', () => {
    const { throttle, sent, advance } = setup();
    throttle.flush();
    assert.deepEqual(sent, [], 'nothing before the first update');
    throttle.update(50);
    throttle.flush();
    assert.deepEqual(sent, [50], 'nothing held after a sent value');
    advance(10);
    throttle.update(50.5);
    throttle.flush();
    throttle.flush();
    assert.deepEqual(sent, [50, 50.5]);
  });

  it('does not resend a held value equal to the last one sent', () => {
    const { throttle, sent, advance } = setup();
    throttle.update(25);
    advance(10);
    throttle.update(25);
    throttle.flush();
    assert.deepEqual(sent, [25]);
  });

  it('clamps to 0..100 and rounds to two decimals', () => {
    const { throttle, sent, advance } = setup();
    throttle.update(-5);
    advance(1000);
    throttle.update(33.33333);
    advance(1000);
    throttle.update(250);
    assert.deepEqual(sent, [0, 33.33, 100]);
  });

  it('sends a lower value only after the interval (a step counts upwards)', () => {
    const { throttle, sent, advance } = setup();
    throttle.update(60);
    advance(100);
    throttle.update(20);
    assert.deepEqual(sent, [60]);
    advance(900);
    throttle.update(21);
    assert.deepEqual(sent, [60, 21]);
  });
});

describe('ProgressThrottle with the encoder speed', () => {
  it('sends the latest fps with each percent it passes on, and none while the tool has told none', () => {
    let now = 0;
    const sent: [number, number | undefined][] = [];
    const throttle = new ProgressThrottle((pct, fps) => sent.push([pct, fps]), 1000, () => now);
    throttle.update(1);
    now += 200;
    throttle.update(2, 30.04);
    now += 1000;
    throttle.update(3);
    throttle.flush();
    assert.deepEqual(sent, [
      [1, undefined],
      [3, 30],
    ]);
  });
});
