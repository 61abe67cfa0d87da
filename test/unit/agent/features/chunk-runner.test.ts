import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { AgentContext } from '../../../../agent/agent-context.js';
import { DEFAULT_AUDIO_CD_TOOLS } from '../../../../agent/tasks/audio-cd-ripper.js';
import { ChunkRunner, type ChunkEncoder, type EncodeChunkCommand } from '../../../../agent/features/chunk-runner.js';
import { chunkEncodersFile } from '../../../../agent/features/chunk-leftovers.js';
import { groupAlive } from '../../../../shared/process.js';
import { CommandIntake } from '../../../../agent/features/command-intake.js';
import { StatusBeacon } from '../../../../agent/features/status-beacon.js';
import { JsonTaskStore } from '../../../../agent/store/json-task-store.js';
import { PathRoots } from '../../../../agent/output/path-roots.js';
import { SlotPool } from '../../../../agent/tasks/slot-pool.js';
import { chunkCutArgs } from '../../../../agent/tasks/chunk-plan.js';
import { readAgentConfig } from '../../../../shared/config.js';
import { Logger } from '../../../../shared/log.js';
import { chunkFolder } from '../../../../shared/chunking.js';
import { TASKS, type AgentEvent, type Capabilities } from '../../../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-chunk-runner-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Waits until the condition holds (a file system step may take a while on a loaded host), at most 5 s. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await sleep(10);
}

let worlds = 0;
function harness(options: { slots?: number; handbrake?: string | null } = {}) {
  const dir = path.join(root, `w${++worlds}`);
  const media = path.join(dir, 'media');
  const raw = path.join(dir, 'raw');
  for (const d of [media, raw]) fs.mkdirSync(d, { recursive: true });
  const config = readAgentConfig({ MEDIA_ROOT: media, RAW_DIR: raw, DATA_DIR: path.join(dir, 'data'), WORKER_NAME: 'wohnzimmer', MQTT_URL: 'mqtt://127.0.0.1:1' });
  const store = new JsonTaskStore(path.join(dir, 'tasks.json'), 'wohnzimmer@pc');
  const events: AgentEvent[] = [];
  let statuses = 0;
  const capabilities: Capabilities = { encoders: ['software'], tools: { HandBrakeCLI: options.handbrake === undefined ? 'HandBrake 1.6.1' : options.handbrake }, key_source: 'none', schluessel: 0, rip_backend: 'none', transcode_only: true, native: false };
  const ctx: AgentContext = {
    config,
    log: new Logger('test', true),
    node: 'wohnzimmer@pc',
    store,
    capabilities,
    ripper: null,
    audioTools: DEFAULT_AUDIO_CD_TOOLS,
    drives: { get: () => undefined, poll: async () => undefined, eject: async () => undefined },
    link: { publishStatus: () => void statuses++ },
    pool: new SlotPool(options.slots ?? 2),
    roots: new PathRoots(media, raw, []),
    emit: (body, key) => {
      const e = store.enqueueEvent(body, key);
      events.push(e);
      return e;
    },
    toLocal: (p) => p,
    toShared: (p) => p,
    stopping: false,
  };
  return { ctx, events, raw, statuses: () => statuses };
}

/** The command of a chunk of the raw file `raw/job1/title_t00.mkv` (made here, as the rip left it). */
function chunkCommand(raw: string, id: string, index = 1): EncodeChunkCommand {
  const rawDir = path.join(raw, 'job1');
  fs.mkdirSync(rawDir, { recursive: true });
  fs.writeFileSync(path.join(rawDir, 'title_t00.mkv'), 'raw');
  return {
    id,
    task: TASKS.encodeChunk,
    job_id: 'job1',
    args: { input: path.join(rawDir, 'title_t00.mkv'), output: `${chunkFolder(rawDir, 'job1', 0)}/c0${index}-1f0e2a9b.mkv`, preset: 'Fast 1080p30', cut: { index, first_frame: 100, frames: 200, start_ticks: 359_100, duration_ticks: 718_200 } },
  };
}

/** An encoder that writes its output, reports 25 % and 100 %, and holds until `finish` (or fails with `fail`); it records its arguments. */
function fakeEncoder() {
  const calls: { input: string; output: string; preset: string; cut: string[] }[] = [];
  let finish: () => void = () => undefined;
  let fail: (err: Error) => void = () => undefined;
  const encode: ChunkEncoder = (input, output, preset, chunk, hooks) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ input, output, preset, cut: chunkCutArgs(chunk) });
      fs.writeFileSync(output, 'partial');
      hooks.onProgress?.(25);
      hooks.signal?.addEventListener('abort', () => reject(new Error('killed')), { once: true });
      finish = () => {
        hooks.onProgress?.(100);
        resolve();
      };
      fail = reject;
    });
  return { encode, calls, finish: () => finish(), fail: (err: Error) => fail(err) };
}

const ofType = (events: AgentEvent[], ...types: string[]) => events.filter((e) => types.includes(e.type));

describe('agent feature: chunk runner (issue 41)', () => {
  it('encodes a chunk in a slot into the chunk folder, reports frames and done, and lists it in the status while it runs', async () => {
    const h = harness();
    const enc = fakeEncoder();
    const runner = new ChunkRunner(h.ctx, enc.encode);
    const beacon = new StatusBeacon(h.ctx, '2026-11-28T12:00:00.000Z', () => runner.held());
    const cmd = chunkCommand(h.raw, 'c1');
    new CommandIntake(h.ctx, { submit: () => true, abort: () => false, resumeRecovered: () => false }, { handle: async () => undefined }, runner).onCommand(cmd);
    await until(() => enc.calls.length === 1);
    assert.deepEqual(enc.calls, [{ input: cmd.args.input, output: cmd.args.output, preset: 'Fast 1080p30', cut: ['--start-at', 'pts:359100', '--stop-at', 'pts:718200'] }]);
    assert.ok(fs.existsSync(path.dirname(cmd.args.output)), 'the chunk folder was made');
    assert.deepEqual(beacon.status().tasks, ['c1']);
    assert.equal(h.ctx.pool.busy, 1, 'it holds a slot');
    enc.finish();
    await until(() => runner.held().length === 0);
    const reports = ofType(h.events, 'chunk_progress', 'chunk_done', 'chunk_failed').map((e) => [e.type, (e as { frames_done?: number }).frames_done, e.command_id, e.job_id]);
    assert.deepEqual(reports, [['chunk_progress', 50, 'c1', 'job1'], ['chunk_progress', 200, 'c1', 'job1'], ['chunk_done', undefined, 'c1', 'job1']], 'frames, not percent; the last value flushed before done');
    assert.deepEqual(beacon.status().tasks, [], 'no longer held');
    assert.equal(h.ctx.pool.busy, 0, 'its slot is free');
  });

  it('reports a failed encode with its reason and removes the partial chunk file', async () => {
    const h = harness();
    const enc = fakeEncoder();
    const runner = new ChunkRunner(h.ctx, enc.encode);
    const cmd = chunkCommand(h.raw, 'c2');
    runner.submit(cmd);
    await until(() => enc.calls.length === 1);
    enc.fail(new Error('HandBrakeCLI exited with code 3'));
    await until(() => runner.held().length === 0);
    const failed = ofType(h.events, 'chunk_failed');
    assert.deepEqual(failed.map((e) => (e as { reason: string }).reason), ['HandBrakeCLI exited with code 3']);
    assert.equal(fs.existsSync(cmd.args.output), false);
    assert.equal(ofType(h.events, 'chunk_done').length, 0);
  });

  it('stops on cancel without a report, removes the partial file and frees the slot; a chunk waiting for a slot is withdrawn', async () => {
    const h = harness({ slots: 1 });
    const enc = fakeEncoder();
    const runner = new ChunkRunner(h.ctx, enc.encode);
    const intake = new CommandIntake(h.ctx, { submit: () => true, abort: () => false, resumeRecovered: () => false }, { handle: async () => undefined }, runner);
    const first = chunkCommand(h.raw, 'c3', 1);
    const second = chunkCommand(h.raw, 'c4', 2);
    intake.onCommand(first);
    intake.onCommand(second);
    await until(() => enc.calls.length === 1);
    await sleep(30);
    assert.equal(enc.calls.length, 1, 'one slot: the second waits');
    intake.onCommand({ id: 'x1', task: TASKS.cancel, job_id: 'job1', args: { command_id: 'c4' } });
    intake.onCommand({ id: 'x2', task: TASKS.cancel, job_id: 'job1', args: { command_id: 'c3' } });
    await until(() => runner.held().length === 0);
    await sleep(30);
    assert.equal(enc.calls.length, 1, 'the withdrawn chunk never started');
    assert.equal(fs.existsSync(first.args.output), false, 'the partial chunk file is gone');
    assert.deepEqual(ofType(h.events, 'chunk_done', 'chunk_failed', 'job_canceled', 'rejected'), [], 'the coordinator ended them: nothing to report');
    assert.deepEqual(runner.held(), []);
    assert.equal(h.ctx.pool.busy, 0);
  });

  it('keeps its running encoders in a ledger: the next start of a killed agent ends the one still running and removes its file', async () => {
    const h = harness();
    const cmd = chunkCommand(h.raw, 'c7');
    let encoderPid = 0;
    // An encoder in a process group of its own with the chunk's file on its command line, as HandBrakeCLI runs.
    const encode: ChunkEncoder = (_input, output, _preset, _chunk, hooks) =>
      new Promise<void>(() => {
        fs.writeFileSync(output, 'partial');
        const child = spawn('bash', ['-c', 'sleep 60; : "$0"', output], { detached: true, stdio: 'ignore' });
        encoderPid = child.pid as number;
        hooks.onSpawn?.(encoderPid);
      });
    new ChunkRunner(h.ctx, encode).submit(cmd);
    await until(() => encoderPid > 0 && fs.existsSync(chunkEncodersFile(h.ctx.config.dataDir, 'wohnzimmer')));
    // The agent dies without stopping its features; the encoder runs on. Its next run starts:
    const warned: string[] = [];
    const next = new ChunkRunner({ ...h.ctx, log: Object.assign(new Logger('test', true), { warn: (m: string) => void warned.push(m) }) }, fakeEncoder().encode);
    await next.start();
    await until(() => !groupAlive(encoderPid));
    assert.equal(groupAlive(encoderPid), false, 'the leftover encoder is stopped');
    assert.equal(fs.existsSync(cmd.args.output), false, 'its partial file is removed');
    assert.match(warned.join('\n'), new RegExp(`a chunk encoder \\(pid ${encoderPid}\\) of a run that did not end was still writing .*c01-1f0e2a9b\\.mkv: stopped`));
  });

  it('refuses a chunk whose file is no chunk file inside its folders, and one it cannot encode; a raw file it cannot read is reported unreadable, without taking a slot or starting the encoder', async () => {
    const h = harness({ slots: 1 });
    const enc = fakeEncoder();
    const runner = new ChunkRunner(h.ctx, enc.encode);
    const ok = chunkCommand(h.raw, 'c5');
    runner.submit({ ...ok, id: 'bad-out', args: { ...ok.args, output: path.join(h.raw, 'job1', 'title_t00.mkv') } });
    runner.submit({ ...ok, id: 'escape', args: { ...ok.args, output: `${h.raw}/../.ripwerk-chunks/c01.mkv` } });
    assert.deepEqual(ofType(h.events, 'rejected').map((e) => e.command_id), ['bad-out', 'escape']);
    assert.match((ofType(h.events, 'rejected')[0] as { reason: string }).reason, /is no cNN\.mkv in a \.ripwerk-chunks folder/);
    // Outside its folders, or inside but not there (the lead's own disk): not this worker's to read.
    runner.submit({ ...ok, id: 'bad-in', args: { ...ok.args, input: '/etc/passwd' } });
    runner.submit({ ...ok, id: 'elsewhere', args: { ...ok.args, input: path.join(h.raw, 'job1', 'title_t01.mkv') } });
    await until(() => runner.held().length === 0);
    const unreadable = ofType(h.events, 'chunk_failed') as { command_id?: string; reason: string; unreadable?: boolean }[];
    assert.deepEqual(unreadable.map((e) => [e.command_id, e.unreadable]), [['bad-in', true], ['elsewhere', true]]);
    assert.match(unreadable[0]!.reason, /^the raw file \/etc\/passwd is not inside this worker's folders/);
    assert.match(unreadable[1]!.reason, /title_t01\.mkv is not readable on wohnzimmer \(is RAW_DIR shared storage, or mapped with RIPWERK_PATH_MAP\?\)$/);
    assert.deepEqual([enc.calls.length, h.ctx.pool.busy], [0, 0], 'no encoder started, no slot taken');
    const none = harness({ handbrake: null });
    new ChunkRunner(none.ctx, fakeEncoder().encode).submit(chunkCommand(none.raw, 'c6'));
    assert.match((ofType(none.events, 'rejected')[0] as { reason: string }).reason, /cannot encode: HandBrakeCLI was not found/);
    assert.deepEqual(runner.held(), []);
  });
});
