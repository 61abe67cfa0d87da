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

  it('cuts at the keyframes nearest tapering parts (5:4:3:2 of the title for four chunks, longest first), every frame in exactly one chunk', () => {
    const plan = planChunks(packets, 4, 5);
    assert.equal(plan.frames, 959);
    // 40 s in parts of 5/14, 4/14, 3/14 and 2/14: cuts near 14.29, 25.72 and 34.29 s, each at the nearest keyframe.
    assert.deepEqual(plan.chunks.map((c) => c.startSeconds), [0.005, 14.52, 25.531, 34.54]);
    assert.deepEqual(plan.chunks.map((c) => c.endSeconds), [14.52, 25.531, 34.54, null]);
    assert.deepEqual(plan.chunks.map((c) => c.frames), [348, 264, 216, 131]);
    assert.deepEqual(plan.chunks.map((c) => c.firstFrame), [0, 348, 612, 828]);
    assert.equal(plan.chunks.reduce((n, c) => n + c.frames, 0), 959);
    for (const c of plan.chunks.slice(1)) assert.ok(packets.keyframes.includes(c.startSeconds), `chunk ${c.index} starts at a keyframe`);
  });

  it('puts each cut half a frame before its keyframe on HandBrake clock, the stop counted from the chunk first frame', () => {
    const plan = planChunks(packets, 4, 5);
    const frame = (39.962 - 0.005) / 958;
    assert.ok(Math.abs(plan.frameSeconds - frame) < 1e-9);
    const [c0, c1, , c3] = plan.chunks;
    const cut1 = Math.round((14.52 - 0.005 - frame / 2) * HANDBRAKE_PTS_HZ);
    // The duration runs from the chunk's own first frame (HandBrake counts it from there).
    const run1 = Math.round((25.531 - 14.52 - frame / 2) * HANDBRAKE_PTS_HZ);
    assert.equal(c1.startTicks, cut1);
    assert.equal(c1.durationTicks, run1);
    assert.deepEqual(chunkCutArgs(c0), ['--stop-at', `pts:${cut1}`]);
    assert.deepEqual(chunkCutArgs(c1), ['--start-at', `pts:${cut1}`, '--stop-at', `pts:${run1}`]);
    assert.deepEqual(chunkCutArgs(c3), ['--start-at', `pts:${c3.startTicks}`]);
  });

  it('makes no chunk shorter than the minimum, and one whole chunk where nothing can be cut', () => {
    // Ten wanted, but the shortest of ten tapering parts of 40 s would be 1.2 s: four (the shortest 5.7 s).
    assert.deepEqual(planChunks(packets, 10, 5).chunks.map((c) => c.frames), [348, 264, 216, 131]);
    assert.equal(planChunks(packets, 10, 15).chunks.length, 2);
    const whole = planChunks(packets, 4, 60);
    assert.equal(whole.chunks.length, 1);
    assert.deepEqual(chunkCutArgs(whole.chunks[0]), []);
    const noKeys = planChunks({ pts: packets.pts, keyframes: [0.005] }, 4, 5);
    assert.equal(noKeys.chunks.length, 1);
    assert.equal(noKeys.chunks[0].frames, 959);
  });
});
