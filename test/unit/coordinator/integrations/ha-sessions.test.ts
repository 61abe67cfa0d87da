/** Issue 40: the box-set session in Home Assistant (a sensor "2/4" and an MQTT event entity) and by webhook. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HaDiscovery, SESSION_EVENT_TYPES, sessionConfigs, sessionEventPayload, sessionHaState } from '../../../../coordinator/integrations/ha-discovery.js';
import { sessionRequest } from '../../../../coordinator/integrations/webhook.js';
import type { SessionNotice, SessionView } from '../../../../coordinator/sessions/session-book.js';

const view: SessionView = {
  id: 's1', kind: 'series', series: 'Heide', season: 1, disc_total: 4, drive: 'nas-sr0', release: null, origin: 'dialog', state: 'open',
  created_at: '2026-11-28T00:00:00.000Z', ended_at: null, discs: [], done: [1, 2], ripping: [], failed: [], missing: [3, 4], next_disc: 3,
};
const notice: SessionNotice = { event: 'session_next_disc', text: 'insert disc 3 of 4 of "Heide", season 1', session: view };

describe('the session in Home Assistant', () => {
  it('discovers a sensor and an MQTT event entity (platform event with event_types) on the ripwerk/ha topics', () => {
    const [sensor, event] = sessionConfigs('homeassistant');
    assert.equal(sensor.topic, 'homeassistant/sensor/ripwerk_coordinator/session/config');
    assert.equal(sensor.payload.state_topic, 'ripwerk/ha/sessions/state');
    assert.equal(event.topic, 'homeassistant/event/ripwerk_coordinator/next_disc/config');
    assert.deepEqual(event.payload.event_types, ['next_disc', 'session_ended']);
    assert.equal(event.payload.default_entity_id, 'event.ripwerk_next_disc');
  });

  it('shows "2/4" of the open session with the next and missing discs as attributes, "keine" without one', () => {
    assert.deepEqual(sessionHaState([view]), { state: '2/4', attributes: { session_id: 's1', kind: 'series', series: 'Heide', season: 1, next_disc: 3, missing: [3, 4], failed: [], drive: 'nas-sr0' } });
    assert.equal(sessionHaState([{ ...view, state: 'ended' }]).state, 'keine');
    assert.equal(sessionHaState([{ ...view, disc_total: null }]).state, '2/?');
  });

  it('fires next_disc with an event_type among the declared ones', () => {
    const p = sessionEventPayload(notice);
    assert.equal(p.event_type, 'next_disc');
    assert.ok((SESSION_EVENT_TYPES as readonly unknown[]).includes(p.event_type));
    assert.equal(p.next_disc, 3);
    assert.equal(sessionEventPayload({ ...notice, event: 'session_ended' }).event_type, 'session_ended');
  });
});

describe('the publishing class with sessions', () => {
  it('publishes the session entities and the retained state, and fires the event unretained', () => {
    const sent: { topic: string; payload: string; retain: boolean }[] = [];
    const dispatcher = { subscribeRaw: () => undefined, publishRaw: (topic: string, payload: string, retain: boolean) => void sent.push({ topic, payload, retain }) };
    const fleet = { list: () => [], devices: () => [] };
    const settings = { all: () => ({ homeAssistantDiscovery: true, homeAssistantPrefix: 'homeassistant' }) };
    const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const ha = new HaDiscovery(dispatcher as never, fleet as never, { all: () => [] } as never, settings as never, () => null, async () => undefined, quiet as never, () => [view]);
    ha.tick();
    assert.deepEqual(sent.map((m) => m.topic).sort(), ['homeassistant/event/ripwerk_coordinator/next_disc/config', 'homeassistant/sensor/ripwerk_coordinator/session/config', 'ripwerk/ha/sessions/state']);
    assert.equal(JSON.parse(sent.find((m) => m.topic === 'ripwerk/ha/sessions/state')?.payload ?? '{}').state, '2/4');
    ha.sessionEvent(notice);
    const event = sent.find((m) => m.topic === 'ripwerk/ha/sessions/event');
    assert.equal(event?.retain, false);
    assert.equal(JSON.parse(event?.payload ?? '{}').event_type, 'next_disc');
  });
});

describe('the session by webhook', () => {
  it('sends the line to Discord and ntfy, and the session as JSON to a generic target', () => {
    assert.equal(sessionRequest('discord', 'https://discord.com/api/webhooks/1/t', notice).body, JSON.stringify({ content: 'Ripwerk: insert disc 3 of 4 of "Heide", season 1' }));
    const ntfy = sessionRequest('ntfy', 'https://ntfy.sh/rip', notice);
    assert.equal(ntfy.url, 'https://ntfy.sh/rip?title=Heide');
    const generic = JSON.parse(sessionRequest('generic', 'https://x.example/h', notice).body) as { event: string; session: SessionView };
    assert.equal(generic.event, 'session_next_disc');
    assert.equal(generic.session.next_disc, 3);
  });
});
