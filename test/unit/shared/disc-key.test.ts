import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLegacyKey, keyMatches, labelKey, lookupKeys, sameDisc } from '../../../shared/disc-key.js';

// Two discs of a box set: the same label and size (so the same label fingerprint), different content.
const LABEL = 'd94b641ab4b8f509';
const disc1 = { fingerprint: 'dvd:AAA', label_fingerprint: LABEL };
const disc2 = { fingerprint: 'dvd:BBB', label_fingerprint: LABEL };
/** An older agent: its fingerprint is label+size, it sends no label_fingerprint. */
const olderAgent = { fingerprint: LABEL };

describe('disc keys: identity first, label fingerprint for legacy records only', () => {
  it('calls a key without a colon legacy', () => {
    assert.equal(isLegacyKey(LABEL), true);
    for (const key of ['dvd:AAA', 'aacs:1', 'mb:abc-', 'files:ff']) assert.equal(isLegacyKey(key), false);
  });

  it('looks a disc up under its identity, then under its label fingerprint', () => {
    assert.deepEqual(lookupKeys(disc1), ['dvd:AAA', LABEL]);
    // An older agent's fingerprint is the label fingerprint: one key.
    assert.deepEqual(lookupKeys(olderAgent), [LABEL]);
    assert.equal(labelKey(olderAgent), LABEL);
    // A new agent that could read no id sends the label fingerprint as both.
    assert.deepEqual(lookupKeys({ fingerprint: LABEL, label_fingerprint: LABEL }), [LABEL]);
    // A label fingerprint with a colon is no label fingerprint: nothing is looked up under it.
    assert.deepEqual(lookupKeys({ fingerprint: 'dvd:AAA', label_fingerprint: 'dvd:BBB' }), ['dvd:AAA']);
    assert.deepEqual(lookupKeys({ fingerprint: 'dvd:AAA' }), ['dvd:AAA']);
  });

  it('matches a record of the disc: its identity or a legacy key equal to its label fingerprint, never the twin identity', () => {
    assert.equal(keyMatches('dvd:AAA', disc1), true);
    assert.equal(keyMatches(LABEL, disc1), true);
    assert.equal(keyMatches('dvd:AAA', disc2), false);
    assert.equal(keyMatches('dvd:BBB', disc1), false);
    assert.equal(keyMatches(undefined, disc1), false);
    assert.equal(keyMatches(null, disc1), false);
    assert.equal(keyMatches(LABEL, olderAgent), true);
    assert.equal(keyMatches('0123456789abcdef', disc1), false);
  });

  it('tells one drive disc from another across an agent update, but not twins apart from each other', () => {
    assert.equal(sameDisc(disc1, disc1), true);
    assert.equal(sameDisc(olderAgent, disc1), true);
    assert.equal(sameDisc(disc1, olderAgent), true);
    assert.equal(sameDisc({ fingerprint: LABEL, label_fingerprint: LABEL }, disc1), true);
    assert.equal(sameDisc(disc1, disc2), false);
    assert.equal(sameDisc(disc1, { fingerprint: 'dvd:AAA', label_fingerprint: '0123456789abcdef' }), true);
    assert.equal(sameDisc({ fingerprint: '0123456789abcdef' }, disc1), false);
  });
});
