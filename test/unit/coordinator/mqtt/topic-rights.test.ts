import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { haPrefixProblem, mayPublish, maySubscribe, topicRights, type MqttIdentity } from '../../../../coordinator/mqtt/topic-rights.js';
import { topics } from '../../../../shared/protocol.js';

const ha: MqttIdentity = { kind: 'home-assistant' };
const worker: MqttIdentity = { kind: 'agent', node: 'keller', legacy: false };

describe('MQTT topic rights with the filters real clients use', () => {
  it("gives Home Assistant its discovery filters (homeassistant/+/+/config, homeassistant/+/+/+/config) and its state topics, never Ripwerk's keys or commands", () => {
    const rights = topicRights(ha, 'homeassistant');
    for (const filter of ['homeassistant/+/+/config', 'homeassistant/+/+/+/config', 'homeassistant/status', 'homeassistant/#', 'ripwerk/ha/keller/sr0/state', 'ripwerk/ha/#', 'ripwerk/agent/keller/status', 'ripwerk/agent/+/status']) {
      assert.equal(maySubscribe(rights, filter), true, filter);
    }
    for (const filter of ['#', '+/#', 'ripwerk/#', 'ripwerk/+/+', 'ripwerk/keys/+', topics.appKey, topics.keystore, 'ripwerk/cmd/+', topics.command('keller'), 'ripwerk/agent/#', '$SYS/#', '+/+/+/config']) {
      assert.equal(maySubscribe(rights, filter), false, filter);
    }
    assert.equal(mayPublish(rights, 'homeassistant/status'), true);
    assert.equal(mayPublish(rights, topics.command('keller')), false);
  });

  it('gives a worker its own commands and the keys, with the filters the agent uses, and nothing of other workers', () => {
    const rights = topicRights(worker, 'homeassistant');
    for (const filter of [topics.command('keller'), topics.ack('keller'), 'ripwerk/keys/+', topics.appKey, topics.coordinatorStatus]) assert.equal(maySubscribe(rights, filter), true, filter);
    for (const filter of ['#', 'ripwerk/#', 'ripwerk/keys/#', 'ripwerk/cmd/+', topics.command('mallory'), 'homeassistant/#']) assert.equal(maySubscribe(rights, filter), false, filter);
  });

  it('refuses a Home Assistant prefix that overlaps Ripwerk\'s own tree, with a plain reason, and gives such a stored prefix no rights', () => {
    for (const prefix of ['homeassistant', 'ha', 'home/assistant', 'ripwerk-ha', 'Ripwerk']) assert.equal(haPrefixProblem(prefix), null, prefix);
    for (const prefix of ['ripwerk', 'ripwerk/agent/keller', 'ripwerk/keys', '#', '+', 'a/#', '', '$SYS', '/x', 'x/', 'a//b']) assert.notEqual(haPrefixProblem(prefix), null, prefix);
    assert.equal(haPrefixProblem('ripwerk/agent/keller'), 'homeAssistantPrefix must not be ripwerk or lie under it: that is Ripwerk\'s own topic tree (commands, keys, worker status)');
    for (const prefix of ['ripwerk', 'ripwerk/agent/keller', 'ripwerk/keys', '#']) {
      const rights = topicRights(ha, prefix);
      for (const filter of [`${prefix}/#`, topics.appKey, topics.command('keller'), 'ripwerk/#']) assert.equal(maySubscribe(rights, filter), false, `${prefix}: ${filter}`);
      assert.equal(mayPublish(rights, topics.agentStatus('keller')), false, prefix);
      assert.equal(mayPublish(rights, `${prefix}/status`), false, prefix);
    }
  });
});
