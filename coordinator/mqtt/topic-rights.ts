import { haTopics, TOPIC_ROOT, topicMatches, topics } from '../../shared/protocol.js';

/**
 * Which topics an MQTT client may publish to and subscribe to, by who it is. The embedded broker
 * enforces these; docs/mqtt.md gives the same rules as a Mosquitto ACL file for an external broker.
 *
 *   coordinator (broker secret)  everything (but $SYS)
 *   worker <node>                publish  ripwerk/agent/<node>/status, ripwerk/drive/<node>/+/state, ripwerk/event/<node>
 *                                subscribe ripwerk/cmd/<node>, ripwerk/ack/<node>, ripwerk/keys/+, ripwerk/coordinator/status
 *   Home Assistant               publish  ripwerk/ha/+/+/eject, <prefix>/status (its birth message)
 *                                subscribe ripwerk/ha/#, ripwerk/agent/+/status, <prefix>/#
 */
export type MqttIdentity = { kind: 'coordinator' } | { kind: 'agent'; node: string; legacy: boolean } | { kind: 'home-assistant' };

export interface TopicRights {
  publish: string[];
  subscribe: string[];
}

export function topicRights(who: MqttIdentity, haPrefix: string): TopicRights {
  switch (who.kind) {
    case 'coordinator':
      return { publish: ['#'], subscribe: ['#'] };
    case 'agent':
      return {
        publish: [topics.agentStatus(who.node), `${TOPIC_ROOT}/drive/${who.node}/+/state`, topics.event(who.node)],
        subscribe: [topics.command(who.node), topics.ack(who.node), `${TOPIC_ROOT}/keys/+`, topics.coordinatorStatus],
      };
    case 'home-assistant':
      return { publish: [haTopics.ejectAll, `${haPrefix}/status`], subscribe: [`${TOPIC_ROOT}/ha/#`, topics.agentStatusAll, `${haPrefix}/#`] };
  }
}

const hasWildcard = (filter: string): boolean => filter.split('/').some((level) => level === '+' || level === '#');

export function mayPublish(rights: TopicRights, topic: string): boolean {
  if (topic.startsWith('$')) return false; // $SYS/... belongs to the broker (MQTT-4.7.2)
  if (topic.includes('+') || topic.includes('#')) return false; // no wildcards in a topic name (MQTT-3.3.2-2)
  return rights.publish.some((filter) => topicMatches(filter, topic));
}

/** A subscription without wildcards may name any topic a right covers; one with wildcards must be a right as it is. */
export function maySubscribe(rights: TopicRights, filter: string): boolean {
  if (rights.subscribe.includes('#')) return !filter.startsWith('$');
  if (hasWildcard(filter)) return rights.subscribe.includes(filter);
  return rights.subscribe.some((allowed) => topicMatches(allowed, filter));
}
