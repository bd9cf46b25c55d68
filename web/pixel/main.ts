/**
 * The pixel bundle's entry: hands the pixel to the platform's web-pixel runtime. `register`
 * calls the global `shopify.extend('WebPixel::Render', pixel)`; the demo store provides that
 * global itself (docs/STOREFRONT-CLIENT.md, "Web-pixel emulation").
 */
import { register } from '@shopify/web-pixels-extension';
import { videoappPixel } from './pixel';

try {
  register(videoappPixel);
} catch {
  /* no web-pixel runtime on this page */
}
