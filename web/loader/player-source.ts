/**
 * Where the cards get the player: the player asset (`videoapp-player.js`), fetched beside the
 * loader's own script. The dashboard's preview bundles the player instead (web/scripts/build.mjs
 * swaps in ./player-inline.ts).
 */
import { openings, remember, track } from './events';
import type { PlayerApi } from './types';
import { h } from './util';

let playerSrc = '';
let player: Promise<PlayerApi> | undefined;

/** Where the player asset is: beside the loader's own script. */
export const playerAt = (src: string) => (playerSrc = src);

/**
 * The player asset, fetched once: when a first card comes on screen (so a tap rarely waits for
 * it), else on a tap. A failed load is tried again on the next tap.
 */
export const loadPlayer = (): Promise<PlayerApi> =>
  (player ??= new Promise<PlayerApi>((resolve, reject) => {
    window.videoapp!._p = { host: { track, remember, openings }, ready: resolve };
    const script = h('script', '', { src: playerSrc, async: '' });
    script.onerror = () => {
      player = undefined;
      script.remove();
      reject(new Error(`cannot load ${playerSrc}`));
    };
    document.head.append(script);
  }));
