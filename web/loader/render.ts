/** Widgets in slots: cards, previews, impressions and what a click does. */
import { track } from './events';
import { loadPlayer } from './player-source';
import { detach, play, posterOf, video } from './media';
import type { Video, Widget } from './types';
import { debug, h, matches, on, read, saveData, url, write } from './util';

/** Card width × height per view style (9:16), for the thumbnails' width/height attributes. */
const SIZES = { compact: 120, default: 160, large: 220 };
const TYPES = ['carousel', 'story', 'productpage', 'floating'];

const seen = new Set<string>();
let observer: IntersectionObserver | null = null;
/** What each observed card does when it becomes visible (impression, preview) or leaves. */
const watchers = new WeakMap<Element, (entry: IntersectionObserverEntry) => void>();

function observe(el: Element, f: (entry: IntersectionObserverEntry) => void): void {
  if (!observer && 'IntersectionObserver' in window) {
    observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          try {
            watchers.get(e.target)?.(e);
          } catch {
            /* one card's failure does not stop the others */
          }
        }
      },
      { threshold: [0, 0.5] },
    );
  }
  watchers.set(el, f);
  observer?.observe(el);
}

const clock = (s: number) => {
  const t = Math.round(s);
  return `${(t / 60) | 0}:${String(t % 60).padStart(2, '0')}`;
};

/** sessionStorage: the floating widgets the shopper closed in this session. */
const DISMISSED_KEY = 'videoapp:dismissed';
const dismissed = (): string[] => {
  try {
    const ids = JSON.parse(read(DISMISSED_KEY, 'sessionStorage') || '[]');
    return Array.isArray(ids) ? ids : [];
  } catch {
    return [];
  }
};

/** Whether the shopper closed this floating widget in this session. */
export const isDismissed = (w: Widget) => dismissed().includes(w.id);

/** The widget's root element, ready to insert. */
export function renderWidget(w: Widget, removeBranding: boolean): HTMLElement {
  const type = TYPES.includes(w.type) ? w.type : 'carousel';
  const floating = type === 'floating';
  const style = w.viewStyle === 'compact' || w.viewStyle === 'large' ? w.viewStyle : 'default';
  const round = type === 'story' || floating;
  const width = floating ? 80 : round ? 72 : SIZES[style];
  const height = round ? width : Math.round((width * 16) / 9);
  const track_ = h('ul', 'videoapp-track', { role: 'list' });
  const root = h(
    'section',
    `videoapp-widget videoapp-widget--${type} videoapp-widget--${style}`,
    { 'data-videoapp-widget': w.id, 'data-videoapp-type': type, 'aria-label': w.title || 'Videos' },
    [w.title && !floating && h('h2', 'videoapp-title', {}, [w.title]), track_],
  );
  // A floating widget is one round preview; the player opens on it with all of its videos.
  (floating ? w.videos.slice(0, 1) : w.videos).forEach((v, i) => track_.append(card(w, v, i, type, width, height)));
  if (floating) {
    const close = h('button', 'videoapp-dismiss', { type: 'button', 'aria-label': 'Close videos' }, ['\u00d7']);
    on(close, 'click', () => {
      write(DISMISSED_KEY, JSON.stringify([...dismissed(), w.id]), 'sessionStorage');
      root.remove();
    });
    root.append(close);
  } else if (!removeBranding) root.append(h('p', 'videoapp-brand', {}, ['Powered by videoapp']));
  return root;
}

/** What a floating widget must never cover: the store's cart and checkout. */
const CART = '[name="checkout"],a[href$="/cart"],a[href*="/cart?"],a[href$="/checkout"],#cart-icon-bubble';
const INTERACTIVE = 'a[href],button,input,select,[role="button"]';
const EDGE = 16;
/** Room kept around the preview (its close button sticks out by 8 px). */
const MARGIN = 10;

/** Whether `el` stays put on the screen: fixed, or sticky, itself or through an ancestor. */
const pinned = (el: Element | null): boolean => {
  for (; el && el !== document.body; el = el.parentElement) {
    const p = getComputedStyle(el).position;
    if (p === 'fixed' || p === 'sticky') return true;
  }
  return false;
};

/**
 * Puts a floating widget in the bottom corner (right, else left) where it covers neither a
 * cart or checkout control nor a fixed or sticky control of the page; where both corners
 * would, it hides until one is free (checked again on scroll and resize).
 */
export function pin(root: HTMLElement): void {
  let queued = false;
  const place = () => {
    queued = false;
    if (!root.isConnected) return;
    const w = root.offsetWidth + 2 * MARGIN;
    const ht = root.offsetHeight + 2 * MARGIN;
    const vw = document.documentElement.clientWidth;
    const top = innerHeight - EDGE - ht + MARGIN;
    const covers = (left: number) => {
      const right = left + w;
      const bottom = top + ht;
      const hit = (r: DOMRect) => r.width > 0 && r.left < right && r.right > left && r.top < bottom && r.bottom > top;
      for (const el of document.querySelectorAll(CART)) if (!root.contains(el) && hit(el.getBoundingClientRect())) return true;
      for (const x of [left, left + w / 2, right - 1]) {
        for (const y of [top, top + ht / 2, bottom - 1]) {
          for (const el of document.elementsFromPoint(x, y)) {
            const control = !root.contains(el) && el.closest(INTERACTIVE);
            if (control && pinned(control)) return true;
          }
        }
      }
      return false;
    };
    const corner = !covers(vw - EDGE - w + MARGIN) ? 'right' : !covers(EDGE - MARGIN) ? 'left' : '';
    if (corner) root.setAttribute('data-videoapp-corner', corner);
    root.toggleAttribute('data-videoapp-covering', !corner);
  };
  const later = () => {
    if (!queued) {
      queued = true;
      requestAnimationFrame(place);
    }
  };
  place();
  on(window, 'scroll', later, { passive: true });
  on(window, 'resize', later);
}

function card(w: Widget, v: Video, i: number, type: string, width: number, height: number): HTMLLIElement {
  const story = type === 'story';
  const poster = posterOf(v);
  const media = h('span', 'videoapp-media', {}, [
    poster && h('img', '', { src: poster, alt: '', loading: 'lazy', decoding: 'async', width, height }),
    type !== 'story' && type !== 'floating' && v.duration > 0 && h('span', 'videoapp-dur', { 'aria-hidden': 'true' }, [clock(v.duration)]),
  ]);
  const button = h('button', 'videoapp-card', { type: 'button', 'data-videoapp-video': v.id, 'aria-label': v.title || `Video ${i + 1}` }, [
    media,
    v.title && h('span', 'videoapp-name', { 'aria-hidden': 'true' }, [v.title]),
  ]);
  const item = h('li', 'videoapp-item', {}, [button]);
  let preview: HTMLVideoElement | null = null;
  let inline: HTMLVideoElement | null = null;
  const mini = url(v.miniVersionUrl);

  observe(button, (e) => {
    if (e.intersectionRatio >= 0.5 && !seen.has(w.id + v.id)) {
      seen.add(w.id + v.id);
      track('impression', w.id, v.id);
    }
    // The preview exists only while its card is on screen, never under reduced motion or data
    // saving; off screen it is detached, so a long page never buffers previews nobody sees.
    if (!e.isIntersecting) return (preview = detach(preview));
    loadPlayer().then((p) => p.warm(v), debug);
    if (inline || document.querySelector('[data-videoapp-player]')) return preview?.pause();
    if (!mini || matches('(prefers-reduced-motion: reduce)') || saveData()) return;
    if (!preview) {
      preview = video('videoapp-preview', mini, poster, { muted: '', loop: '', 'aria-hidden': 'true' });
      preview.muted = true;
      media.append(preview);
    }
    play(preview);
  });

  let opening = false;
  on(button, 'click', async () => {
    const first = v.products[0];
    const target = first && url(first.url);
    if (w.clickBehavior === 'open_product' && target) {
      track('click', w.id, v.id);
      location.assign(target);
    } else if (w.clickBehavior === 'none' && !story && type !== 'floating') {
      if (inline || opening) return;
      opening = true;
      const p = await loadPlayer().finally(() => (opening = false));
      preview = detach(preview);
      inline = p.fullVideo('videoapp-inline', v, { controls: '' });
      // An inline video has no close: its opening ends, with its watch, when the page hides.
      p.watch(inline, w, v);
      item.append(inline);
      track('click', w.id, v.id);
      play(inline);
      inline.focus();
    } else if (!opening) {
      opening = true;
      const p = await loadPlayer().finally(() => (opening = false));
      if (!document.querySelector('[data-videoapp-player]')) p.openPlayer(w, i, button, story);
    }
  });
  return item;
}
