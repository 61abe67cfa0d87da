import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkCutArgs, HANDBRAKE_PTS_HZ, parseVideoPackets, planChunks } from '../../../../agent/tasks/chunk-plan.js';
import { sampleText } from '../../../fixtures/tools-samples.js';

const packets = parseVideoPackets(sampleText('ffprobe-video-packets-mpeg2.csv'));

describe('chunk plan: where a long title is cut (issue 41)', () => {
  it('reads the frame times and keyframes of real ffprobe output in display order', () => {
    assert.equal(packets.pts.length, 959);
    assert.equal(packets.keyframes.length, 81);
    assert.equal(packets.pts[0], 0.005);
    assert.equal(packets.keyframes[1], 0.506);
    assert.ok(packets.pts.every((t, i) => i === 0 || t > packets.pts[i - 1]), 'ascending, no time twice');
    assert.deepEqual(parseVideoPackets('N/A,__\n1.5,K_\n0.5,__\n'), { pts: [0.5, 1.5], keyframes: [1.5] });
    assert.throws(() => parseVideoPackets(''), /no video frame/);
  });

  it('cuts at the keyframes nearest equal parts, every frame in exactly one chunk', () => {
    const plan = planChunks(packets, 4, 5);
    assert.equal(plan.frames, 959);
    assert.deepEqual(plan.chunks.map((c) => c.startSeconds), [0.005, 10.015, 20.025, 30.035]);
    assert.deepEqual(plan.chunks.map((c) => c.endSeconds), [10.015, 20.025, 30.035, null]);
    assert.deepEqual(plan.chunks.map((c) => c.frames), [240, 240, 240, 239]);
    assert.deepEqual(plan.chunks.map((c) => c.firstFrame), [0, 240, 480, 720]);
    for (const c of plan.chunks.slice(1)) assert.ok(packets.keyframes.includes(c.startSeconds), `chunk ${c.index} starts at a keyframe`);
  });

  it('puts each cut half a frame before its keyframe on HandBrake clock, the stop counted from the chunk first frame', () => {
    const plan = planChunks(packets, 4, 5);
    const frame = (39.962 - 0.005) / 958;
    assert.ok(Math.abs(plan.frameSeconds - frame) < 1e-9);
    const [c0, c1, , c3] = plan.chunks;
    const cut1 = Math.round((10.015 - 0.005 - frame / 2) * HANDBRAKE_PTS_HZ);
    // The duration runs from the chunk's own first frame (HandBrake counts it from there).
    const run1 = Math.round((20.025 - 10.015 - frame / 2) * HANDBRAKE_PTS_HZ);
    assert.equal(c1.startTicks, cut1);
    assert.equal(c1.durationTicks, run1);
    assert.deepEqual(chunkCutArgs(c0), ['--stop-at', `pts:${cut1}`]);
    assert.deepEqual(chunkCutArgs(c1), ['--start-at', `pts:${cut1}`, '--stop-at', `pts:${run1}`]);
    assert.deepEqual(chunkCutArgs(c3), ['--start-at', `pts:${c3.startTicks}`]);
  });

  it('makes no chunk shorter than the minimum, and one whole chunk where nothing can be cut', () => {
    assert.equal(planChunks(packets, 10, 15).chunks.length, 2);
    const whole = planChunks(packets, 4, 60);
    assert.equal(whole.chunks.length, 1);
    assert.deepEqual(chunkCutArgs(whole.chunks[0]), []);
    const noKeys = planChunks({ pts: packets.pts, keyframes: [0.005] }, 4, 5);
    assert.equal(noKeys.chunks.length, 1);
    assert.equal(noKeys.chunks[0].frames, 959);
  });
});
