import type { Group } from '../shared/holdout';
import type { WhereWho } from '../shared/storage';

/** The service's `contextual-widgets` answer (only what the loader reads). */
export interface Answer {
  version: string;
  removeBranding: boolean;
  /** The shop's attribution window (1, 7 or 30 days); absent from older services. */
  attributionWindowDays?: number;
  /** The percent of browsers kept from every widget (0, or absent from older services: none). */
  holdoutPercent?: number;
  widgets: Widget[];
}

export type WidgetType = 'carousel' | 'story' | 'productpage' | 'floating';

export interface Widget {
  id: string;
  type: WidgetType;
  title: string;
  viewStyle: 'default' | 'compact' | 'large';
  clickBehavior: 'open_modal' | 'open_product' | 'none';
  modalLayout: 'vertical' | 'horizontal';
  videos: Video[];
}

export interface Video {
  id: string;
  title: string;
  /** The poster (for a video made from an upload, the same frame as `posterUrl`). */
  thumbnail: string;
  /** The progressive MP4, which plays everywhere. */
  videoUrl: string;
  /** The short, muted version that plays on the card. */
  miniVersionUrl: string;
  duration: number;
  /** The HLS master playlist; absent or "" for a video given by URL. */
  hlsUrl?: string;
  /** The poster made from the video; absent or "" for a video given by URL. */
  posterUrl?: string;
  /** WebVTT files, one per language; absent when none. */
  captions?: Caption[];
  products: Product[];
}

export interface Caption {
  /** A BCP 47 language tag. */
  language: string;
  url: string;
}

export interface Product {
  id: string;
  title: string;
  handle: string;
  image: string;
  url: string;
}

/** `session`: the first page of a tab session of a browser in the shop's holdout, either group. */
export type EventType = 'impression' | 'click' | 'view' | 'add_to_cart' | 'watch' | 'session';

/** One event as `POST {proxy}/analytics` receives it. */
export interface WireEvent extends WhereWho {
  eventType: EventType;
  eventId: string;
  sessionId: string;
  /** Every type but `session`. */
  videoId?: string;
  widgetId?: string;
  /** The browser's group, while the shop has a holdout. */
  group?: Group;
  productId?: string;
  attributionType?: 'direct';
  /** `watch`: the time actually played in this opening (ms). */
  watchedMs?: number;
  /** `watch`: the furthest point reached, in percent of the video. */
  maxPercent?: number;
  timestamp: string;
}

/** `window.videoapp`: the loader's only global. */
export interface VideoappGlobal {
  /** The loader's version. */
  version: string;
  /** Sends the queued events now (when consent allows). */
  flush(): void;
  /** Internal: where the player asset, once run, hands itself to the loader. */
  _p?: PlayerHandoff;
}

/** What the player asset (`videoapp-player.js`) offers the loader. */
export interface PlayerApi {
  openPlayer: typeof import('./player').openPlayer;
  fullVideo: typeof import('./player').fullVideo;
  watch: typeof import('./player').watch;
  warm: typeof import('./stream').warm;
}

export interface PlayerHandoff {
  host: typeof import('./host').host;
  ready(player: PlayerApi): void;
}

declare global {
  interface Window {
    videoapp?: VideoappGlobal;
    Shopify?: {
      customerPrivacy?: { analyticsProcessingAllowed?: () => boolean };
      routes?: { root?: string };
      /** The storefront's country (ISO 3166-1 alpha-2), as the platform gives it to the page. */
      country?: string;
      /** The currency the shopper sees prices in (the platform sets it on every storefront page). */
      currency?: { active?: string };
      locale?: string;
      /** True inside the theme editor. */
      designMode?: boolean;
    };
  }
}
