import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AgentConfig } from '../shared/config.js';
import { agentNode } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { mapPath, unmapPath } from '../shared/path-map.js';
import { TASKS, topics, type AgentEvent, type AgentStatus, type AppKeyMessage, type Capabilities, type Command, type KeydbMessage, type KeystoreMessage, type Phase, type RipJob, type TranscodeJob } from '../shared/protocol.js';
import { nativeWorkerRefusal } from '../shared/native-worker.js';
import type { EventBody, OpenTaskStore, TaskRow } from './task-store.js';
import { DriveManager } from './drive-manager.js';
import { listPhysicalDrives } from './drives/physical-drive.js';
import { AgentLink } from './link.js';
import { findLibdvdcss } from './libdvdcss.js';
import { removeRawFolderWithoutMedia } from './raw-folder.js';
import { readDriveCdIdentity } from './cd/drive-cd-identity.js';
import { PathRoots } from './path-roots.js';
import { truncateLogMessage } from '../shared/protocol-schemas.js';
import { DUMP_LIMIT_BYTES, RipperKeys } from './ripper-keys.js';
import { DEFAULT_AUDIO_CD_TOOLS, ripAudioCd, scanAudioCd, type AudioCdTools } from './cd/audio-cd-ripper.js';
import { makemkvRipper, openDvdRipper, probeTool, type Ripper } from './rippers.js';
import { runRip, TaskFailure, type TaskContext } from './rip-task.js';
import { SlotPool } from './slot-pool.js';
import { killProcessGroup } from '../shared/process.js';
import { encoderFamilies } from './tools/handbrake-parser.js';
import { ffprobeStreams } from './tools/ffprobe-runner.js';
import { handbrakeEncoders, handbrakePresetList, handbrakeScan, handbrakeTranscode } from './tools/handbrake-runner.js';
import { runTranscode, type Transcoder } from './transcode-task.js';

const HEARTBEAT_MS = 60_000;
const PRUNE_AFTER_MS = 7 * 24 * 3600_000;
const RESUME_DELAY_MS = 5_000;

type JobCommand = Extract<Command, { task: typeof TASKS.ripDisc | typeof TASKS.transcodeFiles }>;

export interface RunningAgent {
  node: string;
  capabilities: Capabilities;
  stop(): Promise<void>;
}

/** A native worker transcodes only: it looks for the encoder alone, and has no ripper and no drives. */
async function probeNativeCapabilities(config: AgentConfig): Promise<Capabilities> {
  const handbrake = await probeTool(config.handbrakeCli, ['--version']);
  const [encoders, presets] =
    handbrake !== null
      ? await Promise.all([handbrakeEncoders(config.handbrakeCli, { timeoutMs: 10_000 }).then(encoderFamilies, () => ['software']), handbrakePresetList(config.handbrakeCli, { timeoutMs: 10_000 }).catch(() => [])])
      : [[], []];
  return {
    encoders: encoders.length ? encoders : handbrake !== null ? ['software'] : [],
    presets,
    tools: { HandBrakeCLI: handbrake },
    key_source: 'none',
    schluessel: 0,
    rip_backend: 'none',
    transcode_only: true,
    native: true,
  };
}

/** What the agent logs in to the broker with: its own credentials, else (legacy) its node and the broker secret. */
function mqttLogin(config: AgentConfig, node: string, log: Logger): { username: string; password: string } | null {
  if (config.mqttCredentials) return config.mqttCredentials;
  if (!config.brokerSecret) return null;
  log.warn('this worker logs in to the broker with the shared broker secret (legacy): give it its own credentials (POST /api/workers/{name}/credentials, then MQTT_USERNAME and MQTT_PASSWORD)');
  return { username: node, password: config.brokerSecret };
}

/** Finds which tools this host has and which rip backend it uses. */
export async function probeCapabilities(config: AgentConfig): Promise<{ capabilities: Capabilities; ripper: Ripper | null }> {
  if (config.native) return { capabilities: await probeNativeCapabilities(config), ripper: null };
  const [makemkv, handbrake, lsdvd, dvdbackup, ffmpeg, abcde, cdparanoia, libdvdcss] = await Promise.all([
    probeTool(config.makemkvcon, ['--version']).then((v) => (v === null ? null : v || 'makemkvcon')),
    probeTool(config.handbrakeCli, ['--version']),
    probeTool('lsdvd', ['-V']),
    probeTool('dvdbackup', ['--version']),
    probeTool('ffmpeg', ['-version']),
    probeTool(config.abcde, ['-v']),
    probeTool('cdparanoia', ['-V']),
    findLibdvdcss(),
  ]);
  const backend: Capabilities['rip_backend'] = makemkv !== null ? 'makemkv' : lsdvd !== null && dvdbackup !== null && ffmpeg !== null ? 'open-dvd' : 'none';
  // The encoder families and presets come from the transcoder itself; a failing probe leaves software only.
  const [encoders, presets] =
    handbrake !== null
      ? await Promise.all([handbrakeEncoders(config.handbrakeCli, { timeoutMs: 10_000 }).then(encoderFamilies, () => ['software']), handbrakePresetList(config.handbrakeCli, { timeoutMs: 10_000 }).catch(() => [])])
      : [[], []];
  const capabilities: Capabilities = {
    encoders: encoders.length ? encoders : handbrake !== null ? ['software'] : [],
    presets,
    tools: { makemkvcon: makemkv, HandBrakeCLI: handbrake, lsdvd, dvdbackup, ffmpeg, abcde, cdparanoia, libdvdcss },
    key_source: backend === 'makemkv' ? 'makemkv' : backend === 'open-dvd' ? (libdvdcss ? 'libdvdread with libdvdcss' : 'libdvdread (unencrypted DVDs only)') : 'none',
    schluessel: 0,
    rip_backend: backend,
    transcode_only: config.drives.length === 0 && !config.drivesAuto,
    native: false,
  };
  const ripper = backend === 'makemkv' ? makemkvRipper(config.makemkvcon, path.dirname(config.makemkvDataDir), () => capabilities.schluessel) : backend === 'open-dvd' ? openDvdRipper() : null;
  return { capabilities, ripper };
}

/** Drives from DRIVES=auto: every optical drive of the system device listing (lsblk, else /sys/block/sr*). */
async function autoDrives(): Promise<AgentConfig['drives']> {
  return (await listPhysicalDrives()).map((d) => ({ kind: 'device' as const, path: d.path }));
}

function localIp(): string | undefined {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/**
 * One agent per host: owns its drives, its store (tasks and event outbox: SQLite, or a JSON file in a
 * native worker) and 4 work slots. Commands arrive over MQTT; every outcome is an event kept in the
 * outbox until acknowledged. A native worker (config.native) has no drives and refuses rips.
 */
export async function startAgent(config: AgentConfig, log: Logger, openStore: OpenTaskStore): Promise<RunningAgent> {
  const node = agentNode(config);
  await fs.mkdir(config.dataDir, { recursive: true });
  const store = openStore(config.dataDir, config.workerName, node);
  const { capabilities, ripper } = await probeCapabilities(config);
  const specs = config.native ? [] : config.drivesAuto ? await autoDrives() : config.drives;
  const startedAt = new Date().toISOString();
  const pool = new SlotPool(config.slots);
  const controllers = new Map<string, AbortController>();
  let stopping = false;

  const roots = new PathRoots(config.mediaRoot, config.rawDir, config.pathMap);
  const toLocal = (p: string): string => mapPath(config.pathMap, p);
  /** Deletes a job's raw folder, only ever inside this worker's folders. */
  const removeRaw = async (dir: string): Promise<void> => {
    const refusal = roots.rawDirRefusal(dir);
    if (refusal) return log.warn(`not deleting: ${refusal}`);
    await fs.rm(toLocal(dir), { recursive: true, force: true }).catch(() => undefined);
  };
  const toShared = (p: string): string => unmapPath(config.pathMap, p);
  const transcoder: Transcoder = {
    transcode: (input, output, preset, hooks) => handbrakeTranscode(config.handbrakeCli, input, output, preset, { ...hooks, timeoutMs: 24 * 3600_000 }),
    // ffprobe answers in a tenth of HandBrake's start-up; a host without it (a native worker) asks HandBrake.
    scan: async (input, signal) => {
      try {
        return await ffprobeStreams('ffprobe', input, { signal, timeoutMs: 120_000 });
      } catch (err) {
        if (signal.aborted) throw err;
        return (await handbrakeScan(config.handbrakeCli, input, { signal, timeoutMs: 120_000 })).titles[0] ?? { seconds: 0, audio: [], subtitles: [] };
      }
    },
  };

  const status = (): AgentStatus => ({
    node,
    state: 'online',
    name: config.workerName,
    host: config.hostName,
    ip: localIp(),
    slots: config.slots,
    tasks: store.heldTaskIds(),
    capabilities,
    started_at: startedAt,
    last_seen: new Date().toISOString(),
  });

  const keys = new RipperKeys(config.makemkvDataDir);
  const audioTools: AudioCdTools = { ...DEFAULT_AUDIO_CD_TOOLS, abcde: config.abcde };
  if (!config.native) capabilities.schluessel = await keys.count();
  const link: AgentLink = new AgentLink(config.mqttUrl, node, store, { onCommand: (cmd) => onCommand(cmd), status, drives: () => drives.states(), onKeys: (topic, body) => void installKeys(topic, body) }, log, mqttLogin(config, node, log));
  const emit = (body: EventBody, coalesceKey?: string): AgentEvent => {
    const event = store.enqueueEvent(body, coalesceKey);
    link.emit(event);
    return event;
  };
  const drives = new DriveManager(specs, node, log, (state) => link.publishDrive(state), (device) => readDriveCdIdentity(device, { cdparanoia: audioTools.cdparanoia, cdInfo: 'cd-info' }));

  /** Key material from the coordinator's retained ripwerk/keys/* messages, written where MakeMKV reads it. */
  async function installKeys(topic: string, body: object): Promise<void> {
    if (config.native) return; // no ripper: disc keys are of no use here
    try {
      if (topic === topics.keystore) {
        const count = await keys.applyKeystore(body as KeystoreMessage);
        if (count !== capabilities.schluessel) log.info(`key store installed in ${config.makemkvDataDir}: ${count} disc key file(s)`);
        capabilities.schluessel = count;
        link.publishStatus();
      } else if (topic === topics.keydb) {
        await keys.applyKeydb(body as KeydbMessage);
      } else if (topic === topics.appKey) {
        await keys.applyAppKey(body as AppKeyMessage);
      }
    } catch (err) {
      log.warn(`installing key material from ${topic} failed: ${(err as Error).message}`);
    }
  }

  /** Sends AACS dumps the ripper wrote (a disc whose key is unknown) to the coordinator. */
  async function sendDumps(): Promise<void> {
    const tooLarge = (file: string, bytes: number): void => log.warn(`AACS dump ${file} has ${bytes} bytes, more than the ${DUMP_LIMIT_BYTES} that travel to the coordinator: copy it by hand if needed`);
    for (const dump of await keys.newDumps(tooLarge).catch(() => [])) {
      log.info(`sending AACS dump ${dump.name} to the coordinator`);
      emit({ type: 'aacs_dump', name: dump.name, data_base64: dump.data.toString('base64') });
    }
  }

  function context(cmd: JobCommand, phase: Phase, signal: AbortSignal): TaskContext {
    return {
      signal,
      progress: (pct) => emit({ type: 'progress', command_id: cmd.id, job_id: cmd.job_id, phase, progress: pct }, `progress:${cmd.id}`),
      log: (level, message) => {
        log[level](message, cmd.job_id);
        emit({ type: 'log', command_id: cmd.id, job_id: cmd.job_id, level, message: truncateLogMessage(message) });
      },
      onSpawn: (pid) => store.setTaskPid(cmd.id, pid),
    };
  }

  async function rip(cmd: Extract<JobCommand, { task: typeof TASKS.ripDisc }>, signal: AbortSignal): Promise<void> {
    const args: RipJob = { ...cmd.args, job_id: cmd.job_id, raw_dir: toLocal(cmd.args.raw_dir), target_dir: toLocal(cmd.args.target_dir) };
    const drive = drives.get(args.drive);
    if (!drive) throw new TaskFailure(`this worker has no drive named "${args.drive}"`);
    await drives.poll();
    const loaded = drive.loaded;
    if (!loaded) throw new TaskFailure(`there is no disc in drive ${args.drive}`);
    const audio = loaded.disc.type === 'cd';
    const videoRipper = audio ? null : ripper;
    if (!audio && !videoRipper) throw new TaskFailure('this worker has no ripper: install MakeMKV, or lsdvd, dvdbackup and ffmpeg for unencrypted DVDs');
    emit({ type: 'rip_started', command_id: cmd.id, job_id: cmd.job_id, raw_dir: toShared(args.raw_dir) });
    const ctx = context(cmd, 'rip', signal);
    const result = videoRipper ? await runRip(args, loaded.source, videoRipper, ctx, loaded.disc) : await ripAudioCd(args, loaded.source, ctx, audioTools);
    // An audio CD in a drive is ejected by abcde itself (its -x option follows auto_eject); images are moved aside here.
    if (args.auto_eject && (!audio || loaded.source.kind === 'cue')) {
      await drives.eject(args.drive).catch((err: Error) => ctx.log('warn', `auto-eject after the rip failed: ${err.message}`));
    }
    if (result.output) {
      emit({ type: 'job_done', command_id: cmd.id, job_id: cmd.job_id, output_path: toShared(result.output.output_path), files: result.output.files.map(toShared), raw_removed: !args.keep_original });
    } else {
      emit({ type: 'rip_done', command_id: cmd.id, job_id: cmd.job_id, raw_dir: toShared(args.raw_dir), files: result.files.map(toShared) });
    }
  }

  async function transcode(cmd: Extract<JobCommand, { task: typeof TASKS.transcodeFiles }>, signal: AbortSignal): Promise<void> {
    const args: TranscodeJob = { ...cmd.args, job_id: cmd.job_id, raw_dir: toLocal(cmd.args.raw_dir), target_dir: toLocal(cmd.args.target_dir), files: cmd.args.files.map(toLocal) };
    if (capabilities.tools.HandBrakeCLI === null) throw new TaskFailure(`this worker cannot transcode: ${config.handbrakeCli} was not found`);
    emit({ type: 'transcode_started', command_id: cmd.id, job_id: cmd.job_id });
    const result = await runTranscode(args, transcoder, context(cmd, 'transcode', signal), { mediaRoot: config.mediaRoot });
    emit({ type: 'job_done', command_id: cmd.id, job_id: cmd.job_id, output_path: toShared(result.output_path), files: result.files.map(toShared), raw_removed: result.raw_removed, streams: result.streams, episodes_guessed: result.episodes_guessed });
  }

  async function runJob(cmd: JobCommand): Promise<void> {
    const controller = new AbortController();
    controllers.set(cmd.id, controller);
    store.setTaskState(cmd.id, 'running');
    link.publishStatus();
    const phase: Phase = cmd.task === TASKS.ripDisc ? 'rip' : 'transcode';
    let final: 'done' | 'failed' | 'canceled' = 'done';
    try {
      if (cmd.task === TASKS.ripDisc) await rip(cmd, controller.signal);
      else await transcode(cmd, controller.signal);
    } catch (err) {
      if (stopping) return;
      if (controller.signal.aborted) {
        final = 'canceled';
        if (cmd.task === TASKS.ripDisc) await removeRaw(cmd.args.raw_dir);
        log.info(`${phase} canceled`, cmd.job_id);
        emit({ type: 'job_canceled', command_id: cmd.id, job_id: cmd.job_id, phase });
      } else {
        final = 'failed';
        const reason = (err as Error).message || String(err);
        if (cmd.task === TASKS.ripDisc && (await removeRawFolderWithoutMedia(toLocal(cmd.args.raw_dir)).catch(() => false))) log.info('the raw folder held no video or audio file and was removed', cmd.job_id);
        log.error(`${phase} failed: ${reason}`, cmd.job_id);
        emit({ type: 'job_failed', command_id: cmd.id, job_id: cmd.job_id, phase, reason });
      }
    } finally {
      if (cmd.task === TASKS.ripDisc && !stopping) await sendDumps();
      controllers.delete(cmd.id);
      if (!stopping) {
        store.setTaskState(cmd.id, final);
        link.publishStatus();
      }
    }
  }

  function cancel(cmd: Extract<Command, { task: typeof TASKS.cancel }>): void {
    const target = cmd.args.command_id;
    const running = controllers.get(target);
    if (running) {
      running.abort();
      return;
    }
    const task = store.getTask(target);
    if (task && task.state !== 'waiting') return; // finished: its outcome is in the outbox already
    if (task) {
      pool.withdraw(target);
      store.setTaskState(target, 'canceled');
      link.publishStatus();
      log.info(`${task.task} canceled before it started (command ${target})`, task.job_id ?? undefined);
    }
    const phase: Phase = task?.task === TASKS.transcodeFiles ? 'transcode' : 'rip';
    emit({ type: 'job_canceled', command_id: target, job_id: cmd.job_id, phase });
  }

  async function ephemeral(cmd: Command): Promise<void> {
    if (config.native && (cmd.task === TASKS.scanTracks || cmd.task === TASKS.eject)) {
      const reason = nativeWorkerRefusal(config.workerName);
      log.warn(`refused ${cmd.task} (command ${cmd.id}): native worker without drives`);
      emit({ type: 'rejected', command_id: cmd.id, reason });
      return;
    }
    try {
      if (cmd.task === TASKS.pingWorker) {
        emit({ type: 'pong', command_id: cmd.id, capabilities });
      } else if (cmd.task === TASKS.scanTracks) {
        const drive = drives.get(cmd.args.drive);
        if (!drive) throw new Error(`this worker has no drive named "${cmd.args.drive}"`);
        await drives.poll();
        const loaded = drive.loaded;
        if (!loaded) throw new Error(`there is no disc in drive ${cmd.args.drive}`);
        const signal = AbortSignal.timeout(10 * 60_000);
        let tracks;
        if (loaded.disc.type === 'cd') tracks = await scanAudioCd(loaded.source, signal, audioTools);
        else if (ripper) tracks = await ripper.scan(loaded.source, signal, loaded.disc.type);
        else throw new Error('this worker has no ripper to read titles with');
        emit({ type: 'tracks', command_id: cmd.id, drive: cmd.args.drive, tracks });
      } else if (cmd.task === TASKS.eject) {
        await drives.eject(cmd.args.drive);
        emit({ type: 'ejected', command_id: cmd.id, drive: cmd.args.drive });
      }
    } catch (err) {
      emit({ type: 'command_failed', command_id: cmd.id, reason: (err as Error).message });
    }
  }

  /** Why this worker cannot take the command at all (answered with `rejected` instead of `accepted`), or null. */
  function refuse(cmd: JobCommand): string | null {
    return refuseTask(cmd) ?? roots.commandRefusal(cmd);
  }

  function refuseTask(cmd: JobCommand): string | null {
    if (cmd.task === TASKS.ripDisc) {
      if (config.native) return nativeWorkerRefusal(config.workerName);
      if (!ripper && drives.get(cmd.args.drive)?.loaded?.disc.type !== 'cd') return `the worker ${config.workerName} has no ripper (a transcode-only or native worker cannot rip): install MakeMKV, or lsdvd, dvdbackup and ffmpeg for unencrypted DVDs`;
      if (!drives.get(cmd.args.drive)) return `the worker ${config.workerName} has no drive named "${cmd.args.drive}"`;
      return null;
    }
    if (capabilities.tools.HandBrakeCLI === null) return `the worker ${config.workerName} cannot transcode: ${config.handbrakeCli} was not found`;
    return null;
  }

  function onCommand(cmd: Command): void {
    if (stopping) return;
    if (cmd.task === TASKS.cancel) return cancel(cmd);
    if (cmd.task !== TASKS.ripDisc && cmd.task !== TASKS.transcodeFiles) {
      void ephemeral(cmd);
      return;
    }
    const refusal = refuse(cmd);
    if (refusal && !store.getTask(cmd.id)) {
      log.warn(`refused ${cmd.task} (command ${cmd.id}): ${refusal}`, cmd.job_id);
      emit({ type: 'rejected', command_id: cmd.id, job_id: cmd.job_id, reason: refusal });
      return;
    }
    if (!store.addTask(cmd)) return; // a redelivery of a command we hold or finished
    log.info(`accepted ${cmd.task} (command ${cmd.id})`, cmd.job_id);
    emit({ type: 'accepted', command_id: cmd.id, job_id: cmd.job_id });
    link.publishStatus();
    pool.submit(cmd.id, () => runJob(cmd));
  }

  /**
   * Tasks left from a previous run: a rip cannot resume (its disc state is gone), a transcode starts
   * over after RESUME_DELAY_MS, so a cancel for work the coordinator gave to another worker meanwhile
   * arrives first.
   */
  async function recover(rows: TaskRow[]): Promise<JobCommand[]> {
    const resumable: JobCommand[] = [];
    for (const row of rows) {
      if (row.pid) await killProcessGroup(row.pid, 1000);
      const cmd = JSON.parse(row.payload) as JobCommand;
      if (row.state === 'running' && cmd.task === TASKS.ripDisc) {
        store.setTaskState(row.id, 'interrupted');
        await removeRaw(cmd.args.raw_dir);
        log.warn('the agent stopped during this rip; the rip is marked failed', cmd.job_id);
        emit({ type: 'job_failed', command_id: row.id, job_id: cmd.job_id, phase: 'rip', reason: 'the worker stopped during the rip (crash or restart): retry the rip' });
        continue;
      }
      store.setTaskState(row.id, 'waiting');
      resumable.push(cmd);
    }
    return resumable;
  }

  function resume(cmds: JobCommand[]): void {
    for (const cmd of cmds) {
      if (stopping || store.getTask(cmd.id)?.state !== 'waiting') continue;
      log.info(`resuming ${cmd.task} after a restart`, cmd.job_id);
      pool.submit(cmd.id, () => runJob(cmd));
    }
  }

  store.pruneTasks(PRUNE_AFTER_MS);
  const leftover = store.tasksIn(['waiting', 'running']);
  if (config.native) log.info(`native worker ${node} starting: transcode queue only, no drives, state in ${config.dataDir}, encoder ${capabilities.tools.HandBrakeCLI ?? `${config.handbrakeCli} not found`}`);
  log.info(`agent ${node} starting: rip backend ${capabilities.rip_backend}, ${specs.length} drive(s), ${config.slots} slots, broker ${config.mqttUrl}`);
  const resumable = await recover(leftover);
  await drives.start();
  link.start();
  const resumeTimer = setTimeout(() => resume(resumable), RESUME_DELAY_MS);
  const heartbeat = setInterval(() => link.publishStatus(), HEARTBEAT_MS);

  return {
    node,
    capabilities,
    async stop() {
      stopping = true;
      clearInterval(heartbeat);
      clearTimeout(resumeTimer);
      drives.stop();
      for (const c of controllers.values()) c.abort();
      await link.stop();
      store.close();
    },
  };
}
