import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { AgentContext } from '../../agent/agent-context.js';
import { DEFAULT_AUDIO_CD_TOOLS } from '../../agent/cd/audio-cd-ripper.js';
import { CommandIntake } from '../../agent/features/command-intake.js';
import { JobRunner } from '../../agent/features/job-runner.js';
import type { JobCommand } from '../../agent/features/job-work.js';
import { JsonTaskStore } from '../../agent/json-task-store.js';
import { PathRoots } from '../../agent/path-roots.js';
import { SlotPool } from '../../agent/slot-pool.js';
import type { TaskStore } from '../../agent/task-store.js';
import { readAgentConfig } from '../../shared/config.js';
import { Logger } from '../../shared/log.js';
import { TASKS, type AgentEvent, type Capabilities, type Command } from '../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-agent-features-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const quiet = new Logger('test', true);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Harness {
  ctx: AgentContext;
  store: TaskStore;
  events: AgentEvent[];
  media: string;
  raw: string;
}

let worlds = 0;
/** An agent context over a real task store, slot pool and path rules; the link and drives are fakes that count. */
function harness(options: { native?: boolean; handbrake?: string | null; slots?: number } = {}): Harness {
  const dir = path.join(root, `w${++worlds}`);
  const media = path.join(dir, 'media');
  const raw = path.join(dir, 'raw');
  for (const d of [media, raw]) fs.mkdirSync(d, { recursive: true });
  const config = { ...readAgentConfig({ MEDIA_ROOT: media, RAW_DIR: raw, DATA_DIR: path.join(dir, 'data'), WORKER_NAME: 'keller', MQTT_URL: 'mqtt://127.0.0.1:1' }), native: options.native ?? false };
  const store = new JsonTaskStore(path.join(dir, 'tasks.json'), 'keller@host');
  const events: AgentEvent[] = [];
  const capabilities: Capabilities = { encoders: ['software'], tools: { HandBrakeCLI: options.handbrake === undefined ? 'HandBrake 1.6.1' : options.handbrake }, key_source: 'none', schluessel: 0, rip_backend: 'open-dvd', transcode_only: false, native: options.native ?? false };
  const ctx: AgentContext = {
    config,
    log: quiet,
    node: 'keller@host',
    store,
    capabilities,
    ripper: null,
    audioTools: DEFAULT_AUDIO_CD_TOOLS,
    drives: { get: () => undefined, poll: async () => undefined, eject: async () => undefined },
    link: { publishStatus: () => undefined },
    pool: new SlotPool(options.slots ?? 4),
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
  return { ctx, store, events, media, raw };
}

function transcodeCommand(h: Harness, id: string): Extract<Command, { task: typeof TASKS.transcodeFiles }> {
  const rawDir = path.join(h.raw, `job-${id}`);
  return {
    id,
    task: TASKS.transcodeFiles,
    job_id: `job-${id}`,
    args: { raw_dir: rawDir, files: [path.join(rawDir, 't01.mkv')], target_dir: path.join(h.media, 'Filme'), title: 'Heat', year: 1995, series: null, season: null, preset: 'Fast 1080p30', keep_original: false },
  };
}

function ripCommand(h: Harness, id: string): Extract<Command, { task: typeof TASKS.ripDisc }> {
  return {
    id,
    task: TASKS.ripDisc,
    job_id: `job-${id}`,
    args: { drive: 'drive', titles: [1], main_feature_only: false, raw_dir: path.join(h.raw, `job-${id}`), target_dir: path.join(h.media, 'Filme'), title: 'Heat', year: 1995, series: null, season: null, transcode: true, keep_original: false, auto_eject: true },
  };
}

const types = (events: AgentEvent[]): string[] => events.map((e) => e.type);

describe('agent feature: command intake', () => {
  const fakeRunner = (): { submitted: string[]; aborted: string[]; running: Set<string>; submit(cmd: JobCommand): void; abort(id: string): boolean } => {
    const r = {
      submitted: [] as string[],
      aborted: [] as string[],
      running: new Set<string>(),
      submit: (cmd: JobCommand) => void r.submitted.push(cmd.id),
      abort: (id: string) => {
        r.aborted.push(id);
        return r.running.has(id);
      },
    };
    return r;
  };
  const noDriveCommands = { handle: async () => assert.fail('no drive command expected') };

  it('stores a job command once, answers accepted and queues it; a redelivery of the same id is ignored', () => {
    const h = harness();
    const runner = fakeRunner();
    const intake = new CommandIntake(h.ctx, runner, noDriveCommands);
    const cmd = transcodeCommand(h, 'c1');
    intake.onCommand(cmd);
    intake.onCommand(cmd);
    assert.deepEqual(types(h.events), ['accepted']);
    assert.equal(h.events[0].job_id, 'job-c1');
    assert.deepEqual(runner.submitted, ['c1']);
    assert.equal(h.store.getTask('c1')?.state, 'waiting');
  });

  it('refuses what the worker cannot do, with the reason, and stores nothing', () => {
    const native = harness({ native: true });
    new CommandIntake(native.ctx, fakeRunner(), noDriveCommands).onCommand(ripCommand(native, 'r1'));
    const noEncoder = harness({ handbrake: null });
    new CommandIntake(noEncoder.ctx, fakeRunner(), noDriveCommands).onCommand(transcodeCommand(noEncoder, 't1'));
    const outside = harness();
    const stray = transcodeCommand(outside, 't2');
    new CommandIntake(outside.ctx, fakeRunner(), noDriveCommands).onCommand({ ...stray, args: { ...stray.args, raw_dir: '/etc' } });
    const [a, b, c] = [native, noEncoder, outside].map((h) => h.events[0] as Extract<AgentEvent, { type: 'rejected' }>);
    assert.equal(a.type, 'rejected');
    assert.match(a.reason, /native/);
    assert.match(b.reason, /the worker keller cannot transcode: HandBrakeCLI was not found/);
    assert.equal(c.type, 'rejected');
    assert.equal(native.store.getTask('r1'), undefined);
    assert.equal(noEncoder.store.getTask('t1'), undefined);
    assert.equal(outside.store.getTask('t2'), undefined);
  });

  it('cancels a waiting task itself (job_canceled, task canceled); a running one is left to the runner', () => {
    const h = harness();
    const runner = fakeRunner();
    const intake = new CommandIntake(h.ctx, runner, noDriveCommands);
    const waiting = transcodeCommand(h, 'w1');
    intake.onCommand(waiting);
    intake.onCommand({ id: 'x1', task: TASKS.cancel, job_id: 'job-w1', args: { command_id: 'w1' } });
    assert.equal(h.store.getTask('w1')?.state, 'canceled');
    assert.deepEqual(
      h.events.map((e) => [e.type, e.command_id, 'phase' in e ? e.phase : null]),
      [
        ['accepted', 'w1', null],
        ['job_canceled', 'w1', 'transcode'],
      ],
    );
    runner.running.add('r1');
    intake.onCommand({ id: 'x2', task: TASKS.cancel, job_id: 'job-r1', args: { command_id: 'r1' } });
    assert.deepEqual(runner.aborted, ['w1', 'r1']);
    assert.equal(h.events.length, 2, 'the runner answers for a running task');
  });

  it('takes nothing once the agent stops', () => {
    const h = harness();
    const runner = fakeRunner();
    h.ctx.stopping = true;
    new CommandIntake(h.ctx, runner, noDriveCommands).onCommand(transcodeCommand(h, 's1'));
    assert.deepEqual([h.events.length, runner.submitted.length], [0, 0]);
  });
});

describe('agent feature: job runner', () => {
  it('runs a job in a slot to its outcome: done, failed with the reason, or canceled', async () => {
    const h = harness();
    const outcomes = new Map<string, 'ok' | 'fail' | 'wait'>([
      ['ok', 'ok'],
      ['bad', 'fail'],
      ['slow', 'wait'],
    ]);
    const runner = new JobRunner(
      h.ctx,
      async (cmd, signal) => {
        const how = outcomes.get(cmd.id);
        if (how === 'fail') throw new Error('HandBrakeCLI ended with 3: no title found');
        if (how === 'wait') await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
      },
      async () => undefined,
    );
    for (const id of outcomes.keys()) {
      const cmd = transcodeCommand(h, id);
      h.store.addTask(cmd);
      runner.submit(cmd);
    }
    await sleep(20);
    assert.equal(runner.abort('slow'), true);
    assert.equal(runner.abort('ok'), false, 'a finished task is not running');
    await sleep(20);
    assert.deepEqual(['ok', 'bad', 'slow'].map((id) => h.store.getTask(id)?.state), ['done', 'failed', 'canceled']);
    const failed = h.events.find((e) => e.type === 'job_failed') as Extract<AgentEvent, { type: 'job_failed' }>;
    assert.deepEqual([failed.command_id, failed.phase, failed.reason], ['bad', 'transcode', 'HandBrakeCLI ended with 3: no title found']);
    const canceled = h.events.find((e) => e.type === 'job_canceled');
    assert.equal(canceled?.command_id, 'slow');
  });

  it('at start fails a rip the last run left running, and resumes a waiting transcode after the delay', async () => {
    const h = harness();
    const rip = ripCommand(h, 'rip1');
    const tc = transcodeCommand(h, 'tc1');
    fs.mkdirSync(rip.args.raw_dir, { recursive: true });
    h.store.addTask(rip);
    h.store.setTaskState('rip1', 'running');
    h.store.addTask(tc);
    const ran: string[] = [];
    const runner = new JobRunner(h.ctx, async (cmd) => void ran.push(cmd.id), async () => undefined, 30);
    await runner.start();
    assert.equal(h.store.getTask('rip1')?.state, 'interrupted');
    assert.equal(fs.existsSync(rip.args.raw_dir), false, "the interrupted rip's raw folder is removed");
    const failed = h.events.find((e) => e.type === 'job_failed') as Extract<AgentEvent, { type: 'job_failed' }>;
    assert.match(failed.reason, /the worker stopped during the rip/);
    assert.deepEqual(ran, [], 'nothing runs before the resume delay');
    await sleep(100);
    assert.deepEqual(ran, ['tc1']);
    assert.equal(h.store.getTask('tc1')?.state, 'done');
    runner.stop();
  });

  it('stops quietly: a job aborted by the stop writes no outcome', async () => {
    const h = harness();
    const runner = new JobRunner(h.ctx, (_cmd, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))), async () => undefined);
    const cmd = transcodeCommand(h, 'q1');
    h.store.addTask(cmd);
    runner.submit(cmd);
    await sleep(10);
    h.ctx.stopping = true;
    runner.stop();
    await sleep(10);
    assert.equal(h.store.getTask('q1')?.state, 'running', 'left for the next start to take over');
    assert.deepEqual(types(h.events), []);
  });
});
