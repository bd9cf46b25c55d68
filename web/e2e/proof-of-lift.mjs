// Story: proof of lift. The merchant holds out a share of shoppers on Settings; the service
// publishes the holdout to the theme (the app's metafield on the platform), so the store's pages
// decide each browser's group in their head. A shopper held out, on a throttled phone, sees no
// widget and no reserved space from the first page on, and nothing on the page shifts; a shopper
// who can see videos sees them, and nothing shifts either. Each buys the shirt; the lift endpoint
// counts one visit and one order in each group, and the dashboard's card shows both groups and
// says it is too early to tell.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  checkOut,
  dashboardSettled,
  goTo,
  newShopper,
  pageHeading,
  PHONE,
  queueDrained,
  renderedWidgets,
  screenshot,
  slotsSettled,
  throttleLikeAPhone,
} from './browser.mjs';
import { installedShop, priceCents, settlesAt, waitFor } from './stack.mjs';

const HOLDOUT_PERCENT = 20;
const SHIRT_CENTS = priceCents(1001);

/**
 * A shopper on a throttled phone whose group is known in advance: the group is the page's first
 * draw of `Math.random` (the holdout's, in the page's head), which this browser fixes (`draw`);
 * every later draw is the browser's own. The page records the layout's shifts and each slot's
 * height as the parser adds it, before any script of the app's could change it.
 */
async function shopperDrawing(label, draw) {
  const shopper = await newShopper(label, { origin: shop.origin, device: PHONE });
  await shopper.context.addInitScript((first) => {
    const random = Math.random;
    let drawn = false;
    Math.random = () => (drawn ? random() : ((drawn = true), first));
    window.__e2eShift = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (!e.hadRecentInput) window.__e2eShift += e.value;
    }).observe({ type: 'layout-shift', buffered: true });
    window.__e2eSlotHeights = [];
    new MutationObserver((changes) => {
      for (const change of changes) {
        for (const node of change.addedNodes) {
          if (node.nodeType === 1 && node.hasAttribute('data-videoapp-slot')) {
            window.__e2eSlotHeights.push(node.getBoundingClientRect().height);
          }
        }
      }
    }).observe(document, { childList: true, subtree: true });
  }, draw);
  await throttleLikeAPhone(shopper.page);
  shoppers.push(shopper);
  return shopper;
}

/** Scrolls the page down and back, a frame at a time, then reads what shifted and the group. */
async function afterScrolling(page) {
  const frame = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  for (let i = 0; i < 6; i++) {
    await page.mouse.wheel(0, 300);
    await frame();
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await frame();
  return page.evaluate(() => ({
    shift: window.__e2eShift,
    slotHeights: window.__e2eSlotHeights,
    group: JSON.parse(localStorage.getItem('videoapp:group') || 'null')?.g ?? null,
  }));
}

/** Adds the shirt to the cart from its page, as a shopper does, and pays: the order's number. */
async function buyTheShirt(page) {
  await page.goto('/products/linen-shirt');
  await Promise.all([page.waitForURL(/\/cart/), page.locator('form[action="/cart/add"] button').click()]);
  return checkOut(page);
}

let shop;
const shoppers = [];

describe('Proof of lift', () => {
  let video;
  let widget;
  let merchant;

  before(async () => {
    shop = await installedShop('lift');
    video = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    widget = await shop.widget({ type: 'carousel', title: 'Watch and shop', videoIds: [video], rules: { locations: ['home', 'product'] } });
  });

  after(async () => {
    for (const s of shoppers) await s.close();
    await merchant?.close();
    await shop?.stop();
  });

  it("the merchant holds out a share of shoppers, and the store's pages carry it", async () => {
    merchant = await newShopper('lift: merchant', { origin: shop.origin });
    const { page } = merchant;
    await page.goto(shop.admin);
    await pageHeading(page, 'Analytics').waitFor();
    await goTo(page, 'Settings');
    await page.getByText(`${HOLDOUT_PERCENT}% of shoppers`, { exact: true }).click();
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await page.getByRole('button', { name: 'Save the holdout', exact: true }).click();
    const answer = await saved;
    assert.equal(answer.status(), 200, `saving the holdout answered ${answer.status()}: ${await answer.text()}`);
    await page.getByText(`${HOLDOUT_PERCENT}% of shoppers are held out from videos`, { exact: true }).waitFor();
    // The service publishes it to the platform; the theme renders it into every page's head.
    await waitFor(
      async () =>
        (await (await fetch(`${shop.origin}/products/linen-shirt`)).text()).includes(`data-videoapp-holdout="${HOLDOUT_PERCENT}"`),
      { timeout: 30_000, message: "the holdout in the store's pages" },
    );
  });

  it('a shopper held out sees no widget and no reserved space from the first page, and nothing shifts', async () => {
    const { page } = await shopperDrawing('lift: held out', 0.001);
    await page.goto('/products/linen-shirt');
    assert.deepEqual(await slotsSettled(page), ['empty'], 'the slot shows nothing');
    const seen = await afterScrolling(page);
    assert.equal(seen.group, 'holdout');
    assert.deepEqual(seen.slotHeights, [0], 'the slot took no space, from the moment it was parsed');
    assert.deepEqual(await renderedWidgets(page), []);
    const box = await page.locator('[data-videoapp-slot]').boundingBox();
    assert.equal(box, null, 'the slot is off the page');
    assert.ok(seen.shift < 0.01, `the layout shifted by ${seen.shift}`);
    await screenshot(page, 'lift-held-out.png');
    // Its visit is sent from the page it began on; the order, by the checkout's pixel.
    await queueDrained(page);
    const order = await buyTheShirt(page);
    assert.ok(order, 'the held-out shopper ordered');
  });

  it('a shopper who can see videos sees the widget, and nothing shifts', async () => {
    const { page } = await shopperDrawing('lift: exposed', 0.999);
    await page.goto('/products/linen-shirt');
    assert.deepEqual(await slotsSettled(page), ['ready']);
    const seen = await afterScrolling(page);
    assert.equal(seen.group, 'exposed');
    assert.deepEqual(seen.slotHeights, [360], 'the slot reserved its height while the widget loaded');
    assert.deepEqual(
      (await renderedWidgets(page)).map((w) => w.id),
      [widget],
    );
    assert.ok(seen.shift < 0.01, `the layout shifted by ${seen.shift}`);
    await queueDrained(page);
    const order = await buyTheShirt(page);
    assert.ok(order, 'the exposed shopper ordered');
  });

  it('the lift counts a visit and an order in each group, and the dashboard shows both', async () => {
    const group = (revenue) => ({ sessions: 1, orders: 1, revenue, conversion: 100 });
    const shirt = SHIRT_CENTS / 100;
    const read = async () => {
      const data = await shop.analytics('lift');
      const of = (g) => ({ sessions: g.sessions, orders: g.orders, revenue: Number(g.revenue), conversion: Number(g.conversion_rate) });
      return { exposed: of(data.exposed), holdout: of(data.holdout), enough_data: data.enough_data };
    };
    // Read once a second: the key's rate (60 a minute, as a burst) lasts the whole wait.
    const expected = { exposed: group(shirt), holdout: group(shirt), enough_data: false };
    await settlesAt(read, expected, { timeout: 45_000, interval: 1_000, message: 'the lift' });

    const { page } = merchant;
    await goTo(page, 'Analytics');
    await dashboardSettled(page);
    const card = page.getByRole('heading', { name: 'Sales with and without videos' });
    await card.scrollIntoViewIfNeeded();
    await page.getByText(`${HOLDOUT_PERCENT}% held out`, { exact: true }).waitFor();
    const sentences = page.getByTestId('lift-sentences');
    assert.equal(await sentences.getAttribute('data-state'), 'early', 'one visit in each group is too early to tell');
    const visits = page.getByRole('row', { name: /^Visits/ });
    assert.deepEqual(await visits.getByRole('cell').allTextContents(), ['1', '1'], 'one visit in each group');
    const orders = page.getByRole('row', { name: /^Orders/ });
    assert.deepEqual(await orders.getByRole('cell').allTextContents(), ['1', '1'], 'one order in each group');
    await screenshot(page, 'lift-dashboard.png');
  });
});
