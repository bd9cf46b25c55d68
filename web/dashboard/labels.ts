/** The words the dashboard uses for the API's enumerations. */
import type {
  ClickBehavior,
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
