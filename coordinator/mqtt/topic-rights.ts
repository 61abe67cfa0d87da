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
 *
 * The key material (ripwerk/keys/+: key store, KEYDB.cfg, the ripper's application key) goes to the
 * clients that rip with it, the workers, and to nobody else: not to Home Assistant, whatever its
 * prefix says (haPrefixProblem), and not to any other client.
 */
export type MqttIdentity = { kind: 'coordinator' } | { kind: 'agent'; node: string; legacy: boolean } | { kind: 'home-assistant' };

export interface TopicRights {
  publish: string[];
  subscribe: string[];
}

/**
 * Why a Home Assistant discovery prefix cannot be used, or null. It must be topic levels of letters,
 * digits, _ and - (no wildcard, no $, no empty level) and must not be Ripwerk's own tree: Home
 * Assistant's credential may subscribe to <prefix>/# and publish <prefix>/status, so a prefix
 * `ripwerk` or `ripwerk/agent/<node>` would hand it the keys, every command or a worker's status topic.
 */
export function haPrefixProblem(prefix: string): string | null {
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(prefix)) return 'homeAssistantPrefix must be a topic prefix of letters, digits, _ and - (default homeassistant)';
  if (prefix.split('/')[0] === TOPIC_ROOT) return `homeAssistantPrefix must not be ${TOPIC_ROOT} or lie under it: that is Ripwerk's own topic tree (commands, keys, worker status)`;
  return null;
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
    case 'home-assistant': {
      // A stored prefix from before the check that overlaps Ripwerk's tree gives no rights at all.
      const prefixed = haPrefixProblem(haPrefix) === null ? { publish: [`${haPrefix}/status`], subscribe: [`${haPrefix}/#`] } : { publish: [], subscribe: [] };
      return { publish: [haTopics.ejectAll, ...prefixed.publish], subscribe: [`${TOPIC_ROOT}/ha/#`, topics.agentStatusAll, ...prefixed.subscribe] };
    }
  }
}

const hasWildcard = (filter: string): boolean => filter.split('/').some((level) => level === '+' || level === '#');

export function mayPublish(rights: TopicRights, topic: string): boolean {
  if (topic.startsWith('$')) return false; // $SYS/... belongs to the broker (MQTT-4.7.2)
  if (topic.includes('+') || topic.includes('#')) return false; // no wildcards in a topic name (MQTT-3.3.2-2)
  return rights.publish.some((filter) => topicMatches(filter, topic));
}

/**
 * Whether every topic `filter` matches is matched by `right` too (MQTT-4.7.1): level by level, a `#`
 * of the right covers the rest, a `+` of the right covers one level (a name or a `+`, never a `#`),
 * a name covers only itself. A right `a/#` also covers `a` (a `#` matches its parent level).
 */
function filterWithin(filter: string, right: string): boolean {
  const f = filter.split('/');
  const r = right.split('/');
  for (let i = 0; i < f.length; i++) {
    const level = r[i];
    if (level === '#') return true;
    if (level === undefined) return false;
    if (f[i] === '#') return false;
    if (level === '+') continue;
    if (f[i] === '+' || f[i] !== level) return false;
  }
  return f.length === r.length || (r.length === f.length + 1 && r[f.length] === '#');
}

/**
 * A subscription may name any filter whose topics all lie within one right: the exact filters real
 * clients use (Home Assistant's `homeassistant/+/+/config` and `homeassistant/+/+/+/config`, an
 * agent's `ripwerk/keys/+`) pass, `#` or `ripwerk/#` from anyone but the coordinator does not.
 */
export function maySubscribe(rights: TopicRights, filter: string): boolean {
  if (filter.startsWith('$')) return false; // $SYS/... belongs to the broker
  if (!validFilter(filter)) return false;
  if (rights.subscribe.includes('#')) return true;
  return rights.subscribe.some((allowed) => (hasWildcard(filter) ? filterWithin(filter, allowed) : topicMatches(allowed, filter)));
}

/** A topic filter as MQTT-4.7.1 allows it: `#` only as the whole last level, `+` only as a whole level. */
function validFilter(filter: string): boolean {
  const levels = filter.split('/');
  return filter.length > 0 && levels.every((level, i) => (level.includes('#') ? level === '#' && i === levels.length - 1 : !level.includes('+') || level === '+'));
}
