import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { leadingTranscoder, leadTools, type AskForChunks } from '../../../../agent/tasks/chunk-lead.js';
import { DEFAULT_CHUNK_BINS as BINS, encodeChunk } from '../../../../agent/tasks/chunk-encode.js';
import { chunkOfCut } from '../../../../agent/features/chunk-runner.js';
import type { Transcoder, TranscodeHooks } from '../../../../agent/tasks/transcode-task.js';

const PRESET = 'Very Fast 480p30';

function frames(file: string, stream = 'v:0'): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-select_streams', stream, '-count_packets', '-show_entries', 'stream=nb_read_packets', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim().replace(/,$/, ''));
}

/** A transcoder whose own encode must not run for a chunked title; its scan says the given length. */
function baseTranscoder(seconds: number, whole: string[]): Transcoder {
  return {
    scan: async () => ({ seconds, audio: [], subtitles: [] }),
    transcode: async (input, output) => {
      whole.push(input);
      fs.writeFileSync(output, 'whole');
    },
  };
}

describe('the lead of a chunked title (real HandBrakeCLI, mkvmerge, ffprobe; issue 41)', () => {
  let dir: string;
  let raw: string;
  let source: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-chunk-lead-'));
    raw = path.join(dir, 'raw', 'job1');
    fs.mkdirSync(raw, { recursive: true });
    source = path.join(raw, 'title_t00.mkv');
    execFileSync('ffmpeg', [
      '-v', 'error', '-nostdin',
      '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
      '-t', '24', '-c:v', 'mpeg2video', '-g', '12', '-bf', '2', '-q:v', '4', '-c:a', 'ac3', '-y', source,
    ]);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('plans, has the chunks encoded elsewhere, runs the streams pass in its slot and joins every frame, then removes the chunk folder', async () => {
    const whole: string[] = [];
    const asked: Parameters<AskForChunks>[0][] = [];
    // The other agents, as the coordinator would hand the chunks out: two at a time.
    const ask: AskForChunks = async (plan) => {
      asked.push(plan);
      const files = plan.cuts.map((c) => path.join(plan.folder, `c${String(c.index).padStart(2, '0')}.mkv`));
      for (let i = 0; i < plan.cuts.length; i += 2) {
        await Promise.all(plan.cuts.slice(i, i + 2).map((c) => encodeChunk(BINS, plan.input, files[c.index]!, plan.preset, chunkOfCut(c))));
      }
      return files;
    };
    const seen = { spawned: 0, exited: 0, slotTaken: false };
    let takeSlot: () => void = () => undefined;
    const slot = new Promise<void>((r) => (takeSlot = r));
    const lead = leadingTranscoder(baseTranscoder(24, whole), { chunking: { min_seconds: 15, agents: 2 }, jobId: 'job1', rawDir: raw, files: [source], ask, minChunkSeconds: 5, log: () => undefined });
    const output = path.join(dir, 'out.mkv');
    const hooks: TranscodeHooks = {
      signal: new AbortController().signal,
      onProgress: () => undefined,
      onSpawn: () => {
        assert.ok(seen.slotTaken, 'the streams pass starts only in the lead\'s slot');
        seen.spawned++;
      },
      onExit: () => seen.exited++,
      streamArgs: [],
      startWhen: slot,
    };
    setTimeout(() => {
      seen.slotTaken = true;
      takeSlot();
    }, 50);
    await lead.transcode(source, output, PRESET, hooks);
    assert.deepEqual(whole, [], 'the title was not encoded whole');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.title, 0);
    assert.equal(asked[0]!.folder, path.join(raw, '.ripwerk-chunks', 'job1', '0'));
    assert.equal(asked[0]!.cuts.length, 3, '24 s in tapering chunks (4:3:2) of at least 5 s: three, the shortest 5.3 s');
    assert.deepEqual(asked[0]!.cuts.map((c) => c.index), [0, 1, 2]);
    assert.equal(asked[0]!.cuts.reduce((n, c) => n + c.frames, 0), frames(source), 'every frame in one chunk');
    assert.equal(frames(output), frames(source), 'the joined file has every frame of the title');
    assert.equal(frames(output, 'a:0') > 0, true, 'with the audio of the streams pass');
    assert.deepEqual([seen.spawned >= 1, seen.exited], [true, 1]);
    assert.equal(fs.existsSync(path.join(raw, '.ripwerk-chunks')), false, 'the chunk folders are gone');
  });

  it('encodes the title whole when the joined chunks have other frames than the title (a preset that deinterlaces in bob mode), and says why', async () => {
    // A user's preset that deinterlaces every frame in bob mode: HandBrake makes frames of its own in each chunk.
    const bob = path.join(dir, 'HandBrakeCLI-bob');
    fs.writeFileSync(bob, '#!/bin/sh\ncase " $* " in *" -a none "*) exec HandBrakeCLI "$@" --comb-detect=off --deinterlace=bob;; esac\nexec HandBrakeCLI "$@"\n', { mode: 0o755 });
    const bins = { ...BINS, handbrake: bob };
    const ask: AskForChunks = async (plan) => {
      const files = plan.cuts.map((c) => path.join(plan.folder, `c${String(c.index).padStart(2, '0')}.mkv`));
      await Promise.all(plan.cuts.map((c) => encodeChunk(bins, plan.input, files[c.index]!, plan.preset, chunkOfCut(c))));
      return files;
    };
    const whole: string[] = [];
    const said: string[] = [];
    const lead = leadingTranscoder(baseTranscoder(24, whole), { chunking: { min_seconds: 15, agents: 2 }, jobId: 'job1', rawDir: raw, files: [source], ask, tools: leadTools(bins), minChunkSeconds: 5, log: (m) => said.push(m) });
    const output = path.join(dir, 'bob.mkv');
    await lead.transcode(source, output, PRESET, { signal: new AbortController().signal, onProgress: () => undefined, onSpawn: () => undefined, streamArgs: [] });
    assert.deepEqual(whole, [source], 'encoded whole after all');
    assert.equal(fs.readFileSync(output, 'utf8'), 'whole', 'the whole encode\'s output, not the join\'s');
    assert.match(said.at(-1) ?? '', new RegExp(`^title_t00\\.mkv: the joined chunks have \\d+ frames where the title has ${frames(source)} \\(the preset makes frames of its own, bob deinterlacing say\\): the title is encoded whole on this worker$`));
    assert.equal(fs.existsSync(path.join(raw, '.ripwerk-chunks')), false, 'the chunk folders are gone');
  });

  it('encodes a title no longer than the limit, and a second attempt\'s remux, whole', async () => {
    const whole: string[] = [];
    const ask: AskForChunks = async () => assert.fail('no help asked');
    const lead = leadingTranscoder(baseTranscoder(15, whole), { chunking: { min_seconds: 15, agents: 2 }, jobId: 'job1', rawDir: raw, files: [source], ask, minChunkSeconds: 5 });
    const hooks: TranscodeHooks = { signal: new AbortController().signal, onProgress: () => undefined, onSpawn: () => undefined, streamArgs: [] };
    await lead.transcode(source, path.join(dir, 'short.mkv'), PRESET, hooks);
    const longer = leadingTranscoder(baseTranscoder(24, whole), { chunking: { min_seconds: 15, agents: 2 }, jobId: 'job1', rawDir: raw, files: [source], ask, minChunkSeconds: 5 });
    const remux = path.join(raw, '.ripwerk-remux', 'title_t00.mkv');
    await longer.transcode(remux, path.join(dir, 'remux.mkv'), PRESET, hooks);
    assert.deepEqual(whole, [source, remux]);
  });

  it('fails with the coordinator\'s reason and leaves no chunk folder when the chunks cannot be had', async () => {
    const ask: AskForChunks = async () => {
      throw new Error('chunk 2 of the title failed 2 times');
    };
    const lead = leadingTranscoder(baseTranscoder(24, []), { chunking: { min_seconds: 15, agents: 2 }, jobId: 'job1', rawDir: raw, files: [source], ask, minChunkSeconds: 5 });
    const output = path.join(dir, 'failed.mkv');
    await assert.rejects(lead.transcode(source, output, PRESET, { signal: new AbortController().signal, onProgress: () => undefined, onSpawn: () => undefined, streamArgs: [] }), /chunk 2 of the title failed 2 times/);
    assert.equal(fs.existsSync(output), false);
    assert.equal(fs.existsSync(path.join(raw, '.ripwerk-chunks')), false);
  });
});
