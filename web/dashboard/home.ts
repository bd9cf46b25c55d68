/**
 * What the dashboard's home (the Analytics page) asks for as it opens, in one place: boot.ts asks
 * for the same URLs early, and the page's own calls take those answers.
 */
import type { Query } from './api';
import type { DateRange, Preset } from './dates';

/** The range the home page opens on. */
export const HOME_PRESET: Exclude<Preset, 'custom'> = 'last30';

/** The totals of the cards, with the period before for comparison. */
export const summaryRequest = ({ start, end }: DateRange): [string, Query] => [
  '/analytics/summary',
  { start_date: start, end_date: end, compare: 'previous_period' },
];

/** The chart's daily series. */
export const seriesRequest = ({ start, end }: DateRange): [string, Query] => [
  '/analytics/timeseries',
  { start_date: start, end_date: end, interval: 'day' },
];
