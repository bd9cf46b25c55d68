// The holdout's assignment (shared/holdout.ts): who is drawn into which group, for how long, and
// the once-per-session mark of the `session` event.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { importTs, MemoryStorage } from './typescript.mjs';

const { assign, firstInSession, storedAssignment, COUNTED_KEY, GROUP_DAYS } = await importTs(
  new URL('../shared/holdout.ts', import.meta.url),
);

const NOW = Date.UTC(2026, 11, 1, 12);
const DAY = 24 * 3600 * 1000;
const stored = (g, t = NOW - DAY) => JSON.stringify({ g, t });
/** A draw that must not happen. */
const never = () => assert.fail('a kept group was drawn again');
/** Always returns `r`. */
const fixed = (r) => () => r;

/** A seeded generator (mulberry32): the same draws on every run. */
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('assign', () => {
  it('draws no group at 0 percent, nor for a percent that is no positive number', () => {
    for (const percent of [0, -5, undefined, null, NaN, '20', true]) {
      assert.equal(assign(null, percent, NOW, fixed(0)), null, String(percent));
    }
  });

  it('drops a kept group when the holdout is turned off', () => {
    assert.equal(assign(stored('holdout'), 0, NOW, never), null);
    assert.equal(assign(stored('exposed'), 0, NOW, never), null);
  });

  it('puts a draw below percent / 100 in the holdout, at the boundaries 1 and 50', () => {
    const cases = [
      [1, 0, 'holdout'],
      [1, 0.0099, 'holdout'],
      [1, 0.01, 'exposed'],
      [50, 0.4999999, 'holdout'],
      [50, 0.5, 'exposed'],
      [50, 0.9999999, 'exposed'],
    ];
    for (const [percent, r, group] of cases) {
      assert.deepEqual(assign(null, percent, NOW, fixed(r)), { g: group, t: NOW }, `${percent}% with a draw of ${r}`);
    }
  });

  it('reads a percent above 50 as 50', () => {
    assert.equal(assign(null, 80, NOW, fixed(0.6)).g, 'exposed');
    assert.equal(assign(null, 80, NOW, fixed(0.4)).g, 'holdout');
  });

  it('holds out about percent of browsers', () => {
    for (const percent of [1, 10, 50]) {
      const random = seeded(percent);
      const n = 100_000;
      let held = 0;
      for (let i = 0; i < n; i++) if (assign(null, percent, NOW, random).g === 'holdout') held++;
      // Five standard deviations of a binomial proportion: a failure is a bug, not bad luck.
      const p = percent / 100;
      const tolerance = 5 * Math.sqrt((p * (1 - p)) / n);
      assert.ok(Math.abs(held / n - p) < tolerance, `${percent}%: ${held} of ${n} held out`);
    }
  });

  it('keeps a group, with its time, whatever the percent becomes', () => {
    const t = NOW - 30 * DAY;
    for (const percent of [1, 10, 50]) {
      assert.deepEqual(assign(stored('holdout', t), percent, NOW, never), { g: 'holdout', t });
      assert.deepEqual(assign(stored('exposed', t), percent, NOW, never), { g: 'exposed', t });
    }
  });

  it(`draws again ${GROUP_DAYS} days after a group was drawn`, () => {
    const days = GROUP_DAYS * DAY;
    assert.deepEqual(assign(stored('holdout', NOW - days + 1), 10, NOW, never), { g: 'holdout', t: NOW - days + 1 });
    assert.deepEqual(assign(stored('holdout', NOW - days), 10, NOW, fixed(0.5)), { g: 'exposed', t: NOW });
    assert.deepEqual(assign(stored('exposed', NOW - 2 * days), 50, NOW, fixed(0)), { g: 'holdout', t: NOW });
  });

  it('draws again when the kept value is unreadable', () => {
    const unreadable = [
      '',
      'holdout',
      '{"g":"holdout"',
      'null',
      '[]',
      '{}',
      JSON.stringify({ g: 'control', t: NOW }),
      JSON.stringify({ g: 'HOLDOUT', t: NOW }),
      JSON.stringify({ g: 'holdout' }),
      JSON.stringify({ g: 'holdout', t: String(NOW) }),
      JSON.stringify({ g: 'holdout', t: null }),
      // Far in the future: kept, it would never expire.
      JSON.stringify({ g: 'holdout', t: NOW + GROUP_DAYS * DAY }),
    ];
    for (const raw of unreadable) {
      assert.equal(storedAssignment(raw, NOW), null, raw);
      assert.deepEqual(assign(raw, 20, NOW, fixed(0.9)), { g: 'exposed', t: NOW }, raw);
    }
  });

  it('reads back exactly what it stores', () => {
    const drawn = assign(null, 20, NOW, fixed(0));
    assert.deepEqual(storedAssignment(JSON.stringify(drawn), NOW + DAY), drawn);
    assert.equal(storedAssignment(null, NOW), null);
  });
});

describe('firstInSession', () => {
  it('is true once per tab session', () => {
    const tab = new MemoryStorage();
    assert.equal(firstInSession(tab), true);
    assert.equal(firstInSession(tab), false);
    assert.equal(tab.getItem(COUNTED_KEY), '1');
    assert.equal(firstInSession(new MemoryStorage()), true, 'another tab is another session');
  });

  it('is never true where the mark cannot be kept', () => {
    const full = new MemoryStorage();
    full.setItem = () => {
      throw new Error('QuotaExceededError');
    };
    assert.equal(firstInSession(full), false);
    const forgetful = new MemoryStorage();
    forgetful.setItem = () => {};
    assert.equal(firstInSession(forgetful), false);
    const blocked = {
      getItem() {
        throw new Error('SecurityError');
      },
      setItem() {},
    };
    assert.equal(firstInSession(blocked), false);
  });
});
