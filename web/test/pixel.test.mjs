// The checkout pixel under a holdout (pixel/pixel.ts): every order carries the browser's group as
// the loader stored it, attributed or not; an order of a browser with no group carries none.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { importTs, MemoryStorage } from './typescript.mjs';

const { checkoutEvent, videoappPixel } = await importTs(new URL('../pixel/pixel.ts', import.meta.url));

const NOW = Date.UTC(2026, 11, 1, 12);
const DAY = 24 * 3600 * 1000;
const CHECKOUT = {
  order: { id: 'gid://shopify/Order/5001' },
  currencyCode: 'USD',
  totalPrice: { amount: 59.98, currencyCode: 'USD' },
  lineItems: [{ quantity: 1, variant: { product: { id: 'gid://shopify/Product/1001' } } }],
};
const NO_HISTORY = { views: [], carts: [], windowDays: 7 };
const WATCHED = {
  views: [{ sessionId: 's1', at: NOW - DAY, videoId: 'v1', widgetId: 'w1', productIds: ['gid://shopify/Product/1001'] }],
  carts: [],
  windowDays: 7,
};
const kept = (g, t = NOW - DAY) => JSON.stringify({ g, t });

describe('checkoutEvent', () => {
  it('carries the kept group, attributed or not', () => {
    assert.equal(checkoutEvent(CHECKOUT, NO_HISTORY, null, '', NOW, kept('holdout')).group, 'holdout');
    const credited = checkoutEvent(CHECKOUT, WATCHED, null, '', NOW, kept('exposed'));
    assert.equal(credited.attributionType, 'influenced');
    assert.equal(credited.group, 'exposed');
  });

  it('carries no group without a readable one from the last 90 days', () => {
    for (const raw of [null, undefined, 'holdout', '{"g":"control","t":1}', kept('holdout', NOW - 90 * DAY)]) {
      const event = checkoutEvent(CHECKOUT, WATCHED, null, '', NOW, raw);
      assert.ok(!('group' in event), String(raw));
    }
  });
});

describe('videoappPixel', () => {
  const sent = [];
  let fetchBefore;
  before(() => {
    fetchBefore = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
    Object.defineProperty(globalThis, 'fetch', {
      configurable: true,
      writable: true,
      value: async (_url, init) => {
        sent.push(...JSON.parse(init.body).events);
        return { ok: true, status: 202 };
      },
    });
  });
  after(() => Object.defineProperty(globalThis, 'fetch', fetchBefore));

  /** Runs the pixel over the page's storage and completes one order; the event it sent. */
  async function order(local, orderId) {
    const wrap = (s) => ({ getItem: async (k) => s.getItem(k), setItem: async (k, v) => s.setItem(k, v) });
    let completed;
    videoappPixel({
      settings: {},
      analytics: { subscribe: (_name, callback) => (completed = callback) },
      browser: { localStorage: wrap(local), sessionStorage: wrap(new MemoryStorage()), sendBeacon: async () => false },
      init: {
        context: { document: { location: { origin: 'https://shop.example' } } },
        customerPrivacy: { analyticsProcessingAllowed: true },
      },
    });
    sent.length = 0;
    await completed({
      name: 'checkout_completed',
      timestamp: new Date().toISOString(),
      data: { checkout: { ...CHECKOUT, order: { id: orderId } } },
    });
    assert.equal(sent.length, 1);
    return sent[0];
  }

  it('reads the group the loader stored', async () => {
    const local = new MemoryStorage();
    local.setItem('videoapp:group', JSON.stringify({ g: 'holdout', t: Date.now() - DAY }));
    assert.equal((await order(local, 'gid://shopify/Order/1')).group, 'holdout');
  });

  it('sends no group for a browser without one', async () => {
    assert.ok(!('group' in (await order(new MemoryStorage(), 'gid://shopify/Order/2'))));
  });
});
