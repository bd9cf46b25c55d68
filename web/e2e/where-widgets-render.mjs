// Story 1: where widgets render. Every page shows exactly the widgets its rules admit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { newShopper, renderedWidgets, screenshot, slotsSettled } from './browser.mjs';
import { newShop, productGid } from './stack.mjs';

describe('Where widgets render', () => {
  let shop;
  let shopper;
  const v = {};
  const w = {};

  before(async () => {
    shop = await newShop('render');
    v.shirt = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    v.dress = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    v.tote = await shop.video({ media: 3, title: 'What fits in the Canvas Tote', products: [1003, 1001] });
    v.draft = await shop.video({ media: 1, title: 'Autumn preview', status: 'DRAFT', products: [1002] });

    w.carousel = await shop.widget({
      type: 'carousel',
      title: 'Home carousel',
      priority: 30,
      videoIds: [v.shirt, v.dress, v.draft, v.tote],
      rules: { locations: ['home', 'collection'] },
    });
    w.story = await shop.widget({ type: 'story', title: 'Stories', priority: 20, videoIds: [v.tote, v.shirt, v.dress] });
    w.productpage = await shop.widget({ type: 'productpage', title: 'Product videos', priority: 10, sourceType: 'product' });
    w.draft = await shop.widget({ type: 'carousel', title: 'Draft carousel', status: 'draft', videoIds: [v.shirt] });
    w.archived = await shop.widget({ type: 'story', title: 'Archived stories', status: 'archived', videoIds: [v.dress] });
    w.pageOnly = await shop.widget({ type: 'carousel', title: 'Pages only', videoIds: [v.tote], rules: { locations: ['page'] } });
    w.videoless = await shop.widget({ type: 'carousel', title: 'Nothing published', videoIds: [v.draft] });
    w.dressOnly = await shop.widget({
      type: 'carousel',
      title: 'Summer Dress only',
      priority: 5,
      videoIds: [v.dress, v.shirt],
      rules: { productIds: [productGid(1002)] },
    });

    shopper = await newShopper('where widgets render', { origin: shop.origin });
  });

  after(async () => {
    await shopper?.close();
    await shop?.stop();
  });

  /** Opens `path`, waits for the loader, and returns the widgets rendered there. */
  async function widgetsAt(path) {
    const response = await shopper.page.goto(path);
    assert.equal(response.status(), 200, `${path} answered ${response.status()}`);
    await slotsSettled(shopper.page);
    return renderedWidgets(shopper.page);
  }

  const byId = (widgets) => [...widgets].sort((a, b) => a.id.localeCompare(b.id));
  const never = () => [w.draft, w.archived, w.pageOnly, w.videoless];

  function assertNone(widgets, ids, where) {
    for (const id of ids) {
      assert.ok(!widgets.some((x) => x.id === id), `${where} shows widget ${id}, which its status or rules exclude`);
    }
  }

  it('shows the carousel and the stories on the home page, and nothing else', async () => {
    const widgets = await widgetsAt('/');
    assert.deepEqual(
      byId(widgets),
      byId([
        { id: w.carousel, type: 'carousel', videos: [v.shirt, v.dress, v.tote] },
        { id: w.story, type: 'story', videos: [v.tote, v.shirt, v.dress] },
      ]),
      'the home page shows the active carousel (home rule) and the rule-less story; the draft video is left out',
    );
    assertNone(widgets, [...never(), w.productpage, w.dressOnly], 'the home page');
    const page = shopper.page;
    assert.equal(
      await page.locator('[data-videoapp-slot]').evaluate((s) => s.style.minHeight),
      '',
      'a filled slot no longer reserves its height',
    );
    assert.equal(await page.locator('head style[data-videoapp-style]').count(), 1, 'one style sheet in <head>');
    assert.deepEqual(
      await page
        .locator(`[data-videoapp-widget="${w.carousel}"] [data-videoapp-video]`)
        .evaluateAll((cards) => cards.map((c) => [c.tagName, c.getAttribute('aria-label')])),
      [
        ['BUTTON', 'Linen Shirt, three ways'],
        ['BUTTON', 'Summer Dress on the boardwalk'],
        ['BUTTON', 'What fits in the Canvas Tote'],
      ],
      'cards are buttons named by their video titles',
    );
    await screenshot(shopper.page.locator(`[data-videoapp-widget="${w.carousel}"]`), 'carousel.png');
    await screenshot(shopper.page.locator(`[data-videoapp-widget="${w.story}"]`), 'story.png');
  });

  it("shows a product's own videos on its product page, with the widgets restricted to it", async () => {
    const widgets = await widgetsAt('/products/summer-dress');
    assert.deepEqual(
      widgets.map((x) => x.id).sort(),
      [w.story, w.productpage, w.dressOnly].sort(),
      'the Summer Dress page shows the stories, the product videos and the carousel restricted to it',
    );
    const productpage = widgets.find((x) => x.id === w.productpage);
    assert.equal(productpage.type, 'productpage');
    assert.deepEqual(productpage.videos, [v.dress], 'the product videos of the Summer Dress are its one video');
    assert.deepEqual(widgets.find((x) => x.id === w.dressOnly).videos, [v.dress, v.shirt]);
    assertNone(widgets, [...never(), w.carousel], 'the Summer Dress page');
    await screenshot(shopper.page.locator(`[data-videoapp-widget="${w.productpage}"]`), 'productpage.png');
  });

  it('shows each product page its own product videos only', async () => {
    const shirt = await widgetsAt('/products/linen-shirt');
    assert.deepEqual(
      shirt.map((x) => x.id).sort(),
      [w.story, w.productpage].sort(),
      'the Linen Shirt page shows the stories and its product videos, not the Summer Dress carousel',
    );
    assert.deepEqual(
      shirt.find((x) => x.id === w.productpage).videos.sort(),
      [v.shirt, v.tote].sort(),
      'the product videos of the Linen Shirt are the two videos that name it',
    );
    const tote = await widgetsAt('/products/canvas-tote');
    assert.deepEqual(tote.find((x) => x.id === w.productpage)?.videos, [v.tote], 'the Canvas Tote page shows its one video');
  });

  it('shows the carousel and the stories on a collection page', async () => {
    const widgets = await widgetsAt('/collections/501');
    assert.deepEqual(
      byId(widgets).map((x) => [x.id, x.type]),
      byId([
        { id: w.carousel, type: 'carousel' },
        { id: w.story, type: 'story' },
      ]).map((x) => [x.id, x.type]),
      'the collection page shows the carousel (collection rule) and the stories',
    );
    assertNone(widgets, [...never(), w.productpage, w.dressOnly], 'the collection page');
  });

  it('shows only the rule-less stories on the cart page', async () => {
    const widgets = await widgetsAt('/cart');
    assert.deepEqual(
      widgets.map((x) => [x.id, x.type]),
      [[w.story, 'story']],
    );
  });

  it('shows exactly the one widget a snippet slot names', async () => {
    const widgets = await widgetsAt(`/?widget=${w.story}`);
    assert.deepEqual(widgets, [{ id: w.story, type: 'story', videos: [v.tote, v.shirt, v.dress] }]);
    const slot = shopper.page.locator(`[data-videoapp-slot][data-videoapp-widget-id="${w.story}"]`);
    assert.equal(await slot.getAttribute('data-videoapp-state'), 'ready');
    assert.equal(await slot.locator(`[data-videoapp-widget="${w.story}"][data-videoapp-type="story"]`).count(), 1);
  });

  it('collapses a snippet slot whose widget is a draft', async () => {
    const widgets = await widgetsAt(`/?widget=${w.draft}`);
    assert.deepEqual(widgets, [], 'a draft widget named by a snippet slot shows nowhere');
    const states = await slotsSettled(shopper.page);
    assert.deepEqual(states, ['empty']);
  });
});
