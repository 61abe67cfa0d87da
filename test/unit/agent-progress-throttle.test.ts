import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProgressThrottle } from '../../agent/progress-throttle.js';

function setup(minMs = 1000, minStep = 1) {
  let now = 1_000_000;
  const sent: number[] = [];
  const throttle = new ProgressThrottle((pct) => sent.push(pct), minMs, minStep, () => now);
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

  it('passes a step of minStep or more at once, even inside the interval', () => {
    const { throttle, sent, advance } = setup();
    throttle.update(10);
    advance(1);
    throttle.update(11);
    advance(1);
    throttle.update(11.99);
    advance(1);
    throttle.update(13.5);
    assert.deepEqual(sent, [10, 11, 13.5]);
  });

  it('honours its own interval and step', () => {
    const { throttle, sent, advance } = setup(5000, 10);
    throttle.update(0);
    advance(4999);
    throttle.update(9.9);
    assert.deepEqual(sent, [0]);
    advance(1);
    throttle.update(9.95);
    assert.deepEqual(sent, [0, 9.95]);
    throttle.update(19.95);
    assert.deepEqual(sent, [0, 9.95, 19.95]);
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
