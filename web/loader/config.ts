/** The embed tag's configuration and the one request for the page's widgets. */
import type { Placement } from '../shared/storage';
import type { Answer } from './types';
import { readJSON, write } from './util';

export interface Config {
  /** The page type, as events name it. */
  placement: Placement;
  location: string;
  productId: string;
  productHandle: string;
  collectionId: string;
  proxy: string;
  /** The player asset's URL: beside the loader's own script. */
  player: string;
}

/** The platform's `request.page_type` → the events' `placement`. */
const PLACEMENTS: Record<string, Placement> = {
  index: 'home',
  product: 'product',
  collection: 'collection',
  'list-collections': 'collection',
  page: 'page',
  cart: 'cart',
};

/** localStorage: the catalog version last answered, and when it was learned. */
export const VERSION_KEY = 'videoapp:version';
/**
 * A request naming the current version may be cached by the browser for a day, so a version is
 * sent only while it is this recent; older, the request goes without `v` and learns the current
 * one. This bounds how long a changed catalog can stay unseen.
 */
const VERSION_FRESH_MS = 10 * 60 * 1000;

/** Reads the embed tag's `data-*` attributes (call while the loader's own script runs). */
export function readConfig(): Config {
  const own = document.currentScript as HTMLScriptElement | null;
  const tag =
    own && own.hasAttribute('data-videoapp-loader') ? own : document.querySelector<HTMLScriptElement>('script[data-videoapp-loader]');
  const d = (tag && tag.dataset) || {};
  const id = (v: string | undefined, kind: string) => {
    const t = (v || '').trim();
    return /^\d+$/.test(t) || t.startsWith(`gid://shopify/${kind}/`) ? t : '';
  };
  let player = '';
  try {
    player = new URL('videoapp-player.js', (tag && tag.src) || location.href).href;
  } catch {
    /* no usable script URL: the player cannot load, cards still show */
  }
  const pageType = d.pageType || '';
  const placement = typeof PLACEMENTS[pageType] == 'string' ? PLACEMENTS[pageType] : 'other';
  return {
    player,
    placement,
    // The service's `location`: the placement, where the widgets' rules have one.
    location: placement === 'cart' || pageType === 'list-collections' ? 'other' : placement,
    productId: id(d.productId, 'Product'),
    productHandle: (d.productHandle || '').trim(),
    collectionId: id(d.collectionId, 'Collection'),
    proxy: (d.proxy || '/apps/videoapp_sub').replace(/\/+$/, ''),
  };
}

/** The page's widgets, or null for anything but a usable 200 answer. */
export async function fetchWidgets(c: Config): Promise<Answer | null> {
  const q = new URLSearchParams({ location: c.location });
  if (c.productId) q.set('product_id', c.productId);
  if (c.productHandle) q.set('product_handle', c.productHandle);
  if (c.collectionId) q.set('collection_id', c.collectionId);
  const known = readJSON<{ v: string; t: number }>(VERSION_KEY);
  const now = Date.now();
  if (known && known.v && now - known.t < VERSION_FRESH_MS) q.set('v', known.v);
  try {
    const r = await fetch(`${c.proxy}/contextual-widgets?${q}`, { headers: { accept: 'application/json' } });
    if (r.status !== 200) return null;
    const a = (await r.json()) as Answer;
    if (!a || !Array.isArray(a.widgets)) return null;
    if (a.version && (!known || known.v !== String(a.version) || !q.has('v'))) {
      write(VERSION_KEY, JSON.stringify({ v: String(a.version), t: now }));
    }
    return a;
  } catch {
    return null;
  }
}
