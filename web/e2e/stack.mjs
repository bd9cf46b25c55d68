// The stack under test: one videoapp service, one demo store per shop (which also stands in for
// the platform's admin, opening the merchant dashboard), the admin API to seed shops, the
// analytics API and ClickHouse to read results, and waiting for conditions.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { isDeepStrictEqual } from 'node:util';

const env = process.env;

/** Settings, from the environment (defaults fit a machine set up by scripts/lib.sh). */
export const config = {
  databaseUrl: env.VIDEOAPP_E2E_DATABASE_URL || 'postgres://videoapp:videoapp@127.0.0.1:54329/videoapp_e2e',
  clickhouseUrl: (env.VIDEOAPP_E2E_CLICKHOUSE_URL || 'http://127.0.0.1:18123').replace(/\/+$/, ''),
  clickhouseDatabase: `test_browser_${randomBytes(6).toString('hex')}`,
  bin: path.resolve(env.VIDEOAPP_BIN || 'target/debug/videoapp'),
  chromium: env.CHROMIUM || '/usr/bin/chromium',
  artifacts: path.resolve(env.VIDEOAPP_E2E_ARTIFACTS || '.data/browser-artifacts'),
  extensions: path.resolve('extensions'),
  proxySecret: randomBytes(32).toString('hex'),
  adminToken: randomBytes(24).toString('hex'),
  // The platform settings, which the dashboard needs: the app's client id (the demo stores mint
  // session tokens for it) and the key that seals the shops' access tokens.
  clientId: 'videoapp-e2e',
  tokenKey: randomBytes(32).toString('hex'),
  dashboardDir: path.resolve('web/dist/dashboard'),
};

const hex = (bytes) => randomBytes(bytes).toString('hex');

/** A shop domain of its own for one test, so its counts never mix with another's. */
export const shopDomain = (name) => `e2e-${name}-${hex(4)}.myshopify.com`;

// ---------------------------------------------------------------------------------------------
// Child processes

const children = new Set();

/**
 * Starts `bin args` and resolves with the fields of its first JSON log line whose message is
 * `ready` (the line that tells where it listens). Everything it prints goes to `logName` in the
 * artifacts directory.
 */
function startChild(args, childEnv, ready, logName) {
  mkdirSync(config.artifacts, { recursive: true });
  const logPath = path.join(config.artifacts, logName);
  const log = createWriteStream(logPath);
  const lastLines = [];
  const child = spawn(config.bin, args, { env: { ...env, ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.exited.then(() => {
    children.delete(child);
    log.end();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`did not log "${ready}" within 60 s`), 60_000);
    const fail = (why) => {
      clearTimeout(timer);
      stopChild(child);
      const tail = lastLines.map((l) => `\n  ${l}`).join('');
      reject(new Error(`${path.basename(config.bin)} ${args[0]} ${why}; its log (${logPath}) ends:${tail}`));
    };
    child.once('error', (e) => fail(`could not be started (${e.message})`));
    child.exited.then(({ code, signal }) => fail(`exited (code ${code}, signal ${signal}) before it was ready`));
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        log.write(line + '\n');
        lastLines.push(line);
        if (lastLines.length > 5) lastLines.shift();
        let entry;
        try {
          entry = JSON.parse(line);
        } catch {
          return;
        }
        const fields = { ...entry, ...entry.fields };
        if (fields.message === ready) {
          clearTimeout(timer);
          resolve({ child, fields });
        }
      });
    }
  });
}

/** SIGTERM, then wait for the exit (SIGKILL after 15 s). */
export async function stopChild(child) {
  if (!children.has(child)) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await child.exited;
  clearTimeout(killer);
}

export async function stopAll() {
  await Promise.all([...children].map(stopChild));
}

// Whatever happens, no child outlives the runner.
process.on('exit', () => {
  for (const child of children) child.kill('SIGTERM');
});

// ---------------------------------------------------------------------------------------------
// The service

let service = null;
let spoolDir = null;
let mediaDir = null;

/** The running service: `{ base, metrics }`. */
export function theService() {
  if (!service) throw new Error('the service is not running (web/e2e/run.mjs starts it)');
  return service;
}

/**
 * Starts the one service. `overrides` change its environment; a `null` leaves a setting unset, so
 * the service's own default applies (the tests ship small batches fast; a benchmark may not).
 */
export async function startService(overrides = {}) {
  // The logs of an earlier run's demo stores (one file per store) would pile up.
  mkdirSync(config.artifacts, { recursive: true });
  for (const file of readdirSync(config.artifacts)) {
    if (/^store-.*\.log$/.test(file)) rmSync(path.join(config.artifacts, file), { force: true });
  }
  spoolDir = mkdtempSync(path.join(tmpdir(), 'videoapp-e2e-spool-'));
  // Uploaded and processed videos: the service's own directory store, served at its /media.
  mediaDir = mkdtempSync(path.join(tmpdir(), 'videoapp-e2e-media-'));
  const serviceEnv = {
    DATABASE_URL: config.databaseUrl,
    CLICKHOUSE_URL: config.clickhouseUrl,
    CLICKHOUSE_DATABASE: config.clickhouseDatabase,
    VIDEOAPP_LISTEN: '127.0.0.1:0',
    VIDEOAPP_METRICS_LISTEN: '127.0.0.1:0',
    VIDEOAPP_PROXY_SECRET: config.proxySecret,
    VIDEOAPP_ADMIN_TOKEN: config.adminToken,
    VIDEOAPP_CLIENT_ID: config.clientId,
    VIDEOAPP_TOKEN_KEY: config.tokenKey,
    // The shops seeded through the admin API have no platform: the dashboard's install finds none
    // here (a closed loopback port, never a real shop's domain) and opens them all the same. The
    // install story starts a service whose platform is its demo store.
    VIDEOAPP_PLATFORM_ORIGIN: 'http://127.0.0.1:9',
    VIDEOAPP_DASHBOARD_DIR: config.dashboardDir,
    VIDEOAPP_SPOOL_DIR: spoolDir,
    VIDEOAPP_MEDIA_DIR: mediaDir,
    VIDEOAPP_BATCH_MAX_AGE_MS: '100',
    VIDEOAPP_LOG_FORMAT: 'json',
    RUST_LOG: 'info',
    ...overrides,
  };
  for (const [name, value] of Object.entries(serviceEnv)) if (value === null) delete serviceEnv[name];
  const { child, fields } = await startChild(['serve'], serviceEnv, 'videoapp serving', 'service.log');
  service = { child, base: `http://${fields.listen}`, metrics: `http://${fields.metrics}` };
  await waitFor(async () => (await fetch(`${service.base}/readyz`).catch(() => null))?.status === 200, {
    timeout: 60_000,
    message: `the service at ${service.base} did not become ready (/readyz)`,
  });
  return service;
}

export async function stopService() {
  if (service) await stopChild(service.child);
  service = null;
  for (const dir of [spoolDir, mediaDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  spoolDir = null;
  mediaDir = null;
}

// ---------------------------------------------------------------------------------------------
// Demo stores

/**
 * Starts a demo store for `shop`, forwarding its app proxy to the service. `proxySecret`
 * defaults to the service's own; another one makes every proxied request fail its signature.
 * With the app's client id it also stands in for the admin (`/admin` opens the dashboard) and
 * for the platform's endpoints an install calls, with a demo catalog of its own. `listen` and
 * `databaseUrl` default to any free port and the suite's database.
 */
export async function startStore(
  shop,
  { proxySecret = config.proxySecret, listen = '127.0.0.1:0', databaseUrl = config.databaseUrl } = {},
) {
  const { child, fields } = await startChild(
    ['dev-store', '--shop', shop, '--listen', listen, '--upstream', theService().base, '--extensions-dir', config.extensions],
    {
      DATABASE_URL: databaseUrl,
      VIDEOAPP_PROXY_SECRET: proxySecret,
      VIDEOAPP_CLIENT_ID: config.clientId,
      VIDEOAPP_LOG_FORMAT: 'json',
      RUST_LOG: 'info',
    },
    'demo store serving',
    `store-${shop}-${hex(2)}.log`,
  );
  return { shop, child, origin: `http://${fields.listen}`, stop: () => stopChild(child) };
}

// ---------------------------------------------------------------------------------------------
// HTTP

async function request(method, url, { token, body, expect = [200] } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!expect.includes(response.status)) {
    throw new Error(`${method} ${url} answered ${response.status}, expected ${expect.join(' or ')}: ${text}`);
  }
  return text ? JSON.parse(text) : null;
}

const admin = (method, pathname, body, expect) =>
  request(method, `${theService().base}/admin/v1${pathname}`, { token: config.adminToken, body, expect });

// ---------------------------------------------------------------------------------------------
// Seeding

/** The UTC calendar day (`YYYY-MM-DD`) `days` days after `now`: a seeded shop's days are UTC. */
export const utcDay = (days = 0, now = Date.now()) => new Date(now + days * 86_400_000).toISOString().slice(0, 10);

/** The demo catalog: three products in two collections (prices 11.90, 12.90, 13.90). */
export const PRODUCTS = [
  { number: 1001, title: 'Linen Shirt', handle: 'linen-shirt', collections: [501] },
  { number: 1002, title: 'Summer Dress', handle: 'summer-dress', collections: [501, 502] },
  { number: 1003, title: 'Canvas Tote', handle: 'canvas-tote', collections: [502] },
];

export const productGid = (number) => `gid://shopify/Product/${number}`;
export const collectionGid = (number) => `gid://shopify/Collection/${number}`;
/** The demo store's fixed price of a product, in cents (1001 → 1190). */
export const priceCents = (number) => ((number % 50) + 10) * 100 + 90;

/**
 * A seeded shop: the shop, its products and an analytics key. Its demo store is started first,
 * since the media and product URLs are on the store's origin.
 */
export async function newShop(name) {
  const shop = shopDomain(name);
  const store = await startStore(shop);
  const o = store.origin;
  await admin('PUT', `/shops/${shop}`, { name: `E2E ${name}`, timezone: 'UTC', currency: 'USD' }, [200, 201]);
  await admin(
    'PUT',
    `/shops/${shop}/products`,
    {
      products: PRODUCTS.map((p) => ({
        id: productGid(p.number),
        title: p.title,
        handle: p.handle,
        image: `${o}/media/product-${p.number}.svg`,
        url: `${o}/products/${p.handle}`,
        collectionIds: p.collections.map(collectionGid),
      })),
    },
    [200, 201, 204],
  );
  const { key } = await admin('POST', `/shops/${shop}/api-keys`, { name: 'e2e' }, [201]);
  return shopHandle(shop, store, key);
}

/** A loopback port nothing listens on now, for a demo store the service must know in advance. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * A shop installed as a merchant installs it: the service is started afresh with this shop's demo
 * store as its platform, and the app installed through the token exchange (the dashboard's first
 * call) until its products are imported. `overrides` are the service's, as in startService.
 */
export async function installedShop(name, overrides = {}) {
  const shop = shopDomain(name);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  await stopService();
  await startService({ ...overrides, VIDEOAPP_PLATFORM_ORIGIN: origin });
  const store = await startStore(shop, { listen: `127.0.0.1:${port}` });
  const install = async () => {
    const token = await (await fetch(`${origin}/admin/session-token`)).text();
    return request('POST', `${theService().base}/app/api/install`, { token, body: {} });
  };
  await waitFor(async () => !(await install()).importing, { timeout: 30_000, message: `the install of ${shop}` });
  const { key } = await admin('POST', `/shops/${shop}/api-keys`, { name: 'e2e' }, [201]);
  return shopHandle(shop, store, key);
}

/** What a test does with one shop and its demo store, through the admin and analytics APIs. */
function shopHandle(shop, store, key) {
  const o = store.origin;
  return {
    shop,
    store,
    origin: o,
    key,
    /** Changes the shop's settings (`PUT /admin/v1/shops/{shop}`: absent fields are kept). */
    settings: (fields) => admin('PUT', `/shops/${shop}`, fields, [200]),
    /** A video on demo media N (1..3) → its id. */
    async video({ media, title, status = 'PUBLISHED', products = [] }) {
      const { id } = await admin(
        'POST',
        `/shops/${shop}/videos`,
        {
          title,
          thumbnail: `${o}/media/demo-${media}.svg`,
          videoUrl: `${o}/media/demo-${media}.webm`,
          miniVersionUrl: `${o}/media/demo-${media}-mini.webm`,
          duration: 6,
          status,
          productIds: products.map(productGid),
        },
        [201],
      );
      return id;
    },
    /** Attaches WebVTT `text` to the video `id` as its captions in `language`. */
    async captions(id, language, text) {
      const url = `${theService().base}/admin/v1/shops/${shop}/videos/${id}/captions/${language}`;
      const response = await fetch(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'text/vtt' },
        body: text,
      });
      if (!response.ok) throw new Error(`PUT ${url} answered ${response.status}: ${await response.text()}`);
      return response.json();
    },
    /** The video `id` as the admin API gives it. */
    getVideo: (id) => admin('GET', `/shops/${shop}/videos/${id}`),
    /** An analytics API key named `name` → its id; revoked at once with `revoked`. */
    async apiKey(name, { revoked = false } = {}) {
      const { id } = await admin('POST', `/shops/${shop}/api-keys`, { name }, [201]);
      if (revoked) await admin('DELETE', `/shops/${shop}/api-keys/${id}`, undefined, [200, 204]);
      return id;
    },
    /** A widget (the admin API's NewWidget) → its id. */
    async widget(fields) {
      const { id } = await admin(
        'POST',
        `/shops/${shop}/widgets`,
        {
          status: 'active',
          priority: 0,
          viewStyle: 'default',
          clickBehavior: 'open_modal',
          modalLayout: 'vertical',
          sourceType: 'manual',
          ...fields,
        },
        [201],
      );
      return id;
    },
    /**
     * `GET /api/v1/analytics/<pathname>` → `data`, for today (UTC, the shop's timezone) unless
     * `query` gives other `start_date`, `end_date` or more parameters.
     */
    async analytics(pathname, query = {}) {
      const today = utcDay();
      const q = new URLSearchParams({ start_date: today, end_date: today, ...query });
      const answer = await request('GET', `${theService().base}/api/v1/analytics/${pathname}?${q}`, { token: key });
      return answer.data;
    },
    /**
     * Records shopper events (the service's IncomingEvent objects) as the loader sends them:
     * through the demo store's app proxy, which signs them. Resolves once they are durable.
     */
    async record(events) {
      const response = await fetch(`${o}/apps/videoapp_sub/analytics`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      });
      if (response.status !== 202) {
        throw new Error(`recording ${events.length} events answered ${response.status}: ${await response.text()}`);
      }
    },
    /** Where the merchant opens the dashboard: the demo store's stand-in for the admin. */
    admin: `${o}/admin`,
    /** The shop's events in ClickHouse. */
    events: () => shopEvents(shop),
    /** How many events of each type the shop has in ClickHouse. */
    counts: () => eventCounts(shop),
    stop: () => store.stop(),
  };
}

// ---------------------------------------------------------------------------------------------
// ClickHouse

/** Runs `sql` (without FORMAT) in the service's ClickHouse database → rows. */
export async function clickhouse(sql) {
  const url = `${config.clickhouseUrl}/?database=${encodeURIComponent(config.clickhouseDatabase)}`;
  const response = await fetch(url, { method: 'POST', body: `${sql} FORMAT JSONEachRow` });
  const text = await response.text();
  if (!response.ok) throw new Error(`ClickHouse answered ${response.status} to ${sql}: ${text}`);
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

const quote = (s) => `'${String(s).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function shopEvents(shop) {
  return clickhouse(
    `SELECT event_type, attribution, video_id, widget_id, product_id, order_id, revenue_e4, customer_id, watched_ms, max_percent
     FROM events WHERE shop_domain = ${quote(shop)} ORDER BY event_time, event_type`,
  );
}

export const EVENT_TYPES = ['impression', 'click', 'view', 'add_to_cart', 'checkout_completed', 'watch'];

/** `{ impression, click, view, add_to_cart, checkout_completed, watch }` for the shop (0 when none). */
export async function eventCounts(shop, where = '') {
  const rows = await clickhouse(
    `SELECT toString(event_type) AS type, count() AS n FROM events
     WHERE shop_domain = ${quote(shop)} ${where ? `AND ${where}` : ''} GROUP BY type`,
  );
  const counts = Object.fromEntries(EVENT_TYPES.map((t) => [t, 0]));
  for (const row of rows) counts[row.type] = Number(row.n);
  return counts;
}

// ---------------------------------------------------------------------------------------------
// Waiting for conditions

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `probe` until it returns something truthy (which is returned) or `timeout` ms pass
 * (then fails with `message` and the last value or error).
 */
export async function waitFor(probe, { timeout = 15_000, interval = 200, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeout} ms waiting for ${message}; last: ${detail}`);
    }
    await sleep(interval);
  }
}

/**
 * Waits until `read()` equals `expected`, then keeps reading for `hold` ms to make sure it stays
 * there (nothing counted twice, nothing late). Fails with both values.
 */
export async function settlesAt(read, expected, { timeout = 15_000, hold = 2_500, interval = 250, message = 'value' } = {}) {
  const deadline = Date.now() + timeout;
  let actual;
  for (;;) {
    actual = await read();
    if (isDeepStrictEqual(actual, expected)) break;
    if (Date.now() >= deadline) {
      throw new Error(`${message}: expected ${JSON.stringify(expected)}, still ${JSON.stringify(actual)} after ${timeout} ms`);
    }
    await sleep(interval);
  }
  const until = Date.now() + hold;
  while (Date.now() < until) {
    await sleep(interval);
    actual = await read();
    if (!isDeepStrictEqual(actual, expected)) {
      throw new Error(`${message}: reached ${JSON.stringify(expected)}, then changed to ${JSON.stringify(actual)}`);
    }
  }
  return actual;
}

/** `settlesAt` for a shop's event counts in ClickHouse; `expected` names the non-zero types. */
export function countsSettleAt(shop, expected, options = {}) {
  const full = Object.fromEntries(EVENT_TYPES.map((t) => [t, expected[t] || 0]));
  return settlesAt(() => eventCounts(shop), full, { message: `events of ${shop} in ClickHouse`, ...options });
}
