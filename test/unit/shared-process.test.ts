import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { runTool, ToolError } from '../../shared/process.js';
import { alive } from '../fixtures/process-alive.js';

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
});
