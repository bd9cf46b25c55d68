/** The player: the full video, its products and add-to-cart; stories; captions. */
import { host } from './host';
import { detach, play, posterOf, video } from './media';
import type { Caption, Product, Video, Widget } from './types';
import { productGid } from '../shared/storage';
import { streamable, stream } from './stream';
import { debug, h, on, safe, url } from './util';

/**
 * Follows one opening of `v` in `video`: real playback (pauses and seeks excluded), with a `view`
 * once at 3 s, and the furthest point reached. The function returned ends the opening and sends
 * its `watch`; the page being hidden while it is open ends it too (once: a later call does
 * nothing).
 */
export function watch(video: HTMLVideoElement, w: Widget, v: Video): () => void {
  let played = 0;
  let last = -1;
  let furthest = 0;
  let open = true;
  const length = () => {
    const d = video.duration;
    return d > 0 && isFinite(d) ? d : v.duration > 0 ? v.duration : 0;
  };
  on(video, 'seeking', () => (last = -1));
  on(video, 'timeupdate', () => {
    if (!open) return;
    const t = video.currentTime;
    const d = t - last;
    if (!video.paused && last >= 0 && d > 0 && d < 1.5) {
      if (played < 3 && played + d >= 3) {
        host.track('view', w.id, v.id);
        host.remember('views', { videoId: v.id, widgetId: w.id, productIds: v.products.map((p) => p.id).slice(0, 20) });
      }
      played += d;
    }
    const len = length();
    if (len) furthest = Math.max(furthest, t / len);
    last = t;
  });
  const end = () => {
    if (!open) return;
    open = false;
    host.openings.delete(end);
    const len = length();
    // A video left playing on a loop, or a clock gone wrong, is not hours of watching.
    const watched = len ? Math.min(played, len * 3) : played;
    const reached = video.ended ? 1 : Math.min(1, furthest);
    host.track('watch', w.id, v.id, { watchedMs: Math.round(watched * 1000), maxPercent: Math.floor(reached * 100) });
  };
  host.openings.add(end);
  return end;
}

let nativeHls: boolean | undefined;

const captionsOf = (v: Video): Caption[] =>
  (Array.isArray(v.captions) ? v.captions : []).filter((c) => c && typeof c.language === 'string' && url(c.url));

/** The language's name in the shopper's own language ("English", "Deutsch" …), else its tag. */
const languageName = (tag: string) => {
  try {
    return new Intl.DisplayNames([navigator.language], { type: 'language' }).of(tag) || tag;
  } catch {
    return tag;
  }
};

/**
 * The full video, loading nothing until played: its renditions streamed (./stream.ts) where the
 * browser has Media Source Extensions, else its HLS master playlist where the browser plays HLS
 * itself (Safari on iPhone), else the progressive MP4; each next one when the one before fails.
 * Each caption file is a `<track>`; captions on another origin need a CORS request, and so the
 * video's `crossorigin`.
 */
export function fullVideo(cls: string, v: Video, extra: Record<string, string>): HTMLVideoElement {
  nativeHls ??= !!h('video').canPlayType('application/vnd.apple.mpegurl');
  const hls = url(v.hlsUrl);
  const captions = captionsOf(v);
  const foreign = captions.some((c) => new URL(c.url, location.href).origin !== location.origin);
  const el = video(cls, null, posterOf(v), foreign ? { ...extra, crossorigin: 'anonymous' } : extra);
  for (const c of captions) {
    el.append(h('track', '', { kind: 'captions', src: c.url, srclang: c.language, label: languageName(c.language) }));
  }
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

/** The caption track to show: the shopper's language, else the first. */
const preferred = (tracks: TextTrackList) => {
  const langs = (navigator.languages || [navigator.language]).map((l) => l.toLowerCase().split('-')[0]);
  for (const l of langs) for (let i = 0; i < tracks.length; i++) if (tracks[i]!.language.toLowerCase().split('-')[0] === l) return i;
  return 0;
};

/** A speaker; its waves show while sound plays, a cross while muted (styles.ts). */
const MUTE_ICON =
  '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2"><path d="M3 9h4l5-4v14l-5-4H3z" fill="currentColor"/><path class="videoapp-on" d="M16 8.5a5 5 0 0 1 0 7"/><path class="videoapp-off" d="M16 9l6 6m0-6l-6 6"/></svg>';

const FOCUSABLE = 'button:not([disabled]),select:not([disabled]),a[href],video[controls],[tabindex]:not([tabindex="-1"])';
/** A horizontal move longer than this (CSS px) is a swipe. */
const SWIPE_PX = 40;

/**
 * Opens the player on `w.videos[index]`; focus returns to `opener` on close. A story plays
 * full-screen as stories do: a progress bar per video, the next one at the end (closing after
 * the last), a tap on the left or right third or a swipe to move, arrow keys on a desktop. A
 * shopper busy with a video's products (choosing, adding) is not moved on: it stays at its end.
 */
export function openPlayer(w: Widget, index: number, opener: HTMLElement, story: boolean): void {
  const doc = document;
  const root = doc.documentElement;
  const overflow = root.style.overflow;
  const count = w.videos.length;
  const close = h('button', 'videoapp-close', { type: 'button', 'aria-label': 'Close' }, ['\u00d7']);
  const mute = h('button', 'videoapp-mute', { type: 'button', 'aria-label': 'Mute', 'aria-pressed': 'false' });
  mute.innerHTML = MUTE_ICON;
  const cc = h('button', 'videoapp-cc', { type: 'button', 'aria-label': 'Captions', 'aria-pressed': 'false' }, ['CC']);
  const bars = h('div', 'videoapp-bars', { 'aria-hidden': 'true' });
  const fills = w.videos.map(() => {
    const fill = h('i');
    bars.append(h('span', 'videoapp-bar', {}, [fill]));
    return fill;
  });
  const stage = h('div', 'videoapp-stage');
  const products = h('ul', 'videoapp-products');
  const dialog = h('div', 'videoapp-dialog', {}, [story && bars, close, mute, cc, stage, products]);
  const overlay = h(
    'div',
    `videoapp-overlay videoapp-layout--${w.modalLayout === 'horizontal' ? 'horizontal' : 'vertical'}${story ? ' videoapp-overlay--full videoapp-overlay--story' : ''}`,
    { 'data-videoapp-player': '', role: 'dialog', 'aria-modal': 'true', 'data-videoapp-widget-id': w.id },
    [dialog],
  );
  let current: HTMLVideoElement | null = null;
  // Ends the current video's opening (sends its `watch`).
  let endOpening = () => {};
  // The shopper touched this video's products: the end of the video does not take them away.
  let busy = false;
  for (const type of ['pointerdown', 'focusin', 'keydown']) on(products, type, () => (busy = true));
  // The shopper's choices hold for the next video too; captions follow the sound until chosen.
  let muted = false;
  let captions: boolean | null = null;

  const showCaptions = () => {
    if (!current) return;
    const shown = captions ?? current.muted;
    const tracks = current.textTracks;
    const pick = preferred(tracks);
    for (let i = 0; i < tracks.length; i++) tracks[i]!.mode = shown && i === pick ? 'showing' : 'disabled';
    cc.setAttribute('aria-pressed', String(shown));
  };
  const progress = () => {
    const d = current && current.duration;
    fills.forEach(
      (f, i) => (f.style.width = `${i < index ? 100 : i > index || !d ? 0 : Math.min(100, (current!.currentTime / d) * 100)}%`),
    );
  };

  const show = (i: number) => {
    if (story && (i < 0 || i >= count)) {
      if (i >= count) return shut();
      i = 0;
    }
    index = (i + count) % count;
    busy = false;
    const v = w.videos[index]!;
    endOpening();
    detach(current);
    current = fullVideo('videoapp-video', v, story ? { autoplay: '' } : { controls: '', autoplay: '' });
    overlay.setAttribute('aria-label', v.title || 'Video');
    overlay.setAttribute('data-videoapp-video-id', v.id);
    overlay.setAttribute('data-videoapp-index', String(index));
    endOpening = watch(current, w, v);
    current.muted = muted;
    const shown = current;
    on(shown, 'volumechange', () => {
      mute.setAttribute('aria-pressed', String((muted = shown.muted)));
      showCaptions();
    });
    on(shown, 'timeupdate', progress);
    if (story) on(shown, 'ended', () => shown === current && !busy && show(index + 1));
    cc.hidden = !shown.textTracks.length;
    showCaptions();
    progress();
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
    host.track('click', w.id, v.id);
    play(current);
  };

  const shut = () => {
    endOpening();
    current = detach(current);
    overlay.remove();
    root.style.overflow = overflow;
    doc.removeEventListener('keydown', keys, true);
    doc.removeEventListener('focusin', inside, true);
    opener.focus();
  };
  const keys = safe((e: KeyboardEvent) => {
    const target = e.target as HTMLElement;
    if (e.key === 'Escape') {
      e.preventDefault();
      shut();
    } else if ((e.key === 'ArrowRight' || e.key === 'ArrowLeft') && count > 1 && !target.closest('video[controls],select,input')) {
      // Arrows seek in a video's own controls and move in a select: there they keep their meaning.
      e.preventDefault();
      show(index + (e.key === 'ArrowRight' ? 1 : -1));
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

  if (story) {
    // A tap on the left or right third moves back or on; in the middle it pauses or plays.
    on(stage, 'click', (e) => {
      const { clientX } = e as MouseEvent;
      if (!current || (e.target as HTMLElement).closest('button')) return;
      const r = stage.getBoundingClientRect();
      const third = (clientX - r.left) / r.width;
      if (third < 1 / 3) show(index - 1);
      else if (third > 2 / 3) show(index + 1);
      else if (current.paused) play(current);
      else current.pause();
    });
    let x0 = 0;
    let y0 = 0;
    on(
      stage,
      'touchstart',
      (e) => {
        const t = (e as TouchEvent).changedTouches[0]!;
        x0 = t.clientX;
        y0 = t.clientY;
      },
      { passive: true },
    );
    on(stage, 'touchend', (e) => {
      const t = (e as TouchEvent).changedTouches[0]!;
      const dx = t.clientX - x0;
      if (Math.abs(dx) > SWIPE_PX && Math.abs(dx) > Math.abs(t.clientY - y0)) {
        // A swipe is not also a tap (once a gesture scrolls, the browser makes no tap of it and
        // the event cannot be cancelled).
        if (e.cancelable) e.preventDefault();
        show(index + (dx < 0 ? 1 : -1));
      }
    });
  }
  on(close, 'click', shut);
  on(mute, 'click', () => current && (current.muted = !current.muted));
  on(cc, 'click', () => {
    captions = cc.getAttribute('aria-pressed') !== 'true';
    showCaptions();
  });
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

/** A variant as the store's product JSON (`/products/<handle>.js`) gives it. */
interface StoreVariant {
  id: number;
  title: string;
  /** In the currency's smallest unit, as the platform's Ajax API gives every amount. */
  price: number;
  available: boolean;
}

interface StoreProduct {
  variants?: StoreVariant[];
  options?: ({ name?: string } | string)[];
}

/** What `/cart/add.js` answers for `{ items, sections }`. */
interface AddAnswer {
  items?: unknown[];
  sections?: Record<string, string | null>;
}

/** The theme section that shows the cart's item count (the platform's bundled section rendering). */
const BUBBLE = 'cart-icon-bubble';
const JSON_HEADERS = { accept: 'application/json' };
const storeRoot = () => (window.Shopify && window.Shopify.routes && window.Shopify.routes.root) || '/';

async function storeJSON<T>(path: string): Promise<T> {
  const r = await fetch(storeRoot() + path, { headers: JSON_HEADERS });
  if (!r.ok) throw r.status;
  return r.json();
}

let currency: Promise<string | undefined> | undefined;
/** The shop's active currency: the platform's `Shopify.currency`, else the cart's. */
const activeCurrency = () =>
  (currency ??= Promise.resolve(
    (window.Shopify && window.Shopify.currency && window.Shopify.currency.active) ||
      storeJSON<{ currency?: string }>('cart.js').then(
        (c) => c && c.currency,
        () => undefined,
      ),
  ));

const money = (amount: number, code: string | undefined) => {
  try {
    if (code) {
      const locale = (window.Shopify && window.Shopify.locale) || document.documentElement.lang || undefined;
      return new Intl.NumberFormat(locale, { style: 'currency', currency: code }).format(amount / 100);
    }
  } catch {
    /* an unknown currency or locale: the plain amount below */
  }
  return (amount / 100).toFixed(2);
};

/** One request per product and page view, however often the player shows it. */
const productJSON = new Map<string, Promise<StoreProduct>>();
const loadProduct = (handle: string) => {
  let p = productJSON.get(handle);
  if (!p) {
    productJSON.set(handle, (p = storeJSON<StoreProduct>(`products/${encodeURIComponent(handle)}.js`)));
    // A failed load is tried again on the next add to cart.
    p.catch(() => productJSON.delete(handle));
  }
  return p;
};

function product(w: Widget, v: Video, p: Product): HTMLLIElement {
  const status = h('span', 'videoapp-status', { role: 'status' });
  const price = h('span', 'videoapp-price');
  const pick = h('span', 'videoapp-pick');
  const button = h('button', 'videoapp-btn', { type: 'button', 'data-videoapp-add-to-cart': p.id }, ['Add to cart']);
  const viewCart = h('a', 'videoapp-viewcart', { href: `${storeRoot()}cart`, hidden: '' }, ['View cart']);
  const handle = decodeURIComponent(p.handle || (/\/products\/([^/?#]+)/.exec(p.url || '') || [])[1] || '');
  // On the store's own domain and locale, where the cart is, rather than the address the
  // catalog holds (the platform's domain, which redirects).
  const page = handle ? `${storeRoot()}products/${encodeURIComponent(handle)}` : url(p.url);
  const li = h('li', 'videoapp-product', {}, [
    url(p.image) && h('img', '', { src: url(p.image), alt: '', width: 64, height: 64, loading: 'lazy' }),
    h('a', 'videoapp-pname', { href: page }, [p.title]),
    price,
    pick,
    h('span', 'videoapp-actions', {}, [button, viewCart]),
    status,
  ]);
  const state = (s: string, text: string) => {
    li.setAttribute('data-videoapp-state', s);
    status.textContent = text;
  };
  let variants: StoreVariant[] | undefined;
  let chosen: StoreVariant | undefined;
  let select: HTMLSelectElement | undefined;
  let code: string | undefined;
  const showPrice = () => (price.textContent = chosen ? money(chosen.price, code) : '');
  const soldOut = () => {
    button.setAttribute('aria-disabled', 'true');
    state('soldout', 'Sold out');
  };

  /** Reads the product's variants and prices; the first available variant is chosen. */
  const setUp = async () => {
    if (variants) return;
    const [json, active] = await Promise.all([loadProduct(handle), activeCurrency()]);
    code = active;
    variants = (json && json.variants) || [];
    chosen = variants.find((x) => x.available);
    if (variants.length > 1) {
      const option = (json.options || []).map((o) => (typeof o === 'string' ? o : o.name)).join(' / ');
      select = h('select', 'videoapp-variant', { 'aria-label': `${option || 'Option'} for ${p.title}` });
      for (const x of variants) {
        const o = h('option', '', { value: x.id }, [x.available ? x.title : `${x.title} \u2013 sold out`]);
        o.disabled = !x.available;
        o.selected = x === chosen;
        select.append(o);
      }
      on(select, 'change', () => {
        chosen = variants!.find((x) => String(x.id) === select!.value);
        showPrice();
      });
      pick.replaceChildren(select);
    }
    showPrice();
    if (!chosen) soldOut();
  };
  setUp().catch(debug);

  on(button, 'click', async () => {
    // aria-disabled, not disabled: a disabled button drops the focus to the page, out of the
    // dialog, without a focusin the trap could catch.
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    viewCart.hidden = true;
    state('pending', 'Adding\u2026');
    try {
      await setUp();
      const variant = chosen;
      if (!variant) return soldOut();
      const add = await fetch(`${storeRoot()}cart/add.js`, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ id: variant.id, quantity: 1 }], sections: BUBBLE, sections_url: location.pathname }),
      });
      // 422: the platform refuses the quantity (sold out, or all of the stock is in the cart).
      if (add.status === 422) {
        variant.available = false;
        const option = select && select.querySelector<HTMLOptionElement>(`option[value="${variant.id}"]`);
        if (option) option.disabled = true;
        chosen = variants!.find((x) => x.available);
        if (!chosen) return soldOut();
        select!.value = String(chosen.id);
        showPrice();
        return state('error', `Sorry, ${variant.title} is sold out. Please choose another.`);
      }
      if (!add.ok) throw add.status;
      const answer = (await add.json()) as AddAnswer;
      const bubble = document.getElementById(BUBBLE);
      const html = answer.sections && answer.sections[BUBBLE];
      if (bubble && typeof html === 'string') {
        // The section comes in its wrapper; the theme's element takes what is inside it.
        const doc = new DOMParser().parseFromString(html, 'text/html');
        bubble.innerHTML = (doc.querySelector('.shopify-section') || doc.body).innerHTML;
      }
      state('added', 'Added to cart');
      viewCart.hidden = false;
      host.track('add_to_cart', w.id, v.id, { productId: productGid(p.id), attributionType: 'direct' });
      host.remember('carts', { productId: productGid(p.id), videoId: v.id, widgetId: w.id });
      document.dispatchEvent(
        new CustomEvent('videoapp:add-to-cart', { detail: { productId: p.id, variantId: variant.id, videoId: v.id, widgetId: w.id } }),
      );
      const cart = await storeJSON<{ item_count?: number }>('cart.js').catch(() => null);
      document.dispatchEvent(
        new CustomEvent('videoapp:cart-updated', {
          detail: { item: (answer.items && answer.items[0]) || answer, itemCount: cart ? cart.item_count : undefined },
        }),
      );
    } catch (e) {
      // fetch rejects (a TypeError) only when the store cannot be reached at all.
      state(
        'error',
        e instanceof TypeError ? 'No connection. Check your network and try again.' : 'Could not add to cart. Please try again.',
      );
      throw e;
    } finally {
      if (li.getAttribute('data-videoapp-state') !== 'soldout') button.removeAttribute('aria-disabled');
    }
  });
  return li;
}
