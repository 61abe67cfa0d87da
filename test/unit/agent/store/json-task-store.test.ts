import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { JsonTaskStore, jsonTaskStoreOpener } from '../../../../agent/store/json-task-store.js';
import { TASKS, type AgentEvent, type Command } from '../../../../shared/protocol.js';

// The cases both stores share are in agent-store.test.ts; these are about the file itself.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-json-store-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
const freshFile = (): string => path.join(root, `case-${++n}`, 'agent-w.json');

const transcode = (id: string): Command => ({
  id,
  task: TASKS.transcodeFiles,
  job_id: 'job-9',
  args: { raw_dir: '/raw/job-9', files: ['/raw/job-9/t01.mkv'], target_dir: '/media/Filme', title: 'Heat', year: 1995, series: null, season: null, preset: 'Fast 1080p30', keep_original: false },
});

describe('JsonTaskStore file', () => {
  it('writes every change through a temporary file and rename: the file is always whole JSON and no temporary file stays', () => {
    const file = freshFile();
    const store = new JsonTaskStore(file, 'w@host');
    assert.equal(fs.existsSync(file), false, 'nothing written before the first change');
    store.addTask(transcode('t1'));
    store.setTaskState('t1', 'running', 321);
    const accepted = store.enqueueEvent({ type: 'accepted', command_id: 't1', job_id: 'job-9' });
    store.enqueueEvent({ type: 'progress', command_id: 't1', job_id: 'job-9', phase: 'transcode', progress: 12 }, 'progress:t1');
    const onDisk = JSON.parse(fs.readFileSync(file, 'utf8')) as { version: number; tasks: { id: string; state: string; pid: number }[]; outbox: { event_id: string }[] };
    assert.equal(onDisk.version, 1);
    assert.deepEqual(onDisk.tasks.map((t) => [t.id, t.state, t.pid]), [['t1', 'running', 321]]);
    assert.equal(onDisk.outbox[0].event_id, accepted.event_id);
    assert.equal(onDisk.outbox.length, 2);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['agent-w.json']);
    store.close();
  });

  it('keeps the outbox order across a restart: events queued after it come after the old ones', () => {
    const file = freshFile();
    const first = new JsonTaskStore(file, 'w@host');
    first.addTask(transcode('t2'));
    const a = first.enqueueEvent({ type: 'accepted', command_id: 't2', job_id: 'job-9' });
    const b = first.enqueueEvent({ type: 'transcode_started', command_id: 't2', job_id: 'job-9' });
    first.ackEvents([a.event_id]);
    first.close();
    const second = new JsonTaskStore(file, 'w@host');
    const c = second.enqueueEvent({ type: 'job_done', command_id: 't2', job_id: 'job-9', output_path: '/media/Filme/Heat (1995)', files: [], raw_removed: true });
    const pending = second.pendingEvents();
    assert.deepEqual(pending.map((p) => (JSON.parse(p.payload) as AgentEvent).event_id), [b.event_id, c.event_id]);
    assert.ok(pending[0].seq < pending[1].seq);
    second.setTaskState('t2', 'done');
    assert.deepEqual(second.heldTaskIds(), ['t2'], 'the outcome is still in the outbox');
    second.ackEvents([b.event_id, c.event_id]);
    assert.deepEqual(second.heldTaskIds(), []);
    second.close();
  });

  it('moves a state file it cannot read aside, says so, and starts empty', () => {
    const file = freshFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"version":1,"next_seq":3,"tasks":[{"id":');
    const warnings: string[] = [];
    const store = new JsonTaskStore(file, 'w@host', (m) => warnings.push(m));
    assert.equal(store.outboxSize(), 0);
    assert.deepEqual(store.tasksIn(['waiting', 'running']), []);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /could not be read \(it is not valid JSON/);
    const aside = fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith('agent-w.json.broken-'));
    assert.equal(aside.length, 1);
    assert.equal(fs.readFileSync(path.join(path.dirname(file), aside[0]), 'utf8'), '{"version":1,"next_seq":3,"tasks":[{"id":');
    store.addTask(transcode('t3'));
    assert.equal(new JsonTaskStore(file, 'w@host').getTask('t3')?.state, 'waiting');
  });

  it('refuses a file of another shape the same way (a task without state)', () => {
    const file = freshFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ version: 1, next_seq: 1, tasks: [{ id: 'x', task: 't', payload: '{}', updated_at: '' }], outbox: [] }));
    const warnings: string[] = [];
    new JsonTaskStore(file, 'w@host', (m) => warnings.push(m));
    assert.match(warnings[0] ?? '', /a task entry is incomplete/);
  });

  it('opens DATA_DIR/agent-<WORKER_NAME>.json', () => {
    const dir = path.join(root, 'opener');
    const store = jsonTaskStoreOpener(() => undefined)(dir, 'wohnzimmer', 'wohnzimmer@pc');
    store.addTask(transcode('t4'));
    assert.ok(fs.existsSync(path.join(dir, 'agent-wohnzimmer.json')));
    assert.equal(store.enqueueEvent({ type: 'accepted', command_id: 't4', job_id: 'job-9' }).node, 'wohnzimmer@pc');
    store.close();
    assert.throws(() => store.addTask(transcode('t5')), /closed/);
  });
});
