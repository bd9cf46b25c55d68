/**
 * The player asset, `videoapp-player.js`: fetched by the loader beside its own script once a
 * card is on screen or tapped, so the initial loader stays small. It hands itself to the loader
 * through `window.videoapp._p`, and uses the loader's event queue.
 */
import { host } from './host';
import { fullVideo, openPlayer, watch } from './player';
import { warm } from './stream';
import { PLAYER_CSS } from './styles-player';
import { debug, h } from './util';

try {
  const handoff = window.videoapp && window.videoapp._p;
  if (handoff && !document.querySelector('style[data-videoapp-player-style]')) {
    Object.assign(host, handoff.host);
    document.head.append(h('style', '', { 'data-videoapp-player-style': '' }, [PLAYER_CSS]));
    handoff.ready({ openPlayer, fullVideo, watch, warm });
  }
} catch (e) {
  debug(e);
}
