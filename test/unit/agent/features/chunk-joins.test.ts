import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkJoins } from '../../../../agent/features/chunk-joins.js';
import { TASKS } from '../../../../shared/protocol.js';

const join = (commandId: string, title: number, files: string[]) => ({ id: `j-${commandId}-${title}`, task: TASKS.joinChunks, job_id: 'job1', args: { command_id: commandId, title, files } });

describe('agent feature: chunk joins (issue 41)', () => {
  it('hands join_chunks to the lead waiting for that transcode and title, once', async () => {
    const joins = new ChunkJoins();
    const signal = new AbortController().signal;
    const first = joins.wait('t1', 0, signal);
    const second = joins.wait('t1', 1, signal);
    assert.equal(joins.deliver(join('t1', 1, ['/raw/c00.mkv', '/raw/c01.mkv'])), true);
    assert.deepEqual(await second, ['/raw/c00.mkv', '/raw/c01.mkv']);
    assert.equal(joins.deliver(join('t1', 1, ['/raw/c00.mkv'])), false, 'a redelivery finds nobody waiting');
    assert.equal(joins.deliver(join('other', 0, ['/raw/c00.mkv'])), false, 'another transcode\'s word is not this one\'s');
    assert.equal(joins.deliver(join('t1', 0, ['/raw/x.mkv'])), true);
    assert.deepEqual(await first, ['/raw/x.mkv']);
  });

  it('ends the wait when the transcode is aborted', async () => {
    const joins = new ChunkJoins();
    const controller = new AbortController();
    const waiting = joins.wait('t1', 0, controller.signal);
    controller.abort(new Error('canceled'));
    await assert.rejects(waiting, /canceled/);
    assert.equal(joins.deliver(join('t1', 0, ['/raw/c00.mkv'])), false);
  });
});
