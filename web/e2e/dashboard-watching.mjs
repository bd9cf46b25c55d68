// Story 7c: the dashboard shows the merchant what shoppers do with a video, and where. Three
// shoppers' visits reach the service as the loader and the pixel send them (through the store's
// app proxy, each with its browser, page type, country and traffic source): one on a phone who
// watches the whole video and buys from it, one on a computer who opens it twice without
// finishing it and buys later, one whose browser says nothing. The video's page shows exactly its
// watch time, average watch, completion and how far the openings reached, beside its sales and
// their direct and influenced parts; the Analytics page shows the split and each of the four
// breakdowns with the merchant's words for every value; a video nobody saw shows that nothing
// happened; the home page's first open asks for nothing more than before; and the new screens
// pass axe-core, on a laptop and on a phone.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { dashboardSettled as settled, goTo, openDashboard, pageHeading, passesAxe } from './browser.mjs';
import { config, newShop, priceCents, productGid, utcDay, waitFor } from './stack.mjs';

const PHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const COMPUTER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';

const PHONE_SCREEN = { viewport: { width: 412, height: 915 }, deviceScaleFactor: 2.625, isMobile: true, hasTouch: true };

const SHIRT = 'Linen Shirt, three ways';
const DRESS = 'Summer Dress on the boardwalk';

/** One row of a breakdown: the API's value, its name on screen, and its numbers. */
const row = (value, name, views, clicks, orders, revenue, watch, completion) => ({
  value,
  name,
  numbers: {
    views: String(views),
    clicks: String(clicks),
    orders: String(orders),
    revenue: String(revenue),
    watch_time_seconds: String(watch),
    completion_rate: String(completion),
  },
});

// Worked out by hand from the visits below. The phone's visit: 1 view, 1 click watched to the
// end (6 s), 1 direct order of the shirt (11.90). The computer's: 1 view, 2 clicks watched to 60%
// and 30% (3 s and 1.5 s), 1 influenced order of the dress (12.90). The unknown: 2 impressions.
// Rows by views, highest first, ties by value in alphabetical order.
const PHONE_ROW = [1, 1, 1, priceCents(1001) / 100, 6, 100];
const COMPUTER_ROW = [1, 2, 1, priceCents(1002) / 100, 4.5, 0];
const NOTHING = [0, 0, 0, 0, 0, 0];
const BREAKDOWNS = {
  'By placement': [
    row('home', 'Home page', ...PHONE_ROW),
    row('product', 'Product pages', ...COMPUTER_ROW),
    row('unknown', 'Not known', ...NOTHING),
  ],
  'By device': [
    row('desktop', 'Computers', ...COMPUTER_ROW),
    row('mobile', 'Phones', ...PHONE_ROW),
    row('unknown', 'Not known', ...NOTHING),
  ],
  'By country': [row('DE', 'Germany', ...PHONE_ROW), row('US', 'United States', ...COMPUTER_ROW), row('unknown', 'Not known', ...NOTHING)],
  'By source': [
    row('search', 'Search engines', ...COMPUTER_ROW),
    row('social', 'Social media', ...PHONE_ROW),
    row('unknown', 'Not known', ...NOTHING),
  ],
};

describe('The dashboard shows what shoppers do with a video, and where', () => {
  const open = [];
  const axeReport = {};
  let shop;
  let shirt;
  let dress;
  let page;

  before(async () => {
    shop = await newShop('dash-watching');
    open.push(shop);
    shirt = await shop.video({ media: 1, title: SHIRT, products: [1001] });
    dress = await shop.video({ media: 2, title: DRESS, products: [1002] });
    const widget = await shop.widget({ type: 'carousel', title: 'Home carousel', videoIds: [shirt, dress] });

    const timestamp = new Date().toISOString();
    const visit = (where) => {
      const sessionId = `session-${randomUUID()}`;
      return (eventType, fields = {}) => ({
        eventType,
        eventId: randomUUID(),
        sessionId,
        widgetId: widget,
        videoId: shirt,
        timestamp,
        ...where,
        ...fields,
      });
    };
    const order = (number, attributionType) => ({
      attributionType,
      orderId: `gid://shopify/Order/${randomUUID()}`,
      productIds: [productGid(number)],
      revenue: (priceCents(number) / 100).toFixed(2),
      currency: 'USD',
    });

    const phone = visit({ placement: 'home', country: 'DE', source: 'social' });
    await shop.record(
      [
        phone('impression'),
        phone('view'),
        phone('click'),
        phone('watch', { watchedMs: 6000, maxPercent: 100 }),
        phone('add_to_cart', { productId: productGid(1001), attributionType: 'direct' }),
        phone('checkout_completed', order(1001, 'direct')),
      ],
      { userAgent: PHONE },
    );
    const computer = visit({ placement: 'product', country: 'US', source: 'search' });
    await shop.record(
      [
        computer('impression'),
        computer('view'),
        computer('click'),
        computer('watch', { watchedMs: 3000, maxPercent: 60 }),
        computer('click'),
        computer('watch', { watchedMs: 1500, maxPercent: 30 }),
        computer('checkout_completed', order(1002, 'influenced')),
      ],
      { userAgent: COMPUTER },
    );
    const unknown = visit({});
    await shop.record([unknown('impression'), unknown('impression')], { userAgent: '' });

    await waitFor(
      async () => {
        const { metrics: m } = await shop.analytics(`video/${shirt}`);
        return m.impressions === 4 && m.clicks === 3 && m.orders === 2 && m.reached.p25 === 3;
      },
      { timeout: 20_000, interval: 250, message: "the visits in the shirt's numbers" },
    );
    const merchant = await openDashboard(shop, 'watching');
    open.push(merchant);
    ({ page } = merchant);
  });

  after(async () => {
    for (const thing of open.reverse()) await (thing.close ? thing.close() : thing.stop());
    mkdirSync(config.artifacts, { recursive: true });
    writeFileSync(path.join(config.artifacts, 'dashboard-watching-axe.json'), JSON.stringify(axeReport, null, 2));
  });

  const shot = (name) => page.screenshot({ path: path.join(config.artifacts, `dashboard-watching-${name}.png`), fullPage: true });
  const value = (testId) => page.getByTestId(testId).getAttribute('data-value');

  it('shows the direct and influenced parts of the orders and revenue on Analytics', async () => {
    const parts = {};
    for (const id of ['split-direct-orders', 'split-direct-revenue', 'split-influenced-orders', 'split-influenced-revenue']) {
      parts[id] = await value(id);
    }
    assert.deepEqual(parts, {
      'split-direct-orders': '1',
      'split-direct-revenue': String(priceCents(1001) / 100),
      'split-influenced-orders': '1',
      'split-influenced-revenue': String(priceCents(1002) / 100),
    });
    const direct = page.getByTestId('split-direct-orders');
    assert.match(await direct.innerText(), /^1\s+50\.0% of orders$/, 'each part says its share');
  });

  for (const [choice, expected] of Object.entries(BREAKDOWNS)) {
    it(`breaks the numbers down ${choice.toLowerCase()}, each value in the merchant's words`, async () => {
      await page.getByRole('group', { name: 'Break down by' }).getByRole('button', { name: choice, exact: true }).click();
      await settled(page);
      const views = page.locator('[data-testid^="breakdown-"][data-testid$="-views"]');
      await waitFor(async () => (await views.count()) === expected.length, { message: `${expected.length} rows ${choice.toLowerCase()}` });
      const values = await views.evaluateAll((cells) => cells.map((c) => c.dataset.testid.replace(/^breakdown-|-views$/g, '')));
      assert.deepEqual(
        values,
        expected.map((r) => r.value),
        'a row per value, most views first',
      );
      for (const r of expected) {
        const shown = {};
        for (const key of Object.keys(r.numbers)) shown[key] = await value(`breakdown-${r.value}-${key}`);
        assert.deepEqual(shown, r.numbers, `${choice}: the numbers of ${r.value}`);
        await page.getByRole('rowheader', { name: r.name, exact: true }).waitFor();
      }
      const overflow = await page.evaluate(() =>
        [...document.querySelectorAll('.Polaris-IndexTable-ScrollContainer')].map((c) => c.scrollWidth - c.clientWidth),
      );
      assert.deepEqual(
        overflow,
        overflow.map(() => 0),
        `every column of every table shows at 1280 px (px beyond its frame: ${overflow})`,
      );
      if (choice === 'By country') {
        await shot('breakdown-country');
        axeReport['analytics-breakdown'] = await passesAxe(page, 'Analytics with a breakdown');
      }
    });
  }

  it("opens a video's page from the Analytics page, with its watching beside its sales", async () => {
    const link = page.getByRole('link', { name: SHIRT, exact: true });
    await link.click();
    await pageHeading(page, SHIRT).waitFor();
    await settled(page);
    assert.deepEqual(
      Object.fromEntries(new URL(page.url()).searchParams),
      { shop: shop.shop, page: 'videos', stats: shirt, from: 'analytics' },
      'the page has its address',
    );

    const numbers = {};
    for (const key of ['orders', 'revenue', 'add_to_cart', 'watch_time_seconds', 'avg_watch_seconds', 'completion_rate']) {
      numbers[key] = await value(`metric-${key}`);
    }
    // 10.5 s over 3 openings; 1 of the 3 reached the end.
    assert.deepEqual(numbers, {
      orders: '2',
      revenue: String((priceCents(1001) + priceCents(1002)) / 100),
      add_to_cart: '1',
      watch_time_seconds: '10.5',
      avg_watch_seconds: '3.5',
      completion_rate: '33.33',
    });
    const reached = {};
    for (const point of ['p25', 'p50', 'p75', 'p100']) reached[point] = await value(`reached-${point}`);
    assert.deepEqual(reached, { p25: '3', p50: '2', p75: '1', p100: '1' }, 'how many openings reached each point');
    const table = page.getByRole('table', { name: 'How far shoppers watched, of 3 openings' });
    assert.deepEqual(
      (await table.getByRole('row').allInnerTexts()).slice(1).map((t) => t.split(/\s+/).join(' ')),
      ['A quarter of the video 3 100.0%', 'Halfway 2 66.7%', 'Three quarters 1 33.3%', 'The end 1 33.3%'],
      'each point with its openings and their share, in words',
    );
    assert.equal(await page.getByText(/\bp(25|50|75|100)\b/).count(), 0, 'no jargon');
    assert.deepEqual(
      [await value('split-direct-orders'), await value('split-influenced-orders')],
      ['1', '1'],
      'its sales, direct and influenced',
    );
    const today = utcDay();
    const points = await page
      .getByTestId('chart-point')
      .evaluateAll((circles) => circles.map((c) => [c.getAttribute('data-date'), c.getAttribute('data-value')]));
    assert.equal(points.length, 30, 'its last 30 days');
    assert.deepEqual(points.at(-1), [today, '2'], 'its views of today');

    await shot('video');
    // The video's own breakdown.
    await page.getByRole('group', { name: 'Break down by' }).getByRole('button', { name: 'By country', exact: true }).click();
    await page.getByTestId('breakdown-US-clicks').waitFor();
    assert.deepEqual([await value('breakdown-DE-clicks'), await value('breakdown-US-clicks')], ['1', '2']);
    axeReport.video = await passesAxe(page, "a video's page");

    // A reload opens the same page; its way back goes to Analytics.
    await page.reload();
    await pageHeading(page, SHIRT).waitFor();
    await page.getByRole('button', { name: 'Analytics', exact: true }).click();
    await pageHeading(page, 'Analytics').waitFor();
  });

  it("shows on a video's page, opened from Videos, that nothing happened with it", async () => {
    await goTo(page, 'Videos');
    await page.getByRole('link', { name: DRESS, exact: true }).click();
    await pageHeading(page, DRESS).waitFor();
    await settled(page);
    await page.getByText('Nothing happened with this video in these dates', { exact: true }).waitFor();
    assert.equal(await page.getByTestId('metric-orders').count(), 0, 'no zeros in cards');
    await shot('video-empty');
    axeReport['video-empty'] = await passesAxe(page, "a video's page with nothing in it");
    await page.getByRole('button', { name: 'Videos', exact: true }).click();
    await pageHeading(page, 'Videos').waitFor();
  });

  it("fits a video's page and its breakdown on a phone (412×915), the rows as cards", async () => {
    const phone = await openDashboard(shop, 'watching on a phone', { device: PHONE_SCREEN });
    open.push(phone);
    const { page } = phone;
    const noSidewaysScroll = async (name) => {
      const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
      assert.ok(scroll <= width, `${name}: the page is ${scroll} px wide in a ${width} px window`);
    };
    await page.getByRole('list', { name: 'Videos' }).getByRole('link', { name: SHIRT, exact: true }).click();
    await pageHeading(page, SHIRT).waitFor();
    await page.getByTestId('reached-p100').waitFor();
    await page.getByRole('group', { name: 'Break down by' }).getByRole('button', { name: 'By device', exact: true }).click();
    const devices = page.getByRole('list', { name: 'Where shoppers watched it, by device' }).getByRole('listitem');
    await waitFor(async () => (await devices.count()) === 3, { message: 'a card per device' });
    await devices.filter({ hasText: 'Phones' }).getByText('Completion rate', { exact: true }).waitFor();
    await settled(page);
    await noSidewaysScroll("a video's page");
    await page.screenshot({ path: path.join(config.artifacts, 'dashboard-watching-phone.png'), fullPage: true });
    axeReport['video-phone'] = await passesAxe(page, "a video's page on a phone");
  });
});
