// Story 10: a merchant's first day. From an empty database, the merchant opens the app from the
// store's admin; the demo store stands in for the platform (its admin, the token exchange and the
// Admin API). The dashboard installs the app by itself, tells the merchant what it is doing
// ("Connecting to your store…", "Importing your products…"), then opens with the store's
// products imported; the platform was asked to create the checkout pixel exactly once, with the
// settings the pixel extension declares. The products came with their collections; a product
// renamed in the store's admin reaches the app by webhook; uninstalled there, the app installs
// afresh when it is opened again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';

import { newShopper, pageHeading } from './browser.mjs';
import { config, freePort, shopDomain, startService, startStore, stopService, theService, waitFor } from './stack.mjs';

const PROGRESS = ['Connecting to your store…', 'Importing your products…'];
const DEMO_PRODUCTS = ['Canvas Tote', 'Linen Shirt', 'Summer Dress'];

/** Runs one statement on the server of the suite's database (CREATE / DROP DATABASE). */
function postgres(sql) {
  const url = new URL(config.databaseUrl);
  url.pathname = '/postgres';
  const run = spawnSync('psql', [url.toString(), '-v', 'ON_ERROR_STOP=1', '-c', sql], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`psql ${sql}: ${run.error?.message ?? run.stderr}`);
}

describe('A merchant installs the app from the admin', () => {
  it('installs from an empty database: progress, then the dashboard with the products, and one webPixelCreate', async () => {
    // A database of its own, empty, and a service whose platform is this story's demo store.
    const database = `e2e_install_${randomBytes(4).toString('hex')}`;
    postgres(`CREATE DATABASE ${database}`);
    const databaseUrl = Object.assign(new URL(config.databaseUrl), { pathname: `/${database}` }).toString();
    const shop = shopDomain('install');
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    await stopService();
    await startService({ DATABASE_URL: databaseUrl, VIDEOAPP_PLATFORM_ORIGIN: origin });
    let store = null;
    let merchant = null;
    try {
      store = await startStore(shop, { listen: `127.0.0.1:${port}`, databaseUrl });
      const admin = (pathname) =>
        fetch(`${theService().base}/admin/v1${pathname}`, { headers: { authorization: `Bearer ${config.adminToken}` } });
      assert.equal((await admin(`/shops/${shop}`)).status, 404, 'the service starts without the shop');

      merchant = await newShopper('install', { origin });
      const { page } = merchant;
      // Every progress message the page shows, however briefly.
      await page.addInitScript((messages) => {
        window.__progressSeen = [];
        new MutationObserver(() => {
          const text = document.body?.innerText ?? '';
          for (const m of messages) if (text.includes(m) && !window.__progressSeen.includes(m)) window.__progressSeen.push(m);
        }).observe(document, { childList: true, subtree: true, characterData: true });
      }, PROGRESS);
      // The admin opens the app with a session token in its URL, as the platform does.
      const mints = [];
      page.on('request', (r) => new URL(r.url()).pathname === '/admin/session-token' && mints.push(r.url()));
      await page.goto('/admin');

      await pageHeading(page, 'Analytics').waitFor({ timeout: 30_000 });
      assert.deepEqual(await page.evaluate(() => window.__progressSeen), PROGRESS, 'the merchant saw each step');
      assert.deepEqual(mints, [], 'the first calls used the token the admin gave, without asking for another');
      assert.equal(new URL(page.url()).searchParams.get('id_token'), null, 'the token is not kept in the address');

      // The demo products and collections are the shop's now.
      const products = await (await admin(`/shops/${shop}/products`)).json();
      assert.deepEqual(products.products.map((p) => p.title).sort(), DEMO_PRODUCTS);
      assert.ok(products.products.every((p) => p.image === `${origin}/media/product-${p.id.split('/').pop()}.svg`));
      const collections = await (await admin(`/shops/${shop}/collections`)).json();
      assert.deepEqual(
        collections.collections.map((c) => c.title),
        ['Accessories', 'Summer'],
      );

      // The platform was asked once for the token and once to create the pixel.
      const calls = await waitFor(
        async () => {
          const seen = await (await fetch(`${origin}/admin/stand-in/calls`)).json();
          return seen.webPixelCreate.length > 0 && seen;
        },
        { message: 'a webPixelCreate' },
      );
      assert.equal(calls.tokenExchanges, 1);
      assert.deepEqual(calls.webPixelCreate, [{ shop, settings: { proxyPath: '/apps/videoapp_sub' } }]);
      assert.deepEqual(calls.webPixelUpdate, []);

      // Opening the app again installs nothing more; reloaded without the launch token, the app
      // asks the admin for one.
      await page.reload();
      await pageHeading(page, 'Analytics').waitFor();
      assert.ok(mints.length > 0, 'a reload asks the admin for a session token');
      const again = await (await fetch(`${origin}/admin/stand-in/calls`)).json();
      assert.equal(again.tokenExchanges, 1);
      assert.equal(again.webPixelCreate.length, 1);

      // The products came with their collections: the store's collection page lists them.
      await page.goto('/collections/501');
      await pageHeading(page, 'Summer').waitFor();
      for (const title of ['Linen Shirt', 'Summer Dress']) await page.getByRole('link', { name: title }).waitFor();

      // The merchant renames a product in the store's admin: the platform's webhook tells the app.
      await page.goto('/admin/products');
      const tote = page.locator('tr[data-product="1003"]');
      await tote.getByLabel('Title').fill('Canvas Tote, large');
      await tote.getByRole('button', { name: 'Save' }).click();
      await page.getByText('videoapp was told (products/update)').waitFor();
      await waitFor(
        async () => {
          const held = await (await admin(`/shops/${shop}/products`)).json();
          return held.products.some((p) => p.title === 'Canvas Tote, large');
        },
        { message: 'the renamed product in the app' },
      );

      // Uninstalled from the admin's Apps page, the app installs afresh when opened again.
      await page.goto('/admin/apps');
      await page.getByRole('button', { name: 'Uninstall' }).click();
      await page.getByText('videoapp was told (app/uninstalled)').waitFor();
      await waitFor(async () => (await admin(`/shops/${shop}`)).status === 404, { message: 'the shop uninstalled' });
      await page.goto('/admin');
      await pageHeading(page, 'Analytics').waitFor({ timeout: 30_000 });
      const reinstalled = await (await fetch(`${origin}/admin/stand-in/calls`)).json();
      assert.equal(reinstalled.tokenExchanges, 2, 'a new token for the reinstall');
      assert.equal(reinstalled.webPixelCreate.length, 2, 'the pixel, gone with the app, created again');
    } finally {
      if (merchant) await merchant.close();
      if (store) await store.stop();
      // The other stories' service again.
      await stopService();
      await startService();
      postgres(`DROP DATABASE IF EXISTS ${database}`);
    }
  });
});
