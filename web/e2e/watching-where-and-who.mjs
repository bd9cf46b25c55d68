// Story: what shoppers do with a video, and where. A shopper on a phone, come from a
// newsletter, watches a video to the end: every event says where it happened (the page type),
// who (the storefront's country, the session's traffic source), and each opening of a video ends
// in exactly one `watch` with the time played and the furthest point reached, whether the player
// is closed or the page hidden. An order is credited to a video only within the shop's
// attribution window, across sessions, and an add-to-cart from a video beats a later view.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { devices } from 'playwright-core';

import {
  checkOut,
  historyOf,
  newShopper,
  openAndWatch,
  playedFor,
  queueDrained,
  screenshot,
  slotsSettled,
  storedQueue,
} from './browser.mjs';
import { clickhouse, newShop, productGid, waitFor } from './stack.mjs';

const DAY_MS = 24 * 3600 * 1000;
/** A phone, as the service tells it: the platform's mobile user agent, a small touch screen. */
const { defaultBrowserType: _, ...PHONE } = devices['Pixel 7'];

/**
 * Every event the shopper's pages sent to the analytics endpoint (the loader's and the pixel's),
 * by `eventId`: a beaconed event is sent again later with the same id.
 */
function recordSent(context) {
  const sent = new Map();
  context.on('request', (request) => {
    if (request.method() !== 'POST' || !request.url().includes('/apps/videoapp_sub/analytics')) return;
    try {
      for (const e of JSON.parse(request.postData() || '{}').events || []) sent.set(e.eventId, e);
    } catch {
      /* not an event batch */
    }
  });
  return sent;
}

/** What the page sent or still holds in its queue, each event once. */
async function eventsOf(page, sent) {
  const all = new Map(sent);
  for (const e of await storedQueue(page)) all.set(e.eventId, e);
  return [...all.values()];
}

const whereWho = (e) => ({ placement: e.placement, country: e.country, source: e.source });

/** The figures of an analytics `metrics` object this story checks. */
const figures = ({ impressions, views, clicks, watch_time_seconds, completion_rate, reached }) => ({
  impressions,
  views,
  clicks,
  watch_time_seconds,
  completion_rate,
  reached,
});

/** Those figures as the analytics API must give them for `events`, counted here from what was sent. */
function expectedFigures(events) {
  const count = (type) => events.filter((e) => e.eventType === type).length;
  const watches = events.filter((e) => e.eventType === 'watch');
  const reached = (percent) => watches.filter((e) => e.maxPercent >= percent).length;
  // Hundredths, rounded half up, as the API rounds.
  const hundredths = (part, whole) => (whole === 0 ? 0 : Math.floor((part * 2 + whole) / (whole * 2)) / 100);
  return {
    impressions: count('impression'),
    views: count('view'),
    clicks: count('click'),
    watch_time_seconds: hundredths(
      watches.reduce((sum, e) => sum + e.watchedMs, 0),
      10,
    ),
    completion_rate: hundredths(reached(95) * 10_000, count('click')),
    reached: { p25: reached(25), p50: reached(50), p75: reached(75), p100: reached(100) },
  };
}

/** Makes the page hidden and visible again, as a switch to another tab and back does. */
async function switchTabAndBack(page) {
  for (const state of ['hidden', 'visible']) {
    await page.evaluate((state) => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
      document.dispatchEvent(new Event('visibilitychange'));
    }, state);
  }
  await page.evaluate(() => delete document.visibilityState);
}

describe('What shoppers do with a video, and where', () => {
  let shop;
  let widget;
  const v = {};
  const shoppers = [];

  before(async () => {
    shop = await newShop('watching');
    v.shirt = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    v.dress = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    widget = await shop.widget({
      type: 'carousel',
      title: 'Watch and shop',
      videoIds: [v.shirt, v.dress],
      rules: { locations: ['home', 'collection'] },
    });
  });

  after(async () => {
    for (const s of shoppers) await s.close();
    await shop?.stop();
  });

  async function shopper(label, options = {}) {
    const s = await newShopper(label, { origin: shop.origin, ...options });
    shoppers.push(s);
    return s;
  }

  const card = (video) => `[data-videoapp-widget="${widget}"] [data-videoapp-video="${video}"]`;
  const player = (page, video) => page.locator(`[data-videoapp-player][data-videoapp-video-id="${video}"]`);

  /** The checkout event the pixel sent for `order` (the number the thank-you page shows). */
  const checkoutFor = (sent, order) =>
    [...sent.values()].find((e) => e.eventType === 'checkout_completed' && e.orderId === `gid://shopify/Order/${order}`);

  /** What the service credited `order` to, once it has the order. */
  async function creditIn(order) {
    const rows = await waitFor(
      async () => {
        const rows = await clickhouse(
          `SELECT toString(attribution) AS attribution, video_id FROM events WHERE shop_domain = '${shop.shop}'
           AND event_type = 'checkout_completed' AND order_id = 'gid://shopify/Order/${order}'`,
        );
        return rows.length && rows;
      },
      { message: `order ${order} in ClickHouse` },
    );
    return rows.map((r) => ({ attribution: r.attribution, video: r.video_id }));
  }

  it('on a phone, says where and who with every event, and sends one watch per opening however it ends', async () => {
    const { context, page } = await shopper('watching: phone from a newsletter', { device: PHONE });
    // The country the shopper chose in the store's country selector.
    await context.addCookies([{ name: 'localization', value: 'DE', url: shop.origin }]);
    const sent = recordSent(context);

    // Landing from the newsletter; the home page.
    await page.goto('/?utm_medium=email');
    await slotsSettled(page);
    await page.tap(card(v.shirt));
    const shirt = player(page, v.shirt);
    await shirt.waitFor();
    await page.waitForFunction(() => document.querySelector('[data-videoapp-player] video')?.ended, null, { timeout: 20_000 });
    await screenshot(page, 'watching-phone-ended.png');
    await shirt.locator('.videoapp-close').tap();
    await shirt.waitFor({ state: 'detached' });

    let events = await eventsOf(page, sent);
    assert.deepEqual(
      [...new Set(events.map((e) => e.eventType))].sort(),
      ['click', 'impression', 'view', 'watch'],
      'impressions, the click, the view and the watch',
    );
    for (const e of events) {
      assert.deepEqual(whereWho(e), { placement: 'home', country: 'DE', source: 'email' }, `where and who of ${JSON.stringify(e)}`);
    }
    const [watched, ...more] = events.filter((e) => e.eventType === 'watch');
    assert.equal(more.length, 0, 'one watch for one opening');
    assert.equal(watched.videoId, v.shirt);
    assert.equal(watched.widgetId, widget);
    assert.equal(watched.maxPercent, 100, 'played to the end');
    assert.ok(
      Number.isInteger(watched.watchedMs) && watched.watchedMs >= 4_500 && watched.watchedMs <= 6_500,
      `about the video's 6 s were played: ${watched.watchedMs} ms`,
    );

    // A second page of the session, reached from the first: the source is the session's.
    const onHome = new Set(events.map((e) => e.eventId));
    await Promise.all([page.waitForURL('**/collections/501'), page.tap('header nav a[href="/collections/501"]')]);
    await slotsSettled(page);
    await page.tap(card(v.dress));
    await player(page, v.dress).waitFor();
    await playedFor(page, '[data-videoapp-player] video', 1.5);
    // The shopper leaves with the player open: the page hides (`pagehide`, then
    // `visibilitychange`), which ends the opening once.
    await page.goto('/cart');
    await slotsSettled(page);
    await queueDrained(page, { timeout: 30_000 });
    events = await eventsOf(page, sent);
    const dress = events.filter((e) => e.eventType === 'watch' && e.videoId === v.dress);
    assert.equal(dress.length, 1, `one watch for the opening the page hid: ${JSON.stringify(dress)}`);
    assert.deepEqual(whereWho(dress[0]), { placement: 'collection', country: 'DE', source: 'email' });
    assert.ok(dress[0].maxPercent >= 20 && dress[0].maxPercent < 100, `part of the video: ${dress[0].maxPercent}%`);
    assert.ok(dress[0].watchedMs >= 1_000 && dress[0].watchedMs < 6_000, `part of the video: ${dress[0].watchedMs} ms`);
    const onCollection = events.filter((e) => !onHome.has(e.eventId));
    assert.ok(
      onCollection.some((e) => e.eventType === 'click' && e.videoId === v.dress),
      'the click on the collection page',
    );
    for (const e of onCollection) {
      assert.deepEqual(whereWho(e), { placement: 'collection', country: 'DE', source: 'email' }, `${e.eventType} on the collection`);
    }

    // A third opening: the shopper switches to another tab and back, then closes the player.
    await page.goto('/');
    await slotsSettled(page);
    await page.tap(card(v.shirt));
    await playedFor(page, '[data-videoapp-player] video', 1);
    await switchTabAndBack(page);
    const afterHiding = (await eventsOf(page, sent)).filter((e) => e.eventType === 'watch').length;
    await player(page, v.shirt).locator('.videoapp-close').tap();
    await player(page, v.shirt).waitFor({ state: 'detached' });
    await page.evaluate(() => window.videoapp.flush());
    await queueDrained(page);
    const watches = (await eventsOf(page, sent)).filter((e) => e.eventType === 'watch');
    assert.equal(afterHiding, 3, 'hiding the page sent the open video’s watch');
    assert.deepEqual(
      watches.map((e) => e.videoId).sort(),
      [v.shirt, v.shirt, v.dress].sort(),
      'closing the player after the page was hidden sends no second watch',
    );
    assert.ok(
      watches.every((e) => e.source === 'email' && e.country === 'DE'),
      'the whole session is from the newsletter',
    );

    // The service stored every event as sent, each once, with the device read from the phone's
    // user agent.
    const all = await eventsOf(page, sent);
    const stored = await waitFor(
      async () => {
        const rows = await clickhouse(
          `SELECT toString(event_id) AS eventId, toString(event_type) AS eventType, toString(placement) AS placement,
                  toString(device) AS device, country, toString(source) AS source, watched_ms AS watchedMs, max_percent AS maxPercent
           FROM events WHERE shop_domain = '${shop.shop}' ORDER BY eventId`,
        );
        return rows.length >= all.length && rows;
      },
      { message: `the ${all.length} events in ClickHouse` },
    );
    const row = ({ eventId, eventType, placement, device, country, source, watchedMs = 0, maxPercent = 0 }) => ({
      eventId,
      eventType,
      placement,
      device,
      country,
      source,
      watchedMs,
      maxPercent,
    });
    assert.deepEqual(
      stored.map(row),
      all.map((e) => row({ ...e, device: 'mobile' })).sort((a, b) => (a.eventId < b.eventId ? -1 : 1)),
    );

    // The analytics API shows exactly that session: one device, one source, one country, the two
    // page types, by a breakdown and through the filters alike.
    const mobile = { device: 'mobile', source: 'email', country: 'DE' };
    const bySummary = async (dimension, filters = {}) =>
      Object.fromEntries(
        (await shop.analytics('summary', { breakdown: dimension, ...filters })).map((e) => [e[dimension], figures(e.metrics)]),
      );
    assert.deepEqual(await bySummary('device'), { mobile: expectedFigures(all) });
    assert.deepEqual(await bySummary('source'), { email: expectedFigures(all) });
    assert.deepEqual(await bySummary('country', { device: 'mobile' }), { DE: expectedFigures(all) });
    assert.deepEqual(await bySummary('placement', mobile), {
      home: expectedFigures(all.filter((e) => e.placement === 'home')),
      collection: expectedFigures(all.filter((e) => e.placement === 'collection')),
    });
    assert.deepEqual(figures(await shop.analytics('summary', mobile)), expectedFigures(all));
    const nothing = expectedFigures([]);
    for (const other of [{ device: 'desktop' }, { source: 'direct' }, { country: 'US' }, { placement: 'product' }]) {
      assert.deepEqual(figures(await shop.analytics('summary', other)), nothing, `nothing for ${JSON.stringify(other)}`);
    }
    const videos = await shop.analytics('videos', mobile);
    assert.deepEqual(
      Object.fromEntries(videos.map((row) => [row.id, figures(row.metrics)])),
      Object.fromEntries([v.shirt, v.dress].map((id) => [id, expectedFigures(all.filter((e) => e.videoId === id))])),
      'each video, filtered on the phone, the newsletter and the country',
    );
    const shirtByPlacement = await shop.analytics(`video/${v.shirt}`, { breakdown: 'placement', source: 'email' });
    assert.deepEqual(
      Object.fromEntries(shirtByPlacement.map((e) => [e.placement, figures(e.metrics)])),
      Object.fromEntries(
        ['home', 'collection'].map((p) => [p, expectedFigures(all.filter((e) => e.videoId === v.shirt && e.placement === p))]),
      ),
      'the shirt, opened twice on the home page and seen on the collection',
    );
  });

  it("names the session's traffic source by the landing page's utm_medium, else by its referrer", async () => {
    const cases = [
      { landing: '/', referer: undefined, source: 'direct' },
      { landing: '/', referer: `${shop.origin}/collections/501`, source: 'direct' },
      { landing: '/', referer: 'https://www.google.de/search?q=linen', source: 'search' },
      { landing: '/', referer: 'https://mail.google.com/mail/u/0/', source: 'email' },
      { landing: '/', referer: 'https://l.facebook.com/l.php', source: 'social' },
      { landing: '/', referer: 'https://blog.example.org/summer-looks', source: 'referral' },
      { landing: '/?utm_medium=cpc', referer: 'https://www.google.com/', source: 'paid' },
      { landing: '/?utm_source=x&utm_medium=Newsletter', referer: undefined, source: 'email' },
      { landing: '/?utm_medium=qr', referer: 'https://t.co/abc', source: 'social' },
    ];
    const seen = [];
    for (const { landing, referer } of cases) {
      const { page, close } = await newShopper(`watching: landing ${landing} from ${referer}`, { origin: shop.origin });
      await page.goto(landing, { referer });
      await slotsSettled(page);
      await page.waitForFunction(() => JSON.parse(localStorage.getItem('videoapp:queue') || '[]').length > 0);
      seen.push({ landing, referer, source: [...new Set((await storedQueue(page)).map((e) => e.source))].join() });
      await close();
    }
    assert.deepEqual(
      seen,
      cases.map(({ landing, referer, source }) => ({ landing, referer, source })),
    );
  });

  for (const days of [7, 30]) {
    it(`credits an order after a view 8 days ago only with a window of at least 8 days (${days})`, async () => {
      await shop.settings({ attributionWindowDays: days });
      const { context, page } = await shopper(`watching: window ${days}`);
      const sent = recordSent(context);
      await page.goto('/');
      await slotsSettled(page);
      const watching = await openAndWatch(page, widget, v.shirt);
      await page.waitForFunction(() => (JSON.parse(localStorage.getItem('videoapp:history') || '{}').views || []).length > 0);
      assert.equal((await historyOf(page)).windowDays, days, 'the history keeps the shop’s window');
      await page.keyboard.press('Escape');
      await watching.waitFor({ state: 'detached' });
      await page.evaluate(() => window.videoapp.flush());
      await queueDrained(page);

      // Eight days later, in a new tab (a new session), the shopper buys the shirt.
      await context.clock.setFixedTime(Date.now() + 8 * DAY_MS);
      const later = await context.newPage();
      await later.goto('/products/linen-shirt');
      await slotsSettled(later);
      await Promise.all([later.waitForURL(/\/cart$/), later.click('form[action="/cart/add"] button')]);
      const order = await checkOut(later);

      const event = checkoutFor(sent, order);
      assert.ok(event, `the pixel sent order ${order}`);
      if (days === 7) {
        assert.deepEqual(
          [event.attributionType, event.videoId, event.placement, event.country, event.source],
          [undefined, undefined, undefined, undefined, undefined],
          `not credited: ${JSON.stringify(event)}`,
        );
        assert.deepEqual((await historyOf(later)).views, [], 'the view older than the window is forgotten');
        assert.deepEqual(await creditIn(order), [{ attribution: 'none', video: '' }]);
      } else {
        assert.deepEqual(
          [event.attributionType, event.videoId, event.widgetId, event.productId],
          ['influenced', v.shirt, widget, productGid(1001)],
          `credited to the video watched 8 days ago: ${JSON.stringify(event)}`,
        );
        assert.deepEqual(whereWho(event), { placement: 'home', country: 'US', source: 'direct' }, 'where and who of the view');
        assert.deepEqual(await creditIn(order), [{ attribution: 'influenced', video: v.shirt }]);
      }
    });
  }

  it('credits an order to the video a product was added to the cart from, over a later view', async () => {
    await shop.settings({ attributionWindowDays: 7 });
    const { context, page } = await shopper('watching: direct over a later view');
    const sent = recordSent(context);
    await page.goto('/collections/501');
    await slotsSettled(page);
    await page.click(card(v.shirt));
    const shirt = player(page, v.shirt);
    await shirt.locator(`[data-videoapp-add-to-cart="${productGid(1001)}"]`).click();
    await shirt.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();
    await page.keyboard.press('Escape');
    await page.evaluate(() => window.videoapp.flush());
    await queueDrained(page);

    // Two days later, in a new tab, the shopper watches another video, then checks out.
    await context.clock.setFixedTime(Date.now() + 2 * DAY_MS);
    const later = await context.newPage();
    await later.goto('/');
    await slotsSettled(later);
    await openAndWatch(later, widget, v.dress);
    await later.waitForFunction(
      (id) => (JSON.parse(localStorage.getItem('videoapp:history') || '{}').views || []).some((e) => e.videoId === id),
      v.dress,
    );
    await later.keyboard.press('Escape');
    const order = await checkOut(later);

    const event = checkoutFor(sent, order);
    assert.ok(event, `the pixel sent order ${order}`);
    assert.deepEqual(
      [event.attributionType, event.videoId, event.widgetId, event.productId],
      ['direct', v.shirt, widget, productGid(1001)],
      `credited to the add-to-cart: ${JSON.stringify(event)}`,
    );
    assert.deepEqual(whereWho(event), { placement: 'collection', country: 'US', source: 'direct' }, 'where and who of the add-to-cart');
    assert.deepEqual(await creditIn(order), [{ attribution: 'direct', video: v.shirt }]);
  });
});
