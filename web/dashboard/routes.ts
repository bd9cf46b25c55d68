/**
 * The current page lives in the URL (`?page=widgets`), so a reload, a bookmark or the admin's
 * own history stays on it. Everything else in the query (shop, host, …) is kept as it is.
 */

export type PageId = 'analytics' | 'widgets' | 'videos' | 'settings';

export const PAGES: { id: PageId; label: string }[] = [
  { id: 'analytics', label: 'Analytics' },
  { id: 'widgets', label: 'Widgets' },
  { id: 'videos', label: 'Videos' },
  { id: 'settings', label: 'Settings' },
];

/** One-time launch parameters from the admin: stale after the first load, so never carried on. */
const TRANSIENT = ['id_token', 'hmac', 'timestamp', 'session'];

const isPage = (value: string | null | undefined): value is PageId => PAGES.some((p) => p.id === value);

export function currentPage(loc: Location = location): PageId {
  const fromQuery = new URLSearchParams(loc.search).get('page');
  if (isPage(fromQuery)) return fromQuery;
  const fromHash = loc.hash.replace(/^#\/?/, '');
  return isPage(fromHash) ? fromHash : 'analytics';
}

/** The URL of `page` (or of the app's home, without `page`), keeping the other parameters. */
export function hrefFor(page: PageId | null, loc: Location = location): string {
  const q = new URLSearchParams(loc.search);
  for (const k of TRANSIENT) q.delete(k);
  if (page) q.set('page', page);
  else q.delete('page');
  const s = q.toString();
  return `${loc.pathname}${s ? `?${s}` : ''}`;
}

/** Ordinary clicks navigate in place; a modified click (new tab, new window) is the browser's. */
export const isPlainClick = (e: { button: number; metaKey: boolean; ctrlKey: boolean; shiftKey: boolean; altKey: boolean }): boolean =>
  e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey && !e.altKey;
