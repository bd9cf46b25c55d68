/**
 * The shop's holdout: which browsers see the widgets (`exposed`) and which are kept from them
 * (`holdout`), so that what the widgets sell can be measured. The loader draws a browser's group
 * and keeps it on the device; the checkout pixel reads it back for the browser's orders.
 *
 * Imports nothing and touches no global: node runs its tests on this file as it is.
 */

/** A browser's group, as the service takes it (`group`); it refuses a whole batch for anything else. */
export type Group = 'exposed' | 'holdout';

/** localStorage: the browser's group and when it was drawn ({@link Assignment}). */
export const GROUP_KEY = 'videoapp:group';
/** sessionStorage: set once the tab session's `session` event is recorded. */
export const COUNTED_KEY = 'videoapp:counted';
/**
 * The class on `<html>` of a page whose browser is in the holdout: the app embed's style takes
 * every slot off the page with it.
 */
export const HOLDOUT_CLASS = 'videoapp-holdout';
/** A group is kept this many days after it was drawn, then drawn again. */
export const GROUP_DAYS = 90;
/** The largest holdout a shop may set; a larger value is read as this. */
export const MAX_HOLDOUT_PERCENT = 50;
const GROUP_MS = GROUP_DAYS * 24 * 3600 * 1000;

/** What the device keeps: the group and when it was drawn (Unix ms). */
export interface Assignment {
  g: Group;
  t: number;
}

/**
 * The stored assignment while it holds: readable, and drawn less than {@link GROUP_DAYS} ago. A
 * time far in the future is as unreadable as garbage: it would pin the group for good.
 */
export function storedAssignment(raw: string | null, now: number): Assignment | null {
  try {
    const a = JSON.parse(raw || 'null');
    return a && (a.g === 'exposed' || a.g === 'holdout') && typeof a.t == 'number' && Math.abs(now - a.t) < GROUP_MS
      ? { g: a.g, t: a.t }
      : null;
  } catch {
    return null;
  }
}

/**
 * The assignment a browser keeps under a holdout of `percent`: the stored one while it holds,
 * whatever the percent is now (a browser's group never flips during the experiment), else a new
 * draw, `holdout` with probability percent / 100. `null` when the holdout is off: the stored one
 * is then dropped, and a holdout started later draws afresh.
 */
export function assign(raw: string | null, percent: unknown, now: number, random: () => number = Math.random): Assignment | null {
  const p = typeof percent === 'number' && percent > 0 ? Math.min(percent, MAX_HOLDOUT_PERCENT) : 0;
  if (!p) return null;
  // `p > …`, not `… < p`: minified, `<` before a name reads as a tag to the theme's Liquid parser,
  // and this code is inline in the page's head (holdout-main.ts).
  return storedAssignment(raw, now) || { g: p > random() * 100 ? 'holdout' : 'exposed', t: now };
}

/** The part of `Storage` that {@link firstInSession} uses. */
export interface SessionStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * True once per tab session (the `store` is its sessionStorage), marking it. Where the mark
 * cannot be kept, false: every page would otherwise count the session again.
 */
export function firstInSession(store: SessionStore): boolean {
  try {
    if (store.getItem(COUNTED_KEY)) return false;
    store.setItem(COUNTED_KEY, '1');
    return store.getItem(COUNTED_KEY) === '1';
  } catch {
    return false;
  }
}
