// Browser tests of the storefront client against the real service and the demo store.
//
//   node web/e2e/run.mjs            (from the repository root, after `cargo build` and
//                                    `npm run build` in web/)
//
// Environment (all optional): VIDEOAPP_E2E_DATABASE_URL (an existing Postgres database),
// VIDEOAPP_E2E_CLICKHOUSE_URL, VIDEOAPP_BIN, CHROMIUM, VIDEOAPP_E2E_ARTIFACTS (screenshots and
// the processes' logs). One service runs for the whole suite; each test seeds its own shop and
// starts its own demo store. Tests run one at a time; the exit status is non-zero on any failure.
import { existsSync } from 'node:fs';
import { after, before } from 'node:test';

import { closeBrowser, launchBrowser } from './browser.mjs';
import { config, startService, stopAll, stopService } from './stack.mjs';

const built = [
  [config.bin, 'run `cargo build`'],
  [config.chromium, 'install Chromium or set CHROMIUM'],
  ['extensions/videoapp-theme/assets/videoapp-loader.js', 'run `npm ci && npm run build` in web/'],
  ['extensions/videoapp-theme/assets/videoapp-player.js', 'run `npm ci && npm run build` in web/'],
  ['extensions/videoapp-theme/snippets/videoapp-holdout.liquid', 'run `npm ci && npm run build` in web/'],
  ['extensions/videoapp-pixel/dist/videoapp-pixel.js', 'run `npm ci && npm run build` in web/'],
  ['web/dist/dashboard/dashboard.js', 'run `npm ci && npm run build` in web/'],
];
for (const [file, hint] of built) {
  if (!existsSync(file)) {
    console.error(`error: ${file} is missing: ${hint} (run from the repository root)`);
    process.exit(1);
  }
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await closeBrowser().catch(() => {});
    await stopAll();
    process.exit(130);
  });
}

before(async () => {
  console.error(`browser tests: service logs and screenshots in ${config.artifacts}`);
  await startService();
  await launchBrowser();
});

after(async () => {
  await closeBrowser();
  await stopService();
  await stopAll();
});

// The stories, in order; the last one also checks every page the others opened.
await import('./where-widgets-render.mjs');
await import('./watch-and-buy.mjs');
await import('./watching-where-and-who.mjs');
await import('./a-player-that-sells.mjs');
await import('./nothing-twice.mjs');
await import('./every-style-and-behaviour.mjs');
await import('./light-on-the-store.mjs');
await import('./dashboard.mjs');
await import('./dashboard-as-an-app.mjs');
await import('./dashboard-watching.mjs');
await import('./video-from-a-file.mjs');
await import('./tus-client.mjs');
await import('./install-from-the-admin.mjs');
await import('./stories-floating-captions.mjs');
await import('./first-day.mjs');
await import('./proof-of-lift.mjs');
await import('./never-breaks-the-page.mjs');
