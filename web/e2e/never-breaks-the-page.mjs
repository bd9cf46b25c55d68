// Story 6: the loader never breaks the page, whatever the app proxy answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { newShopper, pageProblems, problemsOf, renderedWidgets, slotsSettled } from './browser.mjs';
import { newShop, productGid, startStore } from './stack.mjs';

const WIDGETS = '**/apps/videoapp_sub/contextual-widgets*';

describe('The loader never breaks the page', () => {
  let shop;
  let widget;
  let video;
  const open = [];

  before(async () => {
    shop = await newShop('robust');
    video = await shop.video({ media: 2, title: 'Summer Dress on the boardwalk', products: [1002] });
    widget = await shop.widget({ type: 'story', title: 'Stories', videoIds: [video] });
  });

  after(async () => {
    for (const thing of open.reverse()) await (thing.close ? thing.close() : thing.stop());
    await shop?.stop();
  });

  async function shopper(label, origin = shop.origin) {
    const s = await newShopper(`never breaks: ${label}`, { origin });
    open.push(s);
    return s;
  }

  const describeProblems = (problems) => problems.map((p) => `  [${p.label}] ${p.kind} on ${p.url}: ${p.text}`).join('\n');

  /**
   * On a product page whose widget request fails: the slot collapses, the theme's own
   * add-to-cart form and navigation work, and nothing is logged or thrown.
   */
  async function pageStillWorks({ page, label }, failure) {
    const answers = [];
    page.on('response', (r) => {
      if (r.url().includes('/contextual-widgets')) answers.push(r.status());
    });
    const failed = [];
    page.on('requestfailed', (r) => {
      if (r.url().includes('/contextual-widgets')) failed.push(r.failure()?.errorText);
    });

    await page.goto('/products/linen-shirt');
    assert.deepEqual(await slotsSettled(page), ['empty'], `with ${failure}, the slot collapses`);
    assert.equal(await page.locator('[data-videoapp-slot]').evaluate((s) => getComputedStyle(s).display), 'none');
    assert.deepEqual(await renderedWidgets(page), []);
    assert.ok(answers.length + failed.length >= 1, 'the loader asked for the widgets');

    await Promise.all([page.waitForURL(/\/cart$/), page.click('form[action="/cart/add"] button')]);
    assert.equal(await page.locator(`[data-demo-line="${productGid(1001)}"]`).count(), 1, 'the add-to-cart form works');
    await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('header >> text=Home')]);
    assert.equal(await page.locator('h1').first().textContent(), 'New season, on video', 'navigation works');
    assert.deepEqual(await slotsSettled(page), ['empty']);

    assert.equal(problemsOf(label).length, 0, `with ${failure}:\n${describeProblems(problemsOf(label))}`);
    return { answers, failed };
  }

  it('logs no console error and throws no page error on any page of the other stories', () => {
    const others = pageProblems.filter((p) => !p.label.startsWith('never breaks'));
    assert.equal(others.length, 0, `pages logged or threw:\n${describeProblems(others)}`);
  });

  it('shows the widgets when the app proxy answers', async () => {
    const { page } = await shopper('healthy');
    await page.goto('/products/linen-shirt');
    assert.deepEqual(await slotsSettled(page), ['ready']);
    assert.deepEqual(
      (await renderedWidgets(page)).map((w) => w.id),
      [widget],
    );
  });

  it('keeps the page working when the app proxy answers 500', async () => {
    const s = await shopper('500');
    await s.context.route(WIDGETS, (route) => route.fulfill({ status: 500, contentType: 'text/plain', body: 'Internal Server Error' }));
    const { answers } = await pageStillWorks(s, 'a 500 answer');
    assert.ok(
      answers.every((status) => status === 500),
      `answers: ${answers}`,
    );
  });

  it('keeps the page working when the answer is not JSON', async () => {
    const s = await shopper('unreadable');
    await s.context.route(WIDGETS, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Maintenance</title>' }),
    );
    await pageStillWorks(s, 'an HTML page instead of JSON');
  });

  it('keeps the page working when the service refuses the signature (401)', async () => {
    const wrong = await startStore(shop.shop, { proxySecret: 'not-the-service-secret-0123456789abcdef' });
    open.push(wrong);
    const s = await shopper('401', wrong.origin);
    const { answers } = await pageStillWorks(s, 'a demo store whose proxy secret is wrong');
    assert.ok(answers.length >= 1 && answers.every((status) => status === 401), `the service answered ${answers}`);
  });

  it('keeps the page working when the request gets no answer at all', async () => {
    const s = await shopper('no answer');
    await s.context.route(WIDGETS, (route) => route.abort());
    const { failed } = await pageStillWorks(s, 'no answer');
    assert.ok(failed.length >= 1, 'the request failed');
  });

  it('keeps the player working when the analytics endpoint fails', async () => {
    const s = await shopper('analytics down');
    await s.context.route('**/apps/videoapp_sub/analytics*', (route) =>
      route.fulfill({ status: 503, contentType: 'text/plain', body: 'Service Unavailable' }),
    );
    const { page } = s;
    await page.goto('/products/summer-dress');
    await slotsSettled(page);
    await page.click(`[data-videoapp-widget="${widget}"] [data-videoapp-video="${video}"]`);
    const player = page.locator('[data-videoapp-player]');
    await player.locator(`[data-videoapp-add-to-cart="${productGid(1002)}"]`).click();
    await player.locator('.videoapp-product[data-videoapp-state="added"]').waitFor();
    await page.evaluate(() => window.videoapp.flush());
    await page.waitForFunction(() => JSON.parse(localStorage.getItem('videoapp:queue') || '[]').every((i) => !i.l));
    assert.ok(
      (await page.evaluate(() => JSON.parse(localStorage.getItem('videoapp:queue') || '[]').length)) >= 2,
      'the refused events stay queued for a retry',
    );
    await page.keyboard.press('Escape');
    await Promise.all([page.waitForURL(/\/cart$/), page.click('header >> text=Cart')]);
    assert.equal(await page.locator(`[data-demo-line="${productGid(1002)}"]`).count(), 1);
    assert.equal(problemsOf(s.label).length, 0, describeProblems(problemsOf(s.label)));
  });
});
