import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REASONS, reasonText } from '../../../shared/reasons.js';

const paramsOf = (text: string): string[] => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string).sort();

describe('the refusal catalogue (issue 38)', () => {
  it('words every code in German and English with the same parameters', () => {
    for (const [code, texts] of Object.entries(REASONS)) {
      assert.deepEqual(paramsOf(texts.de), paramsOf(texts.en), code);
      assert.notEqual(texts.de, texts.en, code);
    }
  });

  it('fills the parameters in and words a job status in the language', () => {
    assert.equal(reasonText('retryTranscodeNotRetryable', { status: 'completed' }, 'de'), 'Nur ein fehlgeschlagener oder abgebrochener Auftrag lässt sich erneut komprimieren (dieser: fertig).');
    assert.equal(reasonText('retryTranscodeNotRetryable', { status: 'completed' }, 'en'), 'Only a failed or canceled job can be compressed again (this one: done).');
    assert.equal(reasonText('retryNoDisc', { drive: 'flur-sr0' }, 'de'), 'In flur-sr0 liegt keine Disc: Bitte die Disc dieses Auftrags einlegen und es noch einmal versuchen.');
    assert.equal(reasonText('noSuchCode', {}, 'de'), null);
    assert.equal(reasonText('toString', {}, 'de'), null, 'no inherited name counts as a code');
  });
});
