import type { Logger } from '../../shared/log.js';
import { haId, haTopics, topics, type DriveState } from '../../shared/protocol.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { AgentEntry, DeviceEntry, Fleet } from '../workers/fleet.js';
import { toView, type JobRow, type JobsStore } from '../jobs/jobs-store.js';
import type { SettingsStore } from '../system/settings-store.js';
import { isActive } from '../jobs/job-status.js';
import type { SessionNotice, SessionView } from '../sessions/session-book.js';

/** Home Assistant's MQTT discovery: config topics, the per-drive state Ripwerk publishes, the eject button. */

const VERSION = '0.1.0';
/** How often the drive states are recomputed and the changed ones published (and the setting read). */
const TICK_MS = 3000;

/** node_id and object_id may hold [a-zA-Z0-9_-] only. */
export const objectId = haId;

/**
 * The entity id Home Assistant should give an entity, `<component>.<object id>`, as the discovery key
 * `default_entity_id` wants it: Home Assistant 2025.10 deprecated `object_id` for it and ignores
 * `object_id` from 2026.4. Written already valid by Home Assistant's entity id rule (lower case
 * a-z, 0-9 and "_", no "_" at either end and never two in a row), so nothing depends on how Home
 * Assistant would mend an invalid one.
 */
export function defaultEntityId(component: 'sensor' | 'binary_sensor' | 'button' | 'event', id: string): string {
  const slug = id.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/_+/g, '_').replace(/^_|_$/g, '');
  return `${component}.${slug || 'ripwerk'}`;
}

export interface DiscoveryMessage {
  topic: string;
  payload: Record<string, unknown>;
}

/** Entities follow the agent's retained status (its last will says offline). */
function availability(node: string): Record<string, unknown>[] {
  return [{ topic: topics.agentStatus(node), value_template: '{{ value_json.state }}', payload_available: 'online', payload_not_available: 'offline' }];
}

function agentDevice(agent: Pick<AgentEntry, 'node' | 'name'>): Record<string, unknown> {
  return { identifiers: [`ripwerk_${objectId(agent.node)}`], name: `Ripwerk ${agent.name}`, manufacturer: 'Ripwerk', model: 'Agent', sw_version: VERSION };
}

/** The agent as a device with a connectivity binary sensor read from its status topic. */
export function agentConfigs(prefix: string, agent: Pick<AgentEntry, 'node' | 'name'>): DiscoveryMessage[] {
  const id = objectId(agent.node);
  return [
    {
      topic: `${prefix}/binary_sensor/ripwerk_${id}/online/config`,
      payload: {
        name: 'Online',
        unique_id: `ripwerk_${id}_online`,
        default_entity_id: defaultEntityId('binary_sensor', `ripwerk_${id}_online`),
        state_topic: topics.agentStatus(agent.node),
        value_template: '{{ value_json.state }}',
        payload_on: 'online',
        payload_off: 'offline',
        device_class: 'connectivity',
        device: agentDevice(agent),
      },
    },
  ];
}

/** A drive as a device (via its agent) with disc title, job status, progress and ETA sensors and an eject button. */
export function driveConfigs(prefix: string, agent: Pick<AgentEntry, 'node' | 'name'>, drive: Pick<DriveState, 'drive' | 'vendor' | 'model'> & { name: string }): DiscoveryMessage[] {
  const node = objectId(agent.node);
  const base = `${node}_${objectId(drive.drive)}`;
  const state = haTopics.driveState(agent.node, drive.drive);
  const device = {
    identifiers: [`ripwerk_${base}`],
    name: `Ripwerk ${drive.name}`,
    manufacturer: drive.vendor ?? 'Ripwerk',
    model: drive.model ?? 'Optical drive',
    sw_version: VERSION,
    via_device: `ripwerk_${node}`,
  };
  const common = { availability: availability(agent.node), device };
  const sensor = (key: string, extra: Record<string, unknown>): DiscoveryMessage => ({
    topic: `${prefix}/sensor/ripwerk_${node}/${objectId(drive.drive)}_${key}/config`,
    payload: { unique_id: `ripwerk_${base}_${key}`, default_entity_id: defaultEntityId('sensor', `ripwerk_${base}_${key}`), state_topic: state, ...extra, ...common },
  });
  return [
    sensor('disc_title', { name: 'Disc', value_template: "{{ value_json.disc_title | default('keine Disc', true) }}", json_attributes_topic: state, json_attributes_template: "{{ {'year': value_json.disc_year, 'type': value_json.disc_type, 'job': value_json.job_id} | tojson }}", icon: 'mdi:disc' }),
    sensor('job_status', { name: 'Auftrag', value_template: "{{ value_json.job_status | default('idle', true) }}", icon: 'mdi:progress-wrench' }),
    sensor('job_progress', { name: 'Fortschritt', value_template: '{{ value_json.progress }}', unit_of_measurement: '%', state_class: 'measurement', icon: 'mdi:percent' }),
    sensor('job_eta', { name: 'Fertig um', value_template: "{{ value_json.eta | default(None) }}", device_class: 'timestamp' }),
    {
      topic: `${prefix}/button/ripwerk_${node}/${objectId(drive.drive)}_eject/config`,
      payload: { name: 'Auswerfen', unique_id: `ripwerk_${base}_eject`, default_entity_id: defaultEntityId('button', `ripwerk_${base}_eject`), command_topic: haTopics.eject(agent.node, drive.drive), payload_press: 'EJECT', qos: 1, retain: false, icon: 'mdi:eject', ...common },
    },
  ];
}

/** The coordinator as a device with the box-set session sensor ("2/4") and the session event entity (next_disc, session_ended). */
export function sessionConfigs(prefix: string): DiscoveryMessage[] {
  const device = { identifiers: ['ripwerk_coordinator'], name: 'Ripwerk', manufacturer: 'Ripwerk', model: 'Coordinator', sw_version: VERSION };
  return [
    {
      topic: `${prefix}/sensor/ripwerk_coordinator/session/config`,
      payload: {
        name: 'Box-Set',
        unique_id: 'ripwerk_session',
        default_entity_id: defaultEntityId('sensor', 'ripwerk_session'),
        state_topic: haTopics.sessionState,
        value_template: '{{ value_json.state }}',
        json_attributes_topic: haTopics.sessionState,
        json_attributes_template: '{{ value_json.attributes | tojson }}',
        icon: 'mdi:album',
        device,
      },
    },
    {
      topic: `${prefix}/event/ripwerk_coordinator/next_disc/config`,
      payload: {
        name: 'Nächste Disc',
        unique_id: 'ripwerk_next_disc',
        default_entity_id: defaultEntityId('event', 'ripwerk_next_disc'),
        state_topic: haTopics.sessionEvent,
        event_types: [...SESSION_EVENT_TYPES],
        icon: 'mdi:disc-player',
        device,
      },
    },
  ];
}

/** The event types of the session event entity: a disc is asked for, a session ended. */
export const SESSION_EVENT_TYPES = ['next_disc', 'session_ended'] as const;

/** The session sensor's state: "done/total" of the newest open session ("2/?" when its size is unknown), "keine" without one. */
export function sessionHaState(sessions: readonly SessionView[]): { state: string; attributes: Record<string, unknown> } {
  const s = sessions.find((x) => x.state === 'open');
  if (!s) return { state: 'keine', attributes: {} };
  return {
    state: `${s.done.length}/${s.disc_total ?? '?'}`,
    attributes: { session_id: s.id, kind: s.kind, series: s.series, season: s.season, next_disc: s.next_disc, missing: s.missing, failed: s.failed, drive: s.drive },
  };
}

/** An event of the session event entity: event_type plus what automations read (the line, the disc asked for, the missing ones). */
export function sessionEventPayload(n: SessionNotice): Record<string, unknown> {
  return { event_type: n.event === 'session_next_disc' ? 'next_disc' : 'session_ended', text: n.text, session_id: n.session.id, series: n.session.series, season: n.session.season, next_disc: n.session.next_disc, disc_total: n.session.disc_total, missing: n.session.missing };
}

export interface DriveHaState {
  disc_title: string | null;
  disc_year: number | null;
  disc_type: string | null;
  job_id: string | null;
  job_status: string | null;
  progress: number;
  /** ISO-8601 with time zone, as device_class timestamp wants, or null. */
  eta: string | null;
}

/** The state a drive's sensors read: its disc and its newest job that is still active (else the last one). */
export function driveHaState(drive: Pick<DeviceEntry, 'name' | 'state'>, title: string | null, jobs: JobRow[], now: number): DriveHaState {
  const mine = jobs.filter((j) => j.device === drive.name);
  const job = mine.find((j) => isActive(j.status)) ?? mine[0] ?? null;
  const view = job ? toView(job, now) : null;
  const disc = drive.state.disc;
  return {
    disc_title: disc ? (title ?? disc.title).slice(0, 200) : null,
    disc_year: disc?.year ?? null,
    disc_type: disc?.type ?? null,
    job_id: view?.id ?? null,
    job_status: view?.status ?? null,
    progress: view ? Math.round(view.progress * 10) / 10 : 0,
    eta: view?.eta_sekunden !== null && view?.eta_sekunden !== undefined ? new Date(now + view.eta_sekunden * 1000).toISOString() : null,
  };
}

/**
 * Publishes the discovery configs while the setting homeAssistantDiscovery is on, and removes every
 * config it published (empty retained payloads) when it is turned off. Republishes all on Home
 * Assistant's birth message. Turns a press of the eject button into the eject of GET /devices.
 */
export class HaDiscovery {
  private timer: NodeJS.Timeout | null = null;
  private enabled = false;
  private prefix = 'homeassistant';
  private readonly published = new Map<string, string>();
  private readonly states = new Map<string, string>();

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly fleet: Fleet,
    private readonly jobs: JobsStore,
    private readonly settings: SettingsStore,
    private readonly title: (fingerprint: string) => string | null,
    private readonly eject: (device: DeviceEntry) => Promise<void>,
    private readonly log: Logger,
    /** The box-set sessions (GET /sessions), for the session sensor and event entity; absent: no session entities. */
    private readonly sessions: (() => SessionView[]) | null = null,
  ) {}

  /** A session asks for its next disc or ended: the event entity fires (not retained: an event is no state). */
  sessionEvent(n: SessionNotice): void {
    if (!this.enabled || !this.sessions) return;
    this.dispatcher.publishRaw(haTopics.sessionEvent, JSON.stringify(sessionEventPayload(n)), false);
    this.safeTick();
  }

  start(): void {
    this.dispatcher.subscribeRaw(haTopics.ejectAll, (topic, payload) => void this.onEject(topic, payload.toString('utf8')));
    this.safeTick();
    this.timer = setInterval(() => this.safeTick(), TICK_MS);
  }

  /** A tick that fails is logged: the timer must never take the process down. */
  private safeTick(): void {
    try {
      this.tick();
    } catch (err) {
      this.log.error(`Home Assistant update failed: ${(err as Error).message}`);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads the setting, publishes or removes the configs, and publishes changed drive states. */
  tick(): void {
    const s = this.settings.all();
    const prefix = s.homeAssistantPrefix || 'homeassistant';
    if (s.homeAssistantDiscovery && (!this.enabled || prefix !== this.prefix)) {
      if (this.enabled) this.removeAll();
      this.enabled = true;
      this.prefix = prefix;
      this.dispatcher.subscribeRaw(`${prefix}/status`, (_t, payload) => {
        if (this.enabled && payload.toString('utf8').trim() === 'online') this.republish();
      });
      this.log.info(`Home Assistant discovery on (prefix ${prefix})`);
    } else if (!s.homeAssistantDiscovery && this.enabled) {
      this.enabled = false;
      this.removeAll();
      this.log.info('Home Assistant discovery off: its entities were removed');
    }
    if (!this.enabled) return;
    this.sync();
  }

  /** Publishes the config of every known agent and drive (changed ones only) and the drive states. */
  private sync(): void {
    const agents = new Map(this.fleet.list().map((a) => [a.node, a]));
    const wanted = new Map<string, string>();
    for (const a of agents.values()) for (const m of agentConfigs(this.prefix, a)) wanted.set(m.topic, JSON.stringify(m.payload));
    if (this.sessions) {
      for (const m of sessionConfigs(this.prefix)) wanted.set(m.topic, JSON.stringify(m.payload));
      const sessionState = JSON.stringify(sessionHaState(this.sessions()));
      if (this.states.get(haTopics.sessionState) !== sessionState) {
        this.states.set(haTopics.sessionState, sessionState);
        this.dispatcher.publishRaw(haTopics.sessionState, sessionState, true);
      }
    }
    const jobs = this.jobs.all();
    const now = Date.now();
    const stateTopics = new Set<string>(this.sessions ? [haTopics.sessionState] : []);
    for (const d of this.fleet.devices()) {
      const agent = agents.get(d.state.node);
      if (!agent) continue;
      for (const m of driveConfigs(this.prefix, agent, { ...d.state, name: d.name })) wanted.set(m.topic, JSON.stringify(m.payload));
      const state = JSON.stringify(driveHaState(d, d.state.disc ? this.title(d.state.disc.fingerprint) : null, jobs, now));
      const topic = haTopics.driveState(d.state.node, d.state.drive);
      stateTopics.add(topic);
      if (this.states.get(topic) !== state) {
        this.states.set(topic, state);
        this.dispatcher.publishRaw(topic, state, true);
      }
    }
    for (const [topic, payload] of wanted) {
      if (this.published.get(topic) === payload) continue;
      this.published.set(topic, payload);
      this.dispatcher.publishRaw(topic, payload, true);
    }
    // A worker removed with DELETE /workers: its entities go too, and the retained states of its drives.
    for (const topic of [...this.published.keys()]) {
      if (!wanted.has(topic)) {
        this.published.delete(topic);
        this.dispatcher.publishRaw(topic, '', true);
      }
    }
    for (const topic of [...this.states.keys()]) {
      if (!stateTopics.has(topic)) {
        this.states.delete(topic);
        this.dispatcher.publishRaw(topic, '', true);
      }
    }
  }

  private republish(): void {
    this.published.clear();
    this.states.clear();
    this.sync();
    this.log.info('Home Assistant came online: discovery configs published again');
  }

  private removeAll(): void {
    for (const topic of this.published.keys()) this.dispatcher.publishRaw(topic, '', true);
    for (const topic of this.states.keys()) this.dispatcher.publishRaw(topic, '', true);
    this.published.clear();
    this.states.clear();
  }

  private async onEject(topic: string, payload: string): Promise<void> {
    if (!this.enabled || payload.trim() !== 'EJECT') return;
    const device = this.fleet.devices().find((d) => haTopics.eject(d.state.node, d.state.drive) === topic);
    if (!device) return this.log.warn(`Home Assistant eject for an unknown drive (${topic})`);
    if (!device.state.disc) return this.log.info(`Home Assistant eject of ${device.name}: there is no disc in it`);
    try {
      await this.eject(device);
      this.log.info(`Home Assistant ejected ${device.name}`);
    } catch (err) {
      this.log.warn(`Home Assistant eject of ${device.name} failed: ${(err as Error).message}`);
    }
  }
}
