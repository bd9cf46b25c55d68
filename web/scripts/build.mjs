// Builds the storefront client:
//   loader/main.ts → ../extensions/videoapp-theme/assets/videoapp-loader.js (one minified IIFE)
//   loader/player-main.ts → ../extensions/videoapp-theme/assets/videoapp-player.js (the player,
//                    one minified IIFE the loader fetches when needed)
//   loader/holdout-main.ts → ../extensions/videoapp-theme/snippets/videoapp-holdout.liquid (the
//                    holdout's decision, inline in the page's head)
//   pixel/main.ts  → ../extensions/videoapp-pixel/dist/videoapp-pixel.js   (one minified IIFE,
//                    imported by the extension's src/index.ts and loaded as is by the demo store)
// and the merchant's dashboard, which the service serves under /app/assets/:
//   dashboard/boot-main.ts  → dist/dashboard/boot.js       (its first calls, before the bundle)
//   dashboard/main.tsx      → dist/dashboard/dashboard.js  (React + Polaris, one minified IIFE)
//   dashboard/dashboard.css → dist/dashboard/dashboard.css (Polaris' style sheet and ours)
import { build } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

const common = {
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  legalComments: 'none',
  logLevel: 'info',
  charset: 'utf8',
};

await build({
  ...common,
  entryPoints: [here('../loader/main.ts')],
  outfile: here('../../extensions/videoapp-theme/assets/videoapp-loader.js'),
});

// The player, fetched by the loader from beside its own script when a card shows or is tapped.
await build({
  ...common,
  entryPoints: [here('../loader/player-main.ts')],
  outfile: here('../../extensions/videoapp-theme/assets/videoapp-player.js'),
});

// The holdout's decision is inline: the page's body must not be parsed before it has run. The
// snippet takes the shop's holdout as `percent` (videoapp-embed.liquid renders it).
{
  const { outputFiles } = await build({ ...common, entryPoints: [here('../loader/holdout-main.ts')], write: false });
  const script = outputFiles[0].text.trim();
  if (/{{|{%|<\/script/i.test(script)) throw new Error('the holdout script holds text Liquid or HTML would read as their own');
  const snippet = `<script data-videoapp-holdout="{{ percent | plus: 0 }}">${script}</script>\n`;
  mkdirSync(here('../../extensions/videoapp-theme/snippets'), { recursive: true });
  writeFileSync(here('../../extensions/videoapp-theme/snippets/videoapp-holdout.liquid'), snippet);
}

await build({
  ...common,
  entryPoints: [here('../pixel/main.ts')],
  outfile: here('../../extensions/videoapp-pixel/dist/videoapp-pixel.js'),
});

/** The dashboard's preview draws the loader's cards and opens its player, bundled, not fetched. */
const playerInline = {
  name: 'player-inline',
  setup(b) {
    b.onResolve({ filter: /\/player-source$/ }, () => ({ path: here('../loader/player-inline.ts') }));
  },
};

// The dashboard's first calls, started before the bundle has loaded (dashboard/boot.ts).
await build({
  ...common,
  entryPoints: [here('../dashboard/boot-main.ts')],
  outfile: here('../dist/dashboard/boot.js'),
});

await build({
  ...common,
  entryPoints: [here('../dashboard/main.tsx')],
  plugins: [playerInline],
  outfile: here('../dist/dashboard/dashboard.js'),
  jsx: 'automatic',
  // React and Polaris drop their development-only checks and warnings.
  define: { 'process.env.NODE_ENV': '"production"' },
});

await build({
  bundle: true,
  minify: true,
  legalComments: 'none',
  logLevel: 'info',
  charset: 'utf8',
  entryPoints: [here('../dashboard/dashboard.css')],
  outfile: here('../dist/dashboard/dashboard.css'),
});
