// Builds the storefront client:
//   loader/main.ts → ../extensions/videoapp-theme/assets/videoapp-loader.js (one minified IIFE)
//   pixel/main.ts  → ../extensions/videoapp-pixel/dist/videoapp-pixel.js   (one minified IIFE,
//                    imported by the extension's src/index.ts and loaded as is by the demo store)
import { build } from 'esbuild';
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

await build({
  ...common,
  entryPoints: [here('../pixel/main.ts')],
  outfile: here('../../extensions/videoapp-pixel/dist/videoapp-pixel.js'),
});
