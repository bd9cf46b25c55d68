/**
 * videoapp loader: shoppable video widgets on a storefront page.
 *
 * A guest on the merchant's page: one IIFE, one global (`window.videoapp`), no cookies, and
 * nothing it does can throw into the page. docs/STOREFRONT-CLIENT.md describes the markup it
 * reads, the DOM it writes and the events it sends.
 */
import { fetchWidgets, readConfig, type Config } from './config';
import { flushNow, startEvents } from './events';
import { renderWidget } from './render';
import { CSS } from './styles';
import type { Widget } from './types';
import { debug, h, on, safe } from './util';

const VERSION = '1.0.0';
const SLOT = '[data-videoapp-slot]';

const widgetIdOf = (slot: HTMLElement) => (slot.getAttribute('data-videoapp-widget-id') || '').trim().toLowerCase();

function fill(slot: HTMLElement, widgets: Widget[], removeBranding: boolean): void {
  slot.style.minHeight = '';
  slot.setAttribute('data-videoapp-state', widgets.length ? 'ready' : 'empty');
  if (!widgets.length) slot.style.display = 'none';
  for (const w of widgets) slot.append(renderWidget(w, removeBranding));
}

async function load(config: Config, slots: HTMLElement[]): Promise<void> {
  const snippets = slots.filter(widgetIdOf);
  const contextual = slots.filter((s) => !widgetIdOf(s));
  // One request for every slot. With a contextual slot the answer holds every widget the page's
  // rules admit, snippet widgets included; without one, `widget_ids` narrows it to the snippets.
  // Either way a widget whose rules exclude the page is absent and shows nowhere.
  const wanted = [...new Set(snippets.map(widgetIdOf))];
  const answer = await fetchWidgets(config, contextual.length ? null : wanted);
  const widgets = ((answer && answer.widgets) || []).filter(
    (w) => w && typeof w.id === 'string' && Array.isArray(w.videos) && w.videos.length,
  );
  for (const w of widgets) for (const v of w.videos) v.products = Array.isArray(v.products) ? v.products : [];
  const branding = !!(answer && answer.removeBranding);
  const byId = new Map(widgets.map((w) => [w.id.toLowerCase(), w]));
  document.head.append(h('style', '', { 'data-videoapp-style': '' }, [CSS]));
  for (const s of snippets) {
    const w = byId.get(widgetIdOf(s));
    fill(s, w ? [w] : [], branding);
  }
  // Contextual widgets go to the first contextual slot, except those a snippet slot shows.
  contextual.forEach((s, i) =>
    fill(s, i ? [] : widgets.filter((w) => !wanted.includes(w.id.toLowerCase())), branding),
  );
}

function start(config: Config): void {
  let slots = Array.from(document.querySelectorAll<HTMLElement>(SLOT));
  if (!slots.length) {
    const slot = h('div', 'videoapp-slot', { 'data-videoapp-slot': '' });
    (document.querySelector('main') || document.body).append(slot);
    slots = [slot];
  }
  for (const s of slots) s.setAttribute('data-videoapp-state', 'loading');
  let started = false;
  const go = () => {
    if (!started) {
      started = true;
      load(config, slots).catch(debug);
    }
  };
  if (!('IntersectionObserver' in window)) return go();
  // Nothing is fetched until a slot is within one viewport of the screen.
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
    startEvents(config.proxy);
    if (document.readyState === 'loading') on(document, 'DOMContentLoaded', () => start(config));
    else start(config);
  }
} catch (e) {
  debug(e);
}
