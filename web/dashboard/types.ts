/**
 * The dashboard API's shapes, as the service's OpenAPI document gives them: `api-schema.d.ts`
 * is generated from `openapi.json` (a copy of `/openapi.json` that a test of the service keeps
 * equal to it) by `npm run typecheck`. A field the dashboard reads that the API no longer has
 * fails the type check.
 */
import type { components, paths } from './api-schema';

type Schemas = components['schemas'];

export type Shop = Schemas['Shop'];
/** How many days an order is credited to a video the shopper added to cart from or watched. */
export type AttributionWindow = Schemas['AttributionWindow'];
/** Percent of shoppers kept from every widget, to measure what the videos sell: 0 (none) to 50. */
export type HoldoutPercent = Schemas['HoldoutPercent'];
/** What the merchant may change of the shop. */
export type MerchantSettings = Schemas['MerchantSettings'];
export type Product = Schemas['Product'];
/** A collection as the platform holds it, imported at install. */
export type Collection = Schemas['Collection'];

export type VideoStatus = Schemas['VideoStatus'];
/** Where a video made from a file (uploaded or imported) is on its way to being playable. */
export type ProcessingState = Schemas['ProcessingState'];
export type Processing = Schemas['Processing'];
/** A WebVTT file of a video, in one language. */
export type Caption = Schemas['Caption'];
export type Video = Schemas['Video'];
/** What POST creates, for a video given by URL, every field given; PATCH changes any of it. */
export type VideoInput = Required<Schemas['NewVideo']>;
/** What a merchant may change of a video made from a file: the service owns its media. */
export type UploadedVideoPatch = Pick<Schemas['VideoPatch'], 'title' | 'status' | 'productIds'>;

export type WidgetType = Schemas['WidgetType'];
export type WidgetStatus = Schemas['WidgetStatus'];
export type ViewStyle = Schemas['ViewStyle'];
export type ClickBehavior = Schemas['ClickBehavior'];
export type ModalLayout = Schemas['ModalLayout'];
export type SourceType = Schemas['SourceType'];
export type Location = Schemas['Location'];
/** Where a widget may show; an empty list matches everything. */
export type DisplayRules = Schemas['DisplayRules'];
export type Widget = Schemas['Widget'];
/** A widget as the form holds it and sends it: every field given. */
export type WidgetInput = Required<Schemas['NewWidget']>;

export type ApiKeyInfo = Schemas['ApiKeyInfo'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type Onboarding = Schemas['Onboarding'];
/** The install's answer; `importing`: its work (pixel, collections, products) is not done yet. */
export type Installed = Schemas['Installed'];
export type StepId = Schemas['StepId'];

export type AttributedMetrics = Schemas['AttributedMetrics'];
export type Metrics = Schemas['Metrics'];
export type SummaryMetrics = Schemas['SummaryMetrics'];
export type Summary = Schemas['Summary'];
export type Meta = Schemas['Meta'];
export type Pagination = Schemas['Pagination'];
export type VideoAnalytics = Schemas['VideoAnalytics'];
/** One video's answer: the video, its metrics and the comparison's. */
export type VideoAnalyticsOne = Schemas['VideoAnalyticsOne'];
export type WidgetAnalytics = Schemas['WidgetAnalytics'];
export type Bucket = Schemas['Bucket'];
export type SummaryResponse = Schemas['SummaryResponse'];
export type TimeseriesResponse = Schemas['TimeseriesResponse'];
/** A page of a metrics list (videos or widgets): its rows, and where it stands in the list. */
export type Paged<T> = Omit<Schemas['VideoAnalyticsList'], 'data'> & { data: T[] };

type ListQuery = NonNullable<paths['/app/api/analytics/videos']['get']['parameters']['query']>;
export type SortKey = NonNullable<ListQuery['sort_by']>;
export type SortOrder = NonNullable<ListQuery['sort_order']>;

type SummaryQuery = NonNullable<paths['/app/api/analytics/summary']['get']['parameters']['query']>;
/** What the analytics can break the numbers down by. */
export type Dimension = NonNullable<SummaryQuery['breakdown']>;
/** The metrics a breakdown's entries can be sorted by. */
export type BreakdownSortKey = NonNullable<SummaryQuery['sort_by']>;
/** One value of a breakdown (`"placement": "home"`) and its metrics; the summary's carry its rates too. */
export type BreakdownEntry = Schemas['ValueEntry'];
/** A breakdown of one video's or the shop's numbers (the summary's entries are a video's and more). */
export type BreakdownResponse = Schemas['BreakdownResponse'];

/** One group of the holdout over the range: visits (`sessions`), orders, and their rates. */
export type GroupMetrics = Schemas['GroupMetrics'];
/** A lift of the group shown the widgets over the held-out one, in percent, with its 95% interval. */
export type LiftFigure = Schemas['LiftFigure'];
export type LiftData = Schemas['LiftData'];
export type LiftResponse = Schemas['LiftResponse'];
