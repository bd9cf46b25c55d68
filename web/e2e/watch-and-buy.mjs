// Story 2: a shopper who watches and buys is counted exactly once, with the right attribution.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  checkOut,
  historyOf,
  newShopper,
  openAndWatch,
  queueDrained,
  recordVisibleCards,
  screenshot,
  slotsSettled,
  visibleCards,
} from './browser.mjs';
import { countsSettleAt, eventCounts, newShop, priceCents, productGid } from './stack.mjs';

/** The pixel sends the order's global id (gid://shopify/Order/N); the store shows N. */
const isOrder = (orderId, number) => orderId === number || orderId === `gid://shopify/Order/${number}`;

/** `part / whole` in hundredths, rounded half up, as the analytics API rounds; 0 without a whole. */
const hundredths = (part, whole) => (whole ? Math.floor((2 * part + whole) / (2 * whole)) / 100 : 0);

/** The watching figures the analytics API gives for these `watch` events (ClickHouse rows) and clicks. */
function watching(watches, clicks) {
  const ms = watches.reduce((sum, w) => sum + w.watched_ms, 0);
  const reached = (percent) => watches.filter((w) => w.max_percent >= percent).length;
  return {
    watch_time_seconds: hundredths(ms, 10),
    avg_watch_seconds: hundredths(ms, 10 * clicks),
    completion_rate: hundredths(reached(95) * 10_000, clicks),
    reached: { p25: reached(25), p50: reached(50), p75: reached(75), p100: reached(100) },
  };
}

/** What an event credits, as ClickHouse has it. */
function credit({ attribution, video_id, widget_id, product_id, revenue_e4 }, { revenue = true } = {}) {
  const credited = { attribution, video_id, widget_id, product_id };
  return revenue ? { ...credited, revenue_e4: Number(revenue_e4) } : credited;
}

describe('A shopper who watches and buys', () => {
  let shop;
  let widget;
  const v = {};
  const shoppers = [];
  // What the first shopper caused, for the second test's totals.
  let first = null;

  before(async () => {
    shop = await newShop('buy');
    v.shirt = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    v.dress = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    v.tote = await shop.video({ media: 3, title: 'What fits in the Canvas Tote', products: [1003, 1001] });
    widget = await shop.widget({
      type: 'carousel',
      title: 'Watch and shop',
      videoIds: [v.shirt, v.dress, v.tote],
      rules: { locations: ['home', 'collection'] },
    });
  });

  after(async () => {
    for (const s of shoppers) await s.close();
    await shop?.stop();
  });

  async function shopper(label) {
    const s = await newShopper(label, { origin: shop.origin });
    shoppers.push(s);
    await recordVisibleCards(s.context);
    return s;
  }

  /** Cards of the carousel seen at least half visible on the current page (impressions). */
  async function seenCards(page) {
    const seen = await visibleCards(page);
    assert.ok(
      seen.every((c) => c.widget === widget),
      `only the carousel has cards: ${JSON.stringify(seen)}`,
    );
    return seen;
  }

  it('is counted exactly once, with direct attribution, after adding to the cart from the video', async () => {
    const { page } = await shopper('watch and buy: direct');
    await page.goto('/');
    await slotsSettled(page);
    const carousel = page.locator(`[data-videoapp-widget="${widget}"][data-videoapp-type="carousel"]`);
    await carousel.scrollIntoViewIfNeeded();
    await page.waitForFunction(() => window.__e2eSeenCards && window.__e2eSeenCards.size > 0);

    await page.evaluate(() => {
      window.__e2eAddedToCart = [];
      document.addEventListener('videoapp:add-to-cart', (e) => window.__e2eAddedToCart.push(e.detail));
    });
    const player = await openAndWatch(page, widget, v.shirt);
    assert.deepEqual(
      await player.evaluate((p) => ['role', 'aria-modal', 'aria-label', 'data-videoapp-widget-id'].map((a) => p.getAttribute(a))),
      ['dialog', 'true', 'Linen Shirt, three ways', widget],
      'the player is a modal dialog named by the video title',
    );
    assert.equal(await page.evaluate(() => document.documentElement.style.overflow), 'hidden', 'the page does not scroll under the player');
    await page.waitForFunction((id) => {
      const h = JSON.parse(localStorage.getItem('videoapp:history') || '{}');
      return (h.views || []).some((e) => e.videoId === id);
    }, v.shirt);
    await screenshot(page, 'player.png');

    await player.locator(`[data-videoapp-add-to-cart="${productGid(1001)}"]`).click();
    await player.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();
    assert.equal(await player.locator('.videoapp-product .videoapp-status').textContent(), 'Added to cart');
    assert.deepEqual(
      await page.evaluate(() => window.__e2eAddedToCart),
      [{ productId: productGid(1001), variantId: 10011, videoId: v.shirt, widgetId: widget }],
      'the page is told about the add-to-cart (videoapp:add-to-cart)',
    );
    const seen = await seenCards(page);

    await page.goto('/cart');
    assert.equal(await page.locator(`[data-demo-line="${productGid(1001)}"]`).count(), 1, 'the Linen Shirt is in the cart');
    const order = await checkOut(page);
    const revenue = priceCents(1001) / 100;

    // The loader beaconed its queue when each page was left; beaconed events stay stored and the
    // next page with the loader sends them again: the service must count them once.
    await page.goto('/cart');
    await queueDrained(page, { timeout: 30_000 });

    // The player was still open when the shopper went to the cart: its watch left with the page.
    const expected = { impression: seen.length, click: 1, view: 1, add_to_cart: 1, checkout_completed: 1, watch: 1 };
    await countsSettleAt(shop.shop, expected);
    first = { seen, revenue };

    const events = await shop.events();
    const cart = events.filter((e) => e.event_type === 'add_to_cart');
    assert.deepEqual(
      cart.map((e) => credit(e, { revenue: false })),
      [{ attribution: 'direct', video_id: v.shirt, widget_id: widget, product_id: productGid(1001) }],
      'the add-to-cart is credited directly to the video and the widget',
    );
    const checkout = events.filter((e) => e.event_type === 'checkout_completed');
    assert.equal(checkout.length, 1);
    assert.ok(isOrder(checkout[0].order_id, order), `the event is for order ${order}: ${checkout[0].order_id}`);
    assert.deepEqual(
      credit(checkout[0]),
      { attribution: 'direct', video_id: v.shirt, widget_id: widget, product_id: productGid(1001), revenue_e4: priceCents(1001) * 100 },
      'the order is credited directly to the video it was added to the cart from',
    );

    const shirtImpressions = seen.filter((c) => c.video === v.shirt).length;
    // How long the shirt played is the shopper's doing: the figures follow its one watch.
    const watched = watching(
      events.filter((e) => e.event_type === 'watch'),
      1,
    );
    // The cart and the order were the video's own doing.
    const attribution = {
      direct: { add_to_cart: 1, orders: 1, revenue },
      influenced: { add_to_cart: 0, orders: 0, revenue: 0 },
    };
    const video = await shop.analytics(`video/${v.shirt}`);
    assert.deepEqual(
      video.metrics,
      {
        impressions: shirtImpressions,
        views: 1,
        clicks: 1,
        add_to_cart: 1,
        orders: 1,
        revenue,
        attribution,
        ...watched,
      },
      'the analytics API: the watched video',
    );
    const byWidget = await shop.analytics(`widget/${widget}`);
    assert.deepEqual(
      byWidget.metrics,
      {
        impressions: seen.length,
        views: 1,
        clicks: 1,
        add_to_cart: 1,
        orders: 1,
        revenue,
        attribution,
        ...watched,
      },
      'the analytics API: the carousel',
    );
    const summary = await shop.analytics('summary');
    assert.deepEqual(
      summary,
      {
        impressions: seen.length,
        views: 1,
        clicks: 1,
        add_to_cart: 1,
        orders: 1,
        revenue,
        ctr: Number((100 / seen.length).toFixed(2)),
        cvr: 100,
        attribution,
        ...watched,
      },
      'the analytics API: the shop',
    );
  });

  it('is credited as influenced when it buys after only watching', async (t) => {
    if (!first) return t.skip('needs the first shopper');
    const { page } = await shopper('watch and buy: influenced');
    // Logged in: the app proxy signs the customer's id, and every event carries it.
    await page.goto('/?videoapp=off');
    await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('text=Log in as customer 7001')]);
    await slotsSettled(page);

    const player = await openAndWatch(page, widget, v.dress);
    await page.waitForFunction(() => (JSON.parse(localStorage.getItem('videoapp:history') || '{}').views || []).length > 0);
    assert.deepEqual((await historyOf(page)).carts || [], [], 'nothing was added to the cart from a video');
    await page.keyboard.press('Escape');
    await player.waitFor({ state: 'detached' });
    assert.equal(
      await page.evaluate(() => document.activeElement && document.activeElement.getAttribute('data-videoapp-video')),
      v.dress,
      'Escape closes the player and gives the focus back to the card that opened it',
    );
    const seen = await seenCards(page);

    await page.goto('/products/summer-dress');
    await Promise.all([page.waitForURL(/\/cart$/), page.click('form[action="/cart/add"] button')]);
    assert.equal(await page.locator(`[data-demo-line="${productGid(1002)}"]`).count(), 1, 'the Summer Dress is in the cart');
    const order = await checkOut(page);
    const revenue = priceCents(1002) / 100;

    const expected = {
      impression: first.seen.length + seen.length,
      click: 2,
      view: 2,
      add_to_cart: 1,
      checkout_completed: 2,
      watch: 2,
    };
    await countsSettleAt(shop.shop, expected);

    const checkout = (await shop.events()).filter((e) => e.event_type === 'checkout_completed' && isOrder(e.order_id, order));
    assert.equal(checkout.length, 1, `one checkout event for order ${order}`);
    assert.deepEqual(
      credit(checkout[0]),
      { attribution: 'influenced', video_id: v.dress, widget_id: widget, product_id: productGid(1002), revenue_e4: priceCents(1002) * 100 },
      'the order is credited as influenced by the video the shopper watched before buying',
    );
    const own = await eventCounts(shop.shop, "customer_id = '7001'");
    assert.deepEqual(
      own,
      { impression: seen.length, click: 1, view: 1, add_to_cart: 0, checkout_completed: 1, watch: 1 },
      "the logged-in shopper's events carry the customer id the app proxy signed",
    );

    const summary = await shop.analytics('summary');
    assert.equal(summary.orders, 2);
    assert.equal(summary.revenue, Math.round((first.revenue + revenue) * 100) / 100);
    assert.deepEqual(
      summary.attribution,
      {
        direct: { add_to_cart: 1, orders: 1, revenue: first.revenue },
        influenced: { add_to_cart: 0, orders: 1, revenue },
      },
      'the analytics API: one order of each attribution',
    );
  });
});
