import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAgentTopic, topics } from '../../../shared/protocol.js';

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
