/** `<video>` helpers shared by the cards (initial loader) and the player (its own asset). */
import type { Video } from './types';
import { h, url } from './util';

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
