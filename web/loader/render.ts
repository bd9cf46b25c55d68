/** Widgets in slots: cards, previews, impressions and what a click does. */
import { track } from './events';
import { detach, fullVideo, openPlayer, play, posterOf, video, watch } from './player';
import { warm } from './stream';
import type { Video, Widget } from './types';
import { h, matches, on, saveData, url } from './util';

/** Card width × height per view style (9:16), for the thumbnails' width/height attributes. */
const SIZES = { compact: 120, default: 160, large: 220 };
const TYPES = ['carousel', 'story', 'productpage'];

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

/** The widget's root element, ready to insert. */
export function renderWidget(w: Widget, removeBranding: boolean): HTMLElement {
  const type = TYPES.includes(w.type) ? w.type : 'carousel';
  const style = w.viewStyle === 'compact' || w.viewStyle === 'large' ? w.viewStyle : 'default';
  const story = type === 'story';
  const width = story ? 72 : SIZES[style];
  const height = story ? 72 : Math.round((width * 16) / 9);
  const track_ = h('ul', 'videoapp-track', { role: 'list' });
  const root = h(
    'section',
    `videoapp-widget videoapp-widget--${type} videoapp-widget--${style}`,
    { 'data-videoapp-widget': w.id, 'data-videoapp-type': type, 'aria-label': w.title || 'Videos' },
    [w.title && h('h2', 'videoapp-title', {}, [w.title]), track_],
  );
  w.videos.forEach((v, i) => track_.append(card(w, v, i, story, width, height)));
  if (!removeBranding) root.append(h('p', 'videoapp-brand', {}, ['Powered by videoapp']));
  return root;
}

function card(w: Widget, v: Video, i: number, story: boolean, width: number, height: number): HTMLLIElement {
  const poster = posterOf(v);
  const media = h('span', 'videoapp-media', {}, [
    poster && h('img', '', { src: poster, alt: '', loading: 'lazy', decoding: 'async', width, height }),
    !story && v.duration > 0 && h('span', 'videoapp-dur', { 'aria-hidden': 'true' }, [clock(v.duration)]),
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
    warm(v);
    if (inline || document.querySelector('[data-videoapp-player]')) return preview?.pause();
    if (!mini || matches('(prefers-reduced-motion: reduce)') || saveData()) return;
    if (!preview) {
      preview = video('videoapp-preview', mini, poster, { muted: '', loop: '', 'aria-hidden': 'true' });
      preview.muted = true;
      media.append(preview);
    }
    play(preview);
  });

  on(button, 'click', () => {
    const first = v.products[0];
    const target = first && url(first.url);
    if (w.clickBehavior === 'open_product' && target) {
      track('click', w.id, v.id);
      location.assign(target);
    } else if (w.clickBehavior === 'none' && !story) {
      if (inline) return;
      preview = detach(preview);
      inline = fullVideo('videoapp-inline', v, { controls: '' });
      watch(inline, w, v);
      item.append(inline);
      track('click', w.id, v.id);
      play(inline);
      inline.focus();
    } else {
      openPlayer(w, i, button, story);
    }
  });
  return item;
}
