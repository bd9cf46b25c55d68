/**
 * Shopper events: consent, the stored queue, batching and retries, and the history the checkout
 * pixel reads. See docs/STOREFRONT-CLIENT.md, "Events".
 */
import { firstInSession, type Group } from '../shared/holdout';
import { HISTORY_KEY, parseHistory, SESSION_KEY, SOURCE_KEY, uuid, windowDays, withinWindow, type WhereWho } from '../shared/storage';
import { keepSource } from './context';
import type { EventType, WireEvent } from './types';
import { on, read, readJSON, safe, write } from './util';

/** localStorage: events not yet acknowledged by the service ({@link Item}[]). */
export const QUEUE_KEY = 'videoapp:queue';
const QUEUE_MAX = 500;
const BATCH_MAX = 100;
const SEND_AT = 20;
const EVERY_MS = 5000;
/**
 * While a send is in flight its events are leased: no other send (in this tab or another) takes
 * them before the lease ends. A beacon's events are leased for less: their outcome is never
 * known, so a later `fetch` sends them again.
 */
const LEASE_MS = 30000;
const BEACON_LEASE_MS = 10000;
/** Events older than the service's accepted past window are dropped. */
const MAX_AGE_MS = 7 * 24 * 3600 * 1000;
const BACKOFF_MAX_MS = 300000;

/** A queued event and, while a send is in flight, the time its lease ends (Unix ms). */
interface Item {
  e: WireEvent;
  l?: number;
}

let endpoint = '';
let timer: ReturnType<typeof setTimeout> | 0 = 0;
let backoff = 0;
let retryAt = 0;
let memorySession = '';
/** This page's where and who, sent with every event and kept with every history entry. */
let here: WhereWho = {};
/** The shop's attribution window (days): how long the history keeps an entry. */
let keepDays = windowDays(undefined);
/** The browser's group in the shop's holdout, sent with every event; none without a holdout. */
let group: Group | undefined;
/**
 * The openings of videos still open, each as the function that ends it (queues its `watch`):
 * called when the page hides, before the queue goes out.
 */
export const openings = new Set<() => void>();

/** Analytics consent: the platform's Customer Privacy API decides where it is present. */
export function allowed(): boolean {
  try {
    const p = window.Shopify && window.Shopify.customerPrivacy;
    return !p || typeof p.analyticsProcessingAllowed !== 'function' || !!p.analyticsProcessingAllowed();
  } catch {
    return false;
  }
}

/** The tab's session id, created (with the session's source) on first use. */
export function sessionId(): string {
  let id = read(SESSION_KEY, 'sessionStorage') || memorySession;
  if (!id) {
    id = uuid();
    write(SESSION_KEY, id, 'sessionStorage');
  }
  if (!memorySession) keepSource();
  return (memorySession = id);
}

function load(): Item[] {
  const items = readJSON<Item[]>(QUEUE_KEY);
  const oldest = Date.now() - MAX_AGE_MS;
  return Array.isArray(items) ? items.filter((i) => i && i.e && i.e.eventId && Date.parse(i.e.timestamp) > oldest) : [];
}

const save = (items: Item[]) => write(QUEUE_KEY, items.length ? JSON.stringify(items.slice(-QUEUE_MAX)) : null);

const schedule = (ms = EVERY_MS) => {
  if (!timer) timer = setTimeout(() => ((timer = 0), flush()), ms);
};

/** Queues one event (nothing at all without consent). */
export function track(eventType: EventType, widgetId?: string, videoId?: string, extra?: Partial<WireEvent>): void {
  if (!allowed()) return;
  const e: WireEvent = {
    eventType,
    eventId: uuid(),
    sessionId: sessionId(),
    videoId,
    widgetId,
    ...here,
    group,
    ...extra,
    timestamp: new Date().toISOString(),
  };
  const items = load();
  items.push({ e });
  save(items);
  if (items.filter((i) => !i.l || i.l < Date.now()).length >= SEND_AT) flush();
  else schedule();
}

/**
 * Records a watched video or an add-to-cart for the checkout pixel (see shared/storage.ts), and
 * forgets the entries older than the shop's attribution window.
 */
export function remember(kind?: 'views' | 'carts', entry?: Record<string, unknown>): void {
  if (!allowed()) return;
  const now = Date.now();
  const history = parseHistory(read(HISTORY_KEY));
  if (kind) history[kind].push({ sessionId: sessionId(), at: now, ...here, ...entry } as never);
  history.windowDays = keepDays;
  write(HISTORY_KEY, JSON.stringify(withinWindow(history, now)));
}

/**
 * The tab session's `session` event, once, as soon as the browser has a group and consent: each
 * group's conversion is measured against these.
 */
const countSession = () => {
  const tab = { getItem: (k: string) => read(k, 'sessionStorage'), setItem: (k: string, v: string) => write(k, v, 'sessionStorage') };
  if (group && allowed() && firstInSession(tab)) track('session');
};

/** The browser's group from now on (none: the shop has no holdout). */
export function joinGroup(g: Group | undefined): void {
  group = g;
  countSession();
}

/** The shop's attribution window, from the storefront's answer: the stored history follows it. */
export function keepFor(days: unknown): void {
  keepDays = windowDays(days);
  if (read(HISTORY_KEY)) remember();
}

/** Removes the acknowledged (or unsendable) events, or releases them for a later retry. */
function settle(ids: string[], done: boolean): void {
  const items = load();
  if (done) {
    save(items.filter((i) => !ids.includes(i.e.eventId)));
    backoff = 0;
    retryAt = 0;
  } else {
    for (const i of items) if (ids.includes(i.e.eventId)) delete i.l;
    save(items);
    backoff = Math.min(BACKOFF_MAX_MS, Math.max(EVERY_MS, backoff * 2));
    retryAt = Date.now() + backoff;
  }
  if (items.length) schedule(done ? EVERY_MS : backoff);
}

function post(body: string, ids: string[]): void {
  fetch(endpoint, { method: 'POST', body, keepalive: true, headers: { 'content-type': 'text/plain' } }).then(
    // 2xx: stored. 400/413/415: this batch can never be stored; retrying would block the queue.
    (r) => settle(ids, r.ok || r.status === 400 || r.status === 413 || r.status === 415),
    () => settle(ids, false),
  );
}

/**
 * Sends queued events. While the page lives they go by `fetch` (the answer is seen, and only a
 * 2xx removes them). When the page is being hidden or left they go by `sendBeacon`, whose outcome
 * is unknown: they stay queued and are sent again (same `eventId`s) by a later `fetch`.
 */
export function flush(leaving = false): void {
  if (!endpoint || !allowed() || navigator.onLine === false) return;
  const now = Date.now();
  if (!leaving && now < retryAt) return schedule(retryAt - now);
  const items = load();
  for (let round = 0; round < (leaving ? 5 : 1); round++) {
    const batch = items.filter((i) => !i.l || i.l < now).slice(0, BATCH_MAX);
    if (!batch.length) break;
    for (const i of batch) i.l = now + (leaving ? BEACON_LEASE_MS : LEASE_MS);
    save(items);
    const body = JSON.stringify({ events: batch.map((i) => i.e) });
    const ids = batch.map((i) => i.e.eventId);
    let beaconed = false;
    if (leaving) {
      try {
        beaconed = navigator.sendBeacon(endpoint, body);
      } catch {
        /* refused */
      }
    }
    if (!beaconed) post(body, ids);
  }
  if (items.length) schedule();
}

/** Drops everything stored about the shopper (consent was declined). */
function forget(): void {
  write(QUEUE_KEY, null);
  write(HISTORY_KEY, null);
  write(SOURCE_KEY, null, 'sessionStorage');
}

export function startEvents(proxy: string, whereWho: WhereWho): void {
  endpoint = proxy + '/analytics';
  here = whereWho;
  const leave = () => {
    for (const end of openings) safe(end)();
    flush(true);
  };
  on(window, 'pagehide', leave);
  on(document, 'visibilitychange', () => (document.visibilityState === 'hidden' ? leave() : schedule()));
  on(window, 'online', () => ((retryAt = 0), flush()));
  on(document, 'visitorConsentCollected', () => (allowed() ? (keepSource(), countSession(), flush()) : forget()));
  if (read(QUEUE_KEY)) schedule(1000);
}

export const flushNow = safe(() => flush());
