// Story 4: every view style, click behaviour and modal layout, by mouse and by keyboard.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { historyOf, newShopper, playedFor, queueDrained, screenshot, slotsSettled } from './browser.mjs';
import { newShop, productGid, settlesAt, waitFor } from './stack.mjs';

const TITLES = {
  shirt: 'Linen Shirt, three ways',
  dress: 'Summer Dress on the boardwalk',
  tote: 'What fits in the Canvas Tote',
};

/** The default card width (`--videoapp-card-width`), and each view style's share of it. */
const CARD_WIDTH = 160;
const WIDTH_RATIO = { default: 1, compact: 0.75, large: 1.375 };

/** What the player's focus trap cycles through (as the loader counts them). */
const FOCUSABLE = 'button:not([disabled]), a[href], video[controls], [tabindex]:not([tabindex="-1"])';

/** Fails unless `actual` is within a pixel of `expected`. */
function nearly(actual, expected, message) {
  assert.ok(Math.abs(actual - expected) <= 1, `${message}: ${actual} px, expected ${expected} px (± 1)`);
}

/** The element's box on screen. */
const box = (locator) =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
  });

/** What has the keyboard focus: where it is, the card or add-to-cart button it is, and a name for messages. */
function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return { inPlayer: false, card: null, addToCart: null, what: 'the page' };
    return {
      inPlayer: !!el.closest('[data-videoapp-player]'),
      card: el.getAttribute('data-videoapp-video'),
      addToCart: el.getAttribute('data-videoapp-add-to-cart'),
      what: `${el.tagName.toLowerCase()}${el.classList.length ? '.' + el.classList[0] : ''}`,
    };
  });
}

/** Presses `key` until the focus is where `wanted` says (at most 40 presses); returns the focus. */
async function pressUntil(page, key, wanted, where) {
  const path = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press(key);
    const focus = await focused(page);
    if (wanted(focus)) return focus;
    path.push(focus.what);
  }
  throw new Error(`${key} never reached ${where}; the focus went ${path.join(' → ')}`);
}

/**
 * Presses `key` three times as often as the player has focusable elements; after each press the
 * focus must be inside the player. Returns where the focus went, starting where it was.
 */
async function staysInPlayer(page, player, key) {
  const stops = await player.evaluate((p, selector) => p.querySelectorAll(selector).length, FOCUSABLE);
  const path = [(await focused(page)).what];
  for (let i = 1; i <= 3 * stops; i++) {
    await page.keyboard.press(key);
    const focus = await focused(page);
    path.push(focus.what);
    assert.ok(focus.inPlayer, `${key} × ${i} took the focus out of the player (${stops} focusable elements): ${path.join(' → ')}`);
  }
  return path;
}

describe('Every view style, click behaviour and modal layout, by mouse and by keyboard', () => {
  let shop;
  const v = {};
  const w = {};
  const shoppers = [];

  before(async () => {
    shop = await newShop('styles');
    v.shirt = await shop.video({ media: 1, title: TITLES.shirt, products: [1001] });
    v.dress = await shop.video({ media: 2, title: TITLES.dress, products: [1002] });
    v.tote = await shop.video({ media: 3, title: TITLES.tote, products: [1003, 1001] });
    // All on the home page only: the product page an `open_product` card leads to shows none.
    const carousel = { type: 'carousel', videoIds: [v.shirt, v.dress, v.tote], rules: { locations: ['home'] } };
    w.modal = await shop.widget({
      ...carousel,
      title: 'Default cards, player below',
      priority: 40,
      viewStyle: 'default',
      clickBehavior: 'open_modal',
      modalLayout: 'vertical',
    });
    w.compact = await shop.widget({
      ...carousel,
      title: 'Compact cards, player beside',
      priority: 30,
      viewStyle: 'compact',
      clickBehavior: 'open_modal',
      modalLayout: 'horizontal',
    });
    w.large = await shop.widget({
      ...carousel,
      title: 'Large cards, straight to the product',
      priority: 20,
      viewStyle: 'large',
      clickBehavior: 'open_product',
    });
    w.inline = await shop.widget({
      ...carousel,
      title: 'Played in the card',
      priority: 10,
      viewStyle: 'default',
      clickBehavior: 'none',
    });
  });

  after(async () => {
    for (const s of shoppers) await s.close();
    await shop?.stop();
  });

  async function shopper(label) {
    const s = await newShopper(`every style: ${label}`, { origin: shop.origin });
    shoppers.push(s);
    return s;
  }

  /** A shopper on a page with the one widget `widget` (a "Video widget" block). */
  async function onWidget(label, widget) {
    const s = await shopper(label);
    await s.page.goto(`/?widget=${widget}`);
    assert.deepEqual(await slotsSettled(s.page), ['ready']);
    return s;
  }

  const card = (widget, video) => `[data-videoapp-widget="${widget}"] [data-videoapp-video="${video}"]`;

  /** The widget's events other than impressions, as ClickHouse has them: sorted `<type> <video id>`. */
  async function opened(widget) {
    return (await shop.events())
      .filter((e) => e.widget_id === widget && e.event_type !== 'impression')
      .map((e) => `${e.event_type} ${e.video_id}`)
      .sort();
  }

  /** Checks the open player's layout: its class, and where the products sit next to the video. */
  async function assertLayout(player, layout) {
    const classes = (await player.getAttribute('class')).split(' ');
    assert.deepEqual(
      classes.filter((c) => c.startsWith('videoapp-layout--')),
      [`videoapp-layout--${layout}`],
      `the player carries the ${layout} layout's class`,
    );
    const video = await box(player.locator('video.videoapp-video'));
    const products = await box(player.locator('.videoapp-products'));
    const boxes = `video ${JSON.stringify(video)}, products ${JSON.stringify(products)}`;
    if (layout === 'horizontal') {
      assert.ok(products.left >= video.right - 1, `the products are right of the video: ${boxes}`);
      assert.ok(products.top < video.bottom && video.top < products.bottom, `the products are beside the video: ${boxes}`);
    } else {
      assert.ok(products.top >= video.bottom - 1, `the products are below the video: ${boxes}`);
      assert.ok(products.left < video.right && video.left < products.right, `the products are under the video: ${boxes}`);
    }
  }

  it('gives each view style its class, compact cards three quarters and large cards eleven eighths of the default width', async () => {
    const { page } = await shopper('view styles');
    await page.goto('/');
    await slotsSettled(page);
    const widths = {};
    for (const [style, widget] of [
      ['default', w.modal],
      ['compact', w.compact],
      ['large', w.large],
    ]) {
      const root = page.locator(`[data-videoapp-widget="${widget}"][data-videoapp-type="carousel"]`);
      assert.ok(
        (await root.getAttribute('class')).split(' ').includes(`videoapp-widget--${style}`),
        `the ${style} widget's root carries videoapp-widget--${style}`,
      );
      const cards = await root.locator('[data-videoapp-video]').evaluateAll((all) => all.map((c) => c.getBoundingClientRect().width));
      assert.equal(cards.length, 3, `the ${style} widget shows its three videos`);
      for (const width of cards) nearly(width, cards[0], `every ${style} card is as wide as the first`);
      widths[style] = cards[0];
    }
    nearly(widths.default, CARD_WIDTH, 'a default card');
    nearly(widths.compact, widths.default * WIDTH_RATIO.compact, 'a compact card (0.75 × default)');
    nearly(widths.large, widths.default * WIDTH_RATIO.large, 'a large card (1.375 × default)');
    const compact = page.locator(`[data-videoapp-widget="${w.compact}"]`);
    await compact.scrollIntoViewIfNeeded();
    await screenshot(compact, 'carousel-compact.png');
  });

  it("opens the player on the clicked video with the video's products, below the video in the vertical layout", async () => {
    const { page } = await onWidget('open_modal, vertical', w.modal);
    await page.click(card(w.modal, v.tote));
    const player = page.locator('[data-videoapp-player]');
    await player.waitFor();
    assert.deepEqual(
      await player.evaluate((p) => [p.getAttribute('data-videoapp-widget-id'), p.getAttribute('data-videoapp-video-id')]),
      [w.modal, v.tote],
      'the player shows the clicked video of this widget',
    );
    assert.equal(await player.locator('video.videoapp-video').getAttribute('src'), `${shop.origin}/media/demo-3.webm`);
    assert.deepEqual(
      await player
        .locator('.videoapp-product')
        .evaluateAll((items) =>
          items.map((li) => [
            li.querySelector('.videoapp-pname').textContent,
            li.querySelector('.videoapp-pname').href,
            li.querySelector('[data-videoapp-add-to-cart]').getAttribute('data-videoapp-add-to-cart'),
          ]),
        ),
      [
        ['Canvas Tote', `${shop.origin}/products/canvas-tote`, productGid(1003)],
        ['Linen Shirt', `${shop.origin}/products/linen-shirt`, productGid(1001)],
      ],
      "the player lists the video's two products, in order, each with its link and its add-to-cart button",
    );
    await assertLayout(player, 'vertical');
    await page.keyboard.press('Escape');
    await player.waitFor({ state: 'detached' });
  });

  it('puts the products beside the video in the horizontal layout', async () => {
    const { page } = await onWidget('open_modal, horizontal', w.compact);
    await page.click(card(w.compact, v.dress));
    const player = page.locator(`[data-videoapp-player][data-videoapp-video-id="${v.dress}"]`);
    await player.waitFor();
    assert.deepEqual(
      await player.locator('[data-videoapp-add-to-cart]').evaluateAll((bs) => bs.map((b) => b.getAttribute('data-videoapp-add-to-cart'))),
      [productGid(1002)],
    );
    await assertLayout(player, 'horizontal');
    await page.waitForFunction(() => document.querySelector('[data-videoapp-player] video').readyState >= 2);
    await screenshot(page, 'player-horizontal.png');
  });

  it("goes to the video's first product when a card is clicked, and counts the click (open_product)", async () => {
    const { page } = await onWidget('open_product', w.large);
    await Promise.all([page.waitForURL(`${shop.origin}/products/canvas-tote`), page.click(card(w.large, v.tote))]);
    assert.equal(await page.locator('h1').first().textContent(), 'Canvas Tote', "the tote video's first product page");
    assert.deepEqual(await slotsSettled(page), ['empty'], 'the widgets are for the home page only');
    // The click left with the home page (a beacon on pagehide); this page sends it again.
    await queueDrained(page, { timeout: 30_000 });
    await settlesAt(() => opened(w.large), [`click ${v.tote}`], { message: `the clicks on widget ${w.large} in ClickHouse` });
  });

  it('plays the video in its card, with no player, and counts one view after three seconds of playback (none)', async () => {
    const { page } = await onWidget('none', w.inline);
    await page.click(card(w.inline, v.shirt));
    const inline = page.locator(`[data-videoapp-widget="${w.inline}"] video.videoapp-inline`);
    await inline.waitFor();
    assert.deepEqual(
      await inline.evaluate((el) => ({
        card: el.closest('.videoapp-item').querySelector('[data-videoapp-video]').getAttribute('data-videoapp-video'),
        src: el.getAttribute('src'),
        controls: el.hasAttribute('controls'),
      })),
      { card: v.shirt, src: `${shop.origin}/media/demo-1.webm`, controls: true },
      'the full video plays, with controls, in the card that was clicked',
    );
    assert.equal(await page.locator('[data-videoapp-player]').count(), 0, 'no player opens');

    const viewsNow = () =>
      page.evaluate((widget) => {
        const history = JSON.parse(localStorage.getItem('videoapp:history') || '{}');
        const views = (history.views || []).filter((e) => e.widgetId === widget).map((e) => e.videoId);
        return { time: document.querySelector('video.videoapp-inline').currentTime, views };
      }, w.inline);
    await playedFor(page, 'video.videoapp-inline', 2);
    const early = await viewsNow();
    assert.ok(early.time >= 3 || early.views.length === 0, `no view before 3 s of playback: ${JSON.stringify(early)}`);
    await playedFor(page, 'video.videoapp-inline', 3);
    await waitFor(async () => (await viewsNow()).views.length > 0, { message: "the view of the card's video" });
    // The whole video (6 s) is twice what makes a view: still one view.
    await page.waitForFunction(() => document.querySelector('video.videoapp-inline').ended, null, { timeout: 15_000 });
    assert.deepEqual(
      (await historyOf(page)).views.map((e) => [e.videoId, e.widgetId]),
      [[v.shirt, w.inline]],
      'one view',
    );

    await page.evaluate(() => window.videoapp.flush());
    await queueDrained(page);
    await settlesAt(() => opened(w.inline), [`click ${v.shirt}`, `view ${v.shirt}`].sort(), {
      message: `the clicks and views of widget ${w.inline} in ClickHouse`,
    });
  });

  it('works by keyboard alone: Tab reaches a card, Enter opens the player, Tab and Shift+Tab stay in it, Enter adds to the cart, Escape closes it', async () => {
    const { page } = await onWidget('keyboard', w.modal);
    const first = await pressUntil(page, 'Tab', (f) => f.card, 'a card');
    assert.equal(first.card, v.shirt, 'Tab reaches the first card first');

    await page.keyboard.press('Enter');
    const player = page.locator(`[data-videoapp-player][data-videoapp-video-id="${v.shirt}"]`);
    await player.waitFor();
    assert.ok((await focused(page)).inPlayer, 'the focus moves into the player');

    for (const key of ['Tab', 'Shift+Tab']) {
      const path = await staysInPlayer(page, player, key);
      // Past the last element the focus goes round to the first one (backwards: the other way).
      const [from, to] =
        key === 'Tab' ? ['button.videoapp-btn', 'button.videoapp-close'] : ['button.videoapp-close', 'button.videoapp-btn'];
      const at = path.indexOf(from);
      assert.ok(at >= 0 && path.indexOf(to, at) > at, `${key} goes round from ${from} to ${to}: ${path.join(' → ')}`);
    }

    await pressUntil(page, 'Tab', (f) => f.addToCart === productGid(1001), "the Linen Shirt's add-to-cart button");
    await page.keyboard.press('Enter');
    await player.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();
    assert.equal(await player.locator('.videoapp-status').textContent(), 'Added to cart');

    await page.keyboard.press('Escape');
    await player.waitFor({ state: 'detached' });
    assert.equal((await focused(page)).card, v.shirt, 'Escape gives the focus back to the card that opened the player');
    await page.goto('/cart');
    assert.equal(await page.locator(`[data-demo-line="${productGid(1001)}"]`).count(), 1, 'the Linen Shirt is in the cart');
  });

  it('keeps the focus in the player after "Add to cart" is pressed with Enter', async () => {
    const { page } = await onWidget('keyboard, after the add-to-cart', w.modal);
    await pressUntil(page, 'Tab', (f) => f.card === v.dress, 'the Summer Dress card');
    await page.keyboard.press('Enter');
    const player = page.locator(`[data-videoapp-player][data-videoapp-video-id="${v.dress}"]`);
    await player.waitFor();
    await pressUntil(page, 'Tab', (f) => f.addToCart === productGid(1002), "the Summer Dress's add-to-cart button");
    await page.keyboard.press('Enter');
    await player.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();

    const focus = await focused(page);
    assert.ok(focus.inPlayer, `after the add-to-cart the focus is still in the player, not on ${focus.what}`);
    for (const key of ['Tab', 'Shift+Tab']) await staysInPlayer(page, player, key);
    await page.keyboard.press('Escape');
    await player.waitFor({ state: 'detached' });
    assert.equal((await focused(page)).card, v.dress, 'Escape gives the focus back to the card that opened the player');
  });

  it('names each card by its video title, and the player by the video it plays, with a close button named "Close"', async () => {
    const { page } = await onWidget('accessible names', w.modal);
    for (const [video, title] of [
      [v.shirt, TITLES.shirt],
      [v.dress, TITLES.dress],
      [v.tote, TITLES.tote],
    ]) {
      const button = page.getByRole('button', { name: title, exact: true });
      assert.equal(await button.count(), 1, `one button is named "${title}"`);
      assert.equal(await button.getAttribute('data-videoapp-video'), video, `the button named "${title}" is its video's card`);
    }
    await page.getByRole('button', { name: TITLES.dress, exact: true }).click();
    const dialog = page.getByRole('dialog', { name: TITLES.dress, exact: true });
    await dialog.waitFor();
    assert.equal(await dialog.getAttribute('aria-modal'), 'true', 'the player is a modal dialog');
    assert.equal(await dialog.getAttribute('data-videoapp-video-id'), v.dress);
    const close = dialog.getByRole('button', { name: 'Close', exact: true });
    assert.equal(await close.count(), 1, 'the player has one button named "Close"');
    await close.click();
    await dialog.waitFor({ state: 'detached' });
  });
});
