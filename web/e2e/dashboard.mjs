// Story 7: the merchant's dashboard, opened from the store's admin. A widget created there
// renders on the store; an attribution window chosen on Settings is in the store's widget
// answers; an API key created there answers the analytics API and is refused within a second of
// its revocation there; its cards and chart show exactly the numbers the analytics API gives for
// the same range; and every page passes axe-core with no serious or critical violation.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { dashboardSettled as settled, goTo, newShopper, pageHeading, renderedWidgets, slotsSettled } from './browser.mjs';
import { config, newShop, priceCents, productGid, theService, utcDay, waitFor } from './stack.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SUMMARY_KEYS = ['impressions', 'views', 'clicks', 'ctr', 'add_to_cart', 'orders', 'revenue', 'cvr'];
const BLOCKING = ['serious', 'critical'];
const DAY_MS = 86_400_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe("The merchant's dashboard", () => {
  const open = [];
  // Every axe violation of every page, whatever its impact, for the artifacts.
  const axeReport = {};

  after(async () => {
    for (const thing of open.reverse()) await (thing.close ? thing.close() : thing.stop());
    mkdirSync(config.artifacts, { recursive: true });
    writeFileSync(path.join(config.artifacts, 'dashboard-axe.json'), JSON.stringify(axeReport, null, 2));
  });

  async function seededShop(name) {
    const shop = await newShop(name);
    open.push(shop);
    const shirt = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    const dress = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    return { shop, shirt, dress };
  }

  /** The merchant: a browser at the store's admin, which opens the dashboard of its shop. */
  async function openDashboard(shop, label) {
    const merchant = await newShopper(`dashboard: ${label}`, { origin: shop.origin });
    open.push(merchant);
    const { page } = merchant;
    const shopReads = [];
    const homeReads = [];
    const shopPath = `/app/api/shops/${shop.shop}`;
    const onRequest = (r) => {
      const { pathname } = new URL(r.url());
      if (pathname === shopPath) shopReads.push(r.method());
      if (pathname === '/app/api/analytics/summary' || pathname === '/app/api/analytics/timeseries') homeReads.push(pathname);
    };
    page.on('request', onRequest);
    await page.goto(shop.admin);
    assert.equal(new URL(page.url()).pathname, '/app', `the admin opens the dashboard, not ${page.url()}`);
    assert.equal(new URL(page.url()).searchParams.get('shop'), shop.shop);
    await pageHeading(page, 'Analytics').waitFor();
    await settled(page);
    page.off('request', onRequest);
    // The home page's totals and chart, asked for by boot.js before the page was drawn, are
    // the answers the page shows: each asked once.
    assert.deepEqual(homeReads.sort(), ['/app/api/analytics/summary', '/app/api/analytics/timeseries']);
    // A seeded shop has no platform to install from: the install fails, and the shop read beside
    // it is the one shown, not asked for again.
    assert.deepEqual(shopReads, ['GET'], 'the shop is read once as the dashboard opens');
    return merchant;
  }

  // ---------------------------------------------------------------------------------------------

  it('creates a widget that renders on the store, with its videos in the chosen order', async () => {
    const { shop, shirt, dress } = await seededShop('dash-widget');
    const { context, page } = await openDashboard(shop, 'widget');
    const title = 'Made in the dashboard';

    await goTo(page, 'Widgets');
    await page.getByText('0 widgets', { exact: true }).waitFor();
    // The page's own action (the empty list offers the same button).
    await page.getByRole('button', { name: 'Create widget' }).first().click();
    await pageHeading(page, 'Create a widget').waitFor();

    await page.getByLabel('Title', { exact: true }).fill(title);
    await page.getByLabel('Type', { exact: true }).selectOption('carousel');
    await page.getByLabel('Status', { exact: true }).selectOption('active');
    // Both videos, then the second moved up: the dress first, the shirt second.
    const toAdd = page.getByLabel('Video to add', { exact: true });
    await toAdd.selectOption({ label: 'Linen Shirt, three ways' });
    await page.getByRole('button', { name: 'Add video', exact: true }).click();
    await toAdd.selectOption({ label: 'Summer Dress on the boardwalk' });
    await page.getByRole('button', { name: 'Add video', exact: true }).click();
    await page.getByRole('button', { name: 'Move up, Summer Dress on the boardwalk' }).click();
    const order = page.getByRole('list', { name: 'Videos in display order' }).getByRole('listitem');
    assert.deepEqual(
      (await order.allTextContents()).map((text) => text.match(/Linen Shirt|Summer Dress/)?.[0]),
      ['Summer Dress', 'Linen Shirt'],
      'the form lists the videos in the chosen order',
    );
    await page.getByRole('checkbox', { name: 'Home page', exact: true }).check();

    const saved = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/widgets'));
    await page.getByRole('button', { name: 'Create widget', exact: true }).click();
    const answer = await saved;
    assert.equal(answer.status(), 201, `creating the widget answered ${answer.status()}: ${await answer.text()}`);
    const widget = await answer.json();
    assert.deepEqual(
      { type: widget.type, title: widget.title, status: widget.status, videoIds: widget.videoIds, locations: widget.rules?.locations },
      { type: 'carousel', title, status: 'active', videoIds: [dress, shirt], locations: ['home'] },
      'the dashboard sends the widget as it was filled in',
    );
    await pageHeading(page, 'Widgets').waitFor();
    const row = page.getByRole('row').filter({ hasText: title });
    await row.waitFor();
    const [name, type, status, videos] = (await row.locator('th, td').allInnerTexts()).map((t) => t.trim());
    assert.deepEqual(
      [name.split('\n')[0], type, status.split('\n').pop(), videos],
      [title, 'Carousel', 'Active', '2'],
      'the list shows the new active carousel of 2 videos',
    );

    // A shopper's view of the home page, until the service serves the new widget there.
    const store = await context.newPage();
    const rendered = await waitFor(
      async () => {
        await store.goto('/');
        await slotsSettled(store);
        return (await renderedWidgets(store)).find((w) => w.id === widget.id);
      },
      { timeout: 15_000, interval: 250, message: `the widget ${widget.id} on the home page of the store` },
    );
    assert.deepEqual(
      rendered,
      { id: widget.id, type: 'carousel', videos: [dress, shirt] },
      'the home page shows the carousel with its two videos in the chosen order',
    );
    const root = store.locator(`[data-videoapp-widget="${widget.id}"]`);
    assert.equal(await root.locator('.videoapp-title').textContent(), title, 'the widget shows its title');
    assert.deepEqual(
      await root.locator('[data-videoapp-video]').evaluateAll((cards) => cards.map((c) => c.getAttribute('aria-label'))),
      ['Summer Dress on the boardwalk', 'Linen Shirt, three ways'],
      'its cards are the two videos, in the chosen order',
    );
    await store.close();
  });

  // ---------------------------------------------------------------------------------------------

  it('creates a key that answers /api/v1, and that is refused within a second of its revocation', async () => {
    const { shop } = await seededShop('dash-key');
    const { page } = await openDashboard(shop, 'key');
    const today = utcDay();
    const summary = `${theService().base}/api/v1/analytics/summary?start_date=${today}&end_date=${today}`;
    const statusWith = async (key) => (await fetch(summary, { headers: { authorization: `Bearer ${key}` } })).status;

    await goTo(page, 'Settings');
    await page.getByLabel('Key name', { exact: true }).fill('e2e-dashboard');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const key = (await page.getByTestId('api-key-value').textContent()).trim();
    assert.match(key, /^\S{20,}$/, 'the new key is shown once');
    assert.equal(await statusWith(key), 200, 'the new key reads the analytics API');
    assert.equal(await statusWith(key), 200, 'and again (the service now knows it)');

    const row = page.getByRole('row').filter({ hasText: 'e2e-dashboard' });
    await row.getByText('Active', { exact: true }).waitFor();
    await row.getByTestId('revoke-key').getByRole('button', { name: 'Revoke e2e-dashboard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke e2e-dashboard?' });
    const confirm = dialog.getByRole('button', { name: 'Revoke key', exact: true });
    await confirm.waitFor();

    const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().includes('/api-keys/'));
    const clickedAt = Date.now();
    await confirm.click();
    const answer = await deleted;
    const answeredAt = Date.now();
    assert.ok(answer.ok(), `revoking answered ${answer.status()}`);
    let refusedAt = null;
    let last = null;
    while (Date.now() - clickedAt < 5_000) {
      last = await statusWith(key);
      if (last === 401) {
        refusedAt = Date.now();
        break;
      }
      await sleep(50);
    }
    assert.ok(refusedAt, `the revoked key still answers ${last} 5 s after the revocation`);
    const elapsed = refusedAt - clickedAt;
    console.error(`  revocation: DELETE answered ${answeredAt - clickedAt} ms after the click, key refused after ${elapsed} ms`);
    assert.ok(elapsed < 1_000, `the revoked key was refused ${elapsed} ms after the revocation was confirmed (at most 1 s)`);

    await dialog.waitFor({ state: 'hidden' });
    await row.getByText(/^Revoked /).waitFor();
    assert.equal(await row.getByTestId('revoke-key').count(), 0, 'a revoked key can no longer be revoked');
    assert.equal(await statusWith(key), 401, 'the revoked key stays refused');
    assert.equal(await statusWith(shop.key), 200, "the shop's other key still answers");
  });

  // ---------------------------------------------------------------------------------------------

  it("changes the attribution window on Settings, and the store's widgets then answer with it", async () => {
    const { shop, shirt } = await seededShop('dash-window');
    await shop.widget({ type: 'carousel', title: 'Home carousel', videoIds: [shirt] });
    const { context, page } = await openDashboard(shop, 'window');
    // The window in the store's widget answer, as a shopper's home page receives it.
    const store = await context.newPage();
    const answeredWindow = async () => {
      const answer = store.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/contextual-widgets'));
      await store.goto('/');
      await slotsSettled(store);
      return (await (await answer).json()).attributionWindowDays;
    };
    assert.equal(await answeredWindow(), 7, 'a new shop credits orders for 7 days');

    await goTo(page, 'Settings');
    const choice = (days) => page.getByRole('radio', { name: days, exact: true });
    assert.ok(await choice('7 days').isChecked(), 'Settings shows the 7-day window');
    // The radio's own styled box covers it: the merchant clicks the label.
    await page.getByText('30 days', { exact: true }).click();
    assert.ok(await choice('30 days').isChecked(), 'the 30-day window is chosen');
    const save = page.getByRole('button', { name: 'Save the attribution window', exact: true });
    const shopPath = `/app/api/shops/${shop.shop}`;

    // The connection drops as the merchant saves: the card says so.
    const dropped = (url) => url.pathname === shopPath;
    await page.route(dropped, (route) => (route.request().method() === 'PATCH' ? route.abort('internetdisconnected') : route.continue()));
    await save.click();
    const failure = page.getByText('The attribution window could not be saved', { exact: true });
    await failure.waitFor();
    await page.getByText('Could not reach videoapp. Check your connection and try again.', { exact: true }).waitFor();
    await page.unroute(dropped);

    // Saved again, with the connection back.
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && new URL(r.url()).pathname === shopPath);
    await save.click();
    const answer = await saved;
    assert.equal(answer.status(), 200, `saving the window answered ${answer.status()}: ${await answer.text()}`);
    assert.deepEqual(answer.request().postDataJSON(), { attributionWindowDays: 30 }, 'the dashboard sends the chosen window');
    await page.getByText('Attribution window saved', { exact: true }).waitFor();
    await failure.waitFor({ state: 'hidden' });
    await page.screenshot({ path: path.join(config.artifacts, 'dashboard-attribution-window.png'), fullPage: true });

    await waitFor(async () => (await answeredWindow()) === 30, {
      timeout: 15_000,
      interval: 250,
      message: "the store's widget answer with the 30-day window",
    });
    await store.close();
    // Settings opened again shows the saved window.
    await goTo(page, 'Videos');
    await goTo(page, 'Settings');
    assert.ok(await choice('30 days').isChecked(), 'Settings shows the saved 30-day window');
  });

  // ---------------------------------------------------------------------------------------------

  // A shop with a week of activity, for the numbers and the pages' accessibility.
  let busy = null;

  /**
   * Events on three days of the last week (today, 2 and 5 days ago), through the demo store's
   * app proxy, with the days' views at 3, 2 and 1.
   */
  function activity({ shirt, dress, widget }, now) {
    const at = (daysAgo) => new Date(now - daysAgo * DAY_MS).toISOString();
    const event = (eventType, daysAgo, fields = {}) => ({
      eventType,
      eventId: randomUUID(),
      sessionId: `session-${daysAgo}`,
      widgetId: widget,
      timestamp: at(daysAgo),
      ...fields,
    });
    const day = (daysAgo, { impressions, views, clicks, carts = 0, orders = [] }) => [
      ...Array.from({ length: impressions }, (_, i) => event('impression', daysAgo, { videoId: i % 2 ? dress : shirt })),
      ...Array.from({ length: views }, (_, i) => event('view', daysAgo, { videoId: i % 2 ? dress : shirt })),
      ...Array.from({ length: clicks }, (_, i) => event('click', daysAgo, { videoId: i % 2 ? dress : shirt })),
      ...Array.from({ length: carts }, () =>
        event('add_to_cart', daysAgo, { videoId: shirt, productId: productGid(1001), attributionType: 'direct' }),
      ),
      ...orders.map(([number, attributionType]) =>
        event('checkout_completed', daysAgo, {
          videoId: number === 1001 ? shirt : dress,
          attributionType,
          orderId: `gid://shopify/Order/${randomUUID()}`,
          productIds: [productGid(number)],
          revenue: (priceCents(number) / 100).toFixed(2),
          currency: 'USD',
        }),
      ),
    ];
    return [
      ...day(0, { impressions: 6, views: 3, clicks: 2, carts: 1, orders: [[1001, 'direct']] }),
      ...day(2, { impressions: 4, views: 2, clicks: 1, carts: 1 }),
      ...day(5, { impressions: 2, views: 1, clicks: 1, orders: [[1002, 'influenced']] }),
    ];
  }

  /** The busy shop, its events recorded and counted by the analytics API. */
  async function busyShop() {
    if (busy) return busy;
    const seeded = await seededShop('dash-numbers');
    const widget = await seeded.shop.widget({ type: 'carousel', title: 'Home carousel', videoIds: [seeded.shirt, seeded.dress] });
    const now = Date.now();
    await seeded.shop.record(activity({ ...seeded, widget }, now));
    const week = { start_date: utcDay(-6, now), end_date: utcDay(0, now) };
    await waitFor(
      async () => {
        const s = await seeded.shop.analytics('summary', week);
        return s.impressions === 12 && s.views === 6 && s.clicks === 4 && s.add_to_cart === 2 && s.orders === 2 && s;
      },
      { timeout: 20_000, interval: 250, message: 'the recorded events in the analytics API' },
    );
    busy = { ...seeded, widget };
    return busy;
  }

  /** The cards' raw numbers and the chart's points, as the page shows them. */
  async function shownNumbers(page) {
    const cards = Object.fromEntries(
      await Promise.all(SUMMARY_KEYS.map(async (k) => [k, await page.getByTestId(`metric-${k}`).getAttribute('data-value')])),
    );
    const points = await page
      .getByTestId('chart-point')
      .evaluateAll((circles) => circles.map((c) => ({ date: c.getAttribute('data-date'), value: c.getAttribute('data-value') })));
    return { cards, points };
  }

  /** The same numbers from /api/v1 for the range, as the page would write them. */
  async function apiNumbers(shop, start, end) {
    const range = { start_date: start, end_date: end };
    const summary = await shop.analytics('summary', range);
    const series = await shop.analytics('timeseries', { ...range, interval: 'day' });
    return {
      cards: Object.fromEntries(SUMMARY_KEYS.map((k) => [k, String(summary[k])])),
      points: series.map((b) => ({ date: b.date, value: String(b.metrics.views) })),
    };
  }

  /** Waits until the page shows the range `start`..`end` (`days` chart points), loaded. */
  async function showsRange(page, start, end, days) {
    await page.waitForFunction(
      ({ start, end, days }) => {
        const points = document.querySelectorAll('[data-testid="chart-point"]');
        return (
          points.length === days &&
          points[0].getAttribute('data-date') === start &&
          points[days - 1].getAttribute('data-date') === end &&
          document.querySelector('[data-testid="metric-cvr"]')
        );
      },
      { start, end, days },
    );
    await settled(page);
  }

  it('shows in its cards and chart the numbers /api/v1 gives for the same range', async () => {
    const { shop } = await busyShop();
    const { page } = await openDashboard(shop, 'numbers');
    const now = Date.now();
    const today = utcDay(0, now);
    assert.equal(await page.getByLabel('Chart metric').inputValue(), 'views', 'the chart shows views');
    await page.getByRole('heading', { name: 'Views per day' }).waitFor();

    try {
      for (const [preset, label, days] of [
        ['last30', 'Last 30 days', 30],
        ['last7', 'Last 7 days', 7],
      ]) {
        const start = utcDay(-(days - 1), now);
        const picker = page.getByLabel('Date range', { exact: true });
        if ((await picker.inputValue()) !== preset) await picker.selectOption({ label });
        assert.equal(await picker.inputValue(), preset);
        await showsRange(page, start, today, days);
        const shown = await shownNumbers(page);
        const expected = await apiNumbers(shop, start, today);
        assert.deepEqual(shown.cards, expected.cards, `${label}: every card shows the summary of /api/v1 for ${start}..${today}`);
        assert.deepEqual(shown.points, expected.points, `${label}: the views chart is /api/v1's daily timeseries for ${start}..${today}`);
        // Not a match of zeros: the recorded days are there.
        const views = Object.fromEntries(shown.points.map((p) => [p.date, p.value]));
        assert.deepEqual(
          [views[today], views[utcDay(-2, now)], views[utcDay(-5, now)]],
          ['3', '2', '1'],
          `${label}: the recorded views per day`,
        );
        assert.equal(shown.cards.revenue, String((priceCents(1001) + priceCents(1002)) / 100), `${label}: the revenue of the two orders`);
      }
    } finally {
      // The page as the comparison left it, passed or failed.
      await page.screenshot({ path: path.join(config.artifacts, 'dashboard-analytics.png'), fullPage: true });
    }

    // The videos table's CSV is the analytics API's CSV of the same range and order.
    const week = { start_date: utcDay(-6, now), end_date: today };
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV of videos' }).click();
    const file = await downloading;
    const csv = readFileSync(await file.path(), 'utf8');
    const query = new URLSearchParams({ ...week, format: 'csv', sort_by: 'views', sort_order: 'desc' });
    const api = await fetch(`${theService().base}/api/v1/analytics/videos?${query}`, {
      headers: { authorization: `Bearer ${shop.key}` },
    });
    assert.equal(file.suggestedFilename(), `videoapp-videos-${week.start_date}-to-${week.end_date}.csv`);
    assert.equal(csv, await api.text(), "the downloaded CSV is the API's");
  });

  it('edits a video and a widget, and deletes each only after a confirmation', async () => {
    const { shop, shirt, dress } = await seededShop('dash-edit');
    const widgetId = await shop.widget({ type: 'carousel', title: 'To be renamed', videoIds: [shirt, dress] });
    const { page } = await openDashboard(shop, 'edit');
    const admin = (pathname) =>
      fetch(`${theService().base}/admin/v1/shops/${shop.shop}${pathname}`, { headers: { authorization: `Bearer ${config.adminToken}` } });

    // A video: its title changed, then deleted after the confirmation.
    await goTo(page, 'Videos');
    await page.getByRole('button', { name: 'Edit Linen Shirt, three ways' }).click();
    await pageHeading(page, 'Edit Linen Shirt, three ways').waitFor();
    await page.getByLabel('Title', { exact: true }).fill('Linen Shirt, renamed');
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/videos/${shirt}`));
    await page.getByRole('button', { name: 'Save video', exact: true }).click();
    assert.equal((await patched).status(), 200);
    assert.equal((await (await admin(`/videos/${shirt}`)).json()).title, 'Linen Shirt, renamed', 'the service holds the new title');
    await page.getByRole('row').filter({ hasText: 'Linen Shirt, renamed' }).waitFor();

    await page.getByRole('button', { name: 'Delete Summer Dress on the boardwalk' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    assert.equal((await admin(`/videos/${dress}`)).status, 200, 'nothing is deleted before the confirmation');
    const deleted = page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().endsWith(`/videos/${dress}`));
    await dialog.getByRole('button', { name: 'Delete video', exact: true }).click();
    assert.equal((await deleted).status(), 204);
    assert.equal((await admin(`/videos/${dress}`)).status, 404, 'the video is gone');

    // A widget: its title and status changed, then deleted after the confirmation.
    await goTo(page, 'Widgets');
    await page.getByRole('button', { name: 'Edit To be renamed' }).click();
    await pageHeading(page, 'Edit To be renamed').waitFor();
    await page.getByLabel('Title', { exact: true }).fill('Renamed in the dashboard');
    await page.getByLabel('Status', { exact: true }).selectOption('archived');
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/widgets/${widgetId}`));
    await page.getByRole('button', { name: 'Save widget', exact: true }).click();
    assert.equal((await saved).status(), 200);
    const held = await (await admin(`/widgets/${widgetId}`)).json();
    assert.deepEqual({ title: held.title, status: held.status }, { title: 'Renamed in the dashboard', status: 'archived' });

    await page.getByRole('button', { name: 'Delete Renamed in the dashboard' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel', exact: true }).click();
    assert.equal((await admin(`/widgets/${widgetId}`)).status, 200, 'a cancelled deletion deletes nothing');
    await page.getByRole('button', { name: 'Delete Renamed in the dashboard' }).click();
    const gone = page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().endsWith(`/widgets/${widgetId}`));
    await page.getByRole('dialog').getByRole('button', { name: 'Delete widget', exact: true }).click();
    assert.equal((await gone).status(), 204);
    assert.equal((await admin(`/widgets/${widgetId}`)).status, 404, 'the widget is gone');
  });

  // ---------------------------------------------------------------------------------------------

  describe('passes axe-core, with no serious or critical violation, on', () => {
    let page;

    before(async () => {
      const { shop } = await busyShop();
      ({ page } = await openDashboard(shop, 'accessibility'));
    });

    /**
     * Runs axe-core on the whole document; keeps a full-page screenshot as `dashboard-<name>.png`
     * (Analytics' is the one of the numbers above, the same page of the same shop).
     */
    async function passesAxe(name, { screenshot = true } = {}) {
      await settled(page);
      if (screenshot) await page.screenshot({ path: path.join(config.artifacts, `dashboard-${name}.png`), fullPage: true });
      if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
      const { violations } = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
      axeReport[name] = violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => n.target.join(' ')),
      }));
      const blocking = violations.filter((v) => BLOCKING.includes(v.impact));
      const described = blocking.map(
        (v) =>
          `  ${v.impact} ${v.id}: ${v.help}\n` +
          v.nodes.map((n) => `    ${n.target.join(' ')}: ${n.failureSummary.replace(/\s*\n\s*/g, ' ')}`).join('\n'),
      );
      assert.equal(blocking.length, 0, `axe-core finds serious or critical violations on ${name}:\n${described.join('\n')}`);
    }

    it('Analytics', async () => {
      await goTo(page, 'Analytics');
      await page.getByTestId('chart-point').first().waitFor();
      await page.getByRole('row', { name: /Home carousel/ }).waitFor();
      await passesAxe('analytics', { screenshot: false });
    });

    it('Widgets', async () => {
      await goTo(page, 'Widgets');
      await page.getByRole('row', { name: /Home carousel/ }).waitFor();
      await passesAxe('widgets');
    });

    it('the widget form', async () => {
      await goTo(page, 'Widgets');
      await page.getByRole('button', { name: 'Create widget' }).first().click();
      await pageHeading(page, 'Create a widget').waitFor();
      // Active, with a video in it, so its order list and the live preview show too.
      await page.getByLabel('Title', { exact: true }).fill('A new carousel');
      await page.getByLabel('Status', { exact: true }).selectOption('active');
      await page.getByRole('button', { name: 'Add video', exact: true }).click();
      await page.getByRole('list', { name: 'Videos in display order' }).waitFor();
      await page.locator('[data-videoapp-widget] [data-videoapp-video]').first().waitFor();
      await passesAxe('widget-form');
      // The form holds unsaved changes: leaving it asks first, and discarding leaves.
      await page.getByRole('navigation', { name: 'videoapp' }).getByRole('link', { name: 'Widgets', exact: true }).click();
      const question = page.getByRole('dialog', { name: 'Leave without saving?' });
      await question.getByRole('button', { name: 'Discard changes', exact: true }).click();
      await pageHeading(page, 'Widgets').waitFor();
    });

    it('Videos', async () => {
      await goTo(page, 'Videos');
      await page.getByRole('row', { name: /Linen Shirt, three ways/ }).waitFor();
      await passesAxe('videos');
    });

    it('adding videos', async () => {
      await goTo(page, 'Videos');
      await page.getByRole('button', { name: 'Add videos', exact: true }).click();
      await pageHeading(page, 'Add videos').waitFor();
      await passesAxe('add-videos');
    });

    it('the video form', async () => {
      await goTo(page, 'Videos');
      await page.getByRole('button', { name: 'Add videos', exact: true }).click();
      await pageHeading(page, 'Add videos').waitFor();
      await page.getByRole('button', { name: 'Add by URL', exact: true }).click();
      await pageHeading(page, 'Add a video').waitFor();
      await passesAxe('video-form');
    });

    it("the video form with the service's refusal beside the field it names", async () => {
      // The form sends what the merchant typed; the service's VALIDATION_ERROR names videoUrl.
      await page.getByLabel('Title', { exact: true }).fill('Refused');
      await page.getByLabel('Video URL', { exact: true }).fill('not a link');
      const answered = page.waitForResponse((r) => r.url().includes('/videos') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Add video', exact: true }).last().click();
      const answer = await answered;
      assert.equal(answer.status(), 400);
      const field = page.getByLabel('Video URL', { exact: true });
      await waitFor(async () => (await field.getAttribute('aria-invalid')) === 'true', {
        message: 'the Video URL field is marked invalid',
      });
      const describedBy = (await field.getAttribute('aria-describedby')) || '';
      const texts = await Promise.all(
        describedBy
          .split(/\s+/)
          .filter(Boolean)
          .map((id) => page.locator(`[id="${id}"]`).innerText()),
      );
      assert.ok(
        texts.some((t) => t.includes("'not a link' is not an absolute http(s) URL")),
        `the field's description shows the service's message: ${JSON.stringify(texts)}`,
      );
      await passesAxe('video-form-refused');
      await page.getByRole('navigation', { name: 'videoapp' }).getByRole('link', { name: 'Settings', exact: true }).click();
      await page
        .getByRole('dialog', { name: 'Leave without saving?' })
        .getByRole('button', { name: 'Discard changes', exact: true })
        .click();
      await pageHeading(page, 'Settings').waitFor();
    });

    it('Settings', async () => {
      await goTo(page, 'Settings');
      await page.getByRole('row', { name: /e2e/ }).first().waitFor();
      await passesAxe('settings');
    });

    it('Settings with a new key shown, and the revocation dialog', async () => {
      await goTo(page, 'Settings');
      await page.getByLabel('Key name', { exact: true }).fill('reporting');
      await page.getByRole('button', { name: 'Create key', exact: true }).click();
      await page.getByTestId('api-key-value').waitFor();
      await page.getByRole('row').filter({ hasText: 'reporting' }).waitFor();
      await passesAxe('settings-key');
      await page.getByRole('button', { name: 'Revoke reporting' }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke reporting?' });
      await dialog.waitFor();
      await passesAxe('settings-revoke');
      await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });
    });
  });
});
