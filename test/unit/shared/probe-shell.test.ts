import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ProbeShellPool } from '../../../shared/probe-shell.js';
import { alive } from '../../fixtures/process-alive.js';

/**
 * A test script for the probe shell's loop: per field it answers "<pid> <nice> <length>:<field>"
 * (newlines and tabs in a field shown as \n and \t); a field "hang" starts a sleep that never ends on its
 * own and waits for it, as a du on a dead network mount would.
 */
const ECHO_SCRIPT = [
  'answer() {',
  '  local f shown',
  '  for f; do',
  '    if [ "$f" = hang ]; then sleep 300 3<&-; fi',
  '    shown=${f//$\'\\n\'/\\\\n}; shown=${shown//$\'\\t\'/\\\\t}',
  '    printf "%s %s %s:%s\\n" "$$" "$(nice)" "${#f}" "$shown"',
  '  done',
  '}',
].join('\n');

function pool(opts: Partial<{ max: number; lowPriority: boolean; idleMs: number }> = {}): ProbeShellPool {
  return new ProbeShellPool({ script: ECHO_SCRIPT, max: 2, lowPriority: false, idleMs: 60_000, ...opts });
}

function pidOf(answer: string | null): number {
  assert.ok(answer, 'an answer');
  return Number(answer.split(' ')[0]);
}

async function until(what: string, check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ProbeShellPool (long-lived probe shells)', () => {
  it('answers request after request from one shell: no process per probe', async () => {
    const p = pool();
    try {
      const pids = [];
      for (let i = 0; i < 5; i++) pids.push(pidOf(await p.run([`/x/${i}`], 2000)));
      assert.equal(new Set(pids).size, 1, `one shell answered all five: ${pids.join(', ')}`);
      assert.equal(p.size, 1);
    } finally {
      p.close();
    }
  });

  it('passes every field exactly: spaces, tabs, newlines, quotes, a leading dash, empty fields', async () => {
    const p = pool();
    try {
      const fields = ['/a b/c', '/tab\there', '/new\nline', `/q'u"o$te`, '-- -x', '', '.', '/last'];
      const answer = await p.run(fields, 2000);
      assert.ok(answer);
      const lines = answer.trimEnd().split('\n').map((l) => l.split(' ').slice(2).join(' '));
      assert.deepEqual(lines, ['6:/a b/c', '9:/tab\\there', '9:/new\\nline', '9:/q\'u"o$te', '5:-- -x', '0:', '1:.', '5:/last']);
    } finally {
      p.close();
    }
  });

  it('hands requests over in an unlinked file only the coordinator can read, the whole of each and no more', async () => {
    const p = pool({ max: 1 });
    try {
      const long = await p.run(['/one', '/two', '/three', '/four'], 2000);
      const pid = pidOf(long);
      assert.equal(long?.trimEnd().split('\n').length, 4);
      // The shell's descriptor 4 is the request file: no name left on disk, mode 0600.
      assert.match(fs.readlinkSync(`/proc/${pid}/fd/4`), /\/ripwerk-probe-[0-9a-f-]+ \(deleted\)$/);
      assert.equal(fs.statSync(`/proc/${pid}/fd/4`).mode & 0o777, 0o600);
      // A shorter request after a longer one: nothing of the longer one is read again.
      const short = await p.run(['/x'], 2000);
      assert.equal(pidOf(short), pid);
      assert.deepEqual(short?.trimEnd().split('\n').map((l) => l.split(' ').slice(2).join(' ')), ['2:/x']);
    } finally {
      p.close();
    }
  });

  it('answers null, and throws nothing, when no request file can be made', async () => {
    const tmp = process.env.TMPDIR;
    const restore = (): void => {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    };
    process.env.TMPDIR = path.join(os.tmpdir(), `no-such-dir-${process.pid}`, 'deeper');
    const p = pool({ max: 1 });
    try {
      p.warm();
      assert.equal(p.size, 0);
      assert.deepEqual(await Promise.all([p.run(['/a'], 2000), p.run(['/b'], 2000)]), [null, null]);
      // With a temporary directory again, the same pool starts a shell for the next request.
      restore();
      assert.ok(pidOf(await p.run(['/c'], 2000)) > 0);
    } finally {
      restore();
      p.close();
    }
  });

  it('runs up to max shells at once and queues the rest', async () => {
    const p = pool({ max: 2 });
    try {
      const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => p.run([`/j${i}`], 3000)));
      const pids = new Set(answers.map(pidOf));
      assert.ok(pids.size >= 1 && pids.size <= 2, `at most two shells: ${[...pids].join(', ')}`);
      assert.ok(p.size <= 2);
      answers.forEach((a, i) => assert.match(a ?? '', new RegExp(`:/j${i + 1}\\n$`)));
    } finally {
      p.close();
    }
  });

  it('stops a hanging request at its limit with everything it started, and the next request gets a new shell', async () => {
    const p = pool({ max: 1 });
    try {
      const first = pidOf(await p.run(['/ok'], 2000));
      const started = Date.now();
      const hung = await p.run(['hang'], 300);
      const took = Date.now() - started;
      assert.equal(hung, null);
      assert.ok(took >= 290 && took < 2000, `answered null after ${took} ms`);
      // The shell and its sleep (same process group) are gone.
      await until('the hung shell to be gone', () => !alive(first));
      await until('its sleep to be gone', () => !alive(-first));
      const next = pidOf(await p.run(['/after'], 2000));
      assert.notEqual(next, first);
    } finally {
      p.close();
    }
  });

  it('an abort stops a request in flight with its shell, and takes a waiting one out of the queue unrun', async () => {
    const p = pool({ max: 1 });
    try {
      const first = pidOf(await p.run(['/ok'], 2000));
      const inFlight = new AbortController();
      const waiting = new AbortController();
      const hung = p.run(['hang'], 60_000, inFlight.signal);
      const queued = p.run(['/never'], 60_000, waiting.signal);
      const after = p.run(['/after'], 5000);
      await new Promise((r) => setTimeout(r, 200));
      waiting.abort();
      assert.equal(await queued, null);
      const t0 = Date.now();
      inFlight.abort();
      assert.equal(await hung, null);
      assert.ok(Date.now() - t0 < 1000);
      await until('the aborted shell to be gone', () => !alive(first));
      await until('its sleep to be gone', () => !alive(-first));
      // The queued request never ran: the next shell's first answer is the one after it.
      const next = await after;
      assert.notEqual(pidOf(next), first);
      assert.match(next ?? '', /:\/after\n$/);
      assert.equal(await p.run(['/x'], 2000, AbortSignal.abort()), null, 'aborted before it is asked');
    } finally {
      p.close();
    }
  });

  it('answers null when its shell is killed from outside, and carries on with a new one', async () => {
    const p = pool({ max: 1 });
    try {
      const first = pidOf(await p.run(['/ok'], 2000));
      const pending = p.run(['hang'], 10_000);
      await new Promise((r) => setTimeout(r, 100));
      process.kill(-first, 'SIGKILL');
      assert.equal(await pending, null);
      assert.notEqual(pidOf(await p.run(['/again'], 2000)), first);
    } finally {
      p.close();
    }
  });

  it('ends a shell that had nothing to do for idleMs', async () => {
    const p = pool({ idleMs: 100 });
    try {
      const pid = pidOf(await p.run(['/ok'], 2000));
      assert.equal(p.size, 1);
      await until('the idle shell to end', () => p.size === 0 && !alive(pid));
      assert.notEqual(pidOf(await p.run(['/back'], 2000)), pid);
    } finally {
      p.close();
    }
  });

  it('warm() starts one shell ahead that answers the first request, and ends it after idleMs unused', async () => {
    const p = pool({ idleMs: 300 });
    try {
      p.warm();
      p.warm();
      assert.equal(p.size, 1, 'one shell started ahead, not two');
      const first = pidOf(await p.run(['/first'], 2000));
      assert.equal(p.size, 1, 'the first request went to the shell started ahead');
      const unused = pool({ idleMs: 100 });
      try {
        unused.warm();
        assert.equal(unused.size, 1);
        await until('the unused shell to end', () => unused.size === 0);
      } finally {
        unused.close();
      }
      assert.ok(alive(first), 'the used shell is still there within its idle time');
    } finally {
      p.close();
    }
  });

  it('runs a low-priority pool at nice 19 and a normal one at the coordinator\'s own priority', async () => {
    const low = pool({ lowPriority: true });
    const normal = pool();
    try {
      assert.equal((await low.run(['/x'], 2000))?.split(' ')[1], '19');
      assert.equal((await normal.run(['/x'], 2000))?.split(' ')[1], String(os.getPriority()));
    } finally {
      low.close();
      normal.close();
    }
  });

  it('runs none of the service user\'s shell set-up (~/.bashrc, BASH_ENV), as under systemd', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-probe-home-'));
    const marker = path.join(home, 'sourced');
    fs.writeFileSync(path.join(home, '.bashrc'), `touch '${marker}-bashrc'\n`);
    fs.writeFileSync(path.join(home, 'env.sh'), `touch '${marker}-bash-env'\n`);
    const saved = { HOME: process.env.HOME, SHLVL: process.env.SHLVL, BASH_ENV: process.env.BASH_ENV };
    // A service has no SHLVL: bash then runs ~/.bashrc when it takes its stdin for a remote shell's.
    process.env.HOME = home;
    delete process.env.SHLVL;
    process.env.BASH_ENV = path.join(home, 'env.sh');
    const p = pool();
    try {
      assert.ok(await p.run(['/x'], 5000));
      assert.deepEqual(fs.readdirSync(home).filter((f) => f.startsWith('sourced')), []);
    } finally {
      p.close();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('answers null to requests in flight and waiting when closed, and to any later one', async () => {
    const p = pool({ max: 1 });
    const inFlight = p.run(['hang'], 10_000);
    const waiting = p.run(['/queued'], 10_000);
    await new Promise((r) => setTimeout(r, 100));
    p.close();
    assert.deepEqual(await Promise.all([inFlight, waiting, p.run(['/late'], 1000)]), [null, null, null]);
  });
});
