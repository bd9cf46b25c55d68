// Story 5: the loader is light on the store. It asks for widgets once: when a slot comes within a
// viewport of the screen, else not before the page has loaded (a floating widget needs no slot
// near the screen); its videos load nothing until they play; previews exist only
// while their cards are visible, and never for a shopper who asked for reduced motion.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { launchBrowser, newShopper, slotsSettled } from './browser.mjs';
import { newShop, waitFor } from './stack.mjs';

/** Room above the slot, so that it starts far below the first screen (the viewport is 800 px). */
const SPACER_PX = 4000;

/**
 * Puts a tall spacer before the page's slot as soon as the slot is parsed (before the loader
 * runs), so the slot starts more than one viewport below the screen.
 */
function pushSlotDown(context) {
  return context.addInitScript((height) => {
    const observer = new MutationObserver(() => {
      const slot = document.querySelector('[data-videoapp-slot]');
      if (!slot) return;
      observer.disconnect();
      const spacer = document.createElement('div');
      spacer.setAttribute('data-e2e-spacer', '');
      spacer.style.height = `${height}px`;
      slot.before(spacer);
    });
    observer.observe(document, { childList: true, subtree: true });
  }, SPACER_PX);
}

/** Every request the page makes whose URL matches `pattern`. */
function requestsTo(page, pattern) {
  const seen = [];
  page.on('request', (r) => pattern.test(r.url()) && seen.push(r.url()));
  return seen;
}

/** Lets the page run its observers: two animation frames after the load event. */
async function settled(page) {
  await page.waitForLoadState('load');
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

const previewsPlaying = (page) => page.$$eval('video.videoapp-preview', (videos) => videos.filter((v) => !v.paused).length);

/** Previews in the page that still hold a source (a detached one is gone, or has none). */
const previewsAttached = (page) =>
  page.$$eval('video.videoapp-preview', (videos) => videos.filter((v) => v.isConnected && v.getAttribute('src')).length);

describe('The loader is light on the store', () => {
  let shop;
  const videos = [];
  let carousel;

  before(async () => {
    shop = await newShop('light');
    for (const media of [1, 2, 3]) {
      videos.push(await shop.video({ media, title: `Demo video ${media}`, products: [1001] }));
    }
    carousel = await shop.widget({ type: 'carousel', title: 'Home carousel', videoIds: videos, rules: { locations: ['home'] } });
  });

  after(async () => {
    await shop?.stop();
  });

  it('asks for widgets once, after the page has loaded when no slot is near the screen, and never again', async () => {
    const shopper = await newShopper('light: lazy', { origin: shop.origin });
    try {
      await pushSlotDown(shopper.context);
      const asked = requestsTo(shopper.page, /\/apps\/videoapp_sub\/contextual-widgets/);
      await shopper.page.goto('/');
      await slotsSettled(shopper.page);
      assert.equal(asked.length, 1, `one request for the page: ${asked.join(', ')}`);
      const { requested, loaded, slotBelow } = await shopper.page.evaluate(() => {
        const [widgets] = performance.getEntriesByType('resource').filter((e) => e.name.includes('/contextual-widgets'));
        return {
          requested: widgets.startTime,
          loaded: performance.getEntriesByType('navigation')[0].loadEventStart,
          slotBelow: document.querySelector('[data-videoapp-slot]').getBoundingClientRect().top / innerHeight,
        };
      });
      assert.ok(slotBelow > 2, `the slot starts ${slotBelow} screens down`);
      assert.ok(requested >= loaded, `the widgets were asked for at ${requested} ms, before the page loaded at ${loaded} ms`);
      assert.ok(await shopper.page.$(`[data-videoapp-widget="${carousel}"]`), 'the carousel rendered before it reached the screen');

      await shopper.page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await settled(shopper.page);
      assert.equal(asked.length, 1, 'scrolling on asked again');
    } finally {
      await shopper.close();
    }
  });

  it('loads no video until it plays: previews and players wait with their posters, the full video only when opened', async () => {
    const shopper = await newShopper('light: videos', { origin: shop.origin });
    try {
      const full = requestsTo(shopper.page, /\/media\/demo-\d\.webm/);
      await shopper.page.goto('/');
      await slotsSettled(shopper.page);
      await waitFor(async () => (await previewsPlaying(shopper.page)) > 0, {
        message: 'a preview of a visible card to play',
      });
      const attributes = await shopper.page.$$eval('video', (all) =>
        all.map((v) => ({ preload: v.getAttribute('preload'), poster: v.getAttribute('poster') })),
      );
      for (const video of attributes) {
        assert.equal(video.preload, 'none', `a video element preloads: ${JSON.stringify(video)}`);
        assert.match(video.poster || '', /\/media\/demo-\d\.svg$/, 'a video without its thumbnail as poster');
      }
      assert.deepEqual(full, [], 'a full video was fetched before anything was opened');

      await shopper.page.click(`[data-videoapp-widget="${carousel}"] [data-videoapp-video="${videos[1]}"]`);
      await shopper.page.locator('[data-videoapp-player]').waitFor();
      await waitFor(async () => full.length > 0, { message: 'the opened video to be fetched' });
      assert.ok(
        full.every((u) => u.endsWith('/media/demo-2.webm')),
        `only the opened video: ${full.join(', ')}`,
      );
    } finally {
      await shopper.close();
    }
  });

  it('plays previews only while their cards are visible, and detaches them when they leave', async () => {
    const shopper = await newShopper('light: previews', { origin: shop.origin });
    try {
      await shopper.page.goto('/');
      await slotsSettled(shopper.page);
      await waitFor(async () => (await previewsPlaying(shopper.page)) === videos.length, {
        message: 'the three visible cards to play their previews',
      });
      // Far below the carousel: nothing of it on the screen.
      await shopper.page.evaluate(() => {
        const spacer = document.createElement('div');
        spacer.style.height = '5000px';
        document.body.append(spacer);
        window.scrollTo(0, document.body.scrollHeight);
      });
      await waitFor(async () => (await previewsAttached(shopper.page)) === 0, {
        message: 'the previews to be detached once their cards left the screen',
      });
      await shopper.page.evaluate(() => window.scrollTo(0, 0));
      await waitFor(async () => (await previewsPlaying(shopper.page)) === videos.length, {
        message: 'the previews to play again when their cards came back',
      });
    } finally {
      await shopper.close();
    }
  });

  it('plays no preview for a shopper who asked for reduced motion', async () => {
    const browser = await launchBrowser();
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      baseURL: shop.origin,
      reducedMotion: 'reduce',
    });
    try {
      const page = await context.newPage();
      const minis = requestsTo(page, /-mini\.webm/);
      await page.goto('/');
      await slotsSettled(page);
      await page.locator(`[data-videoapp-widget="${carousel}"] [data-videoapp-video]`).first().waitFor();
      await settled(page);
      assert.equal(await page.$$eval('video.videoapp-preview', (v) => v.length), 0, 'a preview under reduced motion');
      assert.deepEqual(minis, [], 'a preview was fetched under reduced motion');
    } finally {
      await context.close();
    }
  });
});
