/** Numbers as the merchant reads them, and the metrics the analytics pages show. */
import type { Metrics, SummaryMetrics } from './types';

export type MetricKind = 'count' | 'money' | 'rate';
export type SummaryKey = keyof Omit<SummaryMetrics, 'attribution' | 'reached'>;
export type SeriesKey = keyof Omit<Metrics, 'attribution' | 'reached'>;

export interface MetricInfo<K extends string> {
  key: K;
  label: string;
  kind: MetricKind;
  help: string;
}

/** The summary cards, in order. */
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

/** What the time series can chart: the API's daily numbers, no derived rates. */
export const SERIES_METRICS: MetricInfo<SeriesKey>[] = SUMMARY_METRICS.filter(
  (m): m is MetricInfo<SeriesKey> => m.key !== 'ctr' && m.key !== 'cvr',
);

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

export function formatMetric(value: number, kind: MetricKind, currency: string): string {
  if (kind === 'money') return formatMoney(value, currency);
  if (kind === 'rate') return `${rates.format(value)}%`;
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
