/**
 * videoapp checkout pixel: reports each completed order once, credited to the videos the shopper
 * watched or added to the cart from within the shop's attribution window, and with the browser's
 * group when the shop has a holdout (both read from what the loader stored, see
 * shared/storage.ts and shared/holdout.ts).
 */
import type { ExtensionApi, PixelEventsCheckoutCompleted } from '@shopify/web-pixels-extension';
import { GROUP_KEY, storedAssignment, type Group } from '../shared/holdout';
import {
  attribute,
  bounded,
  HISTORY_KEY,
  HISTORY_MAX,
  ORDERS_KEY,
  ORDERS_TTL_MS,
  OUTBOX_KEY,
  parseHistory,
  productGid,
  SESSION_KEY,
  uuid,
  type SentOrder,
  type WhereWho,
} from '../shared/storage';

export const DEFAULT_PROXY = '/apps/videoapp_sub';
/** An unacknowledged checkout event is sent at most this many times. */
const MAX_TRIES = 5;

/** The `checkout_completed` event as `POST {proxy}/analytics` receives it. */
export interface CheckoutEvent {
  eventType: 'checkout_completed';
  eventId: string;
  orderId: string;
  revenue?: number | string;
  currency?: string;
  productIds: string[];
  productId?: string;
  attributionType?: 'direct' | 'influenced';
  videoId?: string;
  widgetId?: string;
  sessionId?: string;
  /** The credited entry's where and who (none without a credit). */
  placement?: WhereWho['placement'];
  country?: string;
  source?: WhereWho['source'];
  /** The browser's group in the shop's holdout, attributed or not; none outside one. */
  group?: Group;
  timestamp: string;
}

/** A checkout event waiting for the service's acknowledgement. */
export interface OutboxItem {
  event: CheckoutEvent;
  tries: number;
  at: number;
}

type Checkout = PixelEventsCheckoutCompleted['data']['checkout'];

const parse = <T>(raw: string | null, fallback: T): T => {
  try {
    const v = raw ? (JSON.parse(raw) as T) : fallback;
    return Array.isArray(fallback) && !Array.isArray(v) ? fallback : v;
  } catch {
    return fallback;
  }
};

/**
 * The checkout's total as the service takes it: a JSON number when its shortest decimal form has
 * at most 4 decimals (the number is passed through, never computed with), else a numeric string.
 */
export function revenueOf(amount: unknown): number | string | undefined {
  if (typeof amount === 'string' && /^\d+(\.\d{1,4})?$/.test(amount.trim())) return amount.trim();
  if (typeof amount !== 'number' || !isFinite(amount) || amount < 0) return undefined;
  return /^\d+(\.\d{1,4})?$/.test(String(amount)) ? amount : amount.toFixed(4);
}

/**
 * The event for one completed checkout: its session is the tab's, else the credited entry's;
 * without a credit it has no attribution and no where and who. `assignment` is the browser's
 * group as the loader stored it (`videoapp:group`): the order carries the group while it holds.
 */
export function checkoutEvent(
  checkout: Checkout,
  history: ReturnType<typeof parseHistory>,
  sessionId: string | null,
  timestamp: string,
  now: number,
  assignment: string | null = null,
): CheckoutEvent | null {
  const orderId = String((checkout.order && checkout.order.id) || checkout.token || '');
  if (!orderId) return null;
  const productIds: string[] = [];
  for (const line of checkout.lineItems || []) {
    const id = productGid(line && line.variant && line.variant.product && line.variant.product.id);
    if (id && !productIds.includes(id)) productIds.push(id);
  }
  const total = checkout.totalPrice || checkout.subtotalPrice;
  const currency = checkout.currencyCode || (total && total.currencyCode) || '';
  const credit = attribute(history, productIds, now);
  const event: CheckoutEvent = {
    eventType: 'checkout_completed',
    eventId: uuid(),
    orderId,
    productIds,
    timestamp: timestamp || new Date(now).toISOString(),
  };
  const revenue = revenueOf(total && total.amount);
  if (revenue !== undefined) event.revenue = revenue;
  if (/^[A-Z]{3}$/.test(currency)) event.currency = currency;
  if (credit) Object.assign(event, credit);
  if (sessionId) event.sessionId = sessionId;
  const kept = storedAssignment(assignment, now);
  if (kept) event.group = kept.g;
  return event;
}

export function videoappPixel(api: ExtensionApi): void {
  const { analytics, browser, init, settings } = api;
  const store = browser.localStorage;
  const location = init && init.context && init.context.document && init.context.document.location;
  const origin = String((location && location.origin) || '').replace(/\/+$/, '');
  const proxy = String((settings && settings.proxyPath) || DEFAULT_PROXY).replace(/\/+$/, '');
  const endpoint = origin + proxy + '/analytics';
  const privacy = init && init.customerPrivacy;
  let consent = !privacy || privacy.analyticsProcessingAllowed !== false;
  let draining: Promise<void> | null = null;

  const read = async <T>(key: string, fallback: T): Promise<T> => {
    try {
      return parse(await store.getItem(key), fallback);
    } catch {
      return fallback;
    }
  };
  const write = async (key: string, value: unknown) => {
    try {
      await store.setItem(key, JSON.stringify(value));
    } catch {
      /* storage refused: nothing to do */
    }
  };

  /** 'done' (acknowledged, or unsendable), or 'retry'. */
  const send = async (event: CheckoutEvent): Promise<'done' | 'retry'> => {
    const body = JSON.stringify({ events: [event] });
    try {
      const r = await fetch(endpoint, { method: 'POST', body, keepalive: true, headers: { 'content-type': 'text/plain' } });
      return r.ok || r.status === 400 || r.status === 413 || r.status === 415 ? 'done' : 'retry';
    } catch {
      // Offline: keep it. Otherwise the answer may only have been unreadable (a sandbox whose
      // origin differs from the shop's): hand the event to the page's beacon queue.
      if (typeof navigator !== 'undefined' && navigator.onLine === false) return 'retry';
      try {
        return (await browser.sendBeacon(endpoint, body)) ? 'done' : 'retry';
      } catch {
        return 'retry';
      }
    }
  };

  /** Sends every stored checkout event; each is retried on later pages up to {@link MAX_TRIES}. */
  const drain = () =>
    (draining =
      draining ||
      (async () => {
        try {
          const items = await read<OutboxItem[]>(OUTBOX_KEY, []);
          const left: OutboxItem[] = [];
          for (const item of items) {
            if (!item || !item.event) continue;
            item.tries = (item.tries || 0) + 1;
            if ((await send(item.event)) === 'retry' && item.tries < MAX_TRIES) left.push(item);
          }
          // Items added while sending are kept.
          const now = await read<OutboxItem[]>(OUTBOX_KEY, []);
          const sent = new Set(items.map((i) => i && i.event && i.event.eventId));
          await write(OUTBOX_KEY, left.concat(now.filter((i) => i && i.event && !sent.has(i.event.eventId))));
        } finally {
          draining = null;
        }
      })());

  analytics.subscribe('checkout_completed', async (e: PixelEventsCheckoutCompleted) => {
    if (!consent || !e || !e.data || !e.data.checkout) return;
    const now = Date.now();
    let sessionId: string | null = null;
    try {
      sessionId = await browser.sessionStorage.getItem(SESSION_KEY);
    } catch {
      /* no session storage */
    }
    const get = async (key: string) => {
      try {
        return await store.getItem(key);
      } catch {
        return null; // unreadable: as if nothing were stored
      }
    };
    const history = parseHistory(await get(HISTORY_KEY));
    const event = checkoutEvent(e.data.checkout, history, sessionId, e.timestamp, now, await get(GROUP_KEY));
    if (!event) return;
    // One event per order: a reloaded thank-you page finds its order here.
    const orders = await read<SentOrder[]>(ORDERS_KEY, []);
    if (orders.some((o) => o && o.orderId === event.orderId)) return;
    await write(ORDERS_KEY, bounded(orders.concat({ orderId: event.orderId, at: now }), now, ORDERS_TTL_MS));
    if (draining) await draining;
    const outbox = await read<OutboxItem[]>(OUTBOX_KEY, []);
    await write(OUTBOX_KEY, outbox.concat({ event, tries: 0, at: now }).slice(-HISTORY_MAX));
    await drain();
  });

  if (api.customerPrivacy && api.customerPrivacy.subscribe) {
    api.customerPrivacy.subscribe('visitorConsentCollected', (e) => {
      consent = !!(e && e.customerPrivacy && e.customerPrivacy.analyticsProcessingAllowed);
      if (consent) drain().catch(() => {});
    });
  }
  if (consent) drain().catch(() => {});
}
