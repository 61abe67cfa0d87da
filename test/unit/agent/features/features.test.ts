import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { AgentContext } from '../../../../agent/agent-context.js';
import { DEFAULT_AUDIO_CD_TOOLS } from '../../../../agent/tasks/audio-cd-ripper.js';
import { CommandIntake } from '../../../../agent/features/command-intake.js';
import { JobRunner } from '../../../../agent/features/job-runner.js';
import { jobWork, type JobCommand } from '../../../../agent/features/job-work.js';
import type { Transcoder } from '../../../../agent/tasks/transcode-task.js';
import { JsonTaskStore } from '../../../../agent/store/json-task-store.js';
import { OutputLedger, outputLedgerFile } from '../../../../agent/output/output-folder.js';
import { PathRoots } from '../../../../agent/output/path-roots.js';
import { SlotPool } from '../../../../agent/tasks/slot-pool.js';
import type { TaskStore } from '../../../../agent/store/task-store.js';
import { readAgentConfig } from '../../../../shared/config.js';
import { Logger } from '../../../../shared/log.js';
import { TASKS, type AgentEvent, type Capabilities, type Command } from '../../../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-agent-features-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const quiet = new Logger('test', true);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** The agent run's started_at, as its status says it. */
const STARTED = '2026-11-26T02:00:00.000Z';

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
  const fakeRunner = (): {
    submitted: string[];
    aborted: string[];
    resumed: [string, string][];
    running: Set<string>;
    /** What submit answers: true, the task started at once (its run published the status); false, it waits for a slot. */
    startsAtOnce: boolean;
    submit(cmd: JobCommand): boolean;
    abort(id: string): boolean;
    resumeRecovered(id: string, startedAt: string): boolean;
  } => {
    const r = {
      submitted: [] as string[],
      aborted: [] as string[],
      resumed: [] as [string, string][],
      running: new Set<string>(),
      startsAtOnce: false,
      submit: (cmd: JobCommand) => {
        r.submitted.push(cmd.id);
        return r.startsAtOnce;
      },
      abort: (id: string) => {
        r.aborted.push(id);
        return r.running.has(id);
      },
      resumeRecovered: (id: string, startedAt: string) => {
        r.resumed.push([id, startedAt]);
        return true;
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

  it('publishes the status for a task that waits for a slot; one that started at once was published by its run', () => {
    const h = harness();
    let published = 0;
    const ctx: AgentContext = { ...h.ctx, link: { publishStatus: () => void published++ } };
    const runner = fakeRunner();
    const intake = new CommandIntake(ctx, runner, noDriveCommands);
    intake.onCommand(transcodeCommand(h, 'waits'));
    assert.equal(published, 1);
    runner.startsAtOnce = true;
    intake.onCommand(transcodeCommand(h, 'starts'));
    assert.equal(published, 1);
    assert.deepEqual(runner.submitted, ['waits', 'starts']);
  });

  it('with the real runner, a rip taken into a free slot publishes one status (running), one that waits one (waiting)', async () => {
    const h = harness({ slots: 1 });
    const statuses: string[][] = [];
    const ctx: AgentContext = { ...h.ctx, link: { publishStatus: () => void statuses.push(h.store.tasksIn(['waiting', 'running']).map((t) => `${t.id} ${t.state}`)) } };
    let finish = (): void => undefined;
    const runner = new JobRunner(ctx, () => new Promise<void>((resolve) => (finish = resolve)), async () => undefined, STARTED);
    // As the command intake does (a rip needs a drive, which this harness has not).
    const take = (id: string): void => {
      const cmd = ripCommand(h, id);
      h.store.addTask(cmd);
      if (!runner.submit(cmd)) ctx.link.publishStatus();
    };
    take('first');
    assert.deepEqual(statuses, [['first running']]);
    take('second');
    assert.deepEqual(statuses, [['first running'], ['first running', 'second waiting']]);
    finish();
    await sleep(10);
    assert.deepEqual(statuses.slice(2), [['second waiting'], ['second running']], 'the end of the first and the start of the second');
    finish();
    await sleep(10);
  });

  it('with the real runner, a transcode prepares at once and counts as running once its encoder starts in its slot, which it gets the moment the one before gives it back', async () => {
    const h = harness({ slots: 1 });
    const statuses: string[][] = [];
    const ctx: AgentContext = { ...h.ctx, link: { publishStatus: () => void statuses.push(h.store.tasksIn(['waiting', 'running']).map((t) => `${t.id} ${t.state}`)) } };
    const steps: string[] = [];
    const releases = new Map<string, () => void>();
    const stateAtTake: string[] = [];
    const runner = new JobRunner(
      ctx,
      async (cmd, _signal, slot) => {
        steps.push(`${cmd.id} prepared`);
        await slot.take();
        stateAtTake.push(`${cmd.id} ${h.store.getTask(cmd.id)?.state}`);
        slot.started(); // the encoder has started
        steps.push(`${cmd.id} encodes`);
        await new Promise<void>((resolve) => releases.set(cmd.id, resolve));
        slot.release(); // the encoder is done: the slot goes before the task ends
        steps.push(`${cmd.id} encoded`);
        await new Promise<void>((resolve) => releases.set(cmd.id, resolve));
      },
      async () => undefined,
      STARTED,
    );
    const intake = new CommandIntake(ctx, runner, noDriveCommands);
    intake.onCommand(transcodeCommand(h, 'first'));
    await sleep(5);
    intake.onCommand(transcodeCommand(h, 'second'));
    await sleep(5);
    assert.deepEqual(steps, ['first prepared', 'first encodes', 'second prepared'], 'the second prepares while the first holds the only slot');
    assert.deepEqual(statuses, [['first waiting'], ['first running'], ['first running', 'second waiting']]);
    releases.get('first')?.();
    await sleep(5);
    assert.deepEqual(steps.slice(3), ['first encoded', 'second encodes'], 'the first gives its slot back: the second encodes while the first still finishes');
    assert.deepEqual(statuses.slice(3), [['first running', 'second running']]);
    assert.deepEqual(stateAtTake, ['first waiting', 'second waiting'], 'the bookkeeping of the start comes after the encoder start');
    releases.get('first')?.();
    await sleep(5);
    assert.equal(h.store.getTask('first')?.state, 'done');
    // A transcode canceled while it waits for its slot ends canceled, and leaves the slot to the next.
    intake.onCommand(transcodeCommand(h, 'third'));
    await sleep(5);
    intake.onCommand({ id: 'x9', task: TASKS.cancel, job_id: 'job-third', args: { command_id: 'third' } });
    await sleep(5);
    assert.equal(h.store.getTask('third')?.state, 'canceled');
    assert.ok(h.events.some((e) => e.type === 'job_canceled' && e.command_id === 'third'));
    assert.equal(ctx.pool.busy, 1, 'only the second holds the slot');
    releases.get('second')?.();
    await sleep(5);
    releases.get('second')?.();
    await sleep(5);
    assert.equal(ctx.pool.busy, 0);
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

  it('hands a resume to the runner, stores nothing and answers nothing itself', () => {
    const h = harness();
    const runner = fakeRunner();
    new CommandIntake(h.ctx, runner, noDriveCommands).onCommand({ id: 'x3', task: TASKS.resume, job_id: 'job-t9', args: { command_id: 't9', started_at: STARTED } });
    assert.deepEqual(runner.resumed, [['t9', STARTED]]);
    assert.deepEqual([h.events.length, runner.submitted.length, h.store.getTask('x3')], [0, 0, undefined]);
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
  it('a transcode that fails while its encoder waits for the slot (forked ahead) leaves the slot queue and holds no slot', async () => {
    const h = harness({ slots: 1 });
    let releaseFirst = (): void => undefined;
    const runner = new JobRunner(
      h.ctx,
      async (cmd, _signal, slot) => {
        if (cmd.id === 'first') {
          await slot.take();
          slot.started();
          await new Promise<void>((resolve) => (releaseFirst = resolve));
          return;
        }
        // The encoder waits for the slot (runTool's startWhen) and fails before it comes.
        void slot.take();
        await sleep(5);
        throw new Error('HandBrakeCLI ended before it was started');
      },
      async () => undefined,
      STARTED,
    );
    for (const id of ['first', 'second']) {
      const cmd = transcodeCommand(h, id);
      h.store.addTask(cmd);
      runner.submit(cmd);
      await sleep(5);
    }
    await sleep(20);
    assert.equal(h.store.getTask('second')?.state, 'failed');
    assert.equal(h.ctx.pool.withdraw('second'), false, 'its take left the queue with the task');
    releaseFirst();
    await sleep(20);
    assert.deepEqual([h.store.getTask('first')?.state, h.ctx.pool.busy, h.ctx.pool.free], ['done', 0, 1], 'no slot stays taken');
  });

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
      STARTED,
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

  it('at start fails a rip the last run left running; a transcode it left runs only once the coordinator confirms it', async () => {
    const h = harness();
    const rip = ripCommand(h, 'rip1');
    const tc = transcodeCommand(h, 'tc1');
    fs.mkdirSync(rip.args.raw_dir, { recursive: true });
    h.store.addTask(rip);
    h.store.setTaskState('rip1', 'running');
    h.store.addTask(tc);
    h.store.setTaskState('tc1', 'running');
    const ran: string[] = [];
    let published = 0;
    const ctx: AgentContext = { ...h.ctx, link: { publishStatus: () => void published++ } };
    const runner = new JobRunner(ctx, async (cmd) => void ran.push(cmd.id), async () => undefined, STARTED, 20);
    await runner.start();
    assert.equal(h.store.getTask('rip1')?.state, 'interrupted');
    assert.equal(fs.existsSync(rip.args.raw_dir), false, "the interrupted rip's raw folder is removed");
    const failed = h.events.find((e) => e.type === 'job_failed') as Extract<AgentEvent, { type: 'job_failed' }>;
    assert.match(failed.reason, /the worker stopped during the rip/);
    await sleep(100);
    // The coordinator may have given the transcode to another worker while this one was away: a copy
    // resumed on its own would remove the raw folder under that worker (the scale bench's fault run).
    assert.deepEqual(ran, [], 'nothing runs without the coordinator\'s word, however long it takes');
    assert.equal(h.store.getTask('tc1')?.state, 'waiting', 'the task is kept, not lost');
    assert.deepEqual(runner.recoveredTasks(), [{ command_id: 'tc1', job_id: 'job-tc1' }], 'the status asks for it');
    assert.equal(runner.resumeRecovered('tc1', '2026-11-20T08:00:00.000Z'), false, 'a resume that answered an earlier run of the agent counts for nothing');
    const statusesBefore = published;
    assert.equal(runner.resumeRecovered('tc1', STARTED), true);
    assert.equal(published - statusesBefore, 1, 'one status: the resumed run publishes it as it starts');
    assert.equal(runner.resumeRecovered('tc1', STARTED), false, 'a second resume runs nothing twice');
    await sleep(20);
    assert.deepEqual(ran, ['tc1']);
    assert.equal(h.store.getTask('tc1')?.state, 'done');
    assert.deepEqual(runner.recoveredTasks(), []);
    runner.stop();
  });

  it('asks again while the coordinator does not answer (a broker outage), and drops a recovered task the coordinator cancels', async () => {
    const h = harness();
    let asked = 0;
    const ctx: AgentContext = { ...h.ctx, link: { publishStatus: () => void asked++ } };
    for (const id of ['k1', 'k2']) h.store.addTask(transcodeCommand(h, id));
    const ran: string[] = [];
    const runner = new JobRunner(ctx, async (cmd) => void ran.push(cmd.id), async () => undefined, STARTED, 20);
    await runner.start();
    await sleep(90);
    assert.ok(asked >= 2, `the status went out again while nobody answered (${asked} times)`);
    const intake = new CommandIntake(ctx, runner, { handle: async () => assert.fail('no drive command expected') });
    intake.onCommand({ id: 'x4', task: TASKS.cancel, job_id: 'job-k1', args: { command_id: 'k1' } });
    assert.equal(h.store.getTask('k1')?.state, 'canceled');
    assert.deepEqual(runner.recoveredTasks(), [{ command_id: 'k2', job_id: 'job-k2' }], 'the canceled task no longer waits');
    intake.onCommand({ id: 'x5', task: TASKS.resume, job_id: 'job-k1', args: { command_id: 'k1', started_at: STARTED } });
    intake.onCommand({ id: 'x6', task: TASKS.resume, job_id: 'job-k2', args: { command_id: 'k2', started_at: STARTED } });
    await sleep(20);
    assert.deepEqual(ran, ['k2'], 'a canceled task does not come back with a late resume');
    assert.deepEqual(
      h.events.map((e) => [e.type, e.command_id, e.job_id]),
      [['job_canceled', 'k1', 'job-k1']],
    );
    const before = asked;
    await sleep(60);
    assert.ok(asked - before <= 1, 'with every task answered it stops asking');
    runner.stop();
  });

  it('removes the files a canceled leftover transcode had finished before the agent died, never the ones another worker wrote', async () => {
    const h = harness();
    const tc = transcodeCommand(h, 'died1');
    h.store.addTask(tc);
    h.store.setTaskState('died1', 'running');
    // The last run's encoder finished, then the agent died before job_done was stored.
    const folder = path.join(h.media, 'Filme', 'Heat (1995)');
    fs.mkdirSync(folder, { recursive: true });
    const own = path.join(folder, 'Heat (1995).mkv');
    const ledger = new OutputLedger(outputLedgerFile(h.ctx.config.dataDir, 'died1'), 'job-died1');
    ledger.claimed(own, [folder]);
    fs.writeFileSync(own, 'encoded before the crash');
    await ledger.written(own);
    // The coordinator gave the transcode to another worker, which wrote into its own folder (and removed the raw folder).
    const theirs = path.join(h.media, 'Filme', 'Heat (1995) [job-died]', 'Heat (1995).mkv');
    fs.mkdirSync(path.dirname(theirs), { recursive: true });
    fs.writeFileSync(theirs, 'the redone encode');
    const ran: string[] = [];
    const runner = new JobRunner(h.ctx, async (cmd) => void ran.push(cmd.id), async () => undefined, STARTED, 20);
    await runner.start();
    assert.ok(fs.existsSync(own), 'nothing goes before the coordinator has spoken');
    const intake = new CommandIntake(h.ctx, runner, { handle: async () => assert.fail('no drive command expected') });
    intake.onCommand({ id: 'c1', task: TASKS.cancel, job_id: 'job-died1', args: { command_id: 'died1' } });
    assert.deepEqual(runner.recoveredTasks(), []);
    for (let i = 0; i < 100 && fs.existsSync(ledger.file); i++) await sleep(10);
    assert.equal(fs.existsSync(own), false, 'its own finished file is gone');
    assert.equal(fs.existsSync(folder), false, 'with the folder it emptied');
    assert.equal(fs.readFileSync(theirs, 'utf8'), 'the redone encode');
    assert.equal(fs.existsSync(ledger.file), false);
    assert.deepEqual(ran, []);
    runner.stop();
  });

  it('keeps the files a canceled leftover transcode had finished once it had removed its raw files: they may be the only encode', async () => {
    const h = harness();
    const tc = transcodeCommand(h, 'noraw1');
    h.store.addTask(tc);
    h.store.setTaskState('noraw1', 'running');
    const folder = path.join(h.media, 'Filme', 'Heat (1995)');
    fs.mkdirSync(folder, { recursive: true });
    const own = path.join(folder, 'Heat (1995).mkv');
    const ledger = new OutputLedger(outputLedgerFile(h.ctx.config.dataDir, 'noraw1'), 'job-noraw1');
    ledger.claimed(own, [folder]);
    fs.writeFileSync(own, 'encoded before the crash, raw folder removed after it');
    await ledger.written(own);
    ledger.releasingRaw();
    const runner = new JobRunner(h.ctx, async () => undefined, async () => undefined, STARTED, 20);
    await runner.start();
    new CommandIntake(h.ctx, runner, { handle: async () => assert.fail('no drive command expected') }).onCommand({ id: 'c2', task: TASKS.cancel, job_id: 'job-noraw1', args: { command_id: 'noraw1' } });
    assert.deepEqual(runner.recoveredTasks(), []);
    for (let i = 0; i < 100 && fs.existsSync(ledger.file); i++) await sleep(10);
    assert.equal(fs.existsSync(ledger.file), false);
    assert.equal(fs.readFileSync(own, 'utf8'), 'encoded before the crash, raw folder removed after it');
    runner.stop();
  });

  it('a resumed transcode first removes what its run before the restart had finished, so it starts over in the same folder', async () => {
    const h = harness();
    const tc = transcodeCommand(h, 'again1');
    h.store.addTask(tc);
    h.store.setTaskState('again1', 'running');
    const folder = path.join(h.media, 'Filme', 'Heat (1995)');
    fs.mkdirSync(folder, { recursive: true });
    const own = path.join(folder, 'Heat (1995).mkv');
    const ledger = new OutputLedger(outputLedgerFile(h.ctx.config.dataDir, 'again1'), 'job-again1');
    ledger.claimed(own, [folder]);
    fs.writeFileSync(own, 'encoded before the crash');
    await ledger.written(own);
    const seen: boolean[] = [];
    const runner = new JobRunner(h.ctx, async () => void seen.push(fs.existsSync(own)), async () => undefined, STARTED, 20);
    await runner.start();
    assert.equal(runner.resumeRecovered('again1', STARTED), true);
    for (let i = 0; i < 100 && h.store.getTask('again1')?.state !== 'done'; i++) await sleep(10);
    assert.deepEqual(seen, [false], 'the old file was gone when the work started');
    assert.equal(h.store.getTask('again1')?.state, 'done');
    assert.equal(fs.existsSync(ledger.file), false, 'with its outcome stored the ledger goes');
    runner.stop();
  });

  it('a resumed transcode whose encodes had all ended is finished from there: its outputs stay, nothing is encoded again', async () => {
    const h = harness();
    const tc = transcodeCommand(h, 'enc1');
    h.store.addTask(tc);
    h.store.setTaskState('enc1', 'running');
    const folder = path.join(h.media, 'Filme', 'Heat (1995)');
    fs.mkdirSync(folder, { recursive: true });
    const own = path.join(folder, 'Heat (1995).mkv');
    const ledger = new OutputLedger(outputLedgerFile(h.ctx.config.dataDir, 'enc1'), 'job-enc1');
    ledger.claimed(own, [folder]);
    fs.writeFileSync(own, 'encoded before the crash');
    await ledger.written(own);
    ledger.encoded({ output_path: folder, files: [own], episodes_guessed: false });
    const given: unknown[] = [];
    const runner = new JobRunner(h.ctx, async (_cmd, _signal, _slot, encoded) => void given.push(encoded), async () => undefined, STARTED, 20);
    await runner.start();
    assert.equal(runner.resumeRecovered('enc1', STARTED), true);
    // The ledger goes right after the outcome is stored (a file removal later): wait for both.
    for (let i = 0; i < 100 && (h.store.getTask('enc1')?.state !== 'done' || fs.existsSync(ledger.file)); i++) await sleep(10);
    assert.equal(h.store.getTask('enc1')?.state, 'done');
    assert.deepEqual(given, [{ output_path: folder, files: [own], episodes_guessed: false }]);
    assert.equal(fs.readFileSync(own, 'utf8'), 'encoded before the crash');
    assert.equal(fs.existsSync(ledger.file), false, 'with its outcome stored the ledger goes');
    runner.stop();
  });

  it('finishing an encoded transcode takes no slot and runs no encoder: the slot count is corrected, the raw folder goes, the job is done', async () => {
    const h = harness({ slots: 1 });
    const cmd = transcodeCommand(h, 'fin2');
    fs.mkdirSync(cmd.args.raw_dir, { recursive: true });
    fs.writeFileSync(cmd.args.files[0], 'raw');
    const folder = path.join(h.media, 'Filme', 'Heat (1995)');
    fs.mkdirSync(folder, { recursive: true });
    const own = path.join(folder, 'Heat (1995).mkv');
    fs.writeFileSync(own, 'encoded before the crash');
    const transcoder: Transcoder = {
      transcode: async () => assert.fail('nothing is encoded again'),
      scan: async () => ({ seconds: 60, audio: [{ index: 1, language: 'deu', codec: 'ac3', channels: 6 }], subtitles: [] }),
    };
    let started = 0;
    const slot = { take: async () => assert.fail('no slot is taken'), started: () => void started++, release: () => undefined };
    await jobWork(h.ctx, transcoder)(cmd, new AbortController().signal, slot, { output_path: folder, files: [own], episodes_guessed: true });
    assert.equal(started, 1, 'the task counts as running');
    assert.deepEqual(types(h.events).filter((t) => t !== 'log'), ['transcode_encoded', 'job_done']);
    const done = h.events.find((e) => e.type === 'job_done') as Extract<AgentEvent, { type: 'job_done' }>;
    assert.deepEqual([done.output_path, done.files, done.raw_removed, done.episodes_guessed, done.streams?.map((x) => x.file)], [folder, [own], true, true, ['Heat (1995).mkv']]);
    assert.equal(fs.existsSync(cmd.args.raw_dir), false);
    assert.ok(h.events.some((e) => e.type === 'log' && /the encode had ended before the worker restarted: finishing with 1 file\(s\)/.test(e.message)));
  });

  it('does not run again a task whose outcome the last run had already put in the outbox', async () => {
    const h = harness();
    const tc = transcodeCommand(h, 'fin1');
    h.store.addTask(tc);
    h.store.setTaskState('fin1', 'running');
    // The last run finished it (raw folder removed, job_done stored) and stopped before it marked the task done.
    h.store.enqueueEvent({ type: 'job_done', command_id: 'fin1', job_id: 'job-fin1', output_path: '/m/Heat (1995)', files: ['/m/Heat (1995)/Heat (1995).mkv'], raw_removed: true });
    const ran: string[] = [];
    const runner = new JobRunner(h.ctx, async (cmd) => void ran.push(cmd.id), async () => undefined, STARTED, 20);
    await runner.start();
    assert.equal(h.store.getTask('fin1')?.state, 'done');
    assert.deepEqual(runner.recoveredTasks(), []);
    assert.equal(runner.resumeRecovered('fin1', STARTED), false);
    await sleep(30);
    assert.deepEqual(ran, []);
    assert.ok(h.store.heldTaskIds().includes('fin1'), 'still listed until its outcome is acknowledged');
    runner.stop();
  });

  it('stops quietly: a job aborted by the stop writes no outcome', async () => {
    const h = harness();
    const runner = new JobRunner(
      h.ctx,
      async (_cmd, signal, slot) => {
        await slot.take();
        slot.started();
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
      },
      async () => undefined,
      STARTED,
    );
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
