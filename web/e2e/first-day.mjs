// Story: a merchant's first day. The home page's checklist ticks each step from what the store
// does (its pages asking for widgets, a video, an active widget, shoppers' first events) and
// leads to each: the theme editor with the app embed selected, adding a video, making a widget.
// In a video's form the merchant attaches captions per language and removes them; the widget
// form offers the floating kind. Every new screen passes axe-core.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, describe, it } from 'node:test';

import { dashboardSettled as settled, newShopper, pageHeading } from './browser.mjs';
import { config, newShop, theService, waitFor } from './stack.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

async function passesAxe(page, name) {
  await settled(page);
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  const { violations } = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const blocking = violations.filter((v) => ['serious', 'critical'].includes(v.impact));
  const described = blocking.map((v) => `  ${v.impact} ${v.id}: ${v.help} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  assert.equal(blocking.length, 0, `axe-core on ${name}:\n${described.join('\n')}`);
}

const VTT = 'WEBVTT\n\n00:00.200 --> 00:03.000\nTrois façons de la porter\n';

describe("A merchant's first day", () => {
  const open = [];
  after(async () => {
    for (const thing of open.reverse()) await (thing.close ? thing.close() : thing.stop());
  });

  it('ticks the checklist from what the store does, and leads to each step', async () => {
    const shop = await newShop('first-day');
    open.push(shop);
    const merchant = await newShopper('first day: merchant', { origin: shop.origin });
    open.push(merchant);
    const { page } = merchant;
    await page.goto(shop.admin);
    await pageHeading(page, 'Analytics').waitFor();
    const checklist = page.getByRole('heading', { name: 'Get started' });
    await checklist.waitFor();
    const doneCount = (n) => page.getByText(`${n} of 4 done`).waitFor({ timeout: 30_000 });
    await doneCount(0);
    await passesAxe(page, 'the checklist');

    // The app embed: the theme editor opens with it selected.
    await page.getByRole('link', { name: 'Open theme editor' }).click();
    await page.waitForURL(/\/admin\/themes\/current\/editor\?/);
    assert.ok(await page.locator('.embed.selected').isVisible(), 'the app embed is selected');
    // The store's pages, with the embed on, ask for widgets: the step ticks by itself.
    const shopper = await newShopper('first day: shopper', { origin: shop.origin });
    open.push(shopper);
    await shopper.page.goto(shop.origin);
    await page.goto(shop.admin);
    await doneCount(1);

    await page.getByRole('button', { name: 'Add a video' }).click();
    await waitFor(() => new URL(page.url()).searchParams.get('add') === '1', { message: 'the Add videos page' });
    const video = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    await page.goto(shop.admin);
    await doneCount(2);

    await page.getByRole('button', { name: 'Make a widget' }).click();
    await waitFor(() => new URL(page.url()).searchParams.get('widget') === 'new', { message: 'the new widget form' });
    await shop.widget({ type: 'carousel', title: 'Home', videoIds: [video] });
    await page.goto(shop.admin);
    await doneCount(3);

    // The first numbers: a shopper sees the widget, and the checklist is done and gone.
    await shop.record([
      { eventType: 'impression', eventId: crypto.randomUUID(), sessionId: 's-1', videoId: video, timestamp: new Date().toISOString() },
    ]);
    await checklist.waitFor({ state: 'detached', timeout: 60_000 });
  });

  it("attaches captions in a language in the video's form, refuses a file that is not WebVTT, and removes them", async () => {
    const shop = await newShop('captions-form');
    open.push(shop);
    const video = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    const merchant = await newShopper('captions: merchant', { origin: shop.origin });
    open.push(merchant);
    const { page } = merchant;
    await page.goto(`${shop.origin}/app?shop=${shop.shop}&page=videos&video=${video}`);
    await page.getByRole('heading', { name: 'Captions' }).waitFor();
    await page.getByLabel('Language of the captions to add').selectOption('fr');
    const input = page.locator('input[type=file][accept=".vtt,text/vtt"]');

    await input.setInputFiles({ name: 'notes.vtt', mimeType: 'text/vtt', buffer: Buffer.from('1\n00:00:01,000 --> 00:00:02,000\nHi\n') });
    await page
      .getByRole('alert')
      .getByText(/WEBVTT/)
      .waitFor();
    assert.deepEqual((await shop.getVideo(video)).captions, []);

    await input.setInputFiles({ name: 'fr.vtt', mimeType: 'text/vtt', buffer: Buffer.from(VTT) });
    await page.getByText('French', { exact: true }).waitFor();
    const attached = (await shop.getVideo(video)).captions;
    assert.deepEqual(
      attached.map((c) => c.language),
      ['fr'],
    );
    assert.equal(await (await fetch(attached[0].url)).text(), VTT);
    await passesAxe(page, 'the captions of a video');

    await page.getByRole('button', { name: 'Remove French captions' }).click();
    await waitFor(async () => (await shop.getVideo(video)).captions.length === 0, { message: 'the captions removed' });
  });

  it('offers the floating kind of widget', async () => {
    const shop = await newShop('floating-form');
    open.push(shop);
    const merchant = await newShopper('floating: merchant', { origin: shop.origin });
    open.push(merchant);
    const { page } = merchant;
    await page.goto(`${shop.origin}/app?shop=${shop.shop}&page=widgets&widget=new`);
    await page.getByLabel('Type', { exact: true }).selectOption('floating');
    await page.getByText('A small round video in a corner of every page it is shown on').first().waitFor();
  });

  it("picks a widget's collections from a searchable list, never typing ids", async () => {
    const shop = await newShop('collection-picker');
    open.push(shop);
    const video = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    const merchant = await newShopper('collections: merchant', { origin: shop.origin });
    open.push(merchant);
    const { page } = merchant;
    await page.goto(`${shop.origin}/app?shop=${shop.shop}&page=widgets&widget=new`);
    await page.getByLabel('Title', { exact: true }).fill('Collection videos');
    await page.getByLabel('Video to add', { exact: true }).selectOption({ label: 'Linen Shirt, three ways' });
    await page.getByRole('button', { name: 'Add video', exact: true }).click();
    await page.getByLabel('Search collections').fill('502');
    await page.getByRole('checkbox', { name: 'Collection 502' }).check();
    await passesAxe(page, 'the collection picker');
    await page.getByRole('button', { name: 'Create widget', exact: true }).click();
    const widgets = async () => {
      const url = `${theService().base}/admin/v1/shops/${shop.shop}/widgets`;
      const answer = await fetch(url, { headers: { authorization: `Bearer ${config.adminToken}` } });
      return (await answer.json()).widgets;
    };
    const made = await waitFor(async () => (await widgets()).find((w) => w.title === 'Collection videos'), {
      message: 'the widget created',
    });
    assert.deepEqual(made.rules.collectionIds, ['gid://shopify/Collection/502']);
    assert.deepEqual(made.videoIds, [video]);
  });
});
