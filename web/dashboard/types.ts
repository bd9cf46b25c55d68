/** The dashboard API's shapes (see the service's OpenAPI document, tag `dashboard`). */

export interface Shop {
  domain: string;
  name: string;
  timezone: string;
  currency: string;
  removeBranding: boolean;
  catalogVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface Product {
  id: string;
  title: string;
  handle: string;
  image?: string;
  url?: string;
  collectionIds?: string[];
}

/** A collection as the platform holds it, imported at install. */
export interface Collection {
  id: string;
  title: string;
  handle: string;
  image?: string;
}

export type VideoStatus = 'PUBLISHED' | 'DRAFT' | 'ARCHIVED';

/** Where a video made from a file (uploaded or imported) is on its way to being playable. */
export type ProcessingState = 'uploading' | 'queued' | 'processing' | 'ready' | 'failed';

export interface Processing {
  state: ProcessingState;
  /** 0–100: of the upload while uploading, of the processing while processing. */
  progress: number;
  /** Why it failed, in words a merchant can act on (`NOT_A_VIDEO`, …). */
  error: { code: string; message: string } | null;
}

/** A WebVTT file of a video, in one language. */
export interface Caption {
  /** A BCP 47 language tag: `en`, `pt-BR`. */
  language: string;
  url: string;
}

export interface Video {
  id: string;
  title: string;
  /** One per language, in language order. */
  captions?: Caption[];
  thumbnail: string;
  /** The progressive MP4. */
  videoUrl: string;
  miniVersionUrl: string;
  duration: number;
  status: VideoStatus;
  productIds: string[];
  /** Null for a video given by URL; a video made from a file is processed by the service. */
  processing: Processing | null;
  /** The HLS master playlist; "" when there is none. */
  hlsUrl: string;
  /** The poster made from the video; "" when there is none. */
  posterUrl: string;
  width: number | null;
  height: number | null;
  /** The moment the poster shows, in ms; null while the service chooses it. */
  posterTimeMs: number | null;
  createdAt: string;
  updatedAt: string;
}

/** What POST creates, for a video given by URL; PATCH changes any of it. */
export type VideoInput = Pick<Video, 'title' | 'thumbnail' | 'videoUrl' | 'miniVersionUrl' | 'duration' | 'status' | 'productIds'>;

/** What a merchant may change of a video made from a file: the service owns its media. */
export type UploadedVideoPatch = Pick<Video, 'title' | 'status' | 'productIds'>;

export type WidgetType = 'carousel' | 'story' | 'productpage' | 'floating';
export type WidgetStatus = 'active' | 'draft' | 'archived';
export type ViewStyle = 'default' | 'compact' | 'large';
export type ClickBehavior = 'open_modal' | 'open_product' | 'none';
export type ModalLayout = 'vertical' | 'horizontal';
export type SourceType = 'manual' | 'product';
export type Location = 'home' | 'product' | 'collection' | 'page' | 'other';

/** Where a widget may show; an empty list matches everything. */
export interface DisplayRules {
  locations?: Location[];
  productIds?: string[];
  collectionIds?: string[];
}

export interface Widget {
  id: string;
  type: WidgetType;
  title: string;
  status: WidgetStatus;
  priority: number;
  viewStyle: ViewStyle;
  clickBehavior: ClickBehavior;
  modalLayout: ModalLayout;
  sourceType: SourceType;
  videoIds: string[];
  rules: DisplayRules;
  createdAt: string;
  updatedAt: string;
}

export type WidgetInput = Omit<Widget, 'id' | 'createdAt' | 'updatedAt'>;

export interface ApiKeyInfo {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  key: string;
}

export interface AttributedMetrics {
  add_to_cart: number;
  orders: number;
  revenue: number;
}

export interface Metrics {
  impressions: number;
  views: number;
  clicks: number;
  add_to_cart: number;
  orders: number;
  revenue: number;
  attribution: { direct: AttributedMetrics; influenced: AttributedMetrics };
}

export interface SummaryMetrics extends Metrics {
  ctr: number;
  cvr: number;
}

export interface Summary extends SummaryMetrics {
  comparison?: { metrics: SummaryMetrics } | null;
}

export interface Meta {
  start_date: string;
  end_date: string;
  comparison?: { start_date: string; end_date: string } | null;
  interval?: 'day' | 'week' | 'month' | null;
}

export interface Pagination {
  page: number;
  limit: number;
  total_count: number;
  total_pages: number;
}

export interface VideoAnalytics {
  id: string;
  title: string;
  thumbnail_url: string;
  duration: number;
  status: VideoStatus;
  product_count: number;
  metrics: Metrics;
}

export interface WidgetAnalytics {
  id: string;
  title: string;
  type: WidgetType;
  status: WidgetStatus;
  video_count: number;
  metrics: Metrics;
}

export interface Bucket {
  date: string;
  metrics: Metrics;
}

export interface Envelope<T> {
  success: boolean;
  data: T;
  meta: Meta;
}

export interface Paged<T> extends Envelope<T[]> {
  pagination: Pagination;
}

export type SortKey = 'views' | 'clicks' | 'impressions' | 'add_to_cart' | 'orders' | 'revenue' | 'title' | 'created_at';
export type SortOrder = 'asc' | 'desc';
