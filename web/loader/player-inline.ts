/**
 * The dashboard's preview: the same cards, with the player bundled rather than fetched (the
 * dashboard is not a storefront page and has no player asset beside it).
 */
import { openings, remember, track } from './events';
import { host } from './host';
import { fullVideo, openPlayer, watch } from './player';
import { warm } from './stream';
import { PLAYER_CSS } from './styles-player';
import type { PlayerApi } from './types';
import { h } from './util';

let player: Promise<PlayerApi> | undefined;

export const playerAt = (_src: string) => {};

export const loadPlayer = (): Promise<PlayerApi> =>
  (player ??= Promise.resolve().then(() => {
    Object.assign(host, { track, remember, openings });
    document.head.append(h('style', '', { 'data-videoapp-player-style': '' }, [PLAYER_CSS]));
    return { openPlayer, fullVideo, watch, warm };
  }));
