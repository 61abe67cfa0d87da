import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAgentTopic, TASKS, topics } from '../../../shared/protocol.js';

describe('parseAgentTopic', () => {
  it('reads back the agent topics the tree builds', () => {
    assert.deepEqual(parseAgentTopic(topics.agentStatus('kitchen@ab12')), { kind: 'status', node: 'kitchen@ab12' });
    assert.deepEqual(parseAgentTopic(topics.driveState('kitchen@ab12', 'sr0')), { kind: 'drive', node: 'kitchen@ab12', drive: 'sr0' });
    assert.deepEqual(parseAgentTopic(topics.event('kitchen@ab12')), { kind: 'event', node: 'kitchen@ab12' });
  });

  it('gives null for every other topic', () => {
    for (const topic of [
      topics.command('kitchen@ab12'),
      topics.ack('kitchen@ab12'),
      topics.coordinatorStatus,
      topics.keystore,
      'ripwerk/agent/kitchen@ab12/status/extra',
      'ripwerk/agent//status',
      'ripwerk/event/kitchen@ab12/more',
      'ripwerk/drive/kitchen@ab12/sr0',
      'other/agent/kitchen@ab12/status',
      'ripwerk',
      '',
    ]) {
      assert.equal(parseAgentTopic(topic), null, topic);
    }
  });
});

describe('task names', () => {
  it('names the tasks as the spec does: worker.tasks.rip_disc, transcode_files, scan_tracks, ping_worker', () => {
    assert.equal(TASKS.ripDisc, 'worker.tasks.rip_disc');
    assert.equal(TASKS.transcodeFiles, 'worker.tasks.transcode_files');
    assert.equal(TASKS.scanTracks, 'worker.tasks.scan_tracks');
    assert.equal(TASKS.pingWorker, 'worker.tasks.ping_worker');
  });
});
