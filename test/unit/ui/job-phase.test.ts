import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uiModules } from '../../fixtures/ui-modules.js';

const job = (status: string, phase: string | null, progress: number, meta: unknown = null) => ({ status, phase, progress, meta });
const states = (line: { steps: { step: string; state: string }[] } | null) => line?.steps.map((s) => `${s.step}:${s.state}`).join(' ');

describe('jobs page: the phase line', () => {
  it('marks rip, compress and file away as done, running or next', async () => {
    const m = await uiModules();
    assert.equal(states(m.phaseLine(job('processing', 'rip', 40))), 'rip:now transcode:next file:next');
    assert.equal(states(m.phaseLine(job('transcoding', 'transcode', 10))), 'rip:done transcode:now file:next');
    // The last encoder has ended: the agent checks and moves the files into place.
    assert.equal(states(m.phaseLine(job('transcoding', 'transcode', 100))), 'rip:done transcode:done file:now');
    // An audio CD has no compress step.
    assert.equal(states(m.phaseLine(job('processing', 'rip', 40, { album: { title: 'X' } }))), 'rip:now file:next');
    assert.equal(m.phaseLine(job('completed', 'transcode', 100)), null);
    assert.equal(m.phaseLine(job('failed', 'rip', 10)), null);
  });

  it('says which file is compressed, as the agent shares the progress across its files', async () => {
    const m = await uiModules();
    // Two files: file 1 at 50 % reports 25 %, file 2 at 0 % reports 50 %.
    assert.deepEqual(m.transcodeFile(25, 2), { index: 1, count: 2 });
    assert.deepEqual(m.transcodeFile(49.9, 2), { index: 1, count: 2 });
    assert.deepEqual(m.transcodeFile(50, 2), { index: 2, count: 2 });
    assert.deepEqual(m.transcodeFile(99.9, 3), { index: 3, count: 3 });
    assert.equal(m.transcodeFile(40, 1), null);
    const line = m.phaseLine(job('transcoding', 'transcode', 60, { raw_files: ['a.mkv', 'b.mkv'] }));
    assert.deepEqual(line?.file, { index: 2, count: 2 });
    m.setLang('de');
    assert.equal(m.t('jobs.fileOf', { index: 1, count: 2 }), 'Datei 1 von 2');
  });

  it('words a running status as what is happening, in German and English', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.statusText('transcoding'), 'wird komprimiert');
    assert.equal(m.statusText('processing'), 'wird gerippt');
    m.setLang('en');
    assert.equal(m.statusText('transcoding'), 'being compressed');
    assert.equal(m.statusText('mystery'), 'mystery');
  });
});

describe('jobs page: an audio stream without a language tag', () => {
  it('is named as untagged, not as the browser\'s "root" (issue 38)', async () => {
    const m = await uiModules();
    m.setLang('de');
    assert.equal(m.languageName('und'), 'ohne Sprachangabe');
    assert.equal(m.languageName('deu'), 'Deutsch');
    m.setLang('en');
    assert.equal(m.languageName('und'), 'untagged');
  });

  it('says who compressed how much of a title encoded in chunks, the largest share first (issue 41)', async () => {
    const m = await uiModules();
    m.setLang('en');
    assert.equal(m.chunkSharesText({ chunk_frames: { 'wohnzimmer@pc': 2000, 'keller@nas': 3000 } }), 'keller@nas: 60%, wohnzimmer@pc: 40%');
    m.setLang('de');
    assert.equal(m.chunkSharesText({ chunk_frames: { 'wohnzimmer@pc': 2000, 'keller@nas': 3000 } }), 'keller@nas: 60\u00a0%, wohnzimmer@pc: 40\u00a0%', 'a German percent keeps its number');
    assert.equal(m.chunkSharesText({ chunk_frames: { 'keller@nas': 0, 'wohnzimmer@pc': 0 } }), null, 'nothing done yet');
    assert.equal(m.chunkSharesText({}), null, 'a title encoded whole');
    assert.equal(m.chunkSharesText(null), null);
  });
});
