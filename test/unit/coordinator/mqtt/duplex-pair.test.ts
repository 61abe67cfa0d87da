import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { duplexPair } from '../../../../coordinator/mqtt/duplex-pair.js';

describe('duplexPair (in-memory connection)', () => {
  it('carries bytes both ways in order, on a later tick, the writes of one tick as one chunk', async () => {
    const [a, b] = duplexPair();
    const chunks: string[] = [];
    b.on('data', (c: Buffer) => chunks.push(c.toString()));
    a.write('one ');
    a.write(Buffer.from('two'));
    assert.deepEqual(chunks, [], 'nothing arrives inside the writer\'s call');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(chunks, ['one two']);
    const back = once(a, 'data');
    b.write('answer');
    assert.equal(String((await back)[0]), 'answer');
    a.destroy();
    b.destroy();
  });

  it('ends the peer\'s reading after what was written, and a destroy closes both ends', async () => {
    const [a, b] = duplexPair();
    let text = '';
    b.on('data', (c: Buffer) => (text += c.toString()));
    const ended = once(b, 'end');
    a.end('last words');
    await ended;
    assert.equal(text, 'last words');

    const [c, d] = duplexPair();
    const closed = once(d, 'close');
    c.destroy();
    await closed;
    assert.equal(d.destroyed, true);
  });
});
