import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HandbrakeJsonCollector } from '../../../../agent/tools/handbrake-parser.js';

describe('HandbrakeJsonCollector parsing', () => {
  it('parses a multi-line block once, when it closes, not at its opening line', (t) => {
    const parse = t.mock.method(JSON, 'parse');
    const collector = new HandbrakeJsonCollector();
    const lines = ['Progress: {', '    "State": "WORKING",', '    "Working": {"Pass": 1, "PassCount": 1, "Progress": 0.5}', '}'];
    const results = lines.map((l) => collector.push(l));
    assert.deepEqual(results.slice(0, 3), [null, null, null]);
    assert.deepEqual(results[3], { label: 'Progress', value: { State: 'WORKING', Working: { Pass: 1, PassCount: 1, Progress: 0.5 } } });
    assert.equal(parse.mock.callCount(), 1);
  });

  it('still returns a one-line block at once, trailing blanks and all', () => {
    assert.deepEqual(new HandbrakeJsonCollector().push('Version: {"Name": "HandBrake"}  '), { label: 'Version', value: { Name: 'HandBrake' } });
  });

  it('collects a block whose opening line looks closed but is not whole JSON', () => {
    const collector = new HandbrakeJsonCollector();
    assert.equal(collector.push('Progress: {"Working": {}'), null);
    assert.deepEqual(collector.push('}'), { label: 'Progress', value: { Working: {} } });
  });
});
