import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { coordinatorMigrations } from '../../../../coordinator/db/migrations.js';
import { labelIdentity, type DiscIdentity, type DiscLookup } from '../../../../coordinator/metadata/disc-identity.js';
import { Prescan, prescanTtlMs } from '../../../../coordinator/discs/prescan.js';
import { Logger } from '../../../../shared/log.js';
import type { DiscInfo } from '../../../../shared/protocol.js';
import { openDatabase } from '../../../../shared/sqlite.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ripwerk-prescan-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const db = () => openDatabase(path.join(root, `p-${++n}.sqlite`), coordinatorMigrations);
const DAY = 24 * 3600_000;

function disc(title: string, extra: Partial<DiscInfo> = {}): DiscInfo {
  return { label: title.toUpperCase().replace(/ /g, '_'), title, year: null, type: 'dvd', size_bytes: 4_000_000_000, fingerprint: `fp-${title}`, source: '/x.iso', audio_tracks: null, ...extra };
}

/** A metadata chain that answers with a fixed confidence and counts its calls. */
function chain(confidence: number | null): DiscLookup & { calls: number } {
  return {
    calls: 0,
    async identify(d: DiscInfo, label: DiscIdentity) {
      this.calls++;
      if (confidence === null) return null;
      return { ...label, title: `${d.title} (db)`, year: 2001, confidence, poster: '/p.jpg', source: 'test-db' };
    },
  };
}

describe('prescan cache rules', () => {
  it('caches 7 days from confidence 0.9, 1 day from 0.6, not below 0.6', () => {
    assert.equal(prescanTtlMs(0.95), 7 * DAY);
    assert.equal(prescanTtlMs(0.9), 7 * DAY);
    assert.equal(prescanTtlMs(0.89), DAY);
    assert.equal(prescanTtlMs(0.6), DAY);
    assert.equal(prescanTtlMs(0.59), null);
    assert.equal(prescanTtlMs(0), null);
  });

  it('answers a confident disc from the cache until it expires, then asks the chain again', async () => {
    let now = Date.parse('2026-11-23T10:00:00Z');
    const lookup = chain(0.7);
    const p = new Prescan(db(), lookup, new Logger('t', true), () => now);
    const d = disc('Spirited Away');
    const first = await p.run(d);
    assert.equal(first.title, 'Spirited Away (db)');
    assert.equal(first.confidence, 0.7);
    now += DAY - 1000;
    await p.run(d);
    assert.equal(lookup.calls, 1);
    now += 2000;
    await p.run(d);
    assert.equal(lookup.calls, 2);
  });

  it('keeps a 0.9 answer for a week and never caches a weak one', async () => {
    let now = 0;
    const strong = chain(0.9);
    const p1 = new Prescan(db(), strong, new Logger('t', true), () => now);
    await p1.run(disc('Strong'));
    now = 6 * DAY;
    await p1.run(disc('Strong'));
    assert.equal(strong.calls, 1);

    const weak = chain(0.5);
    const p2 = new Prescan(db(), weak, new Logger('t', true), () => now);
    await p2.run(disc('Weak'));
    await p2.run(disc('Weak'));
    assert.equal(weak.calls, 2);
    assert.equal(p2.get('fp-Weak')?.confidence, 0.5);
  });

  it('falls back to the label when the chain knows nothing or fails', async () => {
    const p = new Prescan(db(), chain(null), new Logger('t', true));
    const id = await p.run(disc('Heat', { year: 1995 }));
    assert.deepEqual(id, { title: 'Heat', year: 1995, confidence: 0, poster: null, kind: 'movie', season: null, source: 'label' });
    const failing: DiscLookup = { identify: async () => Promise.reject(new Error('network down')) };
    const p2 = new Prescan(db(), failing, new Logger('t', true));
    assert.equal((await p2.run(disc('Heat'))).source, 'label');
  });
});

describe('label identity', () => {
  it('reads a season from series labels', () => {
    for (const [title, show, season] of [
      ['Garden Show S02d01', 'Garden Show', 2],
      ['Breaking Bad Season 1 Disc 3', 'Breaking Bad', 1],
      ['Tatort Staffel 12', 'Tatort', 12],
      ['Lost S1', 'Lost', 1],
    ] as const) {
      const id = labelIdentity(disc(title));
      assert.equal(id.kind, 'series', title);
      assert.equal(id.title, show, title);
      assert.equal(id.season, season, title);
    }
  });

  it('keeps movies, audio CDs and unknown discs apart', () => {
    assert.equal(labelIdentity(disc('Heat')).kind, 'movie');
    assert.equal(labelIdentity(disc('Heats')).season, null);
    assert.equal(labelIdentity(disc('Audio CD', { type: 'cd' })).kind, 'music');
    assert.equal(labelIdentity(disc('Thing', { type: 'unknown' })).kind, 'unknown');
  });
});
