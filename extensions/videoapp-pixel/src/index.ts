// The platform's entry for this web pixel extension. The pixel's source is web/pixel/ (with
// the loader's shared storage format); `npm run build` in web/ bundles it, with `register`
// from @shopify/web-pixels-extension, into ../dist/videoapp-pixel.js, which this file imports
// so that the extension builds from its own folder alone.
import '../dist/videoapp-pixel.js';
