/**
 * The dashboard's first calls, with no React in them, so that they can start before the bundle
 * has loaded: `boot.js`, a few kilobytes the shell loads beside the bundle (`async`), starts
 * them and leaves the boot under way in `window.videoappBoot` for the bundle to take over
 * (`main.tsx`).
 *
 * The first call: the app installs itself on the shop (`POST /app/api/install`, which changes
 * nothing once installed) and the merchant sees what happens until the install's work (the
 * checkout pixel, the collections, the products) is done.
 */
import { ApiError, earlyAnswers, get, post, prefetch, shopPath } from './api';
import type { OpenedShop } from './context';
import { presetRange } from './dates';
import { HOME_PRESET, seriesRequest, summaryRequest } from './home';
import { currentRoute } from './routes';
import { NoSessionError, resolveShop } from './session';
import type { Installed, Shop } from './types';

/** What the install is doing, as a merchant understands it. */
export type InstallStep = 'connecting' | 'importing';

/** How often the install is asked again while its work is under way. */
const POLL_MS = 750;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Installs the app for the session's shop and waits until its products are imported, telling
 * `onStep` each step. Resolves when there is nothing (more) to wait for: also when this instance
 * has no platform settings (404), where shops are provisioned through the admin API instead.
 * Whether this call installed the app (the shop was not there before).
 */
export async function installApp(onStep: (step: InstallStep) => void): Promise<boolean> {
  onStep('connecting');
  let answer: Installed;
  try {
    answer = await post<Installed>('/install', {});
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return false;
    throw e;
  }
  const installedNow = answer.installedNow;
  while (answer.importing) {
    onStep('importing');
    await sleep(POLL_MS);
    answer = await post<Installed>('/install', {});
  }
  return installedNow;
}

/**
 * The home page's first data, asked for as soon as the shop (its timezone) is known: the answers
 * come back while React draws the page that reads them.
 */
function prefetchHome(shop: Shop): void {
  if (currentRoute().page !== 'analytics') return;
  const range = presetRange(HOME_PRESET, shop.timezone);
  prefetch(...summaryRequest(range));
  prefetch(...seriesRequest(range));
}

export type Boot =
  | { state: 'loading' }
  | { state: 'ready'; value: OpenedShop }
  | { state: 'no-session' }
  | { state: 'not-installed' }
  | { state: 'failed'; message: string };

async function boot(onStep: (step: InstallStep) => void): Promise<Boot> {
  // The shop is asked for while the install is checked: on every open but the first, the install
  // changes nothing and the shop is the one read, a round trip sooner. A shop the service already
  // knows opens even if the install fails.
  const domain = resolveShop();
  const shopRead = domain.then((d) => get<Shop>(shopPath(d)));
  shopRead.then(prefetchHome, () => undefined);
  let installFailure: string | null = null;
  let installedNow = false;
  try {
    installedNow = await installApp(onStep);
  } catch (e) {
    if (e instanceof NoSessionError) return { state: 'no-session' };
    if (e instanceof ApiError && e.status === 401) return { state: 'no-session' };
    installFailure = e instanceof Error ? e.message : String(e);
  }
  try {
    // The early answer stands unless it was asked before this call installed the shop.
    const shop = await shopRead.catch((e: unknown) => {
      if (installedNow || installFailure) return domain.then((d) => get<Shop>(shopPath(d)));
      throw e;
    });
    return { state: 'ready', value: { domain: await domain, shop } };
  } catch (e) {
    if (e instanceof NoSessionError) return { state: 'no-session' };
    if (e instanceof ApiError && e.status === 401) return { state: 'no-session' };
    if (e instanceof ApiError && e.status === 404) {
      return installFailure ? { state: 'failed', message: installFailure } : { state: 'not-installed' };
    }
    return { state: 'failed', message: e instanceof Error ? e.message : String(e) };
  }
}

/** A boot under way: its outcome, and its latest step for whoever shows it. */
export interface Booting {
  result: Promise<Boot>;
  step: InstallStep;
  onStep: ((step: InstallStep) => void) | null;
  /** The answers it asked for early (api.ts), for the bundle's own API client. */
  answers: Map<string, Promise<unknown>>;
}

declare global {
  interface Window {
    /** The boot under way: started by `boot.js`, or by the bundle should it run first. */
    videoappBoot?: Booting;
  }
}

export function startBoot(): Booting {
  const booting: Booting = { result: Promise.resolve({ state: 'loading' }), step: 'connecting', onStep: null, answers: earlyAnswers() };
  booting.result = boot((step) => {
    booting.step = step;
    booting.onStep?.(step);
  });
  return booting;
}
