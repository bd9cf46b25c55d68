/**
 * What the loader writes to the shop's localStorage for the checkout pixel, and how the pixel
 * reads it back. Both sides import this file, so the format has one definition.
 */

/** localStorage: the shopper's recent video views and add-to-carts ({@link History}). */
export const HISTORY_KEY = 'videoapp:history';
/** sessionStorage: the per-tab session id sent with every event. */
export const SESSION_KEY = 'videoapp:session';
/** localStorage: order ids the pixel has already reported ({@link SentOrder}[]). */
export const ORDERS_KEY = 'videoapp:orders';
/** localStorage: checkout events the pixel has not yet seen acknowledged ({@link OutboxItem}[]). */
export const OUTBOX_KEY = 'videoapp:outbox';

/** At most this many entries per history list; older ones are dropped first. */
export const HISTORY_MAX = 50;
/** History entries older than this are dropped whenever the history is written. */
export const HISTORY_TTL_MS = 30 * 24 * 3600 * 1000;
/** When the pixel cannot read the tab's session id, entries this recent count as the session. */
export const SESSIONLESS_WINDOW_MS = 24 * 3600 * 1000;

/** A video watched for at least 3 s. */
export interface ViewEntry {
  sessionId: string;
  /** Unix milliseconds. */
  at: number;
  videoId: string;
  widgetId: string;
  /** The video's products (global ids), to credit a product of the order. */
  productIds: string[];
}

/** A product added to the cart from the player. */
export interface CartEntry {
  sessionId: string;
  at: number;
  productId: string;
  videoId: string;
  widgetId: string;
}

export interface History {
  views: ViewEntry[];
  carts: CartEntry[];
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
  };
}

/** `list` with `entry` appended, without expired entries, at most {@link HISTORY_MAX} long. */
export function appendBounded<T extends { at: number }>(list: T[], entry: T, now: number): T[] {
  return list
    .filter((e) => e && now - e.at < HISTORY_TTL_MS)
    .concat(entry)
    .slice(-HISTORY_MAX);
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

export interface Attribution {
  attributionType: 'direct' | 'influenced';
  videoId: string;
  widgetId: string;
  sessionId: string;
  /** The credited product of the order, when one is known. */
  productId?: string;
}

/**
 * How an order is credited to videos:
 * - `direct`: a product of the order was added to the cart from a video in this session (the
 *   latest such add-to-cart wins);
 * - `influenced`: otherwise, a video was watched for 3 s in this session (the latest one);
 * - `null`: neither.
 * "This session" is the entries carrying `sessionId`; without one, the entries of the last
 * {@link SESSIONLESS_WINDOW_MS}.
 */
export function attribute(history: History, sessionId: string | null, orderProductIds: string[], now: number): Attribution | null {
  const inSession = (e: { sessionId: string; at: number }) =>
    !!e && (sessionId ? e.sessionId === sessionId : now - e.at < SESSIONLESS_WINDOW_MS);
  const latest = <T extends { at: number }>(list: T[]) => list.reduce<T | null>((best, e) => (!best || e.at >= best.at ? e : best), null);
  const cart = latest(history.carts.filter((e) => inSession(e) && orderProductIds.includes(productGid(e.productId))));
  if (cart) {
    return {
      attributionType: 'direct',
      videoId: cart.videoId,
      widgetId: cart.widgetId,
      sessionId: cart.sessionId,
      productId: productGid(cart.productId),
    };
  }
  const view = latest(history.views.filter(inSession));
  if (!view) return null;
  const viewed = (Array.isArray(view.productIds) ? view.productIds : []).map(productGid);
  const credited = orderProductIds.find((id) => viewed.includes(id));
  return {
    attributionType: 'influenced',
    videoId: view.videoId,
    widgetId: view.widgetId,
    sessionId: view.sessionId,
    ...(credited ? { productId: credited } : {}),
  };
}
