import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendPoint, computeEtaSeconds, etaText, type ProgressPoint } from '../../../../coordinator/jobs/eta.js';

const T0 = 1_700_000_000_000;
const MIN = 60_000;

describe('computeEtaSeconds', () => {
  it('gives null for an empty series and for a single point', () => {
    assert.equal(computeEtaSeconds([], T0), null);
    assert.equal(computeEtaSeconds([{ t: T0, p: 10 }], T0 + 5 * MIN), null);
  });

  it('gives null while the measured span is below 60 seconds', () => {
    const points = [
      { t: T0, p: 0 },
      { t: T0 + 59_999, p: 20 },
    ];
    assert.equal(computeEtaSeconds(points, T0 + 10 * MIN), null);
  });

  it('gives an estimate at exactly 60 seconds of span', () => {
    const points = [
      { t: T0, p: 0 },
      { t: T0 + MIN, p: 10 },
    ];
    assert.equal(computeEtaSeconds(points, T0 + MIN), 540);
  });

  it('gives null without progress and when progress went backwards', () => {
    assert.equal(
      computeEtaSeconds(
        [
          { t: T0, p: 30 },
          { t: T0 + 5 * MIN, p: 30 },
        ],
        T0 + 5 * MIN,
      ),
      null,
    );
    assert.equal(
      computeEtaSeconds(
        [
          { t: T0, p: 30 },
          { t: T0 + 5 * MIN, p: 20 },
        ],
        T0 + 5 * MIN,
      ),
      null,
    );
  });

  it('gives null at 100 % and above', () => {
    const done = [
      { t: T0, p: 10 },
      { t: T0 + 5 * MIN, p: 100 },
    ];
    assert.equal(computeEtaSeconds(done, T0 + 5 * MIN), null);
    const over = [
      { t: T0, p: 10 },
      { t: T0 + 5 * MIN, p: 101 },
    ];
    assert.equal(computeEtaSeconds(over, T0 + 5 * MIN), null);
  });

  it('measures the rate from the first point, not from the middle', () => {
    const points = [
      { t: T0, p: 10 },
      { t: T0 + MIN, p: 12 },
      { t: T0 + 4 * MIN, p: 50 },
    ];
    // 40 % in 4 minutes: 10 % per minute, 50 % left: 5 minutes.
    assert.equal(computeEtaSeconds(points, T0 + 4 * MIN), 300);
  });

  it('lengthens the estimate during a standstill because the rate runs up to now', () => {
    const points = [
      { t: T0, p: 0 },
      { t: T0 + 2 * MIN, p: 50 },
    ];
    const fresh = computeEtaSeconds(points, T0 + 2 * MIN);
    const stalled = computeEtaSeconds(points, T0 + 4 * MIN);
    assert.equal(fresh, 120);
    assert.equal(stalled, 240);
    assert.ok(stalled !== null && fresh !== null && stalled > fresh);
  });

  it('does not shorten the estimate for a clock before the last point', () => {
    const points = [
      { t: T0, p: 0 },
      { t: T0 + 2 * MIN, p: 50 },
    ];
    assert.equal(computeEtaSeconds(points, T0), 120);
  });

  it('rounds to whole seconds and returns at least 1', () => {
    const points = [
      { t: T0, p: 0 },
      { t: T0 + 3 * MIN, p: 99.999 },
    ];
    assert.equal(computeEtaSeconds(points, T0 + 3 * MIN), 1);
    const third = [
      { t: T0, p: 0 },
      { t: T0 + MIN, p: 70 },
    ];
    const eta = computeEtaSeconds(third, T0 + MIN);
    assert.equal(eta, Math.round((30 / 70) * 60));
    assert.ok(Number.isInteger(eta));
  });

  it('gives null for damaged points and a non-finite clock', () => {
    const damaged = [
      { t: T0, p: Number.NaN },
      { t: T0 + 5 * MIN, p: 50 },
    ];
    assert.equal(computeEtaSeconds(damaged, T0 + 5 * MIN), null);
    const good = [
      { t: T0, p: 0 },
      { t: T0 + 5 * MIN, p: 50 },
    ];
    assert.equal(computeEtaSeconds(good, Number.NaN), null);
  });
});

describe('etaText', () => {
  it('keeps null', () => {
    assert.equal(etaText(null), null);
  });

  it('says less than a minute below 60 seconds', () => {
    assert.equal(etaText(1), 'noch weniger als eine Minute');
    assert.equal(etaText(59), 'noch weniger als eine Minute');
  });

  it('uses singular and plural minutes, rounded to the nearest minute', () => {
    assert.equal(etaText(60), 'noch etwa 1 Minute');
    assert.equal(etaText(89), 'noch etwa 1 Minute');
    assert.equal(etaText(90), 'noch etwa 2 Minuten');
    assert.equal(etaText(12 * 60), 'noch etwa 12 Minuten');
    assert.equal(etaText(12 * 60 + 29), 'noch etwa 12 Minuten');
    assert.equal(etaText(59 * 60), 'noch etwa 59 Minuten');
  });

  it('switches to hours from 60 minutes on', () => {
    assert.equal(etaText(59 * 60 + 30), 'noch etwa 1 Stunde');
    assert.equal(etaText(3600), 'noch etwa 1 Stunde');
    assert.equal(etaText(3600 + 60), 'noch etwa 1 Stunde 1 Minute');
    assert.equal(etaText(3600 + 25 * 60), 'noch etwa 1 Stunde 25 Minuten');
    assert.equal(etaText(2 * 3600), 'noch etwa 2 Stunden');
    assert.equal(etaText(2 * 3600 + 5 * 60), 'noch etwa 2 Stunden 5 Minuten');
    assert.equal(etaText(2 * 3600 + 60), 'noch etwa 2 Stunden 1 Minute');
  });

  it('gives null for values that are not numbers', () => {
    assert.equal(etaText(Number.NaN), null);
    assert.equal(etaText(Number.POSITIVE_INFINITY), null);
  });
});

describe('appendPoint', () => {
  it('starts a series and appends rising points without changing the input', () => {
    const one = appendPoint([], { t: T0, p: 0 });
    assert.deepEqual(one, [{ t: T0, p: 0 }]);
    const two = appendPoint(one, { t: T0 + 1000, p: 5 });
    assert.deepEqual(two, [
      { t: T0, p: 0 },
      { t: T0 + 1000, p: 5 },
    ]);
    assert.equal(one.length, 1);
  });

  it('appends an equal value, so a standstill keeps extending the span', () => {
    const points = appendPoint([{ t: T0, p: 5 }], { t: T0 + 1000, p: 5 });
    assert.equal(points.length, 2);
  });

  it('ignores a backward step of 1 % or more as jitter', () => {
    const series = [
      { t: T0, p: 10 },
      { t: T0 + 1000, p: 40 },
    ];
    assert.deepEqual(appendPoint(series, { t: T0 + 2000, p: 39.5 }), series);
    assert.deepEqual(appendPoint(series, { t: T0 + 2000, p: 1 }), series);
  });

  it('keeps a backward value below 1 % as a restart of the series', () => {
    const series = [
      { t: T0, p: 10 },
      { t: T0 + 1000, p: 40 },
    ];
    assert.deepEqual(appendPoint(series, { t: T0 + 2000, p: 0.5 }), [{ t: T0 + 2000, p: 0.5 }]);
    assert.deepEqual(appendPoint([{ t: T0, p: 0.8 }], { t: T0 + 1000, p: 0.2 }), [{ t: T0 + 1000, p: 0.2 }]);
  });

  it('ignores points with a time before the last point and non-finite values', () => {
    const series = [{ t: T0, p: 10 }];
    assert.deepEqual(appendPoint(series, { t: T0 - 1, p: 20 }), series);
    assert.deepEqual(appendPoint(series, { t: T0 + 1, p: Number.NaN }), series);
    assert.deepEqual(appendPoint(series, { t: Number.POSITIVE_INFINITY, p: 20 }), series);
  });

  it('clamps the percentage to 0..100', () => {
    assert.deepEqual(appendPoint([], { t: T0, p: -3 }), [{ t: T0, p: 0 }]);
    assert.deepEqual(appendPoint([{ t: T0, p: 50 }], { t: T0 + 1, p: 130 }), [
      { t: T0, p: 50 },
      { t: T0 + 1, p: 100 },
    ]);
  });

  it('restarts a series whose last stored point is damaged', () => {
    const damaged = [{ t: T0, p: 10 }, { t: T0 + 1, p: Number.NaN }] as ProgressPoint[];
    assert.deepEqual(appendPoint(damaged, { t: T0 + 2, p: 20 }), [{ t: T0 + 2, p: 20 }]);
  });

  it('stays within the bound, always keeps the first and newest points and thins the middle evenly', () => {
    let series: ProgressPoint[] = [];
    for (let i = 0; i < 1000; i++) series = appendPoint(series, { t: T0 + i * 1000, p: i / 10 }, 50);
    assert.equal(series.length, 50);
    assert.deepEqual(series[0], { t: T0, p: 0 });
    assert.deepEqual(series[series.length - 1], { t: T0 + 999_000, p: 99.9 });
    for (let i = 1; i < series.length; i++) assert.ok(series[i].t > series[i - 1].t, 'times stay ascending');
    const gaps = series.slice(1).map((point, i) => point.t - series[i].t);
    const widest = Math.max(...gaps);
    assert.ok(widest <= (999_000 / 49) * 2.5, `points are spread over the phase, widest gap ${widest}`);
  });

  it('uses a bound of 200 by default', () => {
    let series: ProgressPoint[] = [];
    for (let i = 0; i < 300; i++) series = appendPoint(series, { t: T0 + i * 1000, p: i / 3 });
    assert.equal(series.length, 200);
    assert.deepEqual(series[0], { t: T0, p: 0 });
  });

  it('keeps the estimate anchored at the first point after thinning', () => {
    let series: ProgressPoint[] = [];
    for (let i = 0; i <= 600; i++) series = appendPoint(series, { t: T0 + i * 1000, p: i / 12 }, 10);
    // 50 % in 600 s: another 600 s to go.
    assert.equal(computeEtaSeconds(series, T0 + 600_000), 600);
  });

  it('treats a bound below 2 as 2', () => {
    let series: ProgressPoint[] = [];
    for (let i = 0; i < 5; i++) series = appendPoint(series, { t: T0 + i, p: i }, 0);
    assert.deepEqual(series, [
      { t: T0, p: 0 },
      { t: T0 + 4, p: 4 },
    ]);
  });

  it('shrinks a stored series that is longer than the bound', () => {
    const long: ProgressPoint[] = Array.from({ length: 30 }, (_, i) => ({ t: T0 + i, p: i }));
    const series = appendPoint(long, { t: T0 + 30, p: 30 }, 10);
    assert.equal(series.length, 10);
    assert.deepEqual(series[0], { t: T0, p: 0 });
    assert.deepEqual(series[9], { t: T0 + 30, p: 30 });
  });
});
