import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { AnswersInFlight } from '../../../../coordinator/http/answers-in-flight.js';

/** What AnswersInFlight listens to on a response: its 'finish' and 'close'. */
const response = (): EventEmitter & ServerResponse => new EventEmitter() as EventEmitter & ServerResponse;

/** Whether the promise has settled after the event loop went round once. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('AnswersInFlight (background work waits for the list answers being sent)', () => {
  it('lets a waiter go at once when no answer is being sent', async () => {
    assert.equal(await settled(new AnswersInFlight().idle(60_000)), true);
  });

  it('holds a waiter until the last answer has gone out', async () => {
    const answers = new AnswersInFlight();
    const [a, b] = [response(), response()];
    answers.track(a);
    answers.track(b);
    const waiting = answers.idle(60_000);
    assert.equal(await settled(waiting), false);
    a.emit('finish');
    assert.equal(await settled(waiting), false, 'one answer is still going out');
    assert.equal(answers.count, 1);
    b.emit('close');
    assert.equal(await settled(waiting), true, 'a connection gone counts as ended');
    assert.equal(answers.count, 0);
  });

  it('counts an answer once when it both finishes and closes', async () => {
    const answers = new AnswersInFlight();
    const [a, b] = [response(), response()];
    answers.track(a);
    answers.track(b);
    a.emit('finish');
    a.emit('close');
    assert.equal(answers.count, 1);
    assert.equal(await settled(answers.idle(60_000)), false, 'b is still being sent');
  });

  it('lets a waiter go after its longest wait even while an answer is still being sent', async () => {
    const answers = new AnswersInFlight();
    answers.track(response());
    const waiting = answers.idle(20);
    assert.equal(await settled(waiting), false);
    await waiting;
    assert.equal(answers.count, 1);
  });
});
