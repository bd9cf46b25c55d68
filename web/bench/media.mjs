// Playback benchmark: a 30 s 1080×1920 phone video tapped on the demo store by a phone over 4G,
// processed (the loader plays what the service made of it) against the same file played raw
// from a bare static server, as merchants host it today. Per tap: the time to the first frame
// shown, the video's bytes read ahead of the tap (while its card was on screen), received in the
// first 5 s, and received after the player closed.
//
//   node web/bench/media.mjs        (from anywhere; after `npm run build` and a release build)
//
// Each tap is a fresh browser context (nothing cached) with a Pixel-class screen (412 × 915,
// DPR 2.625, touch) and Chromium's network emulation (9 Mbit/s down, 1.5 up, 150 ms latency).
// The file is imported through `videos/import` and processed by the service's own worker.
// Environment: VIDEOAPP_BIN (default target/release/videoapp), CHROMIUM, VIDEOAPP_BENCH_MEDIA_RUNS
// (taps of each kind, 7), VIDEOAPP_E2E_DATABASE_URL (default: a database of its own on the local
// Postgres). Logs in .data/bench-artifacts.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.chdir(root);
if (!process.env.VIDEOAPP_BIN && existsSync('target/release/videoapp')) process.env.VIDEOAPP_BIN = 'target/release/videoapp';
process.env.VIDEOAPP_E2E_ARTIFACTS ||= '.data/bench-artifacts';
// A Postgres database of the run's own on the local server, dropped at the end.
const pg = ['-h', '127.0.0.1', '-p', '54329', '-U', 'videoapp'];
const database = !process.env.VIDEOAPP_E2E_DATABASE_URL && `bench_media_${process.pid}`;
if (database) {
  execFileSync('createdb', [...pg, database], { env: { ...process.env, PGPASSWORD: 'videoapp' } });
  process.env.VIDEOAPP_E2E_DATABASE_URL = `postgres://videoapp:videoapp@127.0.0.1:54329/${database}`;
}

const { config, newShop, startService, stopAll, stopService, theService, waitFor } = await import('../e2e/stack.mjs');
const { closeBrowser, newShopper, slotsSettled } = await import('../e2e/browser.mjs');

const RUNS = Number(process.env.VIDEOAPP_BENCH_MEDIA_RUNS || 7);
const PIXEL = { viewport: { width: 412, height: 915 }, deviceScaleFactor: 2.625, isMobile: true, hasTouch: true };
const MBIT = 1_000_000 / 8;
const FOUR_G = { offline: false, latency: 150, downloadThroughput: 9 * MBIT, uploadThroughput: 1.5 * MBIT };
const WINDOW_MS = 5_000;
const AFTER_CLOSE_MS = 3_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

/** The phone clip, made as `Sample::PhoneClip` makes it: H.264 High, ~15 Mbit/s, AAC stereo. */
function phoneClip(dir) {
  const file = path.join(dir, 'phone-30s.mp4');
  execFileSync('ffmpeg', [
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=1080x1920:r=30:d=30',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=48000:duration=30',
    '-c:v',
    'libx264',
    '-preset',
    'superfast',
    '-profile:v',
    'high',
    '-crf',
    '20',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-ac',
    '2',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    file,
  ]);
  return file;
}

/** A bare static server for one file, with single ranges, as a merchant's host answers. */
function serveFile(file) {
  const size = statSync(file).size;
  const server = http.createServer((req, res) => {
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || '');
    const start = m ? (m[1] ? Number(m[1]) : size - Number(m[2])) : 0;
    const end = m && m[1] && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'content-length': end - start + 1 };
    if (m) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    res.writeHead(m ? 206 : 200, headers);
    if (req.method === 'HEAD') return res.end();
    createReadStream(file, { start, end }).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/${path.basename(file)}`, size })),
  );
}

async function admin(method, pathname, body) {
  const response = await fetch(`${theService().base}/admin/v1${pathname}`, {
    method,
    headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${pathname} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** Records, in the page, the tap's time and the player's first frame (`requestVideoFrameCallback`). */
function watchFirstFrame() {
  addEventListener('pointerdown', (e) => (window.__tap ??= e.timeStamp), true);
  new MutationObserver(() => {
    const v = document.querySelector('[data-videoapp-player] video');
    if (!v || v.__watched) return;
    v.__watched = true;
    v.requestVideoFrameCallback((now) => (window.__frame ??= now));
  }).observe(document, { childList: true, subtree: true });
}

/** One tap on `videoId`'s card in a fresh context: first frame (ms), bytes in 5 s, after close. */
async function tap(origin, widgetId, videoId, isFull) {
  const shopper = await newShopper('media bench', { origin, device: PIXEL });
  try {
    const { page, context } = shopper;
    await context.addInitScript(watchFirstFrame);
    const cdp = await context.newCDPSession(page);
    const loads = new Map();
    cdp.on(
      'Network.requestWillBeSent',
      (e) => loads.has(e.requestId) || loads.set(e.requestId, { url: e.request.url, open: true, chunks: [] }),
    );
    cdp.on('Network.dataReceived', (e) => loads.get(e.requestId)?.chunks.push([performance.now(), e.dataLength]));
    for (const ended of ['Network.loadingFinished', 'Network.loadingFailed'])
      cdp.on(ended, (e) => loads.get(e.requestId) && (loads.get(e.requestId).open = false));
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', FOUR_G);
    const video = () => [...loads.values()].filter((l) => isFull(l.url));
    const bytes = (from, to) =>
      video()
        .flatMap((l) => l.chunks)
        .filter(([t]) => t >= from && t < to)
        .reduce((s, [, n]) => s + n, 0);

    await page.goto('/', { timeout: 60_000 });
    await page.locator('[data-videoapp-slot]').first().scrollIntoViewIfNeeded();
    await slotsSettled(page);
    const card = page.locator(`[data-videoapp-widget="${widgetId}"] [data-videoapp-video="${videoId}"]`);
    await card.scrollIntoViewIfNeeded();
    // The page and the cards' previews loaded first, so the tap has the network to itself.
    const quiet = () => [...loads.values()].every((l) => !l.open);
    await waitFor(async () => quiet() && (await sleep(500), quiet()), { timeout: 60_000, message: 'a quiet network before the tap' });
    const tapped = performance.now();
    const ahead = bytes(0, tapped);
    await card.tap();
    const frame = await page.waitForFunction(() => window.__frame && window.__frame - window.__tap, null, { timeout: 60_000 });
    const firstFrameMs = await frame.jsonValue();
    const source = await page.$eval('[data-videoapp-player] video', (v) => v.currentSrc);
    await sleep(tapped + WINDOW_MS - performance.now());
    const inWindow = bytes(tapped, tapped + WINDOW_MS);
    await page.locator('[data-videoapp-player]').getByRole('button', { name: 'Close', exact: true }).tap();
    await page.locator('[data-videoapp-player]').waitFor({ state: 'detached' });
    const closed = performance.now();
    await sleep(AFTER_CLOSE_MS);
    const late = video()
      .flatMap((l) => l.chunks)
      .filter(([t]) => t >= closed);
    return {
      firstFrameMs,
      ahead,
      inWindow,
      afterClose: bytes(closed, Infinity),
      lastMs: Math.max(0, ...late.map(([t]) => t - closed)),
      source,
    };
  } finally {
    await shopper.close();
  }
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'videoapp-media-bench-'));
  const raw = await serveFile(phoneClip(dir));
  try {
    await startService({ VIDEOAPP_IMPORT_ALLOW_LOOPBACK_HTTP: 'true' });
    const shop = await newShop('media-bench');
    const base = `/shops/${shop.shop}/videos`;
    const started = performance.now();
    const { id: processedId } = await admin('POST', `${base}/import`, { url: raw.url, title: 'Phone video, processed' });
    const ready = await waitFor(
      async () => {
        const v = await admin('GET', `${base}/${processedId}`);
        if (v.processing?.state === 'failed') throw new Error(`processing failed: ${JSON.stringify(v.processing)}`);
        return v.processing?.state === 'ready' && v;
      },
      { timeout: 1_200_000, interval: 1_000, message: 'the imported video to be ready' },
    );
    console.error(`  … imported and processed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await admin('PATCH', `${base}/${processedId}`, { status: 'PUBLISHED' });
    const { id: rawId } = await admin('POST', base, {
      title: 'Phone video, raw',
      thumbnail: ready.posterUrl,
      videoUrl: raw.url,
      duration: 30,
      status: 'PUBLISHED',
    });
    const widgetId = await shop.widget({
      type: 'carousel',
      title: 'Phone videos',
      videoIds: [processedId, rawId],
      rules: { locations: ['home'] },
    });
    const kinds = {
      processed: {
        id: processedId,
        isFull: (u) => u.includes(`/${processedId}/`) && u !== ready.miniVersionUrl && !/\.(jpe?g|webp)$/.test(u),
        taps: [],
      },
      raw: { id: rawId, isFull: (u) => u === raw.url, taps: [] },
    };
    for (let run = 1; run <= RUNS; run++) {
      for (const [name, kind] of Object.entries(kinds)) {
        const t = await tap(shop.origin, widgetId, kind.id, kind.isFull);
        console.error(
          `  … ${run}/${RUNS} ${name}: first frame ${t.firstFrameMs.toFixed(0)} ms, ${t.inWindow} B in 5 s, ${t.afterClose} B after close (${t.source.split('/').pop()})`,
        );
        kind.taps.push(t);
      }
    }
    const chromium = execFileSync(config.chromium, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    console.log(
      `\n${chromium}; ${os.availableParallelism()} CPUs, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; ${config.bin}; ${RUNS} taps each`,
    );
    console.log(
      `raw file ${raw.size} B (${((raw.size * 8) / 30 / 1e6).toFixed(1)} Mbit/s); processed played from ${kinds.processed.taps[0].source}`,
    );
    const p50 = (k, f) => median(kinds[k].taps.map(f));
    for (const k of Object.keys(kinds)) {
      const taps = kinds[k].taps;
      console.log(
        `${k.padEnd(9)} first frame p50 ${p50(k, (t) => t.firstFrameMs).toFixed(0)} ms (${taps.map((t) => t.firstFrameMs.toFixed(0)).join(', ')}); ` +
          `read ahead of the tap ${(p50(k, (t) => t.ahead) / 1e3).toFixed(1)} KB; in 5 s p50 ${(p50(k, (t) => t.inWindow) / 1e6).toFixed(2)} MB; after close max ${Math.max(...taps.map((t) => t.afterClose))} B, ` +
          `the last ${Math.max(...taps.map((t) => t.lastMs)).toFixed(0)} ms after it`,
      );
    }
    const ratio = p50('processed', (t) => t.firstFrameMs) / p50('raw', (t) => t.firstFrameMs);
    console.log(`first frame processed/raw ${ratio.toFixed(2)}× (goals: p50 ≤ 500 ms and ≤ 0.5×; ≤ 1.5 MB in 5 s; 0 B after close)`);
    await shop.stop();
  } finally {
    await closeBrowser();
    await stopService();
    await stopAll();
    // The ClickHouse database the service created for this run.
    await fetch(`${config.clickhouseUrl}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS \`${config.clickhouseDatabase}\`` });
    raw.server.close();
    rmSync(dir, { recursive: true, force: true });
    if (database) execFileSync('dropdb', [...pg, '--force', database], { env: { ...process.env, PGPASSWORD: 'videoapp' } });
  }
}

await main();
