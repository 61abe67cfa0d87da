import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ffprobeShells, ffprobeStreams, parseShellAnswer } from '../../../../agent/tools/ffprobe-runner.js';
import type { ProbeShellPool } from '../../../../shared/probe-shell.js';
import { ToolError } from '../../../../shared/process.js';

describe('parseShellAnswer (an ffprobe answer from a probe shell)', () => {
  it('reads the exit code and the stdout lines behind their "o"', () => {
    assert.deepEqual(parseShellAnswer('rc\t0\no{\no  "streams": []\no}\n'), { exitCode: 0, stdout: '{\n  "streams": []\n}\n' });
    assert.deepEqual(parseShellAnswer('rc\t1\n'), { exitCode: 1, stdout: '' });
    assert.deepEqual(parseShellAnswer('rc\t0\no\noend\t3\n'), { exitCode: 0, stdout: '\nend\t3\n' });
  });
  it('takes nothing else for an answer', () => {
    for (const bad of ['', '\n', 'rc\tx\n', 'end\t1\n', '{"streams": []}\n']) assert.equal(parseShellAnswer(bad), null, JSON.stringify(bad));
  });
});

describe('ffprobeStreams in probe shells', () => {
  let dir: string;
  let mkv: string;
  let shells: ProbeShellPool;
  /** A stand-in ffprobe: `hang` waits for good, `weird` prints lines that look like a shell's end line around real JSON. */
  const fake = (name: string, body: string): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, `#!/bin/bash\n${body}\n`, { mode: 0o755 });
    return file;
  };
  const alive = (pattern: string): boolean =>
    fs.readdirSync('/proc').some((p) => {
      if (!/^\d+$/.test(p)) return false;
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(pattern);
      } catch {
        return false;
      }
    });

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-ffprobe-'));
    mkv = path.join(dir, 'title with spaces & $(quotes)\'.mkv');
    execFileSync('ffmpeg', ['-v', 'error', '-nostdin', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'ac3', '-ac', '6', '-metadata:s:a:0', 'language=ger', '-y', mkv], { stdio: 'pipe' });
    shells = ffprobeShells(2) as ProbeShellPool;
  });
  after(() => {
    shells.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads what ffprobe run on its own reads, for a name a shell would mangle', async () => {
    const own = await ffprobeStreams('ffprobe', mkv);
    const inShell = await ffprobeStreams('ffprobe', mkv, { shells });
    assert.deepEqual(inShell, own);
    assert.equal(inShell.audio.length, 1);
    assert.equal(inShell.audio[0].language, 'deu');
    assert.equal(inShell.audio[0].channels, 6);
    assert.ok(inShell.seconds > 1.5 && inShell.seconds < 2.5, String(inShell.seconds));
  });

  it('ten scans at once share at most two shells and all answer', async () => {
    const all = await Promise.all(Array.from({ length: 10 }, () => ffprobeStreams('ffprobe', mkv, { shells })));
    assert.ok(shells.size <= 2, `${shells.size} shells`);
    for (const r of all) assert.equal(r.audio.length, 1);
  });

  it('a file ffprobe cannot read fails with its exit code, as when ffprobe runs on its own', async () => {
    const missing = path.join(dir, 'nope.mkv');
    await assert.rejects(ffprobeStreams('ffprobe', missing, { shells }), (e: ToolError) => e instanceof ToolError && e.reason === `ffprobe could not read ${missing} (exit code 1)`);
    await assert.rejects(ffprobeStreams('ffprobe', missing), (e: ToolError) => e.reason === `ffprobe could not read ${missing} (exit code 1)`);
  });

  it('a missing ffprobe says so', async () => {
    await assert.rejects(ffprobeStreams(path.join(dir, 'no-ffprobe'), mkv, { shells }), (e: ToolError) => /is not installed/.test(e.reason) && e.exitCode === 127);
  });

  it('keeps stdout exactly, lines like the end of an answer included', async () => {
    const json = '{"streams": [{"index": 1, "codec_type": "audio", "codec_name": "ac3", "channels": 2, "tags": {"language": "eng"}}], "format": {"duration": "7.0"}}';
    const weird = fake('ffprobe-weird', `printf 'end\\t1\\nend\\t2\\n\\n'; printf '%s\\n' '${json}' >&2; printf '%s\\n' '${json}'`);
    // The lines before the JSON make it no JSON: the parser must see them, not lose the answer's end.
    await assert.rejects(ffprobeStreams(weird, mkv, { shells }), SyntaxError);
    const plain = fake('ffprobe-plain', `printf '%s\\n' '${json}'`);
    const r = await ffprobeStreams(plain, mkv, { shells });
    assert.deepEqual(r.audio.map((a) => [a.language, a.channels]), [['eng', 2]]);
    assert.equal(r.seconds, 7);
  });

  it('an abort stops a hanging ffprobe at once, and its shell with it', async () => {
    const hang = fake('ffprobe-hang', 'sleep 3600');
    const controller = new AbortController();
    const scan = ffprobeStreams(hang, mkv, { shells, signal: controller.signal, timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(alive('sleep\u00003600'), 'the stand-in runs');
    const t0 = Date.now();
    controller.abort();
    await assert.rejects(scan, (e: ToolError) => e.canceled);
    assert.ok(Date.now() - t0 < 1000);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(alive('sleep\u00003600'), false, 'nothing is left running');
    // The pool carries on with a new shell.
    assert.equal((await ffprobeStreams('ffprobe', mkv, { shells })).audio.length, 1);
  });

  it('a hanging ffprobe is stopped at its time limit', async () => {
    const hang = fake('ffprobe-hang2', 'sleep 3599');
    await assert.rejects(ffprobeStreams(hang, mkv, { shells, timeoutMs: 400 }), (e: ToolError) => e.timedOut && /time limit \(0 s\)/.test(e.reason));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(alive('sleep\u00003599'), false);
  });

  it('a scan aborted before it starts never runs', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(ffprobeStreams('ffprobe', mkv, { shells, signal: controller.signal }), (e: ToolError) => e.canceled);
  });
});
