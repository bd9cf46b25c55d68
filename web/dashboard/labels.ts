/** The words the dashboard uses for the API's enumerations. */
import type {
  ClickBehavior,
  Dimension,
  Location,
  ModalLayout,
  ProcessingState,
  SourceType,
  VideoStatus,
  ViewStyle,
  WidgetStatus,
  WidgetType,
} from './types';

type Options<T extends string> = { value: T; label: string; help?: string }[];

export const WIDGET_TYPES: Options<WidgetType> = [
  { value: 'carousel', label: 'Carousel', help: 'A row of video cards that scrolls sideways' },
  { value: 'story', label: 'Stories', help: 'Round thumbnails that open full-screen videos' },
  { value: 'productpage', label: 'Product page', help: 'A grid of video cards for a product page' },
  { value: 'floating', label: 'Floating', help: 'A small round video in a corner of every page it is shown on' },
];

export const WIDGET_STATUSES: Options<WidgetStatus> = [
  { value: 'active', label: 'Active', help: 'Shown in your store' },
  { value: 'draft', label: 'Draft', help: 'Not shown in your store yet' },
  { value: 'archived', label: 'Archived', help: 'Hidden and kept for later' },
];

export const VIDEO_STATUSES: Options<VideoStatus> = [
  { value: 'PUBLISHED', label: 'Published', help: 'Can appear in your store' },
  { value: 'DRAFT', label: 'Draft', help: 'Never shown in your store' },
  { value: 'ARCHIVED', label: 'Archived', help: 'Hidden and kept for later' },
];

export const PROCESSING_STATES: Options<ProcessingState> = [
  { value: 'uploading', label: 'Uploading', help: 'The file is on its way' },
  { value: 'queued', label: 'Waiting', help: 'Processing starts shortly' },
  { value: 'processing', label: 'Processing', help: 'Making the versions shoppers play' },
  { value: 'ready', label: 'Ready', help: 'Can be published' },
  { value: 'failed', label: 'Failed', help: 'Could not be made playable' },
];

export const VIEW_STYLES: Options<ViewStyle> = [
  { value: 'default', label: 'Standard cards' },
  { value: 'compact', label: 'Compact (smaller cards)' },
  { value: 'large', label: 'Large cards' },
];

export const CLICK_BEHAVIORS: Options<ClickBehavior> = [
  { value: 'open_modal', label: 'Open the video player with its products' },
  { value: 'open_product', label: "Go to the video's first product page" },
  { value: 'none', label: 'Play the video in place' },
];

export const MODAL_LAYOUTS: Options<ModalLayout> = [
  { value: 'vertical', label: 'Products below the video' },
  { value: 'horizontal', label: 'Products beside the video' },
];

export const SOURCE_TYPES: Options<SourceType> = [
  { value: 'manual', label: 'Videos I choose', help: 'The videos listed below, in their order' },
  {
    value: 'product',
    label: 'Videos of the product being viewed',
    help: 'On a product page, the published videos linked to that product',
  },
];

export const LOCATIONS: Options<Location> = [
  { value: 'home', label: 'Home page' },
  { value: 'product', label: 'Product pages' },
  { value: 'collection', label: 'Collection pages' },
  { value: 'page', label: 'Content pages' },
  { value: 'other', label: 'Other pages' },
];

export const labelOf = <T extends string>(options: Options<T>, value: T): string => options.find((o) => o.value === value)?.label ?? value;

/** Badge tones for statuses; the badge's text carries the meaning. */
export const statusTone = (status: WidgetStatus | VideoStatus): 'success' | 'info' | undefined =>
  status === 'active' || status === 'PUBLISHED' ? 'success' : status === 'draft' || status === 'DRAFT' ? 'info' : undefined;

export const DIMENSIONS: Options<Dimension> = [
  { value: 'placement', label: 'By placement', help: 'The type of page the widget showed on' },
  { value: 'device', label: 'By device', help: "The shopper's phone, tablet or computer" },
  { value: 'country', label: 'By country', help: "The country of the shopper's store visit" },
  { value: 'source', label: 'By source', help: 'Where the shopper came to your store from' },
];

/** Events that did not say: the API's `unknown` of every dimension. */
const NOT_KNOWN = 'Not known';

const PLACEMENTS: Record<string, string> = {
  home: 'Home page',
  product: 'Product pages',
  collection: 'Collection pages',
  page: 'Content pages',
  cart: 'Cart',
  other: 'Other pages',
};

const DEVICES: Record<string, string> = { mobile: 'Phones', tablet: 'Tablets', desktop: 'Computers' };

const SOURCES: Record<string, string> = {
  direct: 'Direct visits',
  search: 'Search engines',
  social: 'Social media',
  email: 'Email',
  paid: 'Paid ads',
  referral: 'Other websites',
};

let regions: Intl.DisplayNames | null | undefined;

/** A country code's English name ("DE" → "Germany"), or the code when the browser has no name for it. */
export function countryName(code: string): string {
  if (code === 'unknown') return NOT_KNOWN;
  if (regions === undefined) {
    try {
      regions = new Intl.DisplayNames(['en'], { type: 'region' });
    } catch {
      regions = null;
    }
  }
  try {
    return regions?.of(code) ?? code;
  } catch {
    return code;
  }
}

/** A dimension's value in the merchant's words. */
export function dimensionValue(dimension: Dimension, value: string): string {
  if (value === 'unknown') return NOT_KNOWN;
  switch (dimension) {
    case 'country':
      return countryName(value);
    case 'placement':
      return PLACEMENTS[value] ?? value;
    case 'device':
      return DEVICES[value] ?? value;
    case 'source':
      return SOURCES[value] ?? value;
  }
}
