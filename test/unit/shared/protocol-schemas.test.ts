import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PathRoots } from '../../../agent/output/path-roots.js';
import { jobEventRefusal } from '../../../coordinator/dispatch/event-rules.js';
import { DropLog } from '../../../shared/drop-log.js';
import { agentEventSchema, agentStatusSchema, commandSchema, DUMP_MQTT_LIMIT_BYTES, LOG_MESSAGE_LIMIT, parseMessage } from '../../../shared/protocol-schemas.js';
import { TASKS, type AgentEvent, type Command } from '../../../shared/protocol.js';
import { mayPublish, maySubscribe, topicRights } from '../../../coordinator/mqtt/topic-rights.js';

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const caps = { encoders: ['software'], tools: { HandBrakeCLI: '1.7' }, key_source: 'none', schluessel: 0, rip_backend: 'none', transcode_only: true, native: false };

describe('MQTT message schemas', () => {
  it('refuses the status messages that took the coordinator down (name 7, capabilities {})', () => {
    const bad = parseMessage(agentStatusSchema, json({ node: 'x', state: 'online', name: 7 }));
    assert.deepEqual(bad, { ok: false, reason: 'name: Invalid input: expected string, received number' });
    const empty = parseMessage(agentStatusSchema, json({ node: 'x', state: 'online', capabilities: {} }));
    assert.equal(empty.ok, false);
    assert.match(empty.ok ? '' : empty.reason, /^capabilities\.encoders: /);
    assert.deepEqual(parseMessage(agentStatusSchema, Buffer.from('{')), { ok: false, reason: 'not JSON' });
    assert.deepEqual(parseMessage(agentStatusSchema, Buffer.alloc(0)), { ok: false, reason: 'empty payload' });
  });

  it('takes a title scan with and without the source fields TheDiscDB matches on (older agents send none)', () => {
    const base = { event_id: 'e1', node: 'a@h', ts: '2026-01-01T00:00:00.000Z', type: 'tracks', drive: 'sr0' };
    const old = { number: 0, seconds: 8904, size_bytes: 6858530816, chapters: 34 };
    const withSource = { ...old, source_file: '01', original_title_id: '01', segment_count: 2, segment_map: '1-19,20-35' };
    const ok = parseMessage(agentEventSchema, json({ ...base, tracks: [old, withSource, { ...old, number: 1, source_file: null, segment_map: null }] }));
    assert.equal(ok.ok, true);
    const bad = parseMessage(agentEventSchema, json({ ...base, tracks: [{ ...old, segment_count: -1 }] }));
    assert.equal(bad.ok, false);
  });

  it('passes a good status, keeping fields it does not know', () => {
    const good = parseMessage(agentStatusSchema, json({ node: 'a@h', state: 'online', name: 'a', slots: 4, capabilities: caps, future_field: { x: 1 } }));
    assert.equal(good.ok, true);
    assert.deepEqual(good.ok && (good.value as Record<string, unknown>).future_field, { x: 1 });
  });

  it('passes the recovered tasks of a restarted agent and the resume that answers them; refuses them malformed', () => {
    const recovered = [{ command_id: 'c1', job_id: 'j1' }];
    const status = parseMessage(agentStatusSchema, json({ node: 'a@h', state: 'online', tasks: ['c1'], recovered, started_at: '2026-11-26T02:00:00.000Z' }));
    assert.deepEqual(status.ok && status.value.recovered, recovered);
    assert.equal(parseMessage(agentStatusSchema, json({ node: 'a@h', state: 'online', recovered: ['c1'] })).ok, false);
    const resume = { id: 'r1', task: TASKS.resume, job_id: 'j1', args: { command_id: 'c1', started_at: '2026-11-26T02:00:00.000Z' } };
    const parsed = parseMessage(commandSchema, json(resume));
    assert.deepEqual(parsed.ok && parsed.value, resume);
    assert.equal(parseMessage(commandSchema, json({ ...resume, args: { command_id: 'c1' } })).ok, false, 'a resume names the run it answers');
  });

  it('keeps the language fields and stream options of a transcode command', () => {
    const cmd = {
      id: 'c1',
      task: TASKS.transcodeFiles,
      job_id: 'j1',
      args: {
        job_id: 'j1', raw_dir: '/raw/j1', files: ['/raw/j1/a.mkv'], target_dir: '/media/Filme', title: 'T', year: null, series: null, season: null, preset: 'Fast 1080p30', keep_original: false,
        audio_languages: ['deu', 'eng'], subtitle_languages: ['deu'], audio: { keep_surround: true, stereo_companion: true, burn_forced_subtitles: false, original_language: 'eng' },
      },
    };
    const parsed = parseMessage(commandSchema, json(cmd));
    assert.equal(parsed.ok, true);
    assert.deepEqual(parsed.ok && parsed.value.args, cmd.args);
    const wrong = parseMessage(commandSchema, json({ ...cmd, args: { ...cmd.args, audio_languages: 'deu' } }));
    assert.deepEqual(wrong, { ok: false, reason: 'args.audio_languages: Invalid input: expected array, received string' });
    assert.equal(parseMessage(commandSchema, json({ id: 'x', task: 'worker.tasks.format_disk', args: {} })).ok, false);
    assert.equal(parseMessage(commandSchema, json({ ...cmd, args: { ...cmd.args, extras_folder: 'Extras' } })).ok, true);
    for (const bad of ['..', '../../etc', 'a/b', 'a\\b', '']) assert.equal(parseMessage(commandSchema, json({ ...cmd, args: { ...cmd.args, extras_folder: bad } })).ok, false, bad);
  });

  it('keeps the streams of job_done and cuts a log message to 64 KB', () => {
    const base = { event_id: 'e', node: 'a@h', ts: '2026-01-01T00:00:00Z', command_id: 'c', job_id: 'j' };
    const done = parseMessage(agentEventSchema, json({ ...base, type: 'job_done', output_path: '/m', files: ['/m/a.mkv'], raw_removed: true, streams: [{ file: '/m/a.mkv', audio: [{ index: 1, language: 'deu', codec: 'ac3', channels: 6 }], subtitles: [{ index: 1, language: 'deu', codec: 'pgs', forced: true }] }] }));
    assert.equal(done.ok, true);
    const log = parseMessage(agentEventSchema, json({ ...base, type: 'log', level: 'info', message: 'x'.repeat(50 * 1024 * 1024) }));
    assert.equal(log.ok, true);
    const message = log.ok && log.value.type === 'log' ? log.value.message : '';
    assert.equal(message.length, LOG_MESSAGE_LIMIT - 20 + ' … (truncated)'.length);
    assert.ok(message.endsWith('(truncated)'));
  });

  it('refuses an AACS dump larger than one packet carries, and dump names with a path', () => {
    const base = { event_id: 'e', node: 'a@h', ts: 't', type: 'aacs_dump' };
    const big = Buffer.alloc(DUMP_MQTT_LIMIT_BYTES + 3).toString('base64');
    assert.equal(parseMessage(agentEventSchema, json({ ...base, name: 'MKB_v4_X.tgz', data_base64: big })).ok, false);
    assert.equal(parseMessage(agentEventSchema, json({ ...base, name: '../../etc/MKB.tgz', data_base64: 'AAAA' })).ok, false);
    assert.equal(parseMessage(agentEventSchema, json({ ...base, name: 'MKB_v4_X.tgz', data_base64: Buffer.alloc(DUMP_MQTT_LIMIT_BYTES).toString('base64') })).ok, true);
  });
});

describe('DropLog', () => {
  it('writes one line per topic and minute, then says how many were dropped in between', () => {
    const lines: string[] = [];
    let now = 0;
    const drops = new DropLog({ warn: (m) => lines.push(m) }, () => now);
    for (let i = 0; i < 1000; i++) drops.drop('ripwerk/event/a', 'type: bad');
    drops.drop('ripwerk/event/b', 'x\r\ninjected');
    assert.deepEqual(lines, ['dropped a message on ripwerk/event/a: type: bad', 'dropped a message on ripwerk/event/b: x injected']);
    now = 61_000;
    drops.drop('ripwerk/event/a', 'type: bad');
    assert.equal(lines[2], 'dropped a message on ripwerk/event/a: type: bad (and 999 more dropped on this topic in the last minute)');
  });
});

describe('job events and the job-status table', () => {
  const ev = (type: string, extra: Record<string, unknown> = {}): AgentEvent => ({ event_id: 'e', node: 'a', ts: 't', command_id: 'c1', job_id: 'j1', type, ...extra }) as AgentEvent;
  const transcodeCmd = { node: 'a', task: TASKS.transcodeFiles, job_id: 'j1', state: 'accepted' as const };

  it('accepts the finish of an open transcode from its node', () => {
    assert.equal(jobEventRefusal(ev('job_done'), 'a', transcodeCmd, 'transcoding'), null);
    assert.equal(jobEventRefusal(ev('job_failed'), 'a', transcodeCmd, 'canceling'), null);
  });

  it('refuses a completed job turned failed, events from another node, and commands of other jobs', () => {
    assert.equal(jobEventRefusal(ev('job_failed'), 'a', { ...transcodeCmd, state: 'done' }, 'completed'), 'job_failed for command c1 that has ended already');
    assert.equal(jobEventRefusal(ev('job_failed'), 'a', transcodeCmd, 'completed'), 'job_failed of the transcode is no valid transition for a job that is completed');
    assert.equal(jobEventRefusal(ev('job_done'), 'b', transcodeCmd, 'transcoding'), 'job_done for a command of a came from b');
    assert.equal(jobEventRefusal(ev('job_done', { job_id: 'j2' }), 'a', transcodeCmd, 'transcoding'), 'job_done names job j2 but its command belongs to job j1');
    assert.equal(jobEventRefusal(ev('job_done', { command_id: undefined }), 'a', undefined, 'transcoding'), 'job_done names no command of this coordinator');
    assert.equal(jobEventRefusal(ev('rip_done'), 'a', transcodeCmd, 'transcoding'), 'rip_done of the transcode is no valid transition for a job that is transcoding');
  });
});

describe('topic rights', () => {
  const agent = topicRights({ kind: 'agent', node: 'a@h', legacy: false }, 'homeassistant');
  const ha = topicRights({ kind: 'home-assistant' }, 'homeassistant');

  it('lets a worker publish under its own node only', () => {
    assert.ok(mayPublish(agent, 'ripwerk/agent/a@h/status'));
    assert.ok(mayPublish(agent, 'ripwerk/drive/a@h/sr0/state'));
    assert.ok(mayPublish(agent, 'ripwerk/event/a@h'));
    for (const t of ['ripwerk/event/b@h', 'ripwerk/agent/b@h/status', 'ripwerk/cmd/a@h', 'ripwerk/cmd/b@h', 'ripwerk/keys/keystore', 'ripwerk/ack/a@h', 'homeassistant/status', '$SYS/x', 'ripwerk/event/+']) assert.ok(!mayPublish(agent, t), t);
  });

  it('lets a worker subscribe to its own command topic and the shared ones only', () => {
    for (const f of ['ripwerk/cmd/a@h', 'ripwerk/ack/a@h', 'ripwerk/keys/keystore', 'ripwerk/keys/+', 'ripwerk/coordinator/status']) assert.ok(maySubscribe(agent, f), f);
    for (const f of ['ripwerk/cmd/b@h', 'ripwerk/cmd/+', 'ripwerk/#', '#', 'ripwerk/event/+', 'ripwerk/+/a@h']) assert.ok(!maySubscribe(agent, f), f);
  });

  it('keeps Home Assistant to its topics', () => {
    assert.ok(mayPublish(ha, 'ripwerk/ha/a_h/sr0/eject'));
    assert.ok(mayPublish(ha, 'homeassistant/status'));
    assert.ok(!mayPublish(ha, 'ripwerk/cmd/a@h'));
    assert.ok(!mayPublish(ha, 'ripwerk/event/a@h'));
    assert.ok(maySubscribe(ha, 'homeassistant/#'));
    assert.ok(maySubscribe(ha, 'ripwerk/ha/#'));
    assert.ok(!maySubscribe(ha, 'ripwerk/#'));
    assert.ok(!maySubscribe(ha, 'ripwerk/keys/keystore'));
  });
});

describe('PathRoots (the folders an agent touches)', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-roots-'));
  const media = path.join(root, 'media');
  const raw = path.join(root, 'raw');
  fs.mkdirSync(path.join(raw, 'job1'), { recursive: true });
  fs.mkdirSync(media, { recursive: true });
  fs.mkdirSync(path.join(root, 'elsewhere'));
  fs.symlinkSync(path.join(root, 'elsewhere'), path.join(raw, 'link'));
  const roots = new PathRoots(media, raw, []);
  const transcode = (args: Record<string, unknown>): Command =>
    ({ id: 'c', task: TASKS.transcodeFiles, job_id: 'j', args: { job_id: 'j', raw_dir: path.join(raw, 'job1'), files: [path.join(raw, 'job1', 'a.mkv')], target_dir: path.join(media, 'Filme'), title: 'T', year: null, series: null, season: null, preset: 'p', keep_original: false, ...args } }) as Command;

  it('lets a command inside the roots through', () => {
    assert.equal(roots.commandRefusal(transcode({})), null);
  });

  it('refuses raw folders, files and targets outside, the roots themselves and symlinks leading out', () => {
    assert.match(roots.commandRefusal(transcode({ raw_dir: '/etc' })) ?? '', /^the raw folder \/etc is not inside this worker's folders/);
    assert.match(roots.commandRefusal(transcode({ raw_dir: raw })) ?? '', /^the raw folder .* is not inside/);
    assert.match(roots.commandRefusal(transcode({ raw_dir: path.join(raw, 'job1', '..', '..') })) ?? '', /is not inside/);
    assert.match(roots.commandRefusal(transcode({ target_dir: '/tmp/evil' })) ?? '', /^the target folder \/tmp\/evil is not inside/);
    assert.match(roots.commandRefusal(transcode({ files: ['/etc/passwd'] })) ?? '', /^the file \/etc\/passwd is not inside the job's raw folder/);
    assert.match(roots.commandRefusal(transcode({ raw_dir: path.join(raw, 'link') })) ?? '', /is not inside/);
    assert.match(roots.rawDirRefusal(path.join(raw, 'link', 'sub')) ?? '', /is not inside/);
    assert.equal(roots.rawDirRefusal(path.join(raw, 'job1')), null);
  });
});
