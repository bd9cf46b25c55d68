// Story: on a phone, the player sells. The shopper sees the price, chooses a size, adds it, and
// the store's cart count follows without a reload; "View cart" leads to the cart with that size.
// Every control fits the screen and is big enough to tap; axe finds nothing serious.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';

import { newShopper, PHONE, screenshot, slotsSettled, throttleLikeAPhone } from './browser.mjs';
import { newShop, priceCents } from './stack.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const BLOCKING = ['serious', 'critical'];

/** The demo store's variant ids of the Linen Shirt (product 1001): S, M and L (sold out). */
const SHIRT = { S: 10011, M: 10012, L: 10013 };
const dollars = (cents) => new Intl.NumberFormat('en', { style: 'currency', currency: 'USD' }).format(cents / 100);

/** Every control of the open player: where it is on the screen and how big, by name. */
function controlsOf(page) {
  return page.evaluate(() => {
    const player = document.querySelector('[data-videoapp-player]');
    const named = {
      close: '.videoapp-close',
      mute: '.videoapp-mute',
      previous: '.videoapp-prev',
      next: '.videoapp-next',
      'product card': '.videoapp-product',
      variant: '.videoapp-variant',
      'add to cart': '.videoapp-btn',
      'view cart': '.videoapp-viewcart',
    };
    return Object.entries(named).map(([name, selector]) => {
      const el = player.querySelector(selector);
      if (!el || el.closest('[hidden]')) return { name, shown: false };
      const r = el.getBoundingClientRect();
      return { name, shown: true, left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
    });
  });
}

/** Asserts that each of `names` is shown, inside the viewport, and (but the card) 44 × 44 or more. */
async function fitTheScreen(page, names) {
  const { width, height } = page.viewportSize();
  const controls = await controlsOf(page);
  for (const name of names) {
    const c = controls.find((x) => x.name === name);
    assert.ok(c.shown, `the ${name} control is shown`);
    const box = JSON.stringify(c);
    assert.ok(
      c.left >= 0 && c.top >= 0 && c.right <= width && c.bottom <= height,
      `the ${name} control is inside the ${width}×${height} viewport: ${box}`,
    );
    if (name !== 'product card') assert.ok(c.width >= 44 && c.height >= 44, `the ${name} control is at least 44×44 px: ${box}`);
  }
}

async function passesAxe(page) {
  await page.addScriptTag({ path: AXE });
  const { violations } = await page.evaluate(() =>
    window.axe.run({ include: [['[data-videoapp-player]']] }, { resultTypes: ['violations'] }),
  );
  const blocking = violations.filter((v) => BLOCKING.includes(v.impact));
  const described = blocking.map(
    (v) =>
      `  ${v.impact} ${v.id}: ${v.help}\n` +
      v.nodes.map((n) => `    ${n.target.join(' ')}: ${n.failureSummary.replace(/\s*\n\s*/g, ' ')}`).join('\n'),
  );
  assert.equal(blocking.length, 0, `axe-core finds serious or critical violations in the player:\n${described.join('\n')}`);
}

describe('A player that sells', () => {
  let shop;
  let widget;
  const v = {};
  const shoppers = [];

  before(async () => {
    shop = await newShop('sells');
    v.shirt = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    v.dress = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    widget = await shop.widget({ type: 'carousel', title: 'Shop the look', videoIds: [v.shirt, v.dress], rules: { locations: ['home'] } });
  });

  after(async () => {
    for (const s of shoppers) await s.close();
    await shop?.stop();
  });

  /** A shopper on a throttled phone, on the home page, with the shirt's player open. */
  async function playerOnAPhone(label, device = PHONE) {
    const s = await newShopper(label, { origin: shop.origin, device });
    shoppers.push(s);
    const { page } = s;
    await s.context.addInitScript(() => {
      window.__e2eCartUpdates = [];
      document.addEventListener('videoapp:cart-updated', (e) => window.__e2eCartUpdates.push(e.detail));
    });
    await throttleLikeAPhone(page);
    await page.goto('/');
    await slotsSettled(page);
    const card = page.locator(`[data-videoapp-widget="${widget}"] [data-videoapp-video="${v.shirt}"]`);
    await card.scrollIntoViewIfNeeded();
    await card.tap();
    const player = page.locator(`[data-videoapp-player][data-videoapp-video-id="${v.shirt}"]`);
    await player.waitFor();
    return { ...s, player };
  }

  it('shows the price, lets the shopper choose a size, adds it, updates the cart count and leads to the cart', async () => {
    const { page, player } = await playerOnAPhone('player sells: phone');
    const shirt = player.locator('.videoapp-product');
    await page.waitForFunction(() => document.querySelector('[data-videoapp-player] .videoapp-price')?.textContent);
    assert.equal(await shirt.locator('.videoapp-price').textContent(), dollars(priceCents(1001)), "the price, in the shop's currency");

    const sizes = shirt.locator('select.videoapp-variant');
    assert.deepEqual(
      await sizes.evaluate((s) => [s.getAttribute('aria-label'), [...s.options].map((o) => [o.value, o.textContent, o.disabled]), s.value]),
      [
        'Size for Linen Shirt',
        [
          [`${SHIRT.S}`, 'S', false],
          [`${SHIRT.M}`, 'M', false],
          [`${SHIRT.L}`, 'L \u2013 sold out', true],
        ],
        `${SHIRT.S}`,
      ],
      'the sizes, the sold-out one not choosable, the first available one chosen',
    );
    await fitTheScreen(page, ['close', 'mute', 'previous', 'next', 'product card', 'variant', 'add to cart']);
    await passesAxe(page);
    await screenshot(page, 'player-phone.png');

    assert.equal(await page.locator('#cart-icon-bubble').textContent(), 'Cart (0)');
    await page.evaluate(() => (window.__e2eSamePage = true));
    await sizes.selectOption(`${SHIRT.M}`);
    await shirt.locator('.videoapp-btn').tap();
    await player.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();
    assert.equal(await shirt.locator('.videoapp-status').textContent(), 'Added to cart');
    await page.waitForFunction(() => document.querySelector('#cart-icon-bubble').textContent === 'Cart (1)');
    assert.ok(await page.evaluate(() => window.__e2eSamePage), 'the cart count changed without a reload');

    // The event follows the cart's own answer (its item count), after the bubble is swapped.
    await page.waitForFunction(() => window.__e2eCartUpdates.length > 0);
    const [update] = await page.evaluate(() => window.__e2eCartUpdates);
    assert.equal(update?.itemCount, 1, `the event tells the cart's item count: ${JSON.stringify(update)}`);
    assert.deepEqual(
      [update.item.variant_id, update.item.product_id, update.item.quantity, update.item.title],
      [SHIRT.M, 1001, 1, 'Linen Shirt - M'],
      'the event (videoapp:cart-updated) carries the added item, the chosen size',
    );

    await fitTheScreen(page, ['close', 'mute', 'previous', 'next', 'product card', 'variant', 'add to cart', 'view cart']);
    await passesAxe(page);
    await Promise.all([page.waitForURL((u) => u.pathname === '/cart'), shirt.locator('.videoapp-viewcart').tap()]);
    assert.deepEqual(
      await page.$$eval('[data-demo-line]', (rows) =>
        rows.map((r) => [r.getAttribute('data-demo-variant'), r.cells[0].textContent, r.cells[1].textContent]),
      ),
      [[`${SHIRT.M}`, 'Linen Shirt - M', '1']],
      'the cart holds one Linen Shirt in M',
    );
  });

  it('fits a 360 px wide phone, with every control inside the screen and big enough to tap', async () => {
    const { page } = await playerOnAPhone('player sells: narrow phone', { ...PHONE, viewport: { width: 360, height: 640 } });
    await page.waitForFunction(() => document.querySelector('[data-videoapp-player] .videoapp-variant'));
    await fitTheScreen(page, ['close', 'mute', 'previous', 'next', 'product card', 'variant', 'add to cart']);
    const mute = page.locator('.videoapp-mute');
    await mute.tap();
    assert.deepEqual(
      await page.evaluate(() => [
        document.querySelector('.videoapp-mute').getAttribute('aria-pressed'),
        document.querySelector('[data-videoapp-player] video').muted,
      ]),
      ['true', true],
      'the mute button mutes the video',
    );
    await page.locator('.videoapp-next').tap();
    await page.locator(`[data-videoapp-player][data-videoapp-video-id="${v.dress}"]`).waitFor();
    assert.equal(
      await page.evaluate(() => document.querySelector('[data-videoapp-player] video').muted),
      true,
      'the next video stays muted',
    );
    await fitTheScreen(page, ['close', 'mute', 'previous', 'next', 'product card', 'add to cart']);
  });

  it('says so when adding fails: the size sold out meanwhile, or no network', async () => {
    const { page, player, context } = await playerOnAPhone('player sells: failures');
    const shirt = player.locator('.videoapp-product');
    await shirt.locator('select.videoapp-variant').selectOption(`${SHIRT.M}`);

    // The size sold out after the player showed it: the platform refuses it (422).
    await context.route('**/cart/add.js', (route) =>
      route.fulfill({
        status: 422,
        contentType: 'application/json',
        body: JSON.stringify({ status: 422, message: 'Cart Error', description: 'sold out' }),
      }),
    );
    await shirt.locator('.videoapp-btn').tap();
    await page.waitForFunction(() => document.querySelector('.videoapp-product').getAttribute('data-videoapp-state') === 'error');
    assert.equal(await shirt.locator('.videoapp-status').textContent(), 'Sorry, M is sold out. Please choose another.');
    assert.deepEqual(
      await shirt.locator('select.videoapp-variant').evaluate((s) => [s.value, s.querySelector(`option[value="${10012}"]`).disabled]),
      [`${SHIRT.S}`, true],
      'the sold-out size can no longer be chosen; another one is',
    );

    await context.unroute('**/cart/add.js');
    await context.route('**/cart/add.js', (route) => route.abort('internetdisconnected'));
    await shirt.locator('.videoapp-btn').tap();
    await page.waitForFunction(() => /network/.test(document.querySelector('.videoapp-status').textContent));
    assert.equal(await shirt.locator('.videoapp-status').textContent(), 'No connection. Check your network and try again.');
    assert.equal(await page.locator('#cart-icon-bubble').textContent(), 'Cart (0)', 'nothing was added');
  });
});
