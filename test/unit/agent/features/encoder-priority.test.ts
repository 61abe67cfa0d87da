import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { handbrakeTranscoder } from '../../../../agent/features/job-work.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-encoder-nice-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/**
 * A HandBrakeCLI stand-in that writes the nice value it runs at into its output, started after a
 * short wait (spawn returns once it runs; the priority is set right after), and ends like HandBrake.
 */
const encoder = path.join(root, 'HandBrakeCLI');
fs.writeFileSync(
  encoder,
  [
    '#!/bin/sh',
    'out=; prev=; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done',
    'sleep 0.3; nice > "$out"',
    `printf 'Progress: {\\n "State": "WORKDONE",\\n "WorkDone": {\\n  "Error": 0\\n }\\n}\\n'`,
  ].join('\n'),
  { mode: 0o755 },
);

async function encodeAt(encoderNice: number): Promise<string> {
  const input = path.join(root, 'in.mkv');
  fs.writeFileSync(input, 'x');
  const output = path.join(root, `out-${encoderNice}.mkv`);
  await handbrakeTranscoder({ handbrakeCli: encoder, encoderNice, slots: 1 }).transcode(input, output, 'Fast 1080p30', { signal: new AbortController().signal, onProgress: () => undefined, onSpawn: () => undefined, streamArgs: [] });
  return fs.readFileSync(output, 'utf8').trim();
}

describe('the encoder runs at ENCODER_NICE', () => {
  it('at the nice value configured, and at the agent\'s own priority with 0', async () => {
    assert.equal(await encodeAt(10), String(Math.max(10, os.getPriority())));
    assert.equal(await encodeAt(17), String(Math.max(17, os.getPriority())));
    assert.equal(await encodeAt(0), String(os.getPriority()));
  });
});
