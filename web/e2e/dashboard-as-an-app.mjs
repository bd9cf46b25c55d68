// Story 7b: the dashboard behaves like an app a merchant trusts. Every editor has its URL (Back,
// Forward, a reload and a shared link open it again); unsaved changes are not lost without a
// question; at 412×915 its tables read as cards, with no sideways scrolling of the page;
// products are picked from a searchable list with their images; a widget's id is copied for
// the theme's "Video widget" block. Every screen passes axe-core (no serious or critical
// violation).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';

import { dashboardSettled as settled, goTo, newShopper, pageHeading, passesAxe as pageAxe, PHONE } from './browser.mjs';
import { config, newShop, productGid, theService } from './stack.mjs';

/** Keeps a screenshot of the page as `dashboard-app-<name>.png`, then runs axe-core on it (browser.mjs). */
async function passesAxe(page, name) {
  await settled(page);
  mkdirSync(config.artifacts, { recursive: true });
  await page.screenshot({ path: path.join(config.artifacts, `dashboard-app-${name}.png`), fullPage: true });
  await pageAxe(page, name);
}

describe('The dashboard as an app', () => {
  const open = [];
  after(async () => {
    for (const thing of open.reverse()) await (thing.close ? thing.close() : thing.stop());
  });

  const admin = (shop, pathname) =>
    fetch(`${theService().base}/admin/v1/shops/${shop.shop}${pathname}`, {
      headers: { authorization: `Bearer ${config.adminToken}` },
    }).then((r) => r.json());

  async function seededShop(name) {
    const shop = await newShop(name);
    open.push(shop);
    const shirt = await shop.video({ media: 1, title: 'Linen Shirt, three ways', products: [1001] });
    const dress = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    const widget = await shop.widget({ type: 'carousel', title: 'Home carousel', videoIds: [shirt, dress] });
    return { shop, shirt, dress, widget };
  }

  async function openDashboard(shop, label, device) {
    const merchant = await newShopper(`dashboard app: ${label}`, { origin: shop.origin, device });
    open.push(merchant);
    await merchant.page.goto(shop.admin);
    await pageHeading(merchant.page, 'Analytics').waitFor();
    return merchant;
  }

  const query = (page) => Object.fromEntries(new URL(page.url()).searchParams);

  // ---------------------------------------------------------------------------------------------

  it('arrives compressed and cached for a year, as the service sends it', async () => {
    const shop = await newShop('app-bundle');
    open.push(shop);
    const merchant = await newShopper('dashboard app: bundle', { origin: shop.origin });
    open.push(merchant);
    const assets = [];
    merchant.page.on('response', (r) => {
      if (/\/app\/assets\/dashboard\.[0-9a-f]+\.(js|css)$/.test(new URL(r.url()).pathname)) assets.push(r);
    });
    await merchant.page.goto(shop.admin);
    await pageHeading(merchant.page, 'Analytics').waitFor();
    assert.equal(assets.length, 2, 'the script and the style sheet, named by their content');
    for (const r of assets) {
      const headers = await r.allHeaders();
      assert.equal(headers['content-encoding'], 'br', `${r.url()} is sent compressed`);
      assert.equal(headers['cache-control'], 'public, max-age=31536000, immutable', `${r.url()} is kept for a year`);
    }
  });

  // ---------------------------------------------------------------------------------------------

  it('opens an editor again from its URL: Back, Forward, a reload and a shared link', async () => {
    const { shop, shirt, widget } = await seededShop('app-routes');
    const { context, page } = await openDashboard(shop, 'routes');

    await goTo(page, 'Widgets');
    await page.getByRole('button', { name: 'Edit Home carousel' }).click();
    await pageHeading(page, 'Edit Home carousel').waitFor();
    assert.equal(query(page).page, 'widgets');
    assert.equal(query(page).widget, widget, 'the URL names the widget being edited');
    assert.equal(query(page).shop, shop.shop, 'the other parameters are kept');

    await page.goBack();
    await pageHeading(page, 'Widgets').waitFor();
    assert.equal(query(page).widget, undefined, 'Back closes the editor');
    await page.goForward();
    await pageHeading(page, 'Edit Home carousel').waitFor();
    await page.reload();
    await pageHeading(page, 'Edit Home carousel').waitFor();
    assert.equal(await page.getByLabel('Title', { exact: true }).inputValue(), 'Home carousel', 'a reload opens the same editor, filled');

    await goTo(page, 'Widgets');
    await page.getByRole('button', { name: 'Create widget' }).first().click();
    await pageHeading(page, 'Create a widget').waitFor();
    assert.equal(query(page).widget, 'new');
    await page.reload();
    await pageHeading(page, 'Create a widget').waitFor();

    // A video's editor, and its link opened in another tab.
    await goTo(page, 'Videos');
    await page.getByRole('button', { name: 'Edit Linen Shirt, three ways' }).click();
    await pageHeading(page, 'Edit Linen Shirt, three ways').waitFor();
    assert.deepEqual([query(page).page, query(page).video], ['videos', shirt]);
    const shared = await context.newPage();
    await shared.goto(page.url());
    await pageHeading(shared, 'Edit Linen Shirt, three ways').waitFor();
    await shared.close();
    await page.goBack();
    await pageHeading(page, 'Videos').waitFor();
    await page.goBack();
    await pageHeading(page, 'Create a widget').waitFor();
  });

  // ---------------------------------------------------------------------------------------------

  it('asks before unsaved changes are lost, and not once they are saved or discarded', async () => {
    const { shop, widget } = await seededShop('app-unsaved');
    const { context, page } = await openDashboard(shop, 'unsaved');
    const question = page.getByRole('dialog', { name: 'Leave without saving?' });
    const title = page.getByLabel('Title', { exact: true });

    await goTo(page, 'Widgets');
    await page.getByRole('button', { name: 'Edit Home carousel' }).click();
    await pageHeading(page, 'Edit Home carousel').waitFor();
    await title.fill('Renamed, not saved');

    // Another page of the app: asked; "Keep editing" keeps the form as it was.
    await page.getByRole('navigation', { name: 'videoapp' }).getByRole('link', { name: 'Videos', exact: true }).click();
    await question.waitFor();
    await passesAxe(page, 'leave-question');
    await question.getByRole('button', { name: 'Keep editing' }).click();
    await question.waitFor({ state: 'hidden' });
    await pageHeading(page, 'Edit Home carousel').waitFor();
    assert.equal(await title.inputValue(), 'Renamed, not saved');

    // Back: asked too, and the URL stays the editor's.
    await page.goBack();
    await question.waitFor();
    assert.equal(query(page).widget, widget, 'the editor keeps its URL while the question is open');
    await question.getByRole('button', { name: 'Keep editing' }).click();
    await question.waitFor({ state: 'hidden' });
    assert.equal(await title.inputValue(), 'Renamed, not saved');

    // A reload: the browser's own question; staying keeps the form.
    // (The page waits on the question, so the reload is not awaited before the answer.)
    const beforeUnload = page.waitForEvent('dialog');
    const reloading = page.evaluate(() => location.reload()).catch(() => {});
    const asked = await beforeUnload;
    assert.equal(asked.type(), 'beforeunload', 'a reload asks first');
    await asked.dismiss();
    await reloading;
    assert.equal(await title.inputValue(), 'Renamed, not saved', 'staying keeps the changes');

    // Closing the window asks too.
    const other = await context.newPage();
    await other.goto(page.url());
    await pageHeading(other, 'Edit Home carousel').waitFor();
    await other.getByLabel('Title', { exact: true }).fill('Changed in another tab');
    const closing = other.waitForEvent('dialog');
    await other.close({ runBeforeUnload: true });
    const closeAsked = await closing;
    assert.equal(closeAsked.type(), 'beforeunload', 'closing the window asks first');
    await closeAsked.accept();

    // Discarding leaves, and saves nothing.
    await page.goBack();
    await question.waitFor();
    await question.getByRole('button', { name: 'Discard changes' }).click();
    await pageHeading(page, 'Widgets').waitFor();
    assert.equal(query(page).widget, undefined);
    assert.equal((await admin(shop, `/widgets/${widget}`)).title, 'Home carousel', 'nothing was saved');

    // Saved changes leave without a question; a reload afterwards asks nothing.
    await page.getByRole('button', { name: 'Edit Home carousel' }).click();
    await pageHeading(page, 'Edit Home carousel').waitFor();
    await title.fill('Renamed and saved');
    await page.getByRole('button', { name: 'Save widget', exact: true }).click();
    await pageHeading(page, 'Widgets').waitFor();
    assert.equal(await question.count(), 0, 'no question after saving');
    page.on('dialog', (d) => assert.fail(`unexpected ${d.type()} dialog after saving`));
    await page.reload();
    await pageHeading(page, 'Widgets').waitFor();
    // A form opened and left unchanged asks nothing either.
    await page.getByRole('button', { name: 'Edit Renamed and saved' }).click();
    await pageHeading(page, 'Edit Renamed and saved').waitFor();
    await page.goBack();
    await pageHeading(page, 'Widgets').waitFor();
  });

  // ---------------------------------------------------------------------------------------------

  it('picks products from a searchable list with their images', async () => {
    const { shop, shirt } = await seededShop('app-picker');
    const { page } = await openDashboard(shop, 'picker');
    await goTo(page, 'Videos');
    await page.getByRole('button', { name: 'Edit Linen Shirt, three ways' }).click();
    await pageHeading(page, 'Edit Linen Shirt, three ways').waitFor();

    const choices = page.locator('.vd-choices').getByRole('checkbox');
    assert.equal(await choices.count(), 3, 'every product of the shop is offered');
    await page.getByLabel('Search products', { exact: true }).fill('dress');
    await page.waitForFunction(() => document.querySelectorAll('.vd-choices input[type="checkbox"]').length === 1);
    const dress = page.locator('.vd-choices').getByRole('checkbox', { name: 'Summer Dress', exact: true });
    assert.equal(await dress.count(), 1, 'the search keeps the matching product only');
    const image = page.locator('.vd-choices label').filter({ hasText: 'Summer Dress' }).locator('img');
    assert.match(await image.getAttribute('src'), /product-1002\.svg$/, "the product's image is shown beside it");
    await image.evaluate((img) => img.decode());
    await passesAxe(page, 'product-picker');

    await dress.check();
    await page.getByRole('button', { name: 'Remove Summer Dress' }).waitFor();
    await page.getByRole('button', { name: 'Save video', exact: true }).click();
    await pageHeading(page, 'Videos').waitFor();
    assert.deepEqual(
      (await admin(shop, `/videos/${shirt}`)).productIds,
      [productGid(1001), productGid(1002)],
      'the video is linked to the product chosen',
    );
  });

  // ---------------------------------------------------------------------------------------------

  it("shows a widget's id for the theme block, and copies it", async () => {
    const { shop, widget } = await seededShop('app-widget-id');
    const { context, page } = await openDashboard(shop, 'widget id');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: shop.origin });

    await goTo(page, 'Widgets');
    const row = page.getByRole('row').filter({ hasText: 'Home carousel' });
    assert.equal((await row.getByTestId('widget-id').textContent()).trim(), widget, 'the list shows the widget id');
    await page.getByText(/paste it into the “Widget id” setting of the “Video widget” block/i).waitFor();
    await row.getByRole('button', { name: 'Copy the widget ID of Home carousel' }).click();
    await page.getByText('Widget ID copied').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), widget, 'the id is on the clipboard');
    await passesAxe(page, 'widgets');

    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.getByRole('button', { name: 'Edit Home carousel' }).click();
    await pageHeading(page, 'Edit Home carousel').waitFor();
    await page.getByRole('heading', { name: 'Widget ID' }).waitFor();
    await page.getByText(/“Video widget” block in your theme editor/).waitFor();
    await page.getByRole('button', { name: 'Copy the widget ID of Home carousel' }).click();
    await page.getByText('Widget ID copied').last().waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), widget, 'the editor copies it too');
    await passesAxe(page, 'widget-form');
  });

  // ---------------------------------------------------------------------------------------------

  it('shows every column of every table at 1280 px, with no table scrolling sideways', async () => {
    const { shop } = await seededShop('app-wide');
    await shop.widget({ type: 'story', title: 'A widget with a rather long title for the stories of the home page', videoIds: [] });
    await shop.apiKey('Weekly report from the accounting spreadsheet');
    await shop.apiKey('Old dashboard', { revoked: true });
    const { page } = await openDashboard(shop, 'wide');
    /** Each table's width beyond its frame (0 when every column shows). */
    const hidden = () =>
      page.evaluate(() => [...document.querySelectorAll('.Polaris-IndexTable-ScrollContainer')].map((c) => c.scrollWidth - c.clientWidth));
    const everyColumnShows = async (name, tables) => {
      await settled(page);
      const overflow = await hidden();
      assert.equal(overflow.length, tables, `${name}: ${tables} tables`);
      assert.deepEqual(
        overflow,
        overflow.map(() => 0),
        `${name}: a table scrolls sideways, hiding columns (px beyond its frame: ${overflow})`,
      );
    };
    await page.getByRole('row', { name: /Home carousel/ }).waitFor();
    await everyColumnShows('Analytics', 2);
    await goTo(page, 'Widgets');
    await everyColumnShows('Widgets', 1);
    await goTo(page, 'Videos');
    await everyColumnShows('Videos', 1);
    await goTo(page, 'Settings');
    await everyColumnShows('Settings', 1);
  });

  // ---------------------------------------------------------------------------------------------

  it('is usable on a phone (412×915): tables as cards, no sideways scrolling of the page', async () => {
    const { shop } = await seededShop('app-phone');
    const { page } = await openDashboard(shop, 'phone', PHONE);
    const noSidewaysScroll = async (name) => {
      const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
      assert.ok(scroll <= width, `${name}: the page is ${scroll} px wide in a ${width} px window`);
    };
    /** The element lies within the window's width. */
    const inView = async (locator, what) => {
      const box = await locator.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 412, `${what} is within the screen: ${JSON.stringify(box)}`);
    };

    await page.getByRole('list', { name: 'Videos' }).first().waitFor();
    await noSidewaysScroll('Analytics');
    await passesAxe(page, 'phone-analytics');

    await goTo(page, 'Widgets');
    const widget = page.getByRole('list', { name: 'Widgets' }).getByRole('listitem').filter({ hasText: 'Home carousel' });
    await widget.waitFor();
    for (const fact of ['Carousel', 'Active', 'Priority']) await widget.getByText(fact, { exact: true }).first().waitFor();
    await inView(widget.getByRole('button', { name: 'Edit Home carousel' }), 'the Edit button');
    await inView(widget.getByRole('button', { name: 'Copy the widget ID of Home carousel' }), 'the Copy button');
    await noSidewaysScroll('Widgets');
    await passesAxe(page, 'phone-widgets');

    await goTo(page, 'Videos');
    const video = page.getByRole('list', { name: 'Videos' }).getByRole('listitem').filter({ hasText: 'Summer Dress on the boardwalk' });
    await video.getByText('Published', { exact: true }).waitFor();
    await inView(video.getByRole('button', { name: 'Edit Summer Dress on the boardwalk' }), 'the Edit button');
    await noSidewaysScroll('Videos');
    await passesAxe(page, 'phone-videos');

    await video.getByRole('button', { name: 'Edit Summer Dress on the boardwalk' }).click();
    await pageHeading(page, 'Edit Summer Dress on the boardwalk').waitFor();
    await noSidewaysScroll('the video form');
    await passesAxe(page, 'phone-video-form');

    await goTo(page, 'Settings');
    const key = page.getByRole('list', { name: 'Your keys' }).getByRole('listitem').filter({ hasText: 'e2e' });
    await inView(key.getByRole('button', { name: 'Revoke e2e' }), 'the Revoke button');
    await noSidewaysScroll('Settings');
    await passesAxe(page, 'phone-settings');
  });
});
