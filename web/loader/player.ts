/** The modal player: the full video, its products and add-to-cart. */
import { remember, track } from './events';
import type { Product, Video, Widget } from './types';
import { productGid } from '../shared/storage';
import { streamable, stream } from './stream';
import { h, on, safe, url } from './util';

/** Counts real playback (pauses and seeks excluded) and calls `done` once at 3 s. */
export function watch(video: HTMLVideoElement, w: Widget, v: Video): void {
  let played = 0;
  let last = -1;
  on(video, 'seeking', () => (last = -1));
  on(video, 'timeupdate', () => {
    const t = video.currentTime;
    const d = t - last;
    if (played < 3 && !video.paused && last >= 0 && d > 0 && d < 1.5 && (played += d) >= 3) {
      track('view', w.id, v.id);
      remember('views', { videoId: v.id, widgetId: w.id, productIds: v.products.map((p) => p.id).slice(0, 20) });
    }
    last = t;
  });
}

/** A `<video>` that loads nothing until played; `poster` is the poster image. */
export const video = (cls: string, src: string | null, poster: string | null, extra: Record<string, string> = {}) =>
  h('video', cls, { src, poster: poster, preload: 'none', playsinline: '', ...extra });

export const play = (v: HTMLVideoElement) => {
  const p = v.play();
  if (p) p.catch(() => {});
};

/** Stops `v` and drops its source: a paused video would otherwise go on buffering. */
export const detach = (v: HTMLVideoElement | null): null => {
  if (v) {
    v.pause();
    v.removeAttribute('src');
    v.load();
    v.remove();
  }
  return null;
};

export const posterOf = (v: Video) => url(v.posterUrl) || url(v.thumbnail);

let nativeHls: boolean | undefined;

/**
 * The full video, loading nothing until played: its renditions streamed (./stream.ts) where the
 * browser has Media Source Extensions, else its HLS master playlist where the browser plays HLS
 * itself (Safari on iPhone), else the progressive MP4; each next one when the one before fails.
 */
export function fullVideo(cls: string, v: Video, extra: Record<string, string>): HTMLVideoElement {
  nativeHls ??= !!h('video').canPlayType('application/vnd.apple.mpegurl');
  const hls = url(v.hlsUrl);
  const el = video(cls, null, posterOf(v), extra);
  const rest = [nativeHls && hls, url(v.videoUrl)].filter((s): s is string => !!s);
  const next = () => {
    const src = rest.shift();
    // Only a player still on the page: a detached one stays silent.
    if (src && el.isConnected) {
      const at = el.currentTime;
      el.src = src;
      el.currentTime = at;
      play(el);
    }
  };
  on(el, 'error', next);
  if (streamable(v)) stream(el, v, next);
  else if (rest[0]) el.src = rest.shift()!;
  return el;
}

const FOCUSABLE = 'button:not([disabled]),a[href],video[controls],[tabindex]:not([tabindex="-1"])';

/** Opens the player on `w.videos[index]`; focus returns to `opener` on close. */
export function openPlayer(w: Widget, index: number, opener: HTMLElement, full: boolean): void {
  const doc = document;
  const root = doc.documentElement;
  const overflow = root.style.overflow;
  const count = w.videos.length;
  const close = h('button', 'videoapp-close', { type: 'button', 'aria-label': 'Close' }, ['\u00d7']);
  const stage = h('div', 'videoapp-stage');
  const products = h('ul', 'videoapp-products');
  const dialog = h('div', 'videoapp-dialog', {}, [close, stage, products]);
  const overlay = h(
    'div',
    `videoapp-overlay videoapp-layout--${w.modalLayout === 'horizontal' ? 'horizontal' : 'vertical'}${full ? ' videoapp-overlay--full' : ''}`,
    { 'data-videoapp-player': '', role: 'dialog', 'aria-modal': 'true', 'data-videoapp-widget-id': w.id },
    [dialog],
  );
  let current: HTMLVideoElement | null = null;

  const show = (i: number) => {
    index = (i + count) % count;
    const v = w.videos[index]!;
    detach(current);
    current = fullVideo('videoapp-video', v, { controls: '', autoplay: '' });
    overlay.setAttribute('aria-label', v.title || 'Video');
    overlay.setAttribute('data-videoapp-video-id', v.id);
    watch(current, w, v);
    stage.replaceChildren(current);
    if (count > 1) {
      const step = (d: number, label: string, cls: string) => {
        const b = h('button', cls, { type: 'button', 'aria-label': label }, [d < 0 ? '\u2039' : '\u203a']);
        on(b, 'click', () => show(index + d));
        return b;
      };
      stage.append(step(-1, 'Previous video', 'videoapp-prev'), step(1, 'Next video', 'videoapp-next'));
    }
    products.replaceChildren(...v.products.map((p) => product(w, v, p)));
    products.hidden = !v.products.length;
    track('click', w.id, v.id);
    play(current);
  };

  const shut = () => {
    current = detach(current);
    overlay.remove();
    root.style.overflow = overflow;
    doc.removeEventListener('keydown', keys, true);
    doc.removeEventListener('focusin', inside, true);
    opener.focus();
  };
  const keys = safe((e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      shut();
    } else if (e.key === 'Tab') {
      const all = Array.from(dialog.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((el) => !el.closest('[hidden]'));
      const first = all[0];
      const last = all[all.length - 1];
      if (e.shiftKey ? doc.activeElement === first : doc.activeElement === last) {
        e.preventDefault();
        (e.shiftKey ? last : first)?.focus();
      }
    }
  });
  // Focus that escapes the dialog (e.g. by a click outside the browser window) comes back.
  const inside = safe((e: FocusEvent) => {
    if (!overlay.contains(e.target as Node)) close.focus();
  });

  on(close, 'click', shut);
  on(overlay, 'click', (e) => e.target === overlay && shut());
  doc.addEventListener('keydown', keys, true);
  doc.addEventListener('focusin', inside, true);
  root.style.overflow = 'hidden';
  // Previews behind the player stop (they resume when their cards next come into view).
  doc.querySelectorAll<HTMLVideoElement>('.videoapp-preview').forEach((p) => p.pause());
  doc.body.append(overlay);
  show(index);
  close.focus();
}

function product(w: Widget, v: Video, p: Product): HTMLLIElement {
  const status = h('span', 'videoapp-status', { role: 'status' });
  const button = h('button', 'videoapp-btn', { type: 'button', 'data-videoapp-add-to-cart': p.id }, ['Add to cart']);
  const li = h('li', 'videoapp-product', {}, [
    url(p.image) && h('img', '', { src: url(p.image), alt: '', width: 64, height: 64, loading: 'lazy' }),
    h('a', 'videoapp-pname', { href: url(p.url) }, [p.title]),
    button,
    status,
  ]);
  const state = (s: string, text: string) => {
    li.setAttribute('data-videoapp-state', s);
    status.textContent = text;
  };
  on(button, 'click', async () => {
    // aria-disabled, not disabled: a disabled button drops the focus to the page, out of the
    // dialog, without a focusin the trap could catch.
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    state('pending', 'Adding\u2026');
    try {
      const base = (window.Shopify && window.Shopify.routes && window.Shopify.routes.root) || '/';
      const handle = p.handle || (/\/products\/([^/?#]+)/.exec(p.url || '') || [])[1];
      const json = { accept: 'application/json' };
      const r = await fetch(`${base}products/${encodeURIComponent(decodeURIComponent(handle || ''))}.js`, { headers: json });
      if (!r.ok) throw r.status;
      const variant = ((await r.json()).variants as { id: number; available: boolean }[] | undefined)?.find((x) => x.available);
      if (!variant) return state('soldout', 'Sold out');
      const add = await fetch(`${base}cart/add.js`, {
        method: 'POST',
        headers: { ...json, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ id: variant.id, quantity: 1 }] }),
      });
      // 422: the platform refuses the quantity (sold out, or all of the stock is in the cart).
      if (add.status === 422) return state('soldout', 'Sold out');
      if (!add.ok) throw add.status;
      state('added', 'Added to cart');
      track('add_to_cart', w.id, v.id, productGid(p.id));
      remember('carts', { productId: productGid(p.id), videoId: v.id, widgetId: w.id });
      document.dispatchEvent(
        new CustomEvent('videoapp:add-to-cart', { detail: { productId: p.id, variantId: variant.id, videoId: v.id, widgetId: w.id } }),
      );
    } catch (e) {
      state('error', 'Could not add to cart');
      throw e;
    } finally {
      if (li.getAttribute('data-videoapp-state') !== 'soldout') button.removeAttribute('aria-disabled');
    }
  });
  return li;
}
