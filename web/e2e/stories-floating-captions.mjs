// Story: stories behave like stories, a floating widget stays out of the way, captions speak for
// a muted video. On a phone a story advances by itself, by tap and by swipe, with a progress bar
// per video, and by arrow keys on a desktop; a floating widget shows on every page its rules
// allow, in the corner where it covers neither the cart link nor the checkout button, opens the
// player and stays closed for the session once closed; captions show while the video is muted;
// nothing shifts the layout while a shopper scrolls; axe finds nothing serious.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';

import { newShopper, PHONE, slotsSettled } from './browser.mjs';
import { newShop, waitFor } from './stack.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const BLOCKING = ['serious', 'critical'];

const VTT = 'WEBVTT\n\n00:00.000 --> 00:30.000\nHello from the boardwalk\n';
const VTT_DE = 'WEBVTT\n\n00:00.000 --> 00:30.000\nHallo von der Promenade\n';

async function passesAxe(page, selector, what) {
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ path: AXE });
  const { violations } = await page.evaluate(
    (selector) => window.axe.run({ include: [[selector]] }, { resultTypes: ['violations'] }),
    selector,
  );
  const blocking = violations.filter((v) => BLOCKING.includes(v.impact));
  const described = blocking.map(
    (v) =>
      `  ${v.impact} ${v.id}: ${v.help}\n` +
      v.nodes.map((n) => `    ${n.target.join(' ')}: ${n.failureSummary.replace(/\s*\n\s*/g, ' ')}`).join('\n'),
  );
  assert.equal(blocking.length, 0, `axe-core finds serious or critical violations in ${what}:\n${described.join('\n')}`);
}

/** The open player's video index and its progress bars' fill, in percent. */
const storyState = (page) =>
  page.evaluate(() => {
    const player = document.querySelector('[data-videoapp-player]');
    if (!player) return null;
    return {
      index: Number(player.getAttribute('data-videoapp-index')),
      bars: [...player.querySelectorAll('.videoapp-bar i')].map((i) => parseFloat(i.style.width) || 0),
    };
  });

/** Waits until the open story shows video `index`; returns its state. */
async function storyAt(page, index, message) {
  let state = null;
  await waitFor(async () => (state = await storyState(page)) && state.index === index, { timeout: 20_000, message });
  return state;
}

/** A horizontal swipe across the middle of the screen, by touch (`dx` < 0: to the left). */
async function swipe(page, dx) {
  const cdp = await page.context().newCDPSession(page);
  const { width, height } = page.viewportSize();
  const x = width / 2 - dx / 2;
  const y = height * 0.3;
  const point = (px) => [{ x: px, y }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: point(x) });
  for (let i = 1; i <= 5; i++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: point(x + (dx * i) / 5) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

/** The box of each element `selector` matches, on screen. */
const boxesOf = (page, selector) =>
  page.$$eval(selector, (els) =>
    els
      .map((el) => {
        const r = el.getBoundingClientRect();
        return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
      })
      .filter((r) => r.right > r.left),
  );

const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

describe('Stories, a floating widget and captions', () => {
  let shop;
  const v = [];
  const w = {};

  before(async () => {
    shop = await newShop('stories');
    v.push(await shop.video({ media: 1, title: 'Linen on the boardwalk', products: [1001] }));
    v.push(await shop.video({ media: 2, title: 'The summer dress' }));
    v.push(await shop.video({ media: 3, title: 'A tote for the market', products: [1003] }));
    await shop.captions(v[1], 'en', VTT);
    await shop.captions(v[1], 'de', VTT_DE);
    w.story = await shop.widget({ type: 'story', title: 'Stories', videoIds: v, priority: 30 });
    w.carousel = await shop.widget({ type: 'carousel', title: 'On video', videoIds: v, priority: 20 });
    w.productpage = await shop.widget({ type: 'productpage', title: 'This product on video', videoIds: v, priority: 10 });
    w.floating = await shop.widget({
      type: 'floating',
      title: 'Watch and shop',
      videoIds: v,
      rules: { locations: ['home', 'product', 'other'] },
    });
  });

  after(async () => {
    await shop?.stop();
  });

  it('plays a story on a phone like a story: progress bars, the next video by itself, by tap and by swipe, closing after the last', async () => {
    const shopper = await newShopper('stories: phone', { origin: shop.origin, device: PHONE });
    try {
      const { page } = shopper;
      await page.goto(`/?widget=${w.story}`);
      await slotsSettled(page);
      await page.tap(`[data-videoapp-widget="${w.story}"] [data-videoapp-video="${v[0]}"]`);
      const player = page.locator('[data-videoapp-player]');
      await player.waitFor();
      assert.match(await player.getAttribute('class'), /videoapp-overlay--story/);
      await passesAxe(page, '[data-videoapp-player]', 'the story player');

      let state = await storyAt(page, 0, 'the story to open on its first video');
      assert.equal(state.bars.length, 3, 'a progress bar per video');
      await waitFor(async () => (state = await storyState(page)).bars[0] > 10, {
        message: "the first bar to show the first video's progress",
      });
      assert.deepEqual(state.bars.slice(1), [0, 0], 'the later bars are empty');

      state = await storyAt(page, 1, 'the story to go on to the second video when the first ends');
      assert.equal(state.bars[0], 100, 'the bar of a video seen is full');
      assert.equal(await player.getAttribute('data-videoapp-video-id'), v[1]);

      const { width, height } = page.viewportSize();
      await page.touchscreen.tap(width * 0.85, height * 0.3);
      state = await storyAt(page, 2, 'a tap on the right third to go to the next video');
      assert.deepEqual(state.bars.slice(0, 2), [100, 100]);
      await page.touchscreen.tap(width * 0.15, height * 0.3);
      await storyAt(page, 1, 'a tap on the left third to go back');

      await swipe(page, -200);
      await storyAt(page, 2, 'a swipe to the left to go to the next video');
      await swipe(page, 200);
      await storyAt(page, 1, 'a swipe to the right to go back');
      await swipe(page, -200);
      await storyAt(page, 2, 'a swipe to the left again');

      await player.waitFor({ state: 'detached', timeout: 20_000 });
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('data-videoapp-video')),
        v[0],
        'the focus is back on the bubble',
      );
    } finally {
      await shopper.close();
    }
  });

  it("keeps a shopper who is busy with a video's products on it when the video ends", async () => {
    const shopper = await newShopper('stories: busy shopper', { origin: shop.origin, device: PHONE });
    try {
      const { page } = shopper;
      await page.goto(`/?widget=${w.story}`);
      await slotsSettled(page);
      // The last video: at its end an untouched story closes.
      await page.tap(`[data-videoapp-widget="${w.story}"] [data-videoapp-video="${v[2]}"]`);
      const player = page.locator('[data-videoapp-player]');
      await storyAt(page, 2, 'the story to open on its last video');
      await player.locator('.videoapp-product img').first().tap();
      await waitFor(() => player.locator('video').evaluate((el) => el.ended), { timeout: 20_000, message: 'the video to end' });
      assert.ok(await player.isVisible(), 'the player stays open at the end of the video');
      assert.equal(await player.getAttribute('data-videoapp-video-id'), v[2]);
    } finally {
      await shopper.close();
    }
  });

  it('moves through a story with the arrow keys on a desktop', async () => {
    const shopper = await newShopper('stories: desktop', { origin: shop.origin });
    try {
      const { page } = shopper;
      await page.goto(`/?widget=${w.story}`);
      await slotsSettled(page);
      await page.click(`[data-videoapp-widget="${w.story}"] [data-videoapp-video="${v[1]}"]`);
      await storyAt(page, 1, 'the story to open on the clicked video');
      await page.keyboard.press('ArrowRight');
      await storyAt(page, 2, 'ArrowRight to go to the next video');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
      await storyAt(page, 0, 'ArrowLeft twice to go back to the first video');
      await page.keyboard.press('Escape');
      await page.locator('[data-videoapp-player]').waitFor({ state: 'detached' });
    } finally {
      await shopper.close();
    }
  });

  it('shows the floating widget on every page its rules allow, clear of the cart link and the checkout button, and opens the player', async () => {
    const shopper = await newShopper('stories: floating', { origin: shop.origin, device: PHONE });
    try {
      const { page } = shopper;
      await page.request.post('/cart/add.js', { data: { items: [{ id: 10011, quantity: 1 }] } });
      const floating = `[data-videoapp-widget="${w.floating}"]`;
      // Where it may show: home (also with a "Video widget" block only), product, cart (other).
      const pages = {
        '/': 'right',
        [`/?widget=${w.story}`]: 'right',
        '/products/linen-shirt': 'right',
        '/collections/501': null,
        '/cart': 'left',
      };
      for (const [path, corner] of Object.entries(pages)) {
        await page.goto(path);
        await slotsSettled(page);
        if (!corner) {
          assert.equal(await page.locator(floating).count(), 0, `${path}: the floating widget shows where its rules exclude it`);
          continue;
        }
        await page.locator(floating).waitFor();
        const placed = await page.$eval(floating, (el) => ({
          parent: el.parentElement.tagName,
          position: getComputedStyle(el).position,
          corner: el.getAttribute('data-videoapp-corner'),
          visible: getComputedStyle(el).visibility,
        }));
        assert.deepEqual(
          placed,
          { parent: 'BODY', position: 'fixed', corner, visible: 'visible' },
          `${path}: where the floating widget is`,
        );
        const [widget] = await boxesOf(page, `${floating}, ${floating} *`).then((boxes) => [
          boxes.reduce((a, b) => ({
            left: Math.min(a.left, b.left),
            top: Math.min(a.top, b.top),
            right: Math.max(a.right, b.right),
            bottom: Math.max(a.bottom, b.bottom),
          })),
        ]);
        const { width, height } = page.viewportSize();
        assert.ok(
          widget.bottom <= height && widget.top > height / 2,
          `${path}: the floating widget is at the bottom: ${JSON.stringify(widget)}`,
        );
        assert.ok(
          corner === 'right' ? widget.right > width / 2 : widget.left < width / 2,
          `${path}: on the ${corner}: ${JSON.stringify(widget)}`,
        );
        for (const control of await boxesOf(page, '#cart-icon-bubble, [name="checkout"]')) {
          assert.ok(!overlap(widget, control), `${path}: the floating widget ${JSON.stringify(widget)} covers ${JSON.stringify(control)}`);
        }
      }
      assert.ok((await boxesOf(page, '[name="checkout"]')).length, 'the cart page has its checkout button');
      await passesAxe(page, floating, 'the floating widget');

      await page.tap(`${floating} [data-videoapp-video="${v[0]}"]`);
      const player = page.locator(`[data-videoapp-player][data-videoapp-widget-id="${w.floating}"]`);
      await player.waitFor();
      assert.equal(await player.getAttribute('data-videoapp-video-id'), v[0]);
      await page.tap('[data-videoapp-player] .videoapp-close');
      await player.waitFor({ state: 'detached' });
    } finally {
      await shopper.close();
    }
  });

  it('stays closed for the rest of the session once the shopper closes the floating widget', async () => {
    const shopper = await newShopper('stories: floating closed', { origin: shop.origin, device: PHONE });
    try {
      const { page } = shopper;
      const floating = `[data-videoapp-widget="${w.floating}"]`;
      await page.goto('/');
      await page.locator(floating).waitFor();
      await page.tap(`${floating} .videoapp-dismiss`);
      await page.locator(floating).waitFor({ state: 'detached' });
      for (const path of ['/products/linen-shirt', '/']) {
        await page.goto(path);
        await slotsSettled(page);
        assert.ok((await page.locator('[data-videoapp-widget]').count()) > 0, `${path}: the other widgets show`);
        assert.equal(await page.locator(floating).count(), 0, `${path}: the closed floating widget is back`);
      }

      // A new session (another tab's sessionStorage) shows it again.
      const other = await shopper.context.newPage();
      await other.goto('/');
      await other.locator(floating).waitFor();
    } finally {
      await shopper.close();
    }
  });

  it('shows captions while the video is muted, in a track per language, with a captions toggle', async () => {
    const shopper = await newShopper('stories: captions', { origin: shop.origin });
    try {
      const { page } = shopper;
      await page.goto(`/?widget=${w.carousel}`);
      await slotsSettled(page);
      await page.click(`[data-videoapp-widget="${w.carousel}"] [data-videoapp-video="${v[1]}"]`);
      const player = page.locator(`[data-videoapp-player][data-videoapp-video-id="${v[1]}"]`);
      await player.waitFor();
      const video = await player.locator('video').evaluate((el) => ({
        crossorigin: el.getAttribute('crossorigin'),
        tracks: [...el.querySelectorAll('track')].map((t) => ({ kind: t.kind, srclang: t.srclang, label: t.label })),
      }));
      assert.deepEqual(video, {
        crossorigin: 'anonymous',
        tracks: [
          { kind: 'captions', srclang: 'de', label: 'German' },
          { kind: 'captions', srclang: 'en', label: 'English' },
        ],
      });
      const cues = () =>
        player
          .locator('video')
          .evaluate((el) =>
            [...el.textTracks].filter((t) => t.mode === 'showing').map((t) => [...(t.activeCues || [])].map((c) => c.text).join(' ')),
          );
      const cc = player.locator('.videoapp-cc');
      assert.deepEqual(await cues(), [], 'no captions while the sound plays');
      assert.equal(await cc.getAttribute('aria-pressed'), 'false');

      await player.locator('.videoapp-mute').click();
      await waitFor(async () => (await cues()).join() === 'Hello from the boardwalk', {
        message: 'the English captions to show while muted',
      });
      assert.equal(await cc.getAttribute('aria-pressed'), 'true');

      await cc.click();
      await waitFor(async () => (await cues()).length === 0, { message: 'the captions toggle to hide them' });
      assert.equal(await cc.getAttribute('aria-pressed'), 'false');
      await cc.click();
      await waitFor(async () => (await cues()).join() === 'Hello from the boardwalk', {
        message: 'the captions toggle to show them again',
      });
    } finally {
      await shopper.close();
    }
  });

  it('shifts no layout while a shopper scrolls a page with every kind of widget', async () => {
    const shopper = await newShopper('stories: layout shift', { origin: shop.origin, device: PHONE });
    try {
      const { page, context } = shopper;
      await context.addInitScript(() => {
        window.__e2eShift = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) if (!e.hadRecentInput) window.__e2eShift += e.value;
        }).observe({ type: 'layout-shift', buffered: true });
      });
      await page.goto('/products/linen-shirt');
      await slotsSettled(page);
      const types = await page.$$eval('[data-videoapp-type]', (els) => els.map((el) => el.getAttribute('data-videoapp-type')).sort());
      assert.deepEqual(types, ['carousel', 'floating', 'productpage', 'story'], 'the page shows every kind of widget');
      for (let i = 0; i < 12; i++) {
        await page.mouse.wheel(0, 400);
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      }
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const shift = await page.evaluate(() => window.__e2eShift);
      assert.ok(shift < 0.01, `the layout shifted by ${shift}`);
    } finally {
      await shopper.close();
    }
  });
});
