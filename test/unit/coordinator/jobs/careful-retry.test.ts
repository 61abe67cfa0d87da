import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { carefulRetry } from '../../../../coordinator/jobs/careful-retry.js';
import { HttpError } from '../../../../coordinator/http/errors.js';

function refusal(body: unknown, discType?: string): HttpError {
  try {
    carefulRetry(body, discType);
  } catch (err) {
    assert.ok(err instanceof HttpError);
    return err;
  }
  assert.fail(`${JSON.stringify(body)} was taken`);
}

describe('retry-rip body: careful', () => {
  it('is off without a body, with an empty one, with careful false or null', () => {
    for (const body of [undefined, null, {}, { careful: false }, { careful: null }]) assert.equal(carefulRetry(body, 'dvd'), false, JSON.stringify(body));
  });

  it('is on with careful true for a DVD or Blu-ray rip, also of a job made before disc types were kept', () => {
    for (const type of ['dvd', 'bluray', 'uhd', undefined]) assert.equal(carefulRetry({ careful: true }, type), true, String(type));
  });

  it('refuses a careful that is not true or false with 400 and a plain reason', () => {
    for (const careful of ['true', 1, 'yes', [], {}]) {
      const err = refusal({ careful });
      assert.equal(err.status, 400);
      assert.match(err.message, /careful must be true or false/);
    }
    assert.equal(refusal([true]).status, 400, 'a body that is no object');
  });

  it('refuses a careful re-read of an audio CD: cdparanoia has no such mode to switch on', () => {
    const err = refusal({ careful: true }, 'cd');
    assert.equal(err.status, 400);
    assert.match(err.message, /audio CD/);
    assert.equal(carefulRetry({ careful: false }, 'cd'), false);
  });
});
