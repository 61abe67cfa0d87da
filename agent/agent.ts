import fs from 'node:fs/promises';
import type { AgentConfig } from '../shared/config.js';
import { agentNode } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { mapPath, unmapPath } from '../shared/path-map.js';
import type { AgentStatus, Capabilities, RecoveredTask } from '../shared/protocol.js';
import type { AgentContext, AgentFeature } from './agent-context.js';
import { probeCapabilities } from './tools/capabilities.js';
import { DEFAULT_AUDIO_CD_TOOLS } from './tasks/audio-cd-ripper.js';
import { readDriveCdIdentity } from './cd/drive-cd-identity.js';
import { DriveManager } from './drives/drive-manager.js';
import { listPhysicalDrives } from './drives/physical-drive.js';
import { CommandIntake } from './features/command-intake.js';
import { ChunkRunner } from './features/chunk-runner.js';
import { ChunkJoins } from './features/chunk-joins.js';
import { DriveCommands } from './features/drive-commands.js';
import { JobRunner } from './features/job-runner.js';
import { handbrakeTranscoder, jobWork } from './features/job-work.js';
import { KeyMaterial } from './features/key-material.js';
import { StatusBeacon } from './features/status-beacon.js';
import { AgentLink } from './mqtt/link.js';
import { PathRoots } from './output/path-roots.js';
import { RipperKeys } from './keys/ripper-keys.js';
import { SlotPool } from './tasks/slot-pool.js';
import type { OpenTaskStore } from './store/task-store.js';
import type { InProcessConnect } from '../shared/mqtt-client.js';
import { READ_RETRIES_SETTING, restoreLeftSetting } from './tools/makemkv-settings.js';

export { probeCapabilities } from './tools/capabilities.js';

export interface RunningAgent {
  node: string;
  capabilities: Capabilities;
  stop(): Promise<void>;
}

/** What the agent logs in to the broker with: its own credentials, else (legacy) its node and the broker secret. */
function mqttLogin(config: AgentConfig, node: string, log: Logger): { username: string; password: string } | null {
  if (config.mqttCredentials) return config.mqttCredentials;
  if (!config.brokerSecret) return null;
  log.warn('this worker logs in to the broker with the shared broker secret (legacy): give it its own credentials (POST /api/workers/{name}/credentials, then MQTT_USERNAME and MQTT_PASSWORD)');
  return { username: node, password: config.brokerSecret };
}

/** The status with the tasks left from the last run that wait for the coordinator's word (none: the field is left out). */
function withRecovered(status: AgentStatus, recovered: RecoveredTask[]): AgentStatus {
  return recovered.length ? { ...status, recovered } : status;
}

/** Drives from DRIVES=auto: every optical drive of the system device listing (lsblk, else /sys/block/sr*). */
async function autoDrives(): Promise<AgentConfig['drives']> {
  return (await listPhysicalDrives()).map((d) => ({ kind: 'device' as const, path: d.path }));
}

/**
 * One agent per host: owns its drives, its store (tasks and event outbox: SQLite, or a JSON file in a
 * native worker) and 4 work slots. Commands arrive over MQTT; every outcome is an event kept in the
 * outbox until acknowledged. A native worker (config.native) has no drives and refuses rips.
 *
 * The agent is a short list of features over one shared context (agent-context.ts): the job runner
 * (slots, recovery after a restart), the drives, the MQTT link and the status beacon, started in that
 * order and stopped in reverse; the command intake, the drive commands and the key material answer
 * what the link brings in. `opts.mqttInProcess`: the all-in-one process's connection to its embedded
 * broker, used instead of a socket to config.mqttUrl.
 */
export async function startAgent(config: AgentConfig, log: Logger, openStore: OpenTaskStore, opts: { mqttInProcess?: InProcessConnect | null } = {}): Promise<RunningAgent> {
  const node = agentNode(config);
  await fs.mkdir(config.dataDir, { recursive: true });
  const store = openStore(config.dataDir, config.workerName, node);
  const startedAt = new Date().toISOString();
  const { capabilities, ripper } = await probeCapabilities(config);
  const specs = config.native ? [] : config.drivesAuto ? await autoDrives() : config.drives;
  const keys = new RipperKeys(config.makemkvDataDir);
  if (!config.native) capabilities.schluessel = await keys.count();
  // A careful rip the agent did not end (it died) left MakeMKV's read retries set: they go back first.
  if (ripper?.name === 'makemkv' && (await restoreLeftSetting(config.makemkvDataDir).catch(() => false))) log.warn(`MakeMKV's read retries (${READ_RETRIES_SETTING}) of a careful rip that did not end are put back in ${config.makemkvDataDir}/settings.conf`);
  const audioTools = { ...DEFAULT_AUDIO_CD_TOOLS, abcde: config.abcde, accurateRipUrl: config.accurateRipUrl, readOffsets: config.cdReadOffsets };

  // The link and the drives call into parts made below: the calls only come once the agent has started.
  const link: AgentLink = new AgentLink(
    config.mqttUrl,
    node,
    store,
    { onCommand: (cmd) => intake.onCommand(cmd), status: () => withRecovered(beacon.status(), runner.recoveredTasks()), drives: () => drives.states(), onKeys: (topic, body) => void keyMaterial.install(topic, body) },
    log,
    mqttLogin(config, node, log),
    opts.mqttInProcess ?? null,
  );
  const drives = new DriveManager(specs, node, log, (state) => link.publishDrive(state), (device) => readDriveCdIdentity(device, audioTools));
  const ctx: AgentContext = {
    config,
    log,
    node,
    store,
    capabilities,
    ripper,
    audioTools,
    drives,
    link,
    pool: new SlotPool(config.slots),
    roots: new PathRoots(config.mediaRoot, config.rawDir, config.pathMap),
    emit: (body, coalesceKey) => {
      const event = store.enqueueEvent(body, coalesceKey);
      link.emit(event);
      return event;
    },
    toLocal: (p) => mapPath(config.pathMap, p),
    toShared: (p) => unmapPath(config.pathMap, p),
    stopping: false,
  };
  const keyMaterial = new KeyMaterial(ctx, keys);
  const joins = new ChunkJoins();
  const runner = new JobRunner(ctx, jobWork(ctx, handbrakeTranscoder(config), joins), () => keyMaterial.sendDumps(), startedAt);
  const chunks = new ChunkRunner(ctx);
  const intake = new CommandIntake(ctx, runner, new DriveCommands(ctx), chunks, joins);
  const beacon = new StatusBeacon(ctx, startedAt, () => chunks.held());
  const features: AgentFeature[] = [runner, chunks, drives, link, beacon];

  if (config.native) log.info(`native worker ${node} starting: transcode queue only, no drives, state in ${config.dataDir}, encoder ${capabilities.tools.HandBrakeCLI ?? `${config.handbrakeCli} not found`}`);
  log.info(`agent ${node} starting: rip backend ${capabilities.rip_backend}, ${specs.length} drive(s), ${config.slots} slots, broker ${config.mqttUrl}`);
  for (const f of features) await f.start?.();

  return {
    node,
    capabilities,
    async stop() {
      ctx.stopping = true;
      for (const f of [...features].reverse()) await f.stop?.();
      store.close();
    },
  };
}
