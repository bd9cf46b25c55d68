/**
 * Where the merchant is lives in the URL, so a reload, a bookmark, a shared link or the
 * browser's Back and Forward open the same screen:
 *
 *   ?page=widgets                      the widget list
 *   ?page=widgets&widget=new           the form creating a widget
 *   ?page=widgets&widget=<id>          the form editing one
 *   ?page=videos&video=<id>            the form editing a video (`video=new`: adding one by URL)
 *   ?page=videos&add=1                 adding videos; a form opened from there keeps `add=1`,
 *                                      so it goes back there
 *   ?page=videos&stats=<id>            a video's page: what shoppers did with it; opened from
 *                                      Analytics, it carries `from=analytics` to go back there
 *
 * Everything else in the query (shop, host, …) is kept as it is.
 */

export type PageId = 'analytics' | 'widgets' | 'videos' | 'settings';

export const PAGES: { id: PageId; label: string }[] = [
  { id: 'analytics', label: 'Analytics' },
  { id: 'widgets', label: 'Widgets' },
  { id: 'videos', label: 'Videos' },
  { id: 'settings', label: 'Settings' },
];

export interface Route {
  page: PageId;
  /** The widget being edited, or `new`. */
  widget?: string;
  /** The video being edited, or `new` for the form that adds one by URL. */
  video?: string;
  /** The "Add videos" page, or a form opened from it. */
  add?: boolean;
  /** The video whose page (its numbers) is shown. */
  stats?: string;
  /** The page a video's page was opened from, when it is not Videos. */
  from?: 'analytics';
}

/** One-time launch parameters from the admin: stale after the first load, so never carried on. */
const TRANSIENT = ['id_token', 'hmac', 'timestamp', 'session'];
/** The parameters a route writes; each route sets the ones it has and drops the others. */
const ROUTE_KEYS = ['page', 'widget', 'video', 'add', 'stats', 'from'];

const isPage = (value: string | null | undefined): value is PageId => PAGES.some((p) => p.id === value);

export function currentPage(loc: Location = location): PageId {
  return currentRoute(loc).page;
}

export function currentRoute(loc: Location = location): Route {
  const q = new URLSearchParams(loc.search);
  const fromQuery = q.get('page');
  const fromHash = loc.hash.replace(/^#\/?/, '');
  const page: PageId = isPage(fromQuery) ? fromQuery : isPage(fromHash) ? fromHash : 'analytics';
  const widget = q.get('widget') || undefined;
  const video = q.get('video') || undefined;
  if (page === 'widgets' && widget) return { page, widget };
  if (page === 'videos') {
    const stats = q.get('stats');
    if (stats && !video) return { page, stats, ...(q.get('from') === 'analytics' ? { from: 'analytics' as const } : {}) };
    const add = q.get('add') === '1';
    return { page, ...(video ? { video } : {}), ...(add ? { add } : {}) };
  }
  return { page };
}

/** This address without the admin's one-time parameters: a reload or a shared link carries no session token. */
export function withoutLaunchParameters(loc: Location = location): string {
  const q = new URLSearchParams(loc.search);
  for (const k of TRANSIENT) q.delete(k);
  const s = q.toString();
  return `${loc.pathname}${s ? `?${s}` : ''}${loc.hash}`;
}

/** The URL of `route` (or of the app's home, without `page`), keeping the other parameters. */
export function hrefOf(route: Route | null, loc: Location = location): string {
  const q = new URLSearchParams(loc.search);
  for (const k of [...TRANSIENT, ...ROUTE_KEYS]) q.delete(k);
  if (route) {
    q.set('page', route.page);
    if (route.widget) q.set('widget', route.widget);
    if (route.video) q.set('video', route.video);
    if (route.add) q.set('add', '1');
    if (route.stats) q.set('stats', route.stats);
    if (route.from) q.set('from', route.from);
  }
  const s = q.toString();
  return `${loc.pathname}${s ? `?${s}` : ''}`;
}

/** The URL of `page` (or of the app's home, without `page`), keeping the other parameters. */
export const hrefFor = (page: PageId | null, loc: Location = location): string => hrefOf(page ? { page } : null, loc);

export const sameRoute = (a: Route, b: Route): boolean =>
  a.page === b.page && a.widget === b.widget && a.video === b.video && !!a.add === !!b.add && a.stats === b.stats && a.from === b.from;

/** Ordinary clicks navigate in place; a modified click (new tab, new window) is the browser's. */
export const isPlainClick = (e: { button: number; metaKey: boolean; ctrlKey: boolean; shiftKey: boolean; altKey: boolean }): boolean =>
  e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey && !e.altKey;
