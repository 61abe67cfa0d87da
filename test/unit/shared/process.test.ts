import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ProbeShellPool } from '../../../shared/probe-shell.js';
import { runTool, ToolError } from '../../../shared/process.js';
import { alive } from '../../fixtures/process-alive.js';

/** A promise opened by hand: the gate of a tool forked ahead. */
function gate(): { promise: Promise<void>; open: () => void; fail: (err: Error) => void } {
  let open = (): void => undefined;
  let fail: (err: Error) => void = () => undefined;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

/** The nice value of a running process (field 19 of /proc/<pid>/stat). */
function niceOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Waits until `check` holds, polling every 10 ms (at most 5 s). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check());
}

describe('runTool', () => {
  it('gives the exit code, the whole stdout when asked, the stderr tail and the lines as they come', async () => {
    const lines: string[] = [];
    const result = await runTool('sh', ['-c', 'echo one; echo two; echo oops >&2; exit 3'], { captureStdout: true, onStdoutLine: (l) => lines.push(l) });
    assert.deepEqual([result.exitCode, result.signal, result.stdout, result.stderr], [3, null, 'one\ntwo\n', 'oops\n']);
    assert.deepEqual(lines, ['one', 'two']);
  });

  it('passes extra environment on top of its own', async () => {
    const result = await runTool('sh', ['-c', 'echo "$RIPWERK_T:${PATH:+path}"'], { captureStdout: true, env: { RIPWERK_T: 'x' } });
    assert.equal(result.stdout, 'x:path\n');
  });

  it('runs a tool and what it starts at the nice value asked for', async () => {
    // The inner sh is started after the priority was set: it shows what a tool's own children get.
    const script = 'sleep 0.3; sh -c nice';
    const low = await runTool('sh', ['-c', script], { captureStdout: true, nice: 19 });
    assert.equal(low.stdout, '19\n');
    const ten = await runTool('sh', ['-c', script], { captureStdout: true, nice: 10 });
    assert.equal(ten.stdout, `${Math.max(10, os.getPriority())}\n`);
    const normal = await runTool('sh', ['-c', script], { captureStdout: true });
    assert.equal(normal.stdout, `${os.getPriority()}\n`);
  });

  it('says plainly when the tool is not installed', async () => {
    await assert.rejects(runTool('/nonexistent/ripwerk-tool', []), (err: unknown) => err instanceof ToolError && err.reason === 'ripwerk-tool is not installed (looked for /nonexistent/ripwerk-tool)');
  });

  it('stops the whole process group at the time limit', async () => {
    let pid = 0;
    const started = Date.now();
    await assert.rejects(
      runTool('sh', ['-c', 'sleep 30 & echo $!; wait'], { timeoutMs: 300, onStdoutLine: (l) => (pid = Number(l)) }),
      (err: unknown) => err instanceof ToolError && err.timedOut && /did not finish within 0 s/.test(err.reason),
    );
    assert.ok(Date.now() - started < 10_000);
    assert.ok(pid > 0);
    assert.equal(alive(pid), false, 'the grandchild of the timed-out tool is gone');
  });

  it('stops the tool when the signal aborts, and refuses to start after an abort', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    await assert.rejects(runTool('sleep', ['30'], { signal: ac.signal }), (err: unknown) => err instanceof ToolError && err.canceled);
    await assert.rejects(runTool('sleep', ['30'], { signal: ac.signal }), (err: unknown) => err instanceof ToolError && err.canceled);
  });

  describe('forked ahead (startWhen)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-ahead-'));
    /** A tool that notes it ran, prints its arguments and its pid, reads its stdin to the end and exits 4. */
    const tool = path.join(dir, 'tool');
    /** Live processes with the tool in their command line (the waiting shell, then the tool). */
    const waiting = (): number[] =>
      fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d) && alive(Number(d)) && fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(tool)).map(Number);
    fs.writeFileSync(tool, `#!/bin/sh\ntouch "${dir}/ran.$1"\necho "args:$*"\necho "pid:$$"\necho "stdin:$(cat)"\nexit 4\n`, { mode: 0o755 });

    it('forks the tool at once, runs it only when the gate opens, as the same process with its nice value and an empty stdin', async () => {
      const g = gate();
      const spawned: number[] = [];
      const lines: string[] = [];
      const run = runTool(tool, ['a', 'b c', '$HOME;x'], { startWhen: g.promise, nice: 7, onSpawn: (pid) => spawned.push(pid), onStdoutLine: (l) => lines.push(l) });
      await until(() => waiting().length === 1);
      const [pid] = waiting();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(fs.existsSync(path.join(dir, 'ran.a')), false, 'the tool has not run before the gate opened');
      assert.deepEqual(spawned, [], 'onSpawn waits for the start');
      assert.equal(niceOf(pid), Math.max(7, os.getPriority()), 'the waiting process has the nice value already');
      g.open();
      const result = await run;
      assert.equal(result.exitCode, 4);
      assert.deepEqual(lines, ['args:a b c $HOME;x', `pid:${pid}`, 'stdin:']);
      assert.deepEqual(spawned, [pid]);
      assert.ok(fs.existsSync(path.join(dir, 'ran.a')));
    });

    it('stops the waiting process when the gate fails, and throws the gate\'s error without running the tool', async () => {
      const g = gate();
      const spawned: number[] = [];
      const run = runTool(tool, ['failed'], { startWhen: g.promise, onSpawn: (pid) => spawned.push(pid) });
      await until(() => waiting().length === 1);
      g.fail(new Error('no slot'));
      await assert.rejects(run, /^Error: no slot$/);
      assert.deepEqual(waiting(), [], 'the waiting process is gone');
      assert.equal(fs.existsSync(path.join(dir, 'ran.failed')), false);
      assert.deepEqual(spawned, []);
    });

    it('ends as canceled when the signal aborts while it waits', async () => {
      const g = gate();
      const ac = new AbortController();
      const run = runTool(tool, ['aborted'], { startWhen: g.promise, signal: ac.signal });
      setTimeout(() => ac.abort(), 50);
      await assert.rejects(run, (err: unknown) => err instanceof ToolError && err.canceled);
      g.open();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(fs.existsSync(path.join(dir, 'ran.aborted')), false);
    });

    it('refuses to start after an abort, and the gate failing then is no unhandled rejection', async () => {
      const g = gate();
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(runTool(tool, ['never'], { startWhen: g.promise, signal: ac.signal }), (err: unknown) => err instanceof ToolError && err.canceled);
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      g.fail(new Error('withdrawn'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      process.off('unhandledRejection', onUnhandled);
      assert.deepEqual(unhandled, []);
      assert.equal(fs.existsSync(path.join(dir, 'ran.never')), false);
    });

    it('says plainly when the tool is not installed, without forking anything', async () => {
      let spawned = false;
      await assert.rejects(
        runTool('ripwerk-no-such-tool', [], { startWhen: Promise.resolve(), onSpawn: () => (spawned = true) }),
        (err: unknown) => err instanceof ToolError && err.reason === 'ripwerk-no-such-tool is not installed (looked for ripwerk-no-such-tool)',
      );
      await assert.rejects(runTool(dir, [], { startWhen: Promise.resolve() }), /is not installed/, 'a folder is no tool');
      assert.equal(spawned, false);
    });
  });
});

describe('the environment of a started tool', () => {
  const own = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072', RIPWERK_BROKER_SECRET: 'top-secret', MQTT_PASSWORD: 'pw-secret' };
  const withOwn = async (run: () => Promise<string>): Promise<string> => {
    const saved = Object.fromEntries(Object.keys(own).map((k) => [k, process.env[k]]));
    Object.assign(process.env, own, { RIPWERK_KEEP_ME: 'kept' });
    try {
      return await run();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      delete process.env.RIPWERK_KEEP_ME;
    }
  };

  it('holds neither the malloc settings given to Node nor the broker credentials, and everything else', async () => {
    const direct = await withOwn(async () => (await runTool('env', [], { captureStdout: true })).stdout);
    const ahead = await withOwn(async () => (await runTool('env', [], { captureStdout: true, startWhen: Promise.resolve() })).stdout);
    const shells = new ProbeShellPool({ script: 'answer() { env 3<&- 4<&-; }', max: 1, lowPriority: false, idleMs: 1000 });
    const inShell = await withOwn(async () => (await shells.run(['x'], 5000)) ?? '');
    shells.close();
    for (const [how, out] of [['direct', direct], ['forked ahead', ahead], ['probe shell', inShell]] as const) {
      for (const name of Object.keys(own)) assert.ok(!out.split('\n').some((l) => l.startsWith(`${name}=`)), `${how}: ${name} reached the tool`);
      assert.ok(out.includes('RIPWERK_KEEP_ME=kept'), `${how}: the rest of the environment is passed`);
      assert.ok(out.includes(`PATH=${process.env.PATH}`), how);
    }
  });
});
