// The storefront's size budgets, gzipped at level 9: the initial loader (on every page) at most
// 10,000 bytes; the player it fetches once a card shows, at most 8,000 bytes.
// The pixel's and the dashboard's sizes are reported only: the dashboard loads inside the admin,
// not on a shopper's page.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync, constants } from 'node:zlib';

const BUDGET = 10_000;
const TARGET = 6_000;
const PLAYER_BUDGET = 8_000;
const files = [
  ['loader', '../../extensions/videoapp-theme/assets/videoapp-loader.js', BUDGET, TARGET],
  ['player', '../../extensions/videoapp-theme/assets/videoapp-player.js', PLAYER_BUDGET, null],
  ['pixel', '../../extensions/videoapp-pixel/dist/videoapp-pixel.js', null],
  ['boot.js', '../dist/dashboard/boot.js', null],
  ['dashboard.js', '../dist/dashboard/dashboard.js', null],
  ['dashboard.css', '../dist/dashboard/dashboard.css', null],
];
/** The dashboard's first load: its files, each gzipped as the service may send it. */
const DASHBOARD = ['boot.js', 'dashboard.js', 'dashboard.css'];
let dashboard = 0;
let dashboardFiles = 0;

let failed = false;
for (const [name, path, budget, target] of files) {
  let raw;
  try {
    raw = readFileSync(fileURLToPath(new URL(path, import.meta.url)));
  } catch {
    console.error(`${name}: ${path} is missing; run \`npm run build\` first`);
    failed = true;
    continue;
  }
  const gzipped = gzipSync(raw, { level: constants.Z_BEST_COMPRESSION }).length;
  let verdict = '';
  if (budget != null) {
    verdict =
      gzipped > budget
        ? ` — over the ${budget} B budget`
        : target == null
          ? ` — within the ${budget} B budget`
          : gzipped > target
            ? ` — within budget, above the ${target} B aim`
            : ` — within the ${target} B aim`;
    if (gzipped > budget) failed = true;
  }
  console.log(`${name}: ${raw.length} B raw, ${gzipped} B gzipped${verdict}`);
  if (DASHBOARD.includes(name)) {
    dashboard += gzipped;
    dashboardFiles++;
  }
}
if (dashboardFiles === DASHBOARD.length) console.log(`dashboard, first load (boot, js, css): ${dashboard} B gzipped`);
process.exit(failed ? 1 : 0);
