/**
 * videoapp loader: shoppable video widgets on a storefront page.
 *
 * A guest on the merchant's page: one IIFE, one global (`window.videoapp`), no cookies, and
 * nothing it does can throw into the page. docs/STOREFRONT-CLIENT.md describes the markup it
 * reads, the DOM it writes and the events it sends.
 */
import { assign, GROUP_KEY, HOLDOUT_CLASS, storedAssignment, type Group } from '../shared/holdout';
import { fetchWidgets, readConfig, type Config } from './config';
import { whereWhoHere } from './context';
import { flushNow, joinGroup, keepFor, startEvents } from './events';
import { playerAt } from './player-source';
import { isDismissed, pin, renderWidget } from './render';
import { CSS } from './styles';
import type { Widget } from './types';
import { debug, h, on, read, safe, write } from './util';

const VERSION = '1.0.0';
const SLOT = '[data-videoapp-slot]';

const widgetIdOf = (slot: HTMLElement) => (slot.getAttribute('data-videoapp-widget-id') || '').trim().toLowerCase();

/** Takes no space: a slot with nothing to show, or any slot of a browser in the holdout. */
const collapse = (slot: HTMLElement) => {
  slot.style.minHeight = '';
  slot.style.display = 'none';
};

function fill(slot: HTMLElement, widgets: Widget[], removeBranding: boolean): void {
  collapse(slot);
  slot.setAttribute('data-videoapp-state', widgets.length ? 'ready' : 'empty');
  // A slot collapsed at start for the holdout shows again once the shop has ended it.
  if (widgets.length) slot.style.display = '';
  for (const w of widgets) slot.append(renderWidget(w, removeBranding));
}

/**
 * The theme editor is outside the experiment: the merchant must see the widgets being placed,
 * whatever group the browser is in on the storefront.
 */
const editing = () => !!(window.Shopify && window.Shopify.designMode);

/** The browser's group as the device keeps it (none while it is not drawn, or has expired). */
const keptGroup = (): Group | undefined => (editing() ? undefined : storedAssignment(read(GROUP_KEY), Date.now())?.g);

/**
 * The browser's group under the shop's holdout of `percent`, drawn on the first answer that has
 * one and kept on the device. A browser that cannot keep it stays out of the experiment: it would
 * draw again on every page.
 */
function decideGroup(percent: unknown): Group | undefined {
  if (editing()) return undefined;
  const raw = read(GROUP_KEY);
  const kept = assign(raw, percent, Date.now());
  const text = kept && JSON.stringify(kept);
  if (text !== raw) write(GROUP_KEY, text);
  return kept && read(GROUP_KEY) === text ? kept.g : undefined;
}

async function load(config: Config, slots: HTMLElement[], group: Group | undefined): Promise<void> {
  const snippets = slots.filter(widgetIdOf);
  const contextual = slots.filter((s) => !widgetIdOf(s));
  // One request for every slot and the page's floating widgets: the answer holds every widget
  // the page's rules admit, snippet widgets included (never narrowed by `widget_ids`, which
  // would leave out the floating ones). A widget whose rules exclude the page shows nowhere.
  const wanted = [...new Set(snippets.map(widgetIdOf))];
  const answer = await fetchWidgets(config);
  if (answer) {
    keepFor(answer.attributionWindowDays);
    // Decided before anything renders: a browser in the holdout never sees a widget.
    joinGroup((group = decideGroup(answer.holdoutPercent)));
    // The page's head took the slots off for a holdout the shop has ended since.
    document.documentElement.classList.toggle(HOLDOUT_CLASS, group === 'holdout');
  }
  if (group === 'holdout') return slots.forEach((s) => fill(s, [], false));
  const all = ((answer && answer.widgets) || []).filter((w) => w && typeof w.id === 'string' && Array.isArray(w.videos) && w.videos.length);
  for (const w of all) for (const v of w.videos) v.products = Array.isArray(v.products) ? v.products : [];
  // Floating widgets belong to the page, not to a slot: fixed in a corner, taking no space.
  const floating = all.filter((w) => w.type === 'floating');
  const widgets = all.filter((w) => w.type !== 'floating');
  const branding = !!(answer && answer.removeBranding);
  const byId = new Map(widgets.map((w) => [w.id.toLowerCase(), w]));
  document.head.append(h('style', '', { 'data-videoapp-style': '' }, [CSS]));
  for (const w of floating) {
    if (isDismissed(w)) continue;
    const root = renderWidget(w, branding);
    document.body.append(root);
    pin(root);
  }
  for (const s of snippets) {
    const w = byId.get(widgetIdOf(s));
    fill(s, w ? [w] : [], branding);
  }
  // Contextual widgets go to the first contextual slot, except those a snippet slot shows.
  contextual.forEach((s, i) => fill(s, i ? [] : widgets.filter((w) => !wanted.includes(w.id.toLowerCase())), branding));
}

function start(config: Config, group: Group | undefined): void {
  let slots = Array.from(document.querySelectorAll<HTMLElement>(SLOT));
  if (!slots.length) {
    const slot = h('div', 'videoapp-slot', { 'data-videoapp-slot': '' });
    (document.querySelector('main') || document.body).append(slot);
    slots = [slot];
  }
  for (const s of slots) {
    s.setAttribute('data-videoapp-state', 'loading');
    // Known from an earlier page: the space the theme reserves goes before the answer comes.
    if (group === 'holdout') collapse(s);
  }
  let started = false;
  const go = () => {
    if (!started) {
      started = true;
      load(config, slots, group).catch(debug);
    }
  };
  if (!('IntersectionObserver' in window)) return go();
  // Nothing is fetched while the page loads unless a slot is within one viewport of the screen;
  // once it has loaded and the browser is idle, the answer is fetched anyway: a floating widget
  // shows on the page whether or not a slot is near.
  const idle = () => ('requestIdleCallback' in window ? requestIdleCallback(go, { timeout: 2000 }) : setTimeout(go, 200));
  if (document.readyState === 'complete') idle();
  else on(window, 'load', idle);
  const io = new IntersectionObserver(
    safe((entries: IntersectionObserverEntry[]) => {
      if (entries.some((e) => e.isIntersecting)) {
        io.disconnect();
        go();
      }
    }),
    { rootMargin: '100% 0px' },
  );
  for (const s of slots) io.observe(s);
}

try {
  if (!window.videoapp) {
    const config = readConfig();
    window.videoapp = { version: VERSION, flush: flushNow };
    playerAt(config.player);
    startEvents(config.proxy, whereWhoHere(config.placement));
    const group = keptGroup();
    // A kept group counts the session now, before anything differs between the groups: the
    // answer comes sooner where a slot is near, and a browser in the holdout shows none.
    joinGroup(group);
    if (document.readyState === 'loading') on(document, 'DOMContentLoaded', () => start(config, group));
    else start(config, group);
  }
} catch (e) {
  debug(e);
}
