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

  it('takes a progress event with and without the encoder speed (older agents send none), and refuses a speed below 0', () => {
    const base = { event_id: 'e1', node: 'a@h', ts: '2026-01-01T00:00:00.000Z', type: 'progress', job_id: 'j1', command_id: 'c1', phase: 'transcode', progress: 42.5 };
    assert.equal(parseMessage(agentEventSchema, json(base)).ok, true);
    const withFps = parseMessage(agentEventSchema, json({ ...base, fps: 87.3 }));
    assert.equal(withFps.ok && (withFps.value as { fps?: number }).fps, 87.3);
    assert.equal(parseMessage(agentEventSchema, json({ ...base, fps: -1 })).ok, false);
    assert.equal(parseMessage(agentEventSchema, json({ ...base, fps: '87' })).ok, false);
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

describe('MQTT message schemas: the titles of a recognised disc', () => {
  const trailer = { role: 'extra', name: 'Theatrical Trailer', kind: 'Trailer', folder: 'Trailers', season: null, episodes: null };
  const main = { role: 'main_movie', name: '2001: A Space Odyssey' };
  const episode = { role: 'episode', name: 'Fun Run', season: 4, episodes: { first: 1, last: 2 } };
  const ripCmd = {
    id: 'c1',
    task: TASKS.ripDisc,
    job_id: 'j1',
    args: {
      drive: 'sr0', titles: [], main_feature_only: false, raw_dir: '/raw/j1', target_dir: '/media/Filme', title: '2001: A Space Odyssey', year: 1968, series: null, season: null, transcode: false, keep_original: false, auto_eject: true,
      disc_titles: [
        { index: 0, source_file: '01', segment_map: '1-19,20-35', seconds: 8904, size_bytes: 6858530816, role: main, take: true },
        { index: 1, source_file: '02', segment_map: '1', seconds: 12, size_bytes: 9512960, role: { ...trailer, name: 'wb logo', kind: 'Other', folder: 'Other' }, take: false },
        { index: 7, source_file: '08', segment_map: '1', seconds: 111, size_bytes: 73377792, role: trailer, take: true },
        { index: 2, source_file: '00000.mpls(1)', segment_map: '1,2', seconds: 23, size_bytes: 43118592, role: { role: 'unidentified' }, take: false },
        { index: 8, source_file: '00008.mpls', seconds: 9954, size_bytes: 0, role: { role: 'play_all', name: null, season: 1, episodes: { first: 1, last: 7 } }, take: false },
      ],
      extras_folder: 'Extras',
      extras_by_kind: true,
    },
  };
  const withPlanned = (change: (t: Record<string, unknown>) => Record<string, unknown>) => ({ ...ripCmd, args: { ...ripCmd.args, disc_titles: [change({ ...ripCmd.args.disc_titles[2] })] } });
  const base = { event_id: 'e', node: 'a@h', ts: '2026-01-01T00:00:00Z', command_id: 'c', job_id: 'j' };
  const ripped = { number: 2, file: '/raw/j/2001 A SPACE ODYSSEY_t02.mkv', source_file: '08', segment_map: '1', seconds: 111, size_bytes: 73377792, role: trailer };

  it('passes a rip with the plan of a recognised disc, every role kept as sent', () => {
    const parsed = parseMessage(commandSchema, json(ripCmd));
    assert.equal(parsed.ok, true, parsed.ok ? '' : parsed.reason);
    assert.deepEqual(parsed.ok && parsed.value.args, ripCmd.args);
    assert.equal(parseMessage(commandSchema, json({ ...ripCmd, args: { ...ripCmd.args, disc_titles: null } })).ok, true, 'no plan: null');
    const { disc_titles: _plan, extras_folder: _folder, extras_by_kind: _byKind, ...older } = ripCmd.args;
    assert.equal(parseMessage(commandSchema, json({ ...ripCmd, args: older })).ok, true, 'a coordinator without plans sends none');
    const intoFolder = { ...ripCmd, args: { ...ripCmd.args, library_folder: '/media/Filme/2001 - A Space Odyssey (1968)' } };
    assert.deepEqual(parseMessage(commandSchema, json(intoFolder)), { ok: true, value: intoFolder });
    assert.equal(parseMessage(commandSchema, json({ ...ripCmd, args: { ...ripCmd.args, library_folder: 7 } })).ok, false);
  });

  it('refuses an extra whose folder is not one of the eight names, such as a path out of the movie\'s folder', () => {
    for (const folder of ['../x', '../../etc', 'Trailers/..', 'trailers', 'Extras', '']) {
      const bad = parseMessage(commandSchema, json(withPlanned((t) => ({ ...t, role: { ...trailer, folder } }))));
      assert.equal(bad.ok, false, folder);
      assert.match(bad.ok ? '' : bad.reason, /^args\.disc_titles\.0\.role\.folder: /, folder);
    }
    for (const folder of ['Deleted Scenes', 'Trailers', 'Featurettes', 'Behind The Scenes', 'Interviews', 'Scenes', 'Shorts', 'Other']) {
      assert.equal(parseMessage(commandSchema, json(withPlanned((t) => ({ ...t, role: { ...trailer, folder } })))).ok, true, folder);
    }
  });

  it('refuses a planned title of an unknown role, without take, or with a negative size', () => {
    assert.equal(parseMessage(commandSchema, json(withPlanned((t) => ({ ...t, role: { role: 'bonus' } })))).ok, false);
    assert.equal(parseMessage(commandSchema, json(withPlanned((t) => ({ ...t, role: { ...episode, episodes: { first: 'one', last: 2 } } })))).ok, false);
    assert.equal(parseMessage(commandSchema, json(withPlanned(({ take: _take, ...t }) => t))).ok, false);
    assert.equal(parseMessage(commandSchema, json(withPlanned((t) => ({ ...t, take: 'yes' })))).ok, false);
    assert.equal(parseMessage(commandSchema, json(withPlanned((t) => ({ ...t, size_bytes: -1 })))).ok, false);
    assert.equal(parseMessage(commandSchema, json(withPlanned((t) => ({ ...t, role: { ...trailer, name: 'x'.repeat(1001) } })))).ok, false);
  });

  it('refuses a rip\'s extras folder that is a path, as for a transcode', () => {
    for (const bad of ['..', '../x', 'a/b', 'a\\b', '']) assert.equal(parseMessage(commandSchema, json({ ...ripCmd, args: { ...ripCmd.args, extras_folder: bad } })).ok, false, bad);
    assert.equal(parseMessage(commandSchema, json({ ...ripCmd, args: { ...ripCmd.args, extras_folder: 'Other' } })).ok, true);
    assert.equal(parseMessage(commandSchema, json({ ...ripCmd, args: { ...ripCmd.args, extras_by_kind: 'yes' } })).ok, false);
  });

  it('passes a transcode with the role of each file (null for a file without), and refuses a role with a bad folder', () => {
    const cmd = {
      id: 'c2',
      task: TASKS.transcodeFiles,
      job_id: 'j1',
      args: {
        raw_dir: '/raw/j1', files: ['/raw/j1/a_t00.mkv', '/raw/j1/a_t07.mkv', '/raw/j1/a_t09.mkv'], target_dir: '/media/Filme', title: 'T', year: 1968, series: null, season: null, preset: 'Fast 1080p30', keep_original: false,
        extras_folder: 'Extras', extras_by_kind: true, titles: [main, trailer, null],
      },
    };
    const parsed = parseMessage(commandSchema, json(cmd));
    assert.equal(parsed.ok, true, parsed.ok ? '' : parsed.reason);
    assert.deepEqual(parsed.ok && parsed.value.args, cmd.args);
    assert.equal(parseMessage(commandSchema, json({ ...cmd, args: { ...cmd.args, titles: null } })).ok, true);
    const bad = parseMessage(commandSchema, json({ ...cmd, args: { ...cmd.args, titles: [main, { ...trailer, folder: '../x' }] } }));
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? '' : bad.reason, /^args\.titles\.1\.folder: /);
  });

  it('passes rip_done and job_done with the ripped titles; refuses a title without its file or role', () => {
    const done = parseMessage(agentEventSchema, json({ ...base, type: 'rip_done', raw_dir: '/raw/j', files: [ripped.file], titles: [ripped, { ...ripped, number: 9, file: '/raw/j/x_t09.mkv', role: null }] }));
    assert.equal(done.ok, true, done.ok ? '' : done.reason);
    assert.deepEqual(done.ok && done.value.type === 'rip_done' && done.value.titles?.map((t) => t.role?.role ?? null), ['extra', null]);
    assert.equal(parseMessage(agentEventSchema, json({ ...base, type: 'rip_done', raw_dir: '/raw/j', files: [ripped.file] })).ok, true, 'older agents send no titles');
    const jobDone = parseMessage(agentEventSchema, json({ ...base, type: 'job_done', output_path: '/m', files: ['/m/Trailers/Theatrical Trailer.mkv'], raw_removed: true, titles: [{ ...ripped, file: '/m/Trailers/Theatrical Trailer.mkv' }] }));
    assert.equal(jobDone.ok, true, jobDone.ok ? '' : jobDone.reason);
    const { file: _file, ...noFile } = ripped;
    const { role: _role, ...noRole } = ripped;
    for (const bad of [noFile, noRole, { ...ripped, role: { ...trailer, folder: '../x' } }, { ...ripped, number: -1 }]) {
      assert.equal(parseMessage(agentEventSchema, json({ ...base, type: 'rip_done', raw_dir: '/raw/j', files: [ripped.file], titles: [bad] })).ok, false, JSON.stringify(bad));
    }
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
