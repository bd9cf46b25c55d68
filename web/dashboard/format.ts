/** Numbers as the merchant reads them, and the metrics the analytics pages show. */
import type { Metrics, SummaryMetrics } from './types';

export type MetricKind = 'count' | 'money' | 'rate' | 'seconds';
/** The numbers of a metrics object; the attribution split and how far shoppers watched are shown apart. */
export type SummaryKey = keyof Omit<SummaryMetrics, 'attribution' | 'reached'>;
export type SeriesKey = keyof Omit<Metrics, 'attribution' | 'reached'>;

export interface MetricInfo<K extends string> {
  key: K;
  label: string;
  kind: MetricKind;
  help: string;
}

/** The summary cards of the home page, in order. */
export const SUMMARY_METRICS: MetricInfo<SummaryKey>[] = [
  { key: 'impressions', label: 'Impressions', kind: 'count', help: 'Times a video card was at least half visible' },
  { key: 'views', label: 'Views', kind: 'count', help: 'Videos watched for at least 3 seconds' },
  { key: 'clicks', label: 'Clicks', kind: 'count', help: 'Videos opened or played by a shopper' },
  { key: 'ctr', label: 'Click-through rate', kind: 'rate', help: 'Clicks per 100 impressions' },
  { key: 'add_to_cart', label: 'Add to cart', kind: 'count', help: 'Products added to the cart from a video' },
  { key: 'orders', label: 'Orders', kind: 'count', help: 'Completed checkouts after a video' },
  { key: 'revenue', label: 'Revenue', kind: 'money', help: 'Value of those orders' },
  { key: 'cvr', label: 'Conversion rate', kind: 'rate', help: 'Orders per 100 views' },
];

/** What shoppers did once a video was open in the player. */
export const WATCH_METRICS: MetricInfo<SeriesKey>[] = [
  { key: 'watch_time_seconds', label: 'Watch time', kind: 'seconds', help: 'Time your videos played, over every opening' },
  { key: 'avg_watch_seconds', label: 'Average watch', kind: 'seconds', help: 'Time a video played each time it was opened' },
  { key: 'completion_rate', label: 'Completion rate', kind: 'rate', help: 'Openings watched to the end, per 100 openings' },
];

/** What the time series can chart: the API's daily numbers, without the rates of the summary. */
export const SERIES_METRICS: MetricInfo<SeriesKey>[] = [
  ...SUMMARY_METRICS.filter((m): m is MetricInfo<SeriesKey> => m.key !== 'ctr' && m.key !== 'cvr'),
  ...WATCH_METRICS,
];

const counts = new Intl.NumberFormat('en-US');
const rates = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const moneyFormats = new Map<string, Intl.NumberFormat>();

export function formatMoney(value: number, currency: string): string {
  let f = moneyFormats.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    } catch {
      f = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    }
    moneyFormats.set(currency, f);
  }
  return f.format(value);
}

export const formatCount = (value: number): string => counts.format(value);

const tenths = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const share = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** A time watched: "8.5 s", "2 min 05 s", "3 h 02 min". */
export function formatSeconds(seconds: number): string {
  const s = Math.max(0, seconds);
  if (s < 60) return `${tenths.format(s)} s`;
  const t = Math.round(s);
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h ? `${formatCount(h)} h ${pad(m)} min` : `${m} min ${pad(t % 60)} s`;
}

/** `part` of `whole` in percent, "40.0%"; "—" when there is no whole to take a part of. */
export function formatShare(part: number, whole: number): string {
  return whole > 0 ? `${share.format((part / whole) * 100)}%` : '\u2014';
}

export function formatMetric(value: number, kind: MetricKind, currency: string): string {
  if (kind === 'money') return formatMoney(value, currency);
  if (kind === 'rate') return `${rates.format(value)}%`;
  if (kind === 'seconds') return formatSeconds(value);
  return formatCount(value);
}

/** A change against the previous period, in words as well as in signs. */
export interface Change {
  /** "+12.5%", "−3.0%", "0.0%", or "—" when there is nothing to compare with. */
  text: string;
  /** The same for a screen reader: "Up 12.5% from the previous period". */
  label: string;
  direction: 'up' | 'down' | 'flat' | 'none';
}

export function change(current: number, previous: number | null | undefined): Change {
  if (!previous) return { text: '—', label: 'No previous-period value to compare with', direction: 'none' };
  const pct = ((current - previous) / Math.abs(previous)) * 100;
  const size = Math.abs(pct).toFixed(1);
  if (size === '0.0') return { text: '0.0%', label: 'No change from the previous period', direction: 'flat' };
  return pct > 0
    ? { text: `+${size}%`, label: `Up ${size}% from the previous period`, direction: 'up' }
    : { text: `\u2212${size}%`, label: `Down ${size}% from the previous period`, direction: 'down' };
}

/** "1:05" for 65 seconds. */
export function formatDuration(seconds: number): string {
  const t = Math.max(0, Math.round(seconds));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const s = String(t % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

const byteUnits = ['B', 'KB', 'MB', 'GB', 'TB'];
const bytesFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** "12.3 MB" (units of 1,000, as operating systems show file sizes). */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1000 && unit < byteUnits.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${bytesFormat.format(unit ? value : Math.round(value))} ${byteUnits[unit]}`;
}
