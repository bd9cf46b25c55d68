// Story 8: a video from a file. A merchant drops a phone video into the dashboard; it uploads and
// is processed until it is ready; the merchant links a product and puts it in a widget, publishing
// it from there. A shopper on a phone, over a slow 4G network, taps it on the store: it plays, its
// impression, click and view are counted, and once the player is closed nothing more of the
// video is downloaded.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';

import { goTo, historyOf, newShopper, pageHeading, queueDrained, screenshot, slotsSettled } from './browser.mjs';
import { countsSettleAt, newShop, settlesAt, waitFor } from './stack.mjs';

const run = promisify(execFile);

const FILE_NAME = 'phone-video.mp4';
/** The title the dashboard gives an upload: its file name without the extension. */
const TITLE = 'phone-video';
const PRODUCT = 'Linen Shirt';

/** A phone's screen, held upright. */
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true };

/** Lighthouse's mobile network ("slow 4G"): 150 ms round trips, 1.6 Mbit/s down, 750 kbit/s up. */
const SLOW_4G = {
  offline: false,
  latency: 150,
  downloadThroughput: (1.6 * 1024 * 1024) / 8,
  uploadThroughput: (750 * 1024) / 8,
};

/** How long a 6-second phone video may take to be processed on a busy test machine. */
const PROCESSING_MS = 180_000;

/** 6 s of a 540 × 960 (portrait) H.264 video with AAC sound, as a phone records it. */
async function phoneVideo(dir) {
  const file = path.join(dir, FILE_NAME);
  await run('ffmpeg', [
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=540x960:rate=30',
    '-f',
    'lavfi',
    '-i',
    'sine',
    '-t',
    '6',
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    file,
  ]);
  return file;
}

/**
 * Every request the page makes, with the bytes received for it, read from the browser's network
 * stack (so a `<video>`'s own range and segment requests count too).
 */
async function watchNetwork(page, conditions) {
  const cdp = await page.context().newCDPSession(page);
  const loads = new Map();
  cdp.on('Network.requestWillBeSent', (e) => {
    if (!loads.has(e.requestId)) loads.set(e.requestId, { url: e.request.url, bytes: 0, open: true });
  });
  cdp.on('Network.dataReceived', (e) => {
    const load = loads.get(e.requestId);
    if (load) load.bytes += e.dataLength;
  });
  for (const ended of ['Network.loadingFinished', 'Network.loadingFailed']) {
    cdp.on(ended, (e) => {
      const load = loads.get(e.requestId);
      if (load) load.open = false;
    });
  }
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', conditions);
  return { loads: () => [...loads.values()] };
}

describe('A video from a file', () => {
  let dir;
  let shop;
  const open = [];
  let videoId;
  let widgetId;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'videoapp-e2e-file-'));
    shop = await newShop('from-a-file');
  });

  after(async () => {
    for (const thing of open.reverse()) await thing.close();
    await shop?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is uploaded from the dashboard, processed, linked to a product, put in a widget and published', async () => {
    const file = await phoneVideo(dir);
    const merchant = await newShopper('video from a file: merchant', { origin: shop.origin });
    open.push(merchant);
    const { page } = merchant;
    await page.goto(shop.admin);
    await pageHeading(page, 'Analytics').waitFor();

    // Dropped on the drop zone: its file input takes the file as a drop does.
    await goTo(page, 'Videos');
    await page.getByRole('button', { name: 'Add videos', exact: true }).first().click();
    await pageHeading(page, 'Add videos').waitFor();
    const created = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/uploads'));
    await page.locator('input[type="file"]').setInputFiles(file);
    const creation = await created;
    assert.equal(creation.status(), 201, `the upload's creation answered ${creation.status()}: ${await creation.text()}`);
    const row = page.locator('li[data-upload="file"]').filter({ hasText: FILE_NAME });
    await waitFor(async () => (await row.getAttribute('data-upload-state')) === 'done', {
      timeout: 60_000,
      message: `the upload of ${FILE_NAME} to finish`,
    });
    videoId = await row.getAttribute('data-video-id');
    assert.match(videoId || '', /^[0-9a-f-]{36}$/i, `the upload names its video: ${videoId}`);

    // Processing, followed on the page until the video is ready.
    const shown = new Set();
    await waitFor(
      async () => {
        const state = await row
          .locator('[data-processing-state]')
          .getAttribute('data-processing-state', { timeout: 1_000 })
          .catch(() => null);
        if (state) shown.add(state);
        if (state === 'failed') throw new Error(`processing failed: ${await row.innerText()}`);
        return state === 'ready';
      },
      { timeout: PROCESSING_MS, interval: 500, message: `${TITLE} to be processed (states shown: ${[...shown].join(', ')})` },
    );
    console.error(`  processing states shown: ${[...shown].join(' → ')}`);
    // Processed, and still a draft: the row offers to publish it (done from the widget below).
    await row.getByRole('button', { name: `Publish ${TITLE}`, exact: true }).waitFor();
    await screenshot(page, 'video-from-a-file-added.png');

    const ready = await shop.getVideo(videoId);
    assert.equal(ready.processing?.state, 'ready');
    assert.deepEqual({ width: ready.width, height: ready.height }, { width: 540, height: 960 }, 'the facts of the file');
    for (const field of ['videoUrl', 'miniVersionUrl', 'hlsUrl', 'posterUrl']) {
      assert.match(ready[field] || '', /^https?:\/\//, `the ready video has its ${field}`);
    }

    // The merchant picks the poster's frame, and links a product.
    await row.getByRole('button', { name: `Edit ${TITLE}`, exact: true }).click();
    await pageHeading(page, `Edit ${TITLE}`).waitFor();
    const player = page.locator('video.vd-poster-player');
    await page.waitForFunction(() => document.querySelector('video.vd-poster-player')?.readyState >= 1, null, { timeout: 30_000 });
    await player.evaluate((v) => {
      v.currentTime = 2;
    });
    await page.waitForFunction(() => {
      const v = document.querySelector('video.vd-poster-player');
      return v && !v.seeking && Math.abs(v.currentTime - 2) < 0.01;
    });
    const posterAsked = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith(`/videos/${videoId}/poster`));
    const posterAnswered = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/videos/${videoId}/poster`));
    await page.getByRole('button', { name: /^Use this frame/ }).click();
    assert.deepEqual((await posterAsked).postDataJSON(), { atMs: 2000 }, 'the frame the player shows is the one asked for');
    assert.equal((await posterAnswered).status(), 202);
    await page.getByText('The frame at 0:02.0', { exact: true }).waitFor({ timeout: PROCESSING_MS });
    const withPoster = await shop.getVideo(videoId);
    assert.equal(withPoster.posterTimeMs, 2000, 'the service made the poster from 2 s in');
    assert.notEqual(withPoster.posterUrl, ready.posterUrl, 'a new poster has a new name');
    await waitFor(async () => (await shop.getVideo(videoId)).processing?.state === 'ready', {
      timeout: PROCESSING_MS,
      message: `${TITLE} to be ready with its new poster`,
    });

    await page.getByRole('checkbox', { name: PRODUCT, exact: true }).check();
    const linked = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/videos/${videoId}`));
    await page.getByRole('button', { name: 'Save video', exact: true }).click();
    assert.equal((await linked).status(), 200);
    await pageHeading(page, 'Videos').waitFor();

    // A carousel on the home page, with the video.
    await goTo(page, 'Widgets');
    await page.getByRole('button', { name: 'Create widget' }).first().click();
    await pageHeading(page, 'Create a widget').waitFor();
    await page.getByLabel('Title', { exact: true }).fill('From a phone');
    await page.getByLabel('Type', { exact: true }).selectOption('carousel');
    await page.getByLabel('Status', { exact: true }).selectOption('active');
    await page.getByLabel('Video to add', { exact: true }).selectOption(videoId);
    await page.getByRole('button', { name: 'Add video', exact: true }).click();
    // The video is a draft: the form says so, and publishes it there.
    await page.getByText('Not shown in your store until published').waitFor();
    const published = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/videos/${videoId}`));
    await page.getByRole('button', { name: `Publish ${TITLE}`, exact: true }).click();
    const answer = await published;
    assert.equal(answer.status(), 200, `publishing answered ${answer.status()}: ${await answer.text()}`);
    await page.getByText('Not shown in your store until published').waitFor({ state: 'detached' });
    await page.getByRole('checkbox', { name: 'Home page', exact: true }).check();
    const saved = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/widgets'));
    await page.getByRole('button', { name: 'Create widget', exact: true }).click();
    const widget = await saved;
    assert.equal(widget.status(), 201, `creating the widget answered ${widget.status()}: ${await widget.text()}`);
    widgetId = (await widget.json()).id;
    await pageHeading(page, 'Widgets').waitFor();

    const held = await shop.getVideo(videoId);
    assert.deepEqual(
      { status: held.status, productIds: held.productIds },
      { status: 'PUBLISHED', productIds: ['gid://shopify/Product/1001'] },
    );
  });

  it('plays on a phone over slow 4G when tapped, is counted, and downloads nothing more once closed', async (t) => {
    if (!videoId || !widgetId) return t.skip('needs the published video');
    const media = await shop.getVideo(videoId);
    /** The full video: its renditions and its MP4, not its poster nor its mini version. */
    const isFullVideo = (url) =>
      url.includes(`/${videoId}/`) && url !== media.miniVersionUrl && !/\.(jpe?g|webp|png|avif)(\?|$)/i.test(url);

    const shopper = await newShopper('video from a file: shopper on a phone', { origin: shop.origin, device: PHONE });
    open.push(shopper);
    const { page } = shopper;
    const network = await watchNetwork(page, SLOW_4G);
    const fullVideoLoads = () => network.loads().filter((l) => isFullVideo(l.url));

    const answered = page.waitForResponse((r) => r.url().includes('/apps/videoapp_sub/contextual-widgets'), { timeout: 60_000 });
    await page.goto('/', { timeout: 60_000 });
    // Widgets are asked for once their slot nears the screen.
    await page.locator('[data-videoapp-slot]').first().scrollIntoViewIfNeeded();
    await slotsSettled(page);
    const card = page.locator(`[data-videoapp-widget="${widgetId}"] [data-videoapp-video="${videoId}"]`);
    await card.scrollIntoViewIfNeeded();
    const storefront = (await (await answered).json()).widgets.find((w) => w.id === widgetId)?.videos?.[0];
    assert.deepEqual(
      { hlsUrl: storefront?.hlsUrl, posterUrl: storefront?.posterUrl, videoUrl: storefront?.videoUrl },
      { hlsUrl: media.hlsUrl, posterUrl: media.posterUrl, videoUrl: media.videoUrl },
      'the storefront gives the loader the renditions, the poster and the MP4',
    );

    // The card: the poster, then the mini version while it is on screen.
    assert.equal(await card.locator('img').getAttribute('src'), media.posterUrl, 'the card shows the poster');
    await page.waitForFunction(
      (mini) => {
        const preview = document.querySelector('video.videoapp-preview');
        return preview && preview.getAttribute('src') === mini && !preview.paused;
      },
      media.miniVersionUrl,
      { timeout: 60_000 },
    );
    // Ahead of a tap, the loader reads the renditions' playlists, the init segment of the rung
    // sized for this screen (540 at 390 CSS px) and the first quarter second of its first segment
    // (its box headers, then the rest of that fragment): a tap then waits for no request.
    const streams = await page.evaluate(() => !!window.MediaSource);
    const hlsBase = media.hlsUrl.replace(/master\.m3u8$/, '');
    const readAhead = () => fullVideoLoads().filter((l) => l.url.endsWith('/540/seg-000.m4s'));
    if (streams)
      await waitFor(() => readAhead().length === 2 && readAhead().every((l) => !l.open), {
        message: 'the first quarter second of the 540 rung to be read ahead of a tap',
      });
    assert.deepEqual(
      fullVideoLoads()
        .map((l) => l.url.replace(hlsBase, '').replace(/init[^/]*\.mp4$/, 'init.mp4'))
        .sort(),
      streams ? ['540/init.mp4', '540/playlist.m3u8', '540/seg-000.m4s', '540/seg-000.m4s', 'master.m3u8'] : [],
      'before a tap: the playlists and the init segment of the rung for this screen, and its first fragment',
    );
    if (streams) {
      const ahead = readAhead().reduce((sum, l) => sum + l.bytes, 0);
      const whole = Number((await fetch(`${hlsBase}540/seg-000.m4s`, { method: 'HEAD' })).headers.get('content-length'));
      assert.ok(ahead > 4096 && ahead < whole / 2, `the first quarter second only, not the 2 s segment: ${ahead} of ${whole} B`);
    }

    await card.tap();
    const selector = `[data-videoapp-player][data-videoapp-video-id="${videoId}"] video`;
    await page.locator(selector).waitFor();
    await page
      .waitForFunction(
        (s) => {
          const v = document.querySelector(s);
          return v && !v.paused && v.currentTime >= 3.3;
        },
        selector,
        { timeout: 60_000 },
      )
      .catch(async (e) => {
        const state = await page.$eval(selector, (v) => ({
          src: v.currentSrc,
          time: v.currentTime,
          paused: v.paused,
          ready: v.readyState,
          error: v.error && v.error.code,
        }));
        throw new Error(`the video did not play 3 s after the tap: ${JSON.stringify(state)} (${e.message.split('\n')[0]})`);
      });
    const fetched = fullVideoLoads().map((l) => l.url.replace(hlsBase, ''));
    if (streams) {
      assert.match(await page.$eval(selector, (v) => v.currentSrc), /^blob:/, 'the renditions are streamed');
      assert.ok(
        fetched.some((u) => /^540\/seg-000\.m4s$/.test(u)),
        `the 540 rung's segments are played: ${fetched}`,
      );
      assert.deepEqual(
        fetched.filter((u) => !u.startsWith('540/') && u !== 'master.m3u8'),
        [],
        'no other rung nor the MP4 is fetched',
      );
    } else {
      assert.equal(await page.$eval(selector, (v) => v.currentSrc), media.videoUrl, 'a browser without streaming plays the MP4');
    }
    await waitFor(async () => (await historyOf(page)).views?.some((v) => v.videoId === videoId), {
      message: 'the view (3 s of playback) to be recorded',
    });
    assert.ok(
      fullVideoLoads().some((l) => l.bytes > 0),
      'the full video was downloaded while it played',
    );
    await screenshot(page, 'video-from-a-file-playing.png');

    // A seek back to the start, then to the last segment: the player plays on from each.
    for (const at of [0.5, 4.5]) {
      await page.$eval(selector, (v, t) => (v.currentTime = t), at);
      await page
        .waitForFunction(
          ([s, t]) => {
            const v = document.querySelector(s);
            return v && !v.paused && !v.seeking && v.currentTime >= t + 0.5;
          },
          [selector, at],
          { timeout: 60_000 },
        )
        .catch(async (e) => {
          const state = await page.$eval(selector, (v) => ({
            time: v.currentTime,
            paused: v.paused,
            ready: v.readyState,
            error: v.error && v.error.code,
          }));
          throw new Error(`the video did not play on after a seek to ${at} s: ${JSON.stringify(state)} (${e.message.split('\n')[0]})`);
        });
    }

    // Closed: the player drops its source, and the video's downloads stop for good.
    const played = await page.$(selector);
    const openAtClose = fullVideoLoads().filter((l) => l.open).length;
    await page.locator('[data-videoapp-player]').getByRole('button', { name: 'Close', exact: true }).tap();
    await page.locator(selector).waitFor({ state: 'detached' });
    assert.deepEqual(
      await played.evaluate((v) => ({
        src: v.getAttribute('src'),
        paused: v.paused,
        loading: v.networkState === v.NETWORK_LOADING || v.networkState === v.NETWORK_IDLE,
      })),
      { src: null, paused: true, loading: false },
      'the closed player has no source left, so it neither loads nor holds a connection',
    );
    await waitFor(() => fullVideoLoads().every((l) => !l.open), {
      timeout: 10_000,
      message: "the video's downloads to end once the player closed",
    });
    const downloaded = () => {
      const loads = fullVideoLoads();
      return { requests: loads.length, bytes: loads.reduce((sum, l) => sum + l.bytes, 0) };
    };
    const atClose = downloaded();
    console.error(`  full video: ${atClose.requests} requests, ${atClose.bytes} bytes; ${openAtClose} still loading at the close`);
    await settlesAt(downloaded, atClose, { hold: 3_000, message: 'requests and bytes of the video after the player closed' });

    // Counted once each: the card's impression, the tap, the view, and the watch the close sent.
    await page.evaluate(() => window.videoapp.flush());
    await queueDrained(page, { timeout: 60_000 });
    await countsSettleAt(shop.shop, { impression: 1, click: 1, view: 1, watch: 1 }, { timeout: 30_000 });
  });
});
