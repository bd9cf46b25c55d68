/**
 * What the loader writes to the shop's localStorage for the checkout pixel, and how the pixel
 * reads it back. Both sides import this file, so the format has one definition.
 */

/** localStorage: the shopper's video views and add-to-carts within the attribution window ({@link History}). */
export const HISTORY_KEY = 'videoapp:history';
/** sessionStorage: the per-tab session id sent with every event. */
export const SESSION_KEY = 'videoapp:session';
/** sessionStorage: the tab session's traffic source ({@link Source}), decided on its landing page. */
export const SOURCE_KEY = 'videoapp:source';
/** localStorage: order ids the pixel has already reported ({@link SentOrder}[]). */
export const ORDERS_KEY = 'videoapp:orders';
/** localStorage: checkout events the pixel has not yet seen acknowledged ({@link OutboxItem}[]). */
export const OUTBOX_KEY = 'videoapp:outbox';

/** At most this many entries per history list; older ones are dropped first. */
export const HISTORY_MAX = 50;
/** Reported orders are remembered this long (the service also de-duplicates them). */
export const ORDERS_TTL_MS = 30 * 24 * 3600 * 1000;
/** The shop's attribution window when the storefront did not say (days). */
export const DEFAULT_WINDOW_DAYS = 7;
const DAY_MS = 24 * 3600 * 1000;

/** The shop's attribution window as it may be: 1, 7 or 30 days; anything else is the default. */
export const windowDays = (raw: unknown): number => ([1, 7, 30].includes(raw as number) ? (raw as number) : DEFAULT_WINDOW_DAYS);

/** The page type where a widget showed, as the service takes it (`placement`). */
export type Placement = 'home' | 'product' | 'collection' | 'page' | 'cart' | 'other';
/** The tab session's traffic source, as the service takes it (`source`). */
export type Source = 'direct' | 'search' | 'social' | 'email' | 'paid' | 'referral';
export const PLACEMENTS: Placement[] = ['home', 'product', 'collection', 'page', 'cart', 'other'];
export const SOURCES: Source[] = ['direct', 'search', 'social', 'email', 'paid', 'referral'];

/** Where and who: sent with every event, and kept with each history entry. */
export interface WhereWho {
  placement?: Placement;
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string;
  source?: Source;
}

/**
 * The valid where-and-who fields of `entry`. Storage is the page's to change, and the service
 * refuses a whole batch for one bad value: anything else is left out.
 */
export function whereWho(entry: WhereWho): WhereWho {
  const out: WhereWho = {};
  if (PLACEMENTS.includes(entry.placement!)) out.placement = entry.placement;
  if (/^[A-Z]{2}$/.test(String(entry.country))) out.country = entry.country;
  if (SOURCES.includes(entry.source!)) out.source = entry.source;
  return out;
}

/** A video watched for at least 3 s. */
export interface ViewEntry extends WhereWho {
  sessionId: string;
  /** Unix milliseconds. */
  at: number;
  videoId: string;
  widgetId: string;
  /** The video's products (global ids), to credit a product of the order. */
  productIds: string[];
}

/** A product added to the cart from the player. */
export interface CartEntry extends WhereWho {
  sessionId: string;
  at: number;
  productId: string;
  videoId: string;
  widgetId: string;
}

export interface History {
  views: ViewEntry[];
  carts: CartEntry[];
  /** The shop's attribution window when the history was written: entries are kept this long. */
  windowDays: number;
}

export interface SentOrder {
  orderId: string;
  at: number;
}

/** The storage value as a history, whatever was stored (nothing, garbage, an old format). */
export function parseHistory(raw: string | null): History {
  let value: unknown;
  try {
    value = raw ? JSON.parse(raw) : null;
  } catch {
    value = null;
  }
  const h = (value && typeof value === 'object' ? value : {}) as Partial<History>;
  return {
    views: Array.isArray(h.views) ? h.views : [],
    carts: Array.isArray(h.carts) ? h.carts : [],
    windowDays: windowDays(h.windowDays),
  };
}

/** `list` without entries older than `maxAgeMs`, at most {@link HISTORY_MAX} long. */
export function bounded<T extends { at: number }>(list: T[], now: number, maxAgeMs: number): T[] {
  return list.filter((e) => e && now - e.at < maxAgeMs).slice(-HISTORY_MAX);
}

/** The history without the entries older than its window. */
export function withinWindow(h: History, now: number): History {
  const ms = h.windowDays * DAY_MS;
  return { views: bounded(h.views, now, ms), carts: bounded(h.carts, now, ms), windowDays: h.windowDays };
}

const PRODUCT_GID = 'gid://shopify/Product/';

/** A product id in global form (`gid://shopify/Product/123`), or '' when it is not one. */
export function productGid(raw: unknown): string {
  const text = raw == null ? '' : String(raw).trim();
  const number = text.startsWith(PRODUCT_GID) ? text.slice(PRODUCT_GID.length) : text;
  return /^\d+$/.test(number) && /[1-9]/.test(number) ? PRODUCT_GID + number.replace(/^0+/, '') : '';
}

/** A random UUID v4. */
export function uuid(): string {
  const c = globalThis.crypto;
  if (c && c.randomUUID) return c.randomUUID();
  const b = new Uint8Array(16);
  if (c && c.getRandomValues) c.getRandomValues(b);
  else for (let i = 0; i < 16; i++) b[i] = (Math.random() * 256) | 0;
  b[6] = (b[6] & 15) | 64;
  b[8] = (b[8] & 63) | 128;
  const x = Array.from(b, (n) => (n + 256).toString(16).slice(1)).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export interface Attribution extends WhereWho {
  attributionType: 'direct' | 'influenced';
  videoId: string;
  widgetId: string;
  /** The tab session of the credited entry. */
  sessionId: string;
  /** The credited product of the order, when one is known. */
  productId?: string;
}

/**
 * How an order is credited to videos, within the shop's attribution window (the history's
 * `windowDays`):
 * - `direct`: a product of the order was added to the cart from a video (the latest such
 *   add-to-cart wins);
 * - `influenced`: otherwise, a video was watched for 3 s (the latest one);
 * - `null`: neither.
 * The credit carries the where and who of the credited entry.
 */
export function attribute(history: History, orderProductIds: string[], now: number): Attribution | null {
  const recent = withinWindow(history, now);
  const latest = <T extends { at: number }>(list: T[]) => list.reduce<T | null>((best, e) => (!best || e.at >= best.at ? e : best), null);
  const cart = latest(recent.carts.filter((e) => orderProductIds.includes(productGid(e.productId))));
  if (cart) {
    return {
      attributionType: 'direct',
      videoId: cart.videoId,
      widgetId: cart.widgetId,
      sessionId: cart.sessionId,
      productId: productGid(cart.productId),
      ...whereWho(cart),
    };
  }
  const view = latest(recent.views);
  if (!view) return null;
  const viewed = (Array.isArray(view.productIds) ? view.productIds : []).map(productGid);
  const credited = orderProductIds.find((id) => viewed.includes(id));
  return {
    attributionType: 'influenced',
    videoId: view.videoId,
    widgetId: view.widgetId,
    sessionId: view.sessionId,
    ...(credited ? { productId: credited } : {}),
    ...whereWho(view),
  };
}
