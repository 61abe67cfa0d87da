import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ChunkEncoderLedger, chunkEncodersFile, isStillTheEncoder, type ChunkEncoderEntry } from '../../../../agent/features/chunk-leftovers.js';
import { chunkFolder, chunkFileName } from '../../../../shared/chunking.js';
import { groupAlive } from '../../../../shared/process.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-chunk-leftovers-'));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.pid) try { process.kill(-c.pid, 'SIGKILL'); } catch { /* gone */ }
  fs.rmSync(root, { recursive: true, force: true });
});

let n = 0;
/** A chunk file in a raw folder, written as a partial encode leaves it. */
function chunkFile(): string {
  const file = path.join(chunkFolder(path.join(root, `raw${++n}`, 'job1'), 'job1', 0), chunkFileName(1, '1f0e2a9b-aaaa'));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, 'partial');
  return file;
}

/** A process group like an encoder's (its own group, the chunk's file on its command line), or without that file. */
function encoderLike(mentions: string): number {
  const child = spawn('bash', ['-c', 'sleep 60; : "$0"', mentions], { detached: true, stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

const until = async (cond: () => boolean): Promise<void> => {
  for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('agent: chunk encoders a killed agent left running (issue 41)', () => {
  it('ends a leftover encoder still writing its chunk, removes its file and forgets it', async () => {
    const file = chunkEncodersFile(root, 'keller');
    const output = chunkFile();
    const pid = encoderLike(output);
    new ChunkEncoderLedger(file).started('cmd-1', pid, output);
    assert.equal((fs.statSync(file).mode & 0o777).toString(8), '600');
    // The agent was killed here; its next run opens the same ledger.
    const found = await new ChunkEncoderLedger(file).endLeftovers();
    assert.deepEqual(found.ended.map((e) => [e.command_id, e.pid, e.output]), [['cmd-1', pid, output]]);
    assert.deepEqual(found.gone, []);
    await until(() => !groupAlive(pid));
    assert.equal(groupAlive(pid), false, 'the encoder was stopped');
    assert.equal(fs.existsSync(output), false, 'its partial file is removed');
    assert.equal(fs.existsSync(file), false, 'nothing left to remember');
  });

  it('leaves a process alone that is not the encoder any more (a reused pid), and still removes the chunk file', async () => {
    const file = chunkEncodersFile(root, 'wohnzimmer');
    const output = chunkFile();
    const stranger = encoderLike(path.join(root, 'something-else'));
    new ChunkEncoderLedger(file).started('cmd-2', stranger, output);
    const found = await new ChunkEncoderLedger(file).endLeftovers();
    assert.deepEqual(found.ended, []);
    assert.deepEqual(found.gone.map((e) => e.command_id), ['cmd-2']);
    assert.equal(groupAlive(stranger), true, 'not touched');
    assert.equal(fs.existsSync(output), false);
  });

  it('forgets an encoder that ended, keeps the others, and ignores entries that are no chunk encoder (nothing else is removed or killed)', async () => {
    const file = chunkEncodersFile(root, 'dachboden');
    const ledger = new ChunkEncoderLedger(file);
    const a = chunkFile();
    const b = chunkFile();
    const pidA = encoderLike(a);
    const pidB = encoderLike(b);
    ledger.started('a', pidA, a);
    ledger.started('b', pidB, b);
    ledger.ended('a');
    assert.deepEqual((JSON.parse(fs.readFileSync(file, 'utf8')) as ChunkEncoderEntry[]).map((e) => e.command_id), ['b']);
    ledger.ended('b');
    assert.equal(fs.existsSync(file), false, 'an empty ledger is no file');
    // A ledger someone edited: a file that is no chunk's, pid 1, garbage.
    const precious = path.join(root, 'precious.mkv');
    fs.writeFileSync(precious, 'film');
    const victim = encoderLike(precious);
    fs.writeFileSync(file, JSON.stringify([
      { command_id: 'x', pid: victim, output: precious, started_at: new Date().toISOString() },
      { command_id: 'y', pid: 1, output: a, started_at: new Date().toISOString() },
      'garbage',
    ]));
    const found = await new ChunkEncoderLedger(file).endLeftovers();
    assert.deepEqual([found.ended, found.gone], [[], []]);
    assert.equal(fs.existsSync(precious), true);
    assert.equal(groupAlive(victim), true);
    // An unreadable ledger is an empty one.
    fs.writeFileSync(file, '{not json');
    assert.deepEqual(await new ChunkEncoderLedger(file).endLeftovers(), { ended: [], gone: [] });
    for (const pid of [pidA, pidB]) process.kill(-pid, 'SIGKILL');
  });

  it('without /proc (the native worker) trusts a pid only from an encoder started since the host booted', () => {
    const now = Date.now();
    const entry = (startedAgoSeconds: number): ChunkEncoderEntry => ({ command_id: 'c', pid: process.pid, output: '/x', started_at: new Date(now - startedAgoSeconds * 1000).toISOString() });
    const noProc = path.join(root, 'no-proc');
    assert.equal(isStillTheEncoder(entry(10), now, noProc), true);
    assert.equal(isStillTheEncoder(entry(os.uptime() + 3600), now, noProc), false, 'started before the boot: the pid is another one now');
    // With /proc the command line decides: this test process does not mention /x's chunk.
    assert.equal(isStillTheEncoder({ ...entry(10), output: '/nowhere/.ripwerk-chunks/c01.mkv' }, now), false);
  });
});
