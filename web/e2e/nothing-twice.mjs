// Story 3: nothing counted twice, nothing sent without consent, nothing lost offline.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import {
  checkOut,
  historyOf,
  newShopper,
  openAndWatch,
  pixelDone,
  queueDrained,
  recordVisibleCards,
  slotsSettled,
  storedQueue,
  visibleCards,
} from './browser.mjs';
import { countsSettleAt, newShop, priceCents, productGid, settlesAt } from './stack.mjs';

describe('Nothing twice, nothing without consent, nothing lost offline', () => {
  const open = [];

  after(async () => {
    for (const thing of open.reverse()) await (thing.close ? thing.close() : thing.stop());
  });

  /** A shop with one carousel of two videos, and a shopper on its store. */
  async function setUp(name) {
    const shop = await newShop(name);
    open.push(shop);
    const shirt = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    const dress = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    const widget = await shop.widget({ type: 'carousel', title: 'Carousel', videoIds: [shirt, dress] });
    const shopper = await newShopper(`nothing twice: ${name}`, { origin: shop.origin });
    open.push(shopper);
    await recordVisibleCards(shopper.context);
    return { shop, shopper, page: shopper.page, widget, shirt, dress };
  }

  /** Opens the home page and waits until the cards on screen have been seen. */
  async function home(page) {
    await page.goto('/');
    return cardsSeen(page);
  }

  /** Waits for the loader on the page, and until the cards on screen have been seen. */
  async function cardsSeen(page) {
    await slotsSettled(page);
    await page.waitForFunction(() => window.__e2eSeenCards && window.__e2eSeenCards.size > 0);
    return visibleCards(page);
  }

  it('counts a batch sent twice, or sent again after a reload, once', async () => {
    const { shop, page, widget, shirt } = await setUp('resend');
    const seen = await home(page);
    const queued = await storedQueue(page);
    assert.ok(queued.length > 0, 'the impressions are queued');
    assert.ok(
      queued.every((e) => e.eventType === 'impression'),
      JSON.stringify(queued),
    );

    // Two flushes in a row: the second finds the events leased by the first.
    await page.evaluate(() => {
      window.videoapp.flush();
      window.videoapp.flush();
    });
    await queueDrained(page);
    await countsSettleAt(shop.shop, { impression: seen.length });

    // The same stored batch once more (as when a beacon's events stay stored): same event ids.
    await page.evaluate((events) => {
      localStorage.setItem('videoapp:queue', JSON.stringify(events.map((e) => ({ e }))));
      window.videoapp.flush();
    }, queued);
    await queueDrained(page);
    await countsSettleAt(shop.shop, { impression: seen.length });

    // A reload while an event is queued: the leaving page beacons it, and since a beacon's
    // outcome is unknown, the next page view sends it again once its lease is over.
    await page.click(`[data-videoapp-widget="${widget}"] [data-videoapp-video="${shirt}"]`);
    await page.locator('[data-videoapp-player]').waitFor();
    assert.deepEqual(
      (await storedQueue(page)).map((e) => e.eventType),
      ['click'],
      'the click is queued',
    );
    await page.reload();
    const seenAgain = await cardsSeen(page);
    await queueDrained(page, { timeout: 30_000 });
    // The reload also ended the open video's opening: its watch, once.
    await countsSettleAt(shop.shop, { impression: seen.length + seenAgain.length, click: 1, watch: 1 });
  });

  it('counts an order once when its thank-you page is shown again', async () => {
    const { shop, page, widget, shirt } = await setUp('reorder');
    await home(page);
    await page.click(`[data-videoapp-widget="${widget}"] [data-videoapp-video="${shirt}"]`);
    await page.locator(`[data-videoapp-add-to-cart="${productGid(1001)}"]`).click();
    await page.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();
    await checkOut(page);
    const one = { checkout_completed: 1 };
    const orders = async () => ({ checkout_completed: (await shop.counts()).checkout_completed });
    const settles = (moment) => settlesAt(orders, one, { message: `orders counted ${moment}` });
    await settles('after the thank-you page');

    await page.reload();
    await pixelDone(page);
    await settles('after the thank-you page was reloaded');

    // Without the pixel's record of the order (another device, cleared storage) the pixel sends
    // it again, with a new event id: the service still counts the order once.
    await page.evaluate(() => localStorage.removeItem('videoapp:orders'));
    await page.reload();
    await pixelDone(page);
    await settles('after the thank-you page was shown again without the record of the order');

    const summary = await shop.analytics('summary');
    assert.equal(summary.orders, 1, 'the analytics API counts one order');
    assert.equal(summary.revenue, priceCents(1001) / 100);
  });

  it('sends nothing at all once the shopper declines analytics', async () => {
    const { shop, page, widget, shirt } = await setUp('consent');
    const sent = [];
    page.on('request', (r) => {
      if (r.url().includes('/apps/videoapp_sub/analytics')) sent.push(`${r.method()} ${r.url()}`);
    });
    // Impressions are queued (and not yet sent) when the shopper declines: they are dropped.
    await home(page);
    const queued = await page.evaluate(() => JSON.parse(localStorage.getItem('videoapp:queue') || '[]'));
    assert.ok(queued.length > 0 && queued.every((i) => !i.l), `impressions wait in the queue: ${JSON.stringify(queued)}`);
    await page.click('[data-demo-consent="decline"]');
    assert.equal(await page.textContent('[data-demo-consent-state]'), 'declined');
    assert.deepEqual(await storedQueue(page), [], 'declining drops the queued events');

    await page.reload();
    await slotsSettled(page);
    const player = await openAndWatch(page, widget, shirt);
    await player.locator(`[data-videoapp-add-to-cart="${productGid(1001)}"]`).click();
    await player.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();
    await page.evaluate(() => window.videoapp.flush());
    assert.deepEqual(await storedQueue(page), [], 'nothing is queued');
    assert.deepEqual(await historyOf(page), { views: [], carts: [] }, 'nothing is remembered for the pixel');

    await page.goto('/collections/501');
    await slotsSettled(page);
    await checkOut(page);
    await page.goto('/cart');
    await page.evaluate(() => window.videoapp.flush());

    await countsSettleAt(shop.shop, {}, { hold: 3_000 });
    assert.deepEqual(sent, [], 'no request reached the analytics endpoint');
  });

  it('keeps what happens offline and sends it once when back online', async () => {
    const { shop, shopper, page, widget, shirt } = await setUp('offline');
    const seen = await home(page);
    await page.evaluate(() => window.videoapp.flush());
    await queueDrained(page);
    await countsSettleAt(shop.shop, { impression: seen.length }, { hold: 1_000 });

    // The full video, in the browser's cache, plays without a network.
    await page.evaluate(async (url) => (await fetch(url)).arrayBuffer(), `${shop.origin}/media/demo-1.webm`);
    await shopper.context.setOffline(true);
    assert.equal(await page.evaluate(() => navigator.onLine), false);
    await openAndWatch(page, widget, shirt);
    await page.waitForFunction(() => JSON.parse(localStorage.getItem('videoapp:queue') || '[]').length >= 2);
    await page.evaluate(() => window.videoapp.flush());
    assert.deepEqual(
      (await storedQueue(page)).map((e) => e.eventType).sort(),
      ['click', 'view'],
      'the click and the view wait in the queue',
    );
    await countsSettleAt(shop.shop, { impression: seen.length }, { hold: 1_500 });

    await shopper.context.setOffline(false);
    await queueDrained(page);
    await countsSettleAt(shop.shop, { impression: seen.length, click: 1, view: 1 });
  });
});
