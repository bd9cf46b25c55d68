// The browser: Chromium driven by playwright-core, one context per shopper, and what the tests
// read from storefront pages.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium } from 'playwright-core';

import { config, waitFor } from './stack.mjs';

let browser = null;
/** Browsers that say they are another device, by user agent (see `newShopper`). */
const posing = new Map();

/**
 * How this machine runs Chromium: as root, without a GPU, and without the background traffic
 * that a closed network refuses. Shared with the storefront benchmark.
 */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/** A mid-range phone's screen: 412 × 915 CSS pixels, touch (a `device` for {@link newShopper}). */
export const PHONE = { viewport: { width: 412, height: 915 }, deviceScaleFactor: 2.625, isMobile: true, hasTouch: true };

/** The page as that phone has it: a slow 4G network and a 4× slower CPU. */
export async function throttleLikeAPhone(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 150,
    downloadThroughput: (1.6 * 1024 * 1024) / 8,
    uploadThroughput: (750 * 1024) / 8,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
}

export async function launchBrowser() {
  browser ??= await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: [...CHROMIUM_FLAGS, '--autoplay-policy=no-user-gesture-required'],
  });
  return browser;
}

/**
 * A browser whose own user agent is `userAgent`: every request it makes carries it, beacons
 * too, as on that device (a context's `userAgent` is applied to the page's requests, but not to
 * the beacons sent as a page is left).
 */
function browserPosingAs(userAgent) {
  if (!posing.has(userAgent)) {
    posing.set(
      userAgent,
      chromium.launch({
        executablePath: config.chromium,
        headless: true,
        args: [...CHROMIUM_FLAGS, '--autoplay-policy=no-user-gesture-required', `--user-agent=${userAgent}`],
      }),
    );
  }
  return posing.get(userAgent);
}

export async function closeBrowser() {
  await browser?.close();
  browser = null;
  for (const b of posing.values()) await (await b).close();
  posing.clear();
}

/**
 * Console errors and uncaught page errors seen on any page of any shopper, with the shopper's
 * label and the page's URL. The loader must never cause one (the story "the loader never breaks
 * the page" checks this list).
 */
export const pageProblems = [];

/**
 * Chromium reports a failed resource load (an error status, an aborted request) as a console
 * message of its own, from the network stack: the page's scripts neither write nor can prevent
 * it. Those are left out; anything a script logs or throws is kept.
 */
const isNetworkReport = (message) => message.type() === 'error' && /^Failed to load resource/.test(message.text());

function watchProblems(page, label) {
  page.on('console', (message) => {
    if (message.type() === 'error' && !isNetworkReport(message)) {
      pageProblems.push({ label, url: page.url(), kind: 'console error', text: message.text() });
    }
  });
  page.on('pageerror', (error) => {
    pageProblems.push({ label, url: page.url(), kind: 'page error', text: String((error && error.stack) || error) });
  });
}

/** Problems recorded for `label` so far. */
export const problemsOf = (label) => pageProblems.filter((p) => p.label === label);

/**
 * A shopper: a fresh browser context (its own cookies and storage) and one page in it.
 * Visible-card arithmetic in the tests relies on the viewport: 1280 × 800, unless `device`
 * gives another screen (Playwright's context options: `viewport`, `isMobile`, `hasTouch`, …).
 * A device's `userAgent` is its browser's own.
 */
export async function newShopper(label, { origin, device = {} } = {}) {
  const { userAgent, ...screen } = device;
  const b = await (userAgent ? browserPosingAs(userAgent) : launchBrowser());
  const context = await b.newContext({ viewport: { width: 1280, height: 800 }, ...screen, baseURL: origin });
  context.setDefaultTimeout(15_000);
  context.on('page', (page) => watchProblems(page, label));
  const page = await context.newPage();
  return { context, page, label, close: () => context.close() };
}

/** Waits until no slot on the page is loading any more; returns the slots' states. */
export async function slotsSettled(page) {
  await page.waitForFunction(() => {
    const slots = document.querySelectorAll('[data-videoapp-slot]');
    return slots.length > 0 && [...slots].every((s) => ['ready', 'empty'].includes(s.getAttribute('data-videoapp-state')));
  });
  return page.$$eval('[data-videoapp-slot]', (slots) => slots.map((s) => s.getAttribute('data-videoapp-state')));
}

/** The widgets rendered on the page, in order: `{ id, type, videos: [video id…] }`. */
export function renderedWidgets(page) {
  return page.$$eval('[data-videoapp-widget]', (roots) =>
    roots.map((root) => ({
      id: root.getAttribute('data-videoapp-widget'),
      type: root.getAttribute('data-videoapp-type'),
      videos: [...root.querySelectorAll('[data-videoapp-video]')].map((c) => c.getAttribute('data-videoapp-video')),
    })),
  );
}

/** The loader's stored event queue (`videoapp:queue`): the events, leased or not. */
export function storedQueue(page) {
  return page.evaluate(() => {
    try {
      return (JSON.parse(localStorage.getItem('videoapp:queue') || '[]') || []).map((i) => i.e);
    } catch {
      return [];
    }
  });
}

/** Waits until the loader's queue is empty: every event was acknowledged by the service. */
export function queueDrained(page, { timeout = 20_000 } = {}) {
  return waitFor(async () => (await storedQueue(page)).length === 0, {
    timeout,
    message: `the loader's queue on ${page.url()} to be sent and acknowledged`,
  });
}

/**
 * Watches, from outside the loader, which cards were ever at least half visible in this page
 * view (what makes an impression), as `"<widget id> <video id>"` strings in
 * `window.__e2eSeenCards`. Call before the page loads.
 */
export function recordVisibleCards(context) {
  return context.addInitScript(() => {
    const seen = (window.__e2eSeenCards = new Set());
    const io = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          if (e.intersectionRatio >= 0.5) {
            const card = e.target;
            const widget = card.closest('[data-videoapp-widget]');
            seen.add(`${widget && widget.getAttribute('data-videoapp-widget')} ${card.getAttribute('data-videoapp-video')}`);
          }
        }
      },
      { threshold: [0, 0.5, 1] },
    );
    const watched = new WeakSet();
    new MutationObserver(() => {
      for (const card of document.querySelectorAll('[data-videoapp-video]')) {
        if (!watched.has(card)) {
          watched.add(card);
          io.observe(card);
        }
      }
    }).observe(document, { childList: true, subtree: true });
  });
}

/** The cards seen at least half visible so far on this page: `[{ widget, video }]`. */
export async function visibleCards(page) {
  const seen = await page.evaluate(() => [...(window.__e2eSeenCards || [])]);
  return seen.map((s) => {
    const [widget, video] = s.split(' ');
    return { widget, video };
  });
}

/**
 * Opens the player by clicking a card, waits until its video has really played `seconds`
 * (counted by the loader: a `view` entry in its history), and returns the player element.
 */
export async function openAndWatch(page, widgetId, videoId, { seconds = 3 } = {}) {
  await page.click(`[data-videoapp-widget="${widgetId}"] [data-videoapp-video="${videoId}"]`);
  const player = page.locator(`[data-videoapp-player][data-videoapp-video-id="${videoId}"]`);
  await player.waitFor();
  if (seconds > 0) await playedFor(page, '[data-videoapp-player] video', seconds);
  return player;
}

/** Waits until the video matched by `selector` has played past `seconds` (+ a margin). */
export async function playedFor(page, selector, seconds) {
  await page
    .waitForFunction(
      ({ selector, seconds }) => {
        const v = document.querySelector(selector);
        return v && !v.paused && v.currentTime >= seconds + 0.3;
      },
      { selector, seconds },
      { timeout: (seconds + 12) * 1000 },
    )
    .catch(async (e) => {
      const state = await page.evaluate((selector) => {
        const v = document.querySelector(selector);
        return v && { src: v.currentSrc, paused: v.paused, time: v.currentTime, readyState: v.readyState, error: v.error && v.error.code };
      }, selector);
      throw new Error(`the video ${selector} did not play ${seconds} s: ${JSON.stringify(state)} (${e.message.split('\n')[0]})`);
    });
}

/** The views the loader recorded for the checkout pixel (`videoapp:history`). */
export function historyOf(page) {
  return page.evaluate(() => {
    try {
      return JSON.parse(localStorage.getItem('videoapp:history') || 'null') || { views: [], carts: [] };
    } catch {
      return { views: [], carts: [] };
    }
  });
}

/** Pays for the cart on the demo checkout; returns the thank-you page's order id once the pixel is done. */
export async function checkOut(page) {
  await page.goto('/checkout');
  await Promise.all([page.waitForURL(/\/checkout\/thank-you\//), page.click('[data-demo-pay]')]);
  await pixelDone(page);
  return page.textContent('[data-demo-order]');
}

/** Awaits the checkout pixel on a thank-you page (`window.videoappPixelDone`). */
export async function pixelDone(page) {
  await page.waitForFunction(() => window.videoappPixelDone !== undefined);
  await page.evaluate(() => window.videoappPixelDone);
}

/** Saves a screenshot of `target` (a page or a locator) as `name` in the artifacts directory. */
export async function screenshot(target, name) {
  mkdirSync(config.artifacts, { recursive: true });
  await target.screenshot({ path: path.join(config.artifacts, name) });
}

// ---------------------------------------------------------------------------------------------
// The merchant's dashboard

/**
 * Waits until nothing on a dashboard page loads any more: no skeleton, busy region, spinner or
 * table loading (a table keeps its hidden loading panel, which is shown by its "Entered" class),
 * and every image is in.
 */
export function dashboardSettled(page) {
  return page.waitForFunction(
    () =>
      !document.querySelector('.Polaris-SkeletonBodyText, [aria-busy="true"], .Polaris-IndexTable__LoadingPanelEntered') &&
      [...document.querySelectorAll('.Polaris-Spinner')].every((s) => s.closest('.Polaris-IndexTable__LoadingPanel')) &&
      [...document.images].every((img) => img.complete),
  );
}

/** The dashboard page's heading (Polaris' page title), which tells which page or form is open. */
export const pageHeading = (page, name) => page.getByRole('heading', { level: 1, name, exact: true });

/** Goes to one of the dashboard's pages by its link in the navigation. */
export async function goTo(page, name) {
  await page.getByRole('navigation', { name: 'videoapp' }).getByRole('link', { name, exact: true }).click();
  await pageHeading(page, name).waitFor();
  await dashboardSettled(page);
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
/** The impacts a page may not have: what the dashboard's pages are held to. */
const BLOCKING = ['serious', 'critical'];

/**
 * Runs axe-core on the whole document of a settled dashboard page and fails on a serious or
 * critical violation, naming each with its elements. Returns every violation, whatever its
 * impact, in short, for a report.
 */
export async function passesAxe(page, name) {
  await dashboardSettled(page);
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  const { violations } = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const blocking = violations.filter((v) => BLOCKING.includes(v.impact));
  const described = blocking.map(
    (v) =>
      `  ${v.impact} ${v.id}: ${v.help}\n` +
      v.nodes.map((n) => `    ${n.target.join(' ')}: ${n.failureSummary.replace(/\s*\n\s*/g, ' ')}`).join('\n'),
  );
  assert.equal(blocking.length, 0, `axe-core finds serious or critical violations on ${name}:\n${described.join('\n')}`);
  return violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/**
 * The merchant: a browser at the store's admin, which opens the dashboard of its shop. The home
 * page's first open asks for its totals and its chart, once each (boot.js asks before the page is
 * drawn and the page takes those answers), and for nothing else of the analytics; the shop is
 * read once. The caller closes the merchant's context. `device` as for {@link newShopper}.
 */
export async function openDashboard(shop, label, { device } = {}) {
  const merchant = await newShopper(`dashboard: ${label}`, { origin: shop.origin, device });
  const { page } = merchant;
  const shopReads = [];
  const analyticsReads = [];
  const shopPath = `/app/api/shops/${shop.shop}`;
  const onRequest = (r) => {
    const { pathname } = new URL(r.url());
    if (pathname === shopPath) shopReads.push(r.method());
    if (pathname.startsWith('/app/api/analytics/') && !/^\/app\/api\/analytics\/(videos|widgets)$/.test(pathname)) {
      analyticsReads.push(pathname);
    }
  };
  page.on('request', onRequest);
  await page.goto(shop.admin);
  assert.equal(new URL(page.url()).pathname, '/app', `the admin opens the dashboard, not ${page.url()}`);
  assert.equal(new URL(page.url()).searchParams.get('shop'), shop.shop);
  await pageHeading(page, 'Analytics').waitFor();
  await dashboardSettled(page);
  page.off('request', onRequest);
  assert.deepEqual(analyticsReads.sort(), ['/app/api/analytics/summary', '/app/api/analytics/timeseries']);
  // A seeded shop has no platform to install from: the install fails, and the shop read beside
  // it is the one shown, not asked for again.
  assert.deepEqual(shopReads, ['GET'], 'the shop is read once as the dashboard opens');
  return merchant;
}
