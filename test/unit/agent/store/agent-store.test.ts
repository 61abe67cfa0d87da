import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { AgentStore } from '../../../../agent/store/agent-store.js';
import { JsonTaskStore } from '../../../../agent/store/json-task-store.js';
import type { TaskStore } from '../../../../agent/store/task-store.js';
import { TASKS, type AgentEvent, type Command, type RipJob } from '../../../../shared/protocol.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-agent-store-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Both stores behave the same: SQLite (the usual agent) and the JSON file (the native worker). */
const IMPLEMENTATIONS: { name: string; ext: string; make: (file: string) => TaskStore }[] = [
  { name: 'AgentStore (SQLite)', ext: 'sqlite', make: (file) => new AgentStore(file, 'node-a') },
  { name: 'JsonTaskStore', ext: 'json', make: (file) => new JsonTaskStore(file, 'node-a') },
];

const ripArgs: RipJob = {
  job_id: 'job-1',
  drive: 'sr0',
  titles: [],
  main_feature_only: false,
  raw_dir: '/raw/job-1',
  target_dir: '/media/Filme',
  title: 'Heat',
  year: 1995,
  series: null,
  season: null,
  transcode: true,
  keep_original: false,
  auto_eject: true,
};

function ripCommand(id: string, title = 'Heat'): Command {
  return { id, task: TASKS.ripDisc, job_id: 'job-1', args: { ...ripArgs, title } };
}

function parsed(store: TaskStore): AgentEvent[] {
  return store.pendingEvents().map((e) => JSON.parse(e.payload) as AgentEvent);
}

let n = 0;
for (const impl of IMPLEMENTATIONS) {
  const open = (): { store: TaskStore; file: string } => {
    const file = path.join(root, `agent-${++n}.${impl.ext}`);
    return { store: impl.make(file), file };
  };

  describe(`${impl.name} tasks`, () => {
    it('adds a task once: a redelivered command is ignored and the first payload kept', () => {
      const { store } = open();
      assert.equal(store.addTask(ripCommand('cmd-1')), true);
      assert.equal(store.addTask(ripCommand('cmd-1', 'Another Title')), false);
      const row = store.getTask('cmd-1');
      assert.ok(row);
      assert.equal(row.state, 'waiting');
      assert.equal(row.task, TASKS.ripDisc);
      assert.equal(row.job_id, 'job-1');
      assert.equal((JSON.parse(row.payload) as { args: RipJob }).args.title, 'Heat');
      assert.equal(store.tasksIn(['waiting']).length, 1);
      store.close();
    });

    it('keeps a task without job id as null and reports unknown ids as undefined', () => {
      const { store } = open();
      store.addTask({ id: 'ping-1', task: TASKS.pingWorker, args: {} });
      assert.equal(store.getTask('ping-1')?.job_id, null);
      assert.equal(store.getTask('missing'), undefined);
      store.close();
    });

    it('changes state and pid, keeping the pid when a later state change gives none', () => {
      const { store } = open();
      store.addTask(ripCommand('cmd-2'));
      store.setTaskState('cmd-2', 'running', 4242);
      assert.deepEqual([store.getTask('cmd-2')?.state, store.getTask('cmd-2')?.pid], ['running', 4242]);
      store.setTaskPid('cmd-2', 777);
      store.setTaskState('cmd-2', 'done');
      assert.deepEqual([store.getTask('cmd-2')?.state, store.getTask('cmd-2')?.pid], ['done', 777]);
      assert.deepEqual(store.tasksIn(['waiting', 'running']), []);
      assert.deepEqual(
        store.tasksIn(['done']).map((t) => t.id),
        ['cmd-2'],
      );
      store.addTask(ripCommand('cmd-3'));
      assert.deepEqual(
        store
          .tasksIn(['waiting', 'done'])
          .map((t) => t.id)
          .sort(),
        ['cmd-2', 'cmd-3'],
      );
      store.close();
    });

    it('holds running and waiting tasks, and finished ones whose outcome is still in the outbox', () => {
      const { store } = open();
      store.addTask(ripCommand('waiting'));
      store.addTask(ripCommand('running'));
      store.setTaskState('running', 'running');
      store.addTask(ripCommand('finished-sent'));
      store.setTaskState('finished-sent', 'done');
      store.addTask(ripCommand('finished-pending'));
      store.setTaskState('finished-pending', 'failed');
      store.enqueueEvent({ type: 'job_failed', command_id: 'finished-pending', job_id: 'job-1', phase: 'rip', reason: 'x' });
      const doneEvent = store.enqueueEvent({ type: 'rip_done', command_id: 'finished-sent', job_id: 'job-1', raw_dir: '/raw', files: [] });
      // a progress or log event of a finished task does not hold it
      store.enqueueEvent({ type: 'log', command_id: 'old-log', level: 'info', message: 'hi' });
      store.ackEvents([doneEvent.event_id]);
      assert.deepEqual(store.heldTaskIds().sort(), ['finished-pending', 'running', 'waiting']);
      store.close();
    });

    it('prunes only finished tasks older than the given age', () => {
      const { store } = open();
      store.addTask(ripCommand('old-done'));
      store.setTaskState('old-done', 'done');
      store.addTask(ripCommand('still-waiting'));
      store.pruneTasks(60_000);
      assert.ok(store.getTask('old-done'), 'a fresh finished task stays');
      store.pruneTasks(-60_000); // cutoff in the future: every finished task is old enough
      assert.equal(store.getTask('old-done'), undefined);
      assert.equal(store.getTask('still-waiting')?.state, 'waiting');
      store.close();
    });

    it('keeps tasks and outbox across a reopen of the file', () => {
      const { store, file } = open();
      store.addTask(ripCommand('persist'));
      const ev = store.enqueueEvent({ type: 'accepted', command_id: 'persist', job_id: 'job-1' });
      store.close();
      const again = impl.make(file);
      assert.equal(again.getTask('persist')?.state, 'waiting');
      assert.equal(again.addTask(ripCommand('persist')), false);
      assert.deepEqual(
        parsed(again).map((e) => e.event_id),
        [ev.event_id],
      );
      again.close();
    });
  });

  describe(`${impl.name} outbox`, () => {
    it('stamps events with a unique id, the node and a time', () => {
      const { store } = open();
      const a = store.enqueueEvent({ type: 'accepted', command_id: 'c1', job_id: 'j1' });
      const b = store.enqueueEvent({ type: 'accepted', command_id: 'c2', job_id: 'j2' });
      assert.notEqual(a.event_id, b.event_id);
      assert.equal(a.node, 'node-a');
      assert.ok(!Number.isNaN(Date.parse(a.ts)));
      assert.deepEqual(parsed(store), [a, b]);
      store.close();
    });

    it('coalesces progress by key: one row per key with the newest value and event id', () => {
      const { store } = open();
      let last: AgentEvent | undefined;
      for (const pct of [1, 5, 42.5]) {
        last = store.enqueueEvent({ type: 'progress', command_id: 'c1', job_id: 'j1', phase: 'rip', progress: pct }, 'progress:c1');
      }
      store.enqueueEvent({ type: 'progress', command_id: 'c2', job_id: 'j2', phase: 'transcode', progress: 7 }, 'progress:c2');
      assert.equal(store.outboxSize(), 2);
      const events = parsed(store);
      assert.deepEqual(
        events.map((e) => (e.type === 'progress' ? [e.command_id, e.progress] : null)),
        [
          ['c1', 42.5],
          ['c2', 7],
        ],
      );
      assert.equal(events[0].event_id, last?.event_id);
      store.close();
    });

    it('never coalesces events without a key', () => {
      const { store } = open();
      for (let i = 0; i < 3; i++) store.enqueueEvent({ type: 'log', command_id: 'c1', level: 'info', message: `line ${i}` });
      assert.equal(store.outboxSize(), 3);
      assert.deepEqual(
        parsed(store).map((e) => (e.type === 'log' ? e.message : '')),
        ['line 0', 'line 1', 'line 2'],
      );
      store.close();
    });

    it('returns pending events in the order they were first queued; a coalesced value keeps its place', () => {
      const { store } = open();
      store.enqueueEvent({ type: 'accepted', command_id: 'c1', job_id: 'j1' });
      store.enqueueEvent({ type: 'progress', command_id: 'c1', job_id: 'j1', phase: 'rip', progress: 10 }, 'progress:c1');
      store.enqueueEvent({ type: 'log', command_id: 'c1', level: 'info', message: 'between' });
      store.enqueueEvent({ type: 'progress', command_id: 'c1', job_id: 'j1', phase: 'rip', progress: 90 }, 'progress:c1');
      store.enqueueEvent({ type: 'rip_done', command_id: 'c1', job_id: 'j1', raw_dir: '/raw', files: [] });
      const pending = store.pendingEvents();
      const seqs = pending.map((p) => p.seq);
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
      assert.deepEqual(
        pending.map((p) => {
          const e = JSON.parse(p.payload) as AgentEvent;
          return e.type === 'progress' ? `progress ${e.progress}` : e.type;
        }),
        ['accepted', 'progress 90', 'log', 'rip_done'],
      );
      store.close();
    });

    it('removes acknowledged events only; unknown and superseded ids change nothing', () => {
      const { store } = open();
      const a = store.enqueueEvent({ type: 'accepted', command_id: 'c1', job_id: 'j1' });
      const p1 = store.enqueueEvent({ type: 'progress', command_id: 'c1', job_id: 'j1', phase: 'rip', progress: 10 }, 'progress:c1');
      const b = store.enqueueEvent({ type: 'log', command_id: 'c1', level: 'warn', message: 'w' });
      const p2 = store.enqueueEvent({ type: 'progress', command_id: 'c1', job_id: 'j1', phase: 'rip', progress: 20 }, 'progress:c1');
      store.ackEvents([a.event_id, 'no-such-id', p1.event_id]);
      assert.deepEqual(
        parsed(store).map((e) => e.event_id),
        [p2.event_id, b.event_id],
        'the ack of the replaced progress event leaves the newer value queued',
      );
      store.ackEvents([p2.event_id, b.event_id]);
      assert.equal(store.outboxSize(), 0);
      // after an ack the key is free again: the next progress is a new row at the end
      store.enqueueEvent({ type: 'log', command_id: 'c1', level: 'info', message: 'x' });
      store.enqueueEvent({ type: 'progress', command_id: 'c1', job_id: 'j1', phase: 'rip', progress: 30 }, 'progress:c1');
      assert.deepEqual(
        parsed(store).map((e) => e.type),
        ['log', 'progress'],
      );
      store.close();
    });
  });
}

describe('AgentStore (SQLite) statements', () => {
  it('prepares its statements once when it opens, not on every call', () => {
    const store = new AgentStore(path.join(root, `agent-${++n}.sqlite`), 'node-a');
    let prepared = 0;
    const prepare = store.db.prepare.bind(store.db);
    store.db.prepare = ((sql: string) => {
      prepared++;
      return prepare(sql);
    }) as typeof store.db.prepare;
    store.addTask(ripCommand('cmd-1'));
    store.getTask('cmd-1');
    store.setTaskState('cmd-1', 'running', 42);
    store.setTaskPid('cmd-1', 43);
    const event = store.enqueueEvent({ type: 'log', command_id: 'cmd-1', level: 'info', message: 'a' });
    store.enqueueEvent({ type: 'progress', command_id: 'cmd-1', job_id: 'job-1', phase: 'rip', progress: 5 }, 'progress:cmd-1');
    store.heldTaskIds();
    store.tasksIn(['running', 'done']);
    store.pendingEvents();
    store.ackEvents([event.event_id]);
    store.outboxSize();
    store.pruneTasks(1000);
    assert.equal(prepared, 0);
    store.close();
  });
});
